-- The subset of PanDA's public PostgreSQL schema (PanDAWMS/panda-database, schema/postgres/sqls/pg_PANDA_TABLE.sql)
-- that `brokerage snapshot from-panda` reads: the same table and column names and types, other columns left out.
CREATE TABLE schedconfig_json (panda_queue varchar(50) NOT NULL PRIMARY KEY, data json, last_update timestamp);
CREATE TABLE site (site_name varchar(52) NOT NULL PRIMARY KEY, role varchar(256), tier_level smallint, state varchar(52));
CREATE TABLE ddm_endpoint (
  ddm_endpoint_name varchar(52) NOT NULL PRIMARY KEY, site_name varchar(52), ddm_spacetoken_name varchar(52),
  space_total bigint, space_free bigint, space_used bigint, is_tape varchar(1), type varchar(20), blacklisted char(1),
  space_expired bigint, space_timestamp timestamp, blacklisted_read char(1), blacklisted_write char(1),
  detailed_status jsonb, space_min_free bigint, space_unavailable bigint);
CREATE TABLE panda_ddm_relation (
  panda_site_name varchar(52) NOT NULL, ddm_endpoint_name varchar(52) NOT NULL, is_local char(1), roles varchar(60),
  order_read integer, order_write integer, default_read char(1), default_write char(1), scope varchar(52) NOT NULL,
  PRIMARY KEY (panda_site_name, ddm_endpoint_name, scope));
CREATE TABLE network_matrix_kv (
  src varchar(256) NOT NULL, dst varchar(256) NOT NULL, key varchar(256) NOT NULL, value bigint, ts timestamp,
  PRIMARY KEY (src, dst, key));
CREATE TABLE jobs_share_stats (
  ts timestamp, gshare varchar(32), computingsite varchar(128), jobstatus varchar(15) NOT NULL, maxpriority bigint,
  njobs bigint, hs bigint, vo varchar(32), workqueue_id integer, resource_type varchar(56), nucleus varchar(52));
-- jobsDefined4's counts (defined, assigned, waiting, pending), the same columns as JOBS_SHARE_STATS
CREATE TABLE jobsdefined_share_stats (
  ts timestamp, gshare varchar(32), computingsite varchar(128), jobstatus varchar(15) NOT NULL, maxpriority bigint,
  njobs bigint, hs bigint, vo varchar(32), workqueue_id integer, resource_type varchar(56), nucleus varchar(52));
CREATE TABLE jedi_tasks (
  jeditaskid bigint NOT NULL PRIMARY KEY, taskname varchar(256), status varchar(64) NOT NULL,
  username varchar(128) NOT NULL, creationdate timestamp NOT NULL, modificationtime timestamp NOT NULL,
  frozentime timestamp, cloud varchar(10), site varchar(60), prodsourcelabel varchar(20), workinggroup varchar(32),
  vo varchar(32),
  corecount integer, processingtype varchar(64), taskpriority integer, currentpriority integer,
  architecture varchar(256), transhome varchar(128), outdiskcount integer, outdiskunit varchar(32),
  workdiskcount integer, ramcount integer, ramunit varchar(32), iointensity integer, parent_tid bigint,
  eventservice smallint, cputime integer, cputimeunit varchar(32), cpuefficiency smallint, basewalltime integer,
  walltime integer, walltimeunit varchar(32), splitrule varchar(100),
  nucleus varchar(52), baseramcount integer, gshare varchar(32), resource_type varchar(56), diskio integer,
  container_name varchar(200));
CREATE TABLE jedi_datasets (
  jeditaskid bigint NOT NULL, datasetid bigint NOT NULL, datasetname varchar(255) NOT NULL, type varchar(20) NOT NULL,
  creationtime timestamp NOT NULL, modificationtime timestamp NOT NULL, masterid bigint, nfiles bigint,
  nevents bigint, neventsused bigint, PRIMARY KEY (jeditaskid, datasetid));
CREATE TABLE jobsactive4 (
  pandaid bigint NOT NULL DEFAULT '0' PRIMARY KEY, prodsourcelabel varchar(20) DEFAULT 'managed',
  jobstatus varchar(15) NOT NULL DEFAULT 'activated', computingsite varchar(128), workinggroup varchar(20),
  processingtype varchar(64), produsername varchar(60), corecount smallint, gshare varchar(32), vo varchar(16));
CREATE TABLE sw_tags (panda_queue varchar(50), data text, last_update timestamp);
CREATE TABLE global_shares (name varchar(32) NOT NULL PRIMARY KEY, value smallint NOT NULL, parent varchar(32),
  throttled char(1) DEFAULT 'Y');
CREATE TABLE jedi_work_queue (
  queue_id integer NOT NULL PRIMARY KEY, queue_name varchar(16) NOT NULL, queue_type varchar(16) NOT NULL,
  vo varchar(16) NOT NULL, status varchar(64) DEFAULT 'active', partitionid integer, stretchable smallint,
  queue_share integer, queue_order integer, criteria varchar(256), variables varchar(256),
  queue_function varchar(16) DEFAULT 'Resource');
CREATE TABLE config (
  app varchar(64) NOT NULL, component varchar(64) NOT NULL, key varchar(64) NOT NULL, value varchar(256) NOT NULL,
  type varchar(64) NOT NULL, vo varchar(32) NOT NULL, descr varchar(256) NOT NULL, value_json jsonb,
  PRIMARY KEY (app, component, key, vo));
-- PANDAMETA's SiteData (pg_PANDAMETA_TABLE.sql), in its own schema as in PanDA's PostgreSQL layout.
CREATE SCHEMA doma_pandameta;
CREATE TABLE doma_pandameta.sitedata (
  site varchar(60) NOT NULL, flag varchar(30) NOT NULL, hours integer NOT NULL DEFAULT '0', nwn integer,
  laststart timestamp, lastend timestamp, lastpilot timestamp, getjob integer NOT NULL DEFAULT '0',
  updatejob integer NOT NULL DEFAULT '0', lastmod timestamp NOT NULL DEFAULT LOCALTIMESTAMP);
