-- Rows made for the from-panda tests: two sites (a nucleus and a satellite), two queues, one waiting task.
INSERT INTO site VALUES ('BNL-ATLAS', 'nucleus', 1, 'ACTIVE'), ('AGLT2', 'satellite', 2, 'ACTIVE');
INSERT INTO schedconfig_json VALUES
 ('BNL', '{"panda_resource": "BNL", "atlas_site": "BNL-ATLAS", "cloud": "US", "type": "production", "status": "online",
   "corecount": 8, "maxrss": 16000, "maxtime": 259200, "releases": ["AUTO"], "capability": "mcore",
   "astorages": {"read_lan": ["BNL-ATLAS_DATADISK"], "write_lan": ["BNL-ATLAS_DATADISK"]}}', now()),
 ('AGLT2', '{"panda_resource": "AGLT2", "atlas_site": "AGLT2", "cloud": "US", "type": "unified", "status": "online",
   "corecount": 8, "maxrss": 48000, "maxtime": 259200, "releases": ["AUTO"], "capability": "ucore",
   "astorages": {"read_lan": ["AGLT2_DATADISK"], "write_lan": ["AGLT2_DATADISK"]}}', now()),
 ('HPC_SPECIAL', '{"panda_resource": "HPC_SPECIAL", "atlas_site": "AGLT2", "type": "special", "status": "online"}', now());
INSERT INTO ddm_endpoint (ddm_endpoint_name, site_name, space_total, space_free, is_tape, type, space_expired, detailed_status)
 VALUES ('BNL-ATLAS_DATADISK', 'BNL-ATLAS', 9000000, 3000000, 'N', 'DATADISK', 1000, '{"write_wan": "OFF"}'),
        ('AGLT2_DATADISK', 'AGLT2', 5000000, 2000000, 'N', 'DATADISK', 0, '{}');
INSERT INTO panda_ddm_relation (panda_site_name, ddm_endpoint_name, default_write, scope) VALUES
 ('BNL', 'BNL-ATLAS_DATADISK', 'Y', 'default'), ('AGLT2', 'AGLT2_DATADISK', 'Y', 'default'),
 ('AGLT2', 'AGLT2_DATADISK', 'N', 'analysis');
INSERT INTO network_matrix_kv VALUES
 ('AGLT2', 'BNL-ATLAS', 'AGIS_closeness', 3, now()), ('AGLT2', 'BNL-ATLAS', 'Production Output_queued', 75, now()),
 ('AGLT2', 'BNL-ATLAS', 'dashb_mbps_1h', 120, now());
INSERT INTO jobs_share_stats (ts, gshare, computingsite, jobstatus, njobs, resource_type, vo) VALUES
 (now(), 'MC Simulation', 'AGLT2', 'running', 40, 'MCORE', 'atlas'),
 (now(), 'MC Simulation', 'AGLT2', 'running', 2, 'MCORE', 'atlas'),
 (now(), 'MC Simulation', 'BNL', 'activated', 7, 'MCORE', 'atlas'), (now(), 'MC Simulation', 'BNL', 'sent', 1, 'MCORE', 'atlas');
INSERT INTO jedi_tasks (jeditaskid, taskname, status, username, creationdate, modificationtime, prodsourcelabel, vo,
  corecount, processingtype, taskpriority, currentpriority, architecture, transhome, ramcount, ramunit, gshare,
  resource_type, eventservice, nucleus)
 VALUES (4242, 'mc23.simul', 'ready', 'prod', now(), now(), 'managed', 'atlas', 8, 'simul', 500, 510,
         'x86_64-el9-gcc13-opt', 'Athena-24.0.30', 2000, 'MBPerCore', 'MC Simulation', 'MCORE', 0, 'BNL-ATLAS'),
        (1, 'old.task', 'done', 'prod', now(), now(), 'managed', 'atlas', 1, 'simul', 500, 500, '', '', 0, NULL,
         'MC Simulation', 'SCORE', 0, NULL);
INSERT INTO jedi_datasets VALUES (4242, 1, 'mc23:EVNT.1', 'input', now(), now(), NULL, 10, 10000, 0),
                                 (4242, 2, 'mc23:HITS.2', 'output', now(), now(), NULL, 0, 0, 0);
INSERT INTO sw_tags VALUES ('AGLT2', '{"cmtconfigs": ["x86_64-el9-gcc13-opt"], "containers": [], "cvmfs": ["atlas"],
  "architectures": [], "tags": []}', now());
INSERT INTO global_shares (name, value, parent, throttled) VALUES ('Production', 80, NULL, 'Y'),
  ('Analysis', 20, NULL, 'Y'), ('MC Simulation', 40, 'Production', 'Y'), ('User Analysis', 20, 'Analysis', 'N');
INSERT INTO jedi_work_queue (queue_id, queue_name, queue_type, vo, queue_order, criteria, variables, queue_function)
 VALUES (1, 'Heavy Ion', 'managed', 'atlas', 1, 'workingGroup = :wg', '{":wg": "AP_HI"}', 'Resource'),
        (2, 'managed', 'managed', 'atlas', 100, NULL, NULL, NULL);
INSERT INTO config VALUES
 ('jedi', 'jobbroker', 'NQUEUED_SAT_CAP', '300', 'int', 'atlas', 'files queued on a link', NULL),
 ('pandaserver', 'dispatcher', 'SOMETHING_ELSE', 'x', 'str', 'atlas', 'not read by brokerage', NULL);
INSERT INTO doma_pandameta.sitedata (site, flag, hours, laststart, lastpilot, getjob, updatejob) VALUES
 ('AGLT2', 'production', 3, now() - interval '10 minutes', now() - interval '1 minute', 30, 12),
 ('AGLT2', 'production', 12, now() - interval '10 minutes', now() - interval '1 minute', 99, 99),
 ('BNL', 'production', 3, now() - interval '5 minutes', now() - interval '2 minutes', 5, 1);
INSERT INTO jobsactive4 (pandaid, prodsourcelabel, jobstatus, computingsite, processingtype, produsername, corecount,
  gshare, vo) VALUES
 (1, 'user', 'running', 'AGLT2', 'panda-client', 'alice', 1, 'User Analysis', 'atlas'),
 (2, 'user', 'running', 'AGLT2', 'panda-client', 'alice', 1, 'User Analysis', 'atlas'),
 (3, 'user', 'activated', 'AGLT2', 'panda-client', 'alice', 8, 'User Analysis', 'atlas'),
 (4, 'user', 'running', 'AGLT2', 'pmerge', 'alice', 1, 'User Analysis', 'atlas'),
 (5, 'managed', 'running', 'AGLT2', 'simul', 'prod', 8, 'MC Simulation', 'atlas'),
 (6, 'user', 'running', 'AGLT2', NULL, 'alice', 1, 'User Analysis', 'atlas');
