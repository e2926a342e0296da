"""Rule profiles: where the seeds and PanDA's code differ, which rule a brokerage follows.

A profile is chosen like a gdpconfig key, ``RULES`` (``--set RULES=panda-1.0.4``, the tuning page, the API):
``seed`` (the default) follows the seed documents, ``panda-1.0.4`` follows PanDA's code at that version (the one
``brokerage crosscheck`` runs). Every difference is one named ``Switch`` with the seed's sentence, the code's
behaviour and the JEDI line; a check asks ``rule(config, NAME)`` and declares ``Reads(config=("RULES",))`` when
it is memoised. The table of switches is docs/crosscheck.md's (``switch_table`` writes it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from brokerage.model.analysis_switches import ANALYSIS_SWITCHES
from brokerage.model.switch import Switch

__all__ = ["ANALYSIS_SWITCHES", "PANDA_104", "PROFILES", "PROFILE_KEY", "SEED", "SWITCHES", "Switch", "rule"]

SEED = "seed"
PANDA_104 = "panda-1.0.4"
PROFILE_KEY = "RULES"


SWITCHES: tuple[Switch, ...] = (
    Switch("no_test_name_rule", "production", "queues with 'test' in the name are not preliminary candidates (nor "
           "a nucleus' own queues in the nucleus job check)", "every production/unified queue is a candidate and counts "
           "for its nucleus' job check (no name rule)", "AtlasProdJobBroker.py:296 (WORLD list), SiteMapper.py:202"),
    Switch("standby_is_online", "production", "the queue status must be online",
           "online and standby pass", "AtlasProdJobBroker.py:401"),
    Switch("no_nucleus_only", "production", "priority >= 800 or scouts: only the nucleus' queues",
           "no such filter (the opportunistic check instead)", "AtlasProdJobBroker.py:509"),
    Switch("temporary_deferred", "production",
           "a temporary problem removes the queue where it is found",
           "temporary problems are recorded and applied by a final 'temporary problem check', so a later "
           "permanent filter names the queue's skip", "AtlasProdJobBroker.py:1574"),
    Switch("io_check_late", "production", "the IO check comes right after the zero share check (seed order)",
           "the IO check runs after the pilot check, just before the temporary problem check",
           "AtlasProdJobBroker.py:1602"),
    Switch("sw_check_needs_transhome", "production", "every task's architecture and container are checked",
           "the SW/HW check runs only for tasks with a transHome", "AtlasProdJobBroker.py:773"),
    Switch("no_auto_queues", "production",
           "releases=ANY skips the check; an explicit list passes when it names the task's release",
           "queues without AUTO pass only with releases=['ANY'] and no CPU/GPU spec; explicit lists always fail",
           "AtlasBrokerUtils.py:1127 (no_auto_sites), AtlasProdJobBroker.py:836"),
    Switch("hw_spec_needs_cpu_entry", "production", "a queue without a cpu architecture entry accepts any CPU",
           "the task's architecture gives a CPU spec (its first '-' part), and an AUTO queue describing no cpu "
           "architecture fails it", "AtlasBrokerUtils.py:996, JediTaskSpec.py:1380"),
    Switch("running_as_jedi", "production",
           "nRunning = the largest of running, min(nBatchJob, 20) when running < 20, numSlots > 0, starting "
           "when numSlots = 0",
           "Harvester workers (<= 20) replace nRunning only at UPS queues with pilots for priority <= "
           "MAX_PRIO_TO_BOOTSTRAP; numSlots ignored above it, 0 adds starting, > 0 gives max(int(numSlots / "
           "coreCount), nRunning)", "AtlasProdJobBroker.py:1777-1803"),
    Switch("input_completeness_precheck", "production", "(the seed has no input pre-check)",
           "before any filter, every input dataset needs a (nearly) complete replica at a readable endpoint, else "
           "the brokerage fails: '<ds> is incomplete at any online storage'", "AtlasProdJobBroker.py:185-290"),
    Switch("zeroshare_as_jedi", "production",
           "fairsharepolicy by processing group (evgen and simul one group 'evgensimul'); group= names the "
           "processing group; a policy sharing out types zero-shares the others; urgent tasks ignore it",
           "evgen and simul are separate groups; group= matches the task's working group; no matching sub-policy "
           "allows the queue; urgent tasks are checked too; merge jobs skip the priority fields",
           "AtlasBrokerUtils.py:365-470, ProcessGroups.py:3"),
    Switch("blacklist_temporary", "production", "an endpoint blacklisted for the job's activity removes the queue",
           "the blacklist test is part of the storage check, a temporary problem (applied at the end); a queue short "
           "of output space keeps that check's -disk and is not tested for the blacklist",
           "AtlasProdJobBroker.py:1005-1021"),
    Switch("links_as_jedi", "production",
           "three link filters: blocked link (-link_unusable), files queued on the link > NQUEUED_SAT_CAP "
           "(temporary), files queued to the nucleus > NQUEUED_NUC_CAP_FOR_JOBS (temporary, every queue)",
           "one chain per satellite queue: nucleus unwritable over WAN (-dest_blacklisted, temporary), total queued "
           ">= NQUEUED_NUC_CAP_FOR_JOBS (-links_full, temporary), no network data (pass), closeness -1 "
           "(-link_unusable), link queued >= NQUEUED_SAT_CAP (temporary); the nucleus' own queues pass",
           "AtlasProdJobBroker.py:444-515"),
    Switch("nucleus_needs_production_queue", "production", "a site with role nucleus is a nucleus",
           "SiteMapper knows a nucleus only through a production or unified queue of its site; a task whose "
           "nucleus has none fails ('unknown nucleus')", "SiteMapper.py:202-243, AtlasProdJobBroker.py:176"),
    Switch("memory_as_jedi", "production",
           "(baseRamCount + ramCount x coreCount) x 0.9 (MBPerCore; ramCount alone for MB) within [minrss, maxrss]",
           "baseRamCount is added only for per-core units; int(x 0.9); merge jobs are checked against mergeRamCount "
           "(none in the snapshot: not checked)", "AtlasProdJobBroker.py:872-920, InputChunk.py:1027"),
    Switch("final_stage_as_jedi", "production",
           "skip (temporary) when activated+starting or defined+activated+assigned+starting > 2 x running; the "
           "best 10 by weight",
           "after the temporary problem check: non-unified queues with activated+starting(+assigned when input "
           "moves) > max(NQUEUELIMITSITE_<gshare> (20), 2 nRunning) (-cap), express network threshold "
           "(-lowNetworkWeight), resource-type cap (-cap_rt); queues with no job at all get weight 0 for priority "
           "<= MAX_PRIO_TO_BOOTSTRAP and come first; then the best 10", "AtlasProdJobBroker.py:1725-2110"),
    Switch("network_as_jedi", "production",
           "throughput of 1 h, else 1 d, else 1 w; 1.7 on (50, 75] MB/s (the seed's plot)",
           "1 w, overwritten by 1 d, then 1 h, stopping at the first missing key (no 1 w: no throughput at all); "
           "1.6 on (50, 75] MB/s", "AtlasProdJobBroker.py:1880-1905, convertMBpsToWeight"),
    Switch("walltime_as_jedi", "production",
           "cpuTime x nEvents / (C x P x cpuEfficiency) + baseTime within [mintime, maxtime]; scouts and merges "
           "need maxtime >= 24 h", "one pass: (maxtime - baseWalltime) x cores x corepower x cpuEfficiency (int) "
           "against cpuTime x events, the events of the largest sub-chunk (whole files up to nEventsPerJob; one "
           "file for merge jobs), "
           "divided by 3 (defMaxAttemptEsJob) for event service; scouts, merges and tasks without cpuTime need that "
           "scaled maxtime >= 24 h x 10 HS06 x cores; a task without an estimate fails every queue with a mintime "
           "(-longwalltime)",
           "AtlasProdJobBroker.py:1034-1190, InputChunk.getMaxAtomSize"),
    Switch("nopilot_as_jedi", "production", "skip queues without pilots for the last NO_PILOT_HOURS",
           "queues with numSlots defined are exempt, and so are test-label (not express) and pre-assigned tasks",
           "AtlasProdJobBroker.py:1483-1505"),
    Switch("jumbo_check", "production", "(the seed has no jumbo rule)",
           "a task without jumbo jobs skips queues whose catchall holds useJumboJobs (-jumbo)",
           "AtlasProdJobBroker.py:617-632"),
    Switch("nucleus_as_jedi", "nucleus",
           "status, backlog, storages, space (free + expired - output of the RW), locality, job, full chain; "
           "weight = [local/total x] tape x (free+expired)/total / max(rwOffset, RW)",
           "a task whose input has no complete WAN-readable replica fails; the endpoint check adds read_wan / "
           "write_wan blacklists and uses usable - int(fullRW/10/24/3600 x 0.25) (full RW, all work queues); the "
           "job check (PanDA's filters, hint mode, where the task's own site does not make it pre-assigned) comes "
           "before the data check; weight = (1/RW if RW >= 50 HS06 s "
           "else 1) x [ava/tot] x [0.001 tape] x usable/total x min(FREE_DISK_CUTOFF, usable TB), RW of the task's "
           "share at its priority and above", "AtlasProdTaskBroker.py:240-590, AtlasProdJobBroker.py:183-200"),
    Switch("scratch_as_jedi", "production",
           "inputDiskCount + max(0.5 GB, outDiskCount x nEvents) + workDiskCount < maxwdir / coreCount",
           "max(outDisk x events, 1.5 GiB) + workDisk + 300 MiB, plus the whole input files (the largest sub-chunk: "
           "whole files up to nEventsPerJob) unless the job reads directly (allowInputLAN and direct_access_lan), "
           "against maxwdir x task cores / queue cores (a unified queue's own cores, not its pseudo queue's)",
           "AtlasProdJobBroker.py:927-985, JediTaskSpec.getWorkDiskSize"),
    Switch("connectivity_as_jedi", "production",
           "network_connectivity full > http > none; ip_stack IPv4 / IPv6 accept only that stack, unset accepts "
           "only tasks without one", "a full/http task needs a 'full' queue ('http' for http); a task stack must "
           "equal the queue's, a task without one is not checked; 'none' is no value JEDI stores (no check)",
           "AtlasProdJobBroker.py:1213-1250, task_split_rules.enum_ipConnectivity"),
    Switch("timeout_exemptions_as_panda", "simulator",
           "disable all timeout rules when the queue status is paused or the queue has disableReassign in catchall",
           "a paused queue skips only the production heartbeat watcher (H8); catchall disableReassign skips only the "
           "inactive-site, long-activated and long-starting reassignments (R5, R8, R9)",
           "copyArchive sitesToSkipTO / sitesToDisableReassign, SiteSpec.disable_reassign"),
    # the simulator's task and job lifecycle (docs/lifecycle.md's rule table)
    Switch("retry_commands_as_jedi", "simulator", "tasks can be retried if they are in finished or exhausted state",
           "retry is accepted from finished, failed and exhausted (done refused; aborted refused by the server's "
           "command check)", "JediDBProxy statusToRetry, PandaServer task command check"),
    Switch("memory_retry_as_jedi", "simulator",
           "a job out of memory: its ramCount to the next of [1000, 2000, 3000, 4000, 6000, 8000] above max(maxPSS, "
           "current ramCount); the whole task when 30 % of its jobs failed for memory",
           "the job's de-compensated minRamCount (not maxPSS) to the next step; the whole task when over 30 % of its "
           "input files have a ramCount above the task's", "retryModule increaseRamLimitJobJEDI"),
    Switch("throttle_as_jedi", "simulator",
           "throttled when the largest attemptNr in the task is a multiple of 5, for 120 x int(max(attemptNr)/5)^2 "
           "minutes (closed jobs count as attempts)",
           "throttled when int(avg failedAttempt / 5) > numThrottled over ready/running master files, for 120 x n^2 "
           "minutes with n the throttle count (closed jobs do not count)", "AtlasProdWatchDog doActionForThrottled"),
    Switch("pending_as_jedi", "simulator",
           "a task whose job brokerage skipped every queue is pending 1 hour (production), 20 min (analysis)",
           "waitForPending 60 min for every label; production at priority >= 950 after 10 min, >= 900 after 30 min",
           "WatchDog reactivatePendingTasks_JEDI"),
    Switch("exhausted_as_jedi", "simulator", "an exhausted task waits for manual intervention or a timeout of 10 days",
           "waitForExhausted 48 h, then finishing", "WatchDog kickExhaustedTasks_JEDI"),
    Switch("scout_assess_as_jedi", "simulator",
           "once the first 5 scout jobs are finished the task's ramCount and cpuTime are set from them",
           "scouting ends when every exposed scout input is done, or (managed tasks, early avalanche) when >= 50 % "
           "of the scout jobs finished", "prepareTasksToBeFinished_JEDI"),
    Switch("holding_as_jedi", "simulator",
           "3 hours for holding jobs with currentPriority >= 800, TIMEOUT_holding (days) below",
           "3 h for currentPriority > 800 (strict) and for analysis holding jobs, TIMEOUT_holding (48 h) for all",
           "copyArchive holding watchers (H4, H5, H6)"),
    Switch("transfer_timeout_as_jedi", "simulator",
           "transtimehi days for transferring jobs with currentPriority >= 800, transtimelo days below (the queue's "
           "CRIC values)", "hard-coded 2 days at priority >= 800 for non-analysis jobs, else 6 days, from endTime",
           "datasetManager finisher (TRANSFER_TIMEOUT_HI_PRIORITY / _LO_PRIORITY)"),
    Switch("basewalltime_as_jedi", "simulator",
           "baseWalltime, the part of the job not scaling with CPU power, defaults to 600 s",
           "an unset baseWalltime counts as 0 s", "JediTaskSpec.baseWalltime, JobSplitter walltime"),
    Switch("jobsize_as_jedi", "simulator",
           "a job's disk is estimated as input + max(output, 2.5 GB) + workdir, within nGBPerJob and within the "
           "queue's maxwdir (seed 003's nGBPerJob)",
           "input + max(output, 1.5 GB) + workDiskCount + 300 MB within nGBPerJob + 1.5 GB, or without nGBPerJob "
           "within maxwdir; with nGBPerJob only input + output count against maxwdir; the scouts' new nGBPerJob "
           "subtracts 1.5 GB", "JobSplitter, InputChunk.getSubChunk, "
           "JediTaskSpec.getWorkDiskSize, getScoutJobData_JEDI newNG"),
    Switch("tq_split_as_dirac", "dirac", "all jobs with identical requirements are grouped in one TaskQueue",
           "a task queue holding DIRAC_MAX_JOBS_IN_TQ (5000) jobs takes no more; the next jobs of the same "
           "requirements open a new one", "DIRAC TaskQueueDB.py (task-queue definition)"),
    Switch("evgensimul_6h_as_jedi", "simulator",
           "6 hours for activated evgen/simul jobs at T2 (nRunning=0 or nActivated/nRunning>0) and at T1 except US "
           "and ND (seed 003's production timeouts)", "no such rule: those jobs wait for the 48 h activated rule",
           "copyArchive (absent)"),
    Switch("stretchable_shares_as_jedi", "simulator",
           "unused CPU goes to the active queues (shares with activated or running jobs), stretchable queues first, "
           "by their original shares", "every leaf share is pledged its tree share whether it has jobs or not "
           "(STRETCHABLE is loaded, never read)", "GlobalShares.py sort_branch_by_current_hs_distribution, "
           "WorkQueue.py"),
    Switch("age_ordered_dispatch_as_panda", "simulator",
           "the job dispatcher does the fairshare, defined for the number of running jobs (seed 003 "
           "'Fairshare'): every getJob takes the most under-pledged share's activated job, then the highest "
           "priority, then the oldest", "with probability (SLOPPY_DISPATCH_RATIO + 1) / 100 (0 read as unset: 10) "
           "a getJob takes the queue's oldest activated job whatever its share", "entity_module.py "
           "getSortingCriteria, getCriteriaByAge"),
    Switch("work_queue_partitions_as_jedi", "simulator",
           "a partition queue has no criteria; a task of one of its sub queues belongs to the partition too, and "
           "JEDI works with the partition", "PARTITIONID is loaded, never read: every work queue is matched and run "
           "on its own", "WorkQueue.py, WorkQueueMapper"),
)  # fmt: skip
"""Every difference between the seed and panda-1.0.4 profiles, each a switch."""

# --- the analysis broker's switches (crosscheck): brokerage/model/analysis_switches.py ---
SWITCHES = (*SWITCHES, *ANALYSIS_SWITCHES)

# --- the production broker's switches added by the crosscheck ---
SWITCHES += (
    Switch(
        "io_as_jedi",
        "production",
        "missing input at the queue must be < SIZE_CUTOFF_TO_MOVE_INPUT GB and < NUM_CUTOFF_TO_MOVE_INPUT files",
        "only complete replicas count (disk, then disk or tape); a queue fails when even with tape more than "
        "the cutoffs must move, a tape-only queue fails while another has the input on disk, no queue passing "
        "disables the check; not for merge, pre-assigned or event service tasks",
        "AtlasProdJobBroker.py:1560-1680",
    ),
    Switch(
        "blacklist_as_jedi",
        "production",
        "an endpoint of the queue blacklisted (OFF/TEST) for reading/writing over LAN, or over WAN at satellites",
        "only DATADISK endpoints are tested (a queue without a DATADISK input or output endpoint fails); the "
        "nucleus' queues need no WAN except to receive input at endpoints without a (nearly) complete replica "
        "(none when no endpoint has one); satellites fail -source_blacklist when no complete replica is WAN-readable",
        "AtlasProdJobBroker.py:1014-1021, AtlasBrokerUtils.py:1215-1290",
    ),
    Switch(
        "remoteio_not_for_merge",
        "production",
        "tasks reading input only by direct access skip queues that do not support it",
        "merge jobs are not checked (-remoteio only for other jobs)",
        "AtlasProdJobBroker.py:945",
    ),
    Switch(
        "inactive_as_jedi",
        "production",
        "for priority >= 800, scout or merge jobs, skip queues where no job started for INACTIVE_HOURS although jobs "
        "were activated",
        "laststart older than 2 h (hard-coded) with activated + starting jobs of every share; not for pre-assigned "
        "tasks",
        "AtlasProdJobBroker.py:554-590",
    ),
    Switch(
        "transferring_as_jedi",
        "production",
        "skip if transferring > max(transferring_limit, 2 x running)",
        "not checked at the nucleus' queues, queues writing to a storage of the nucleus or without a default "
        "output storage, nor at online queues whose output storage the nucleus' first queue reads",
        "AtlasProdJobBroker.py:1302-1344, DataServiceUtils.getSitesShareDDM",
    ),
    Switch(
        "t1weight_as_jedi",
        "production",
        "t1Weight=0 or unset: WORLD_NUCLEUS_WEIGHT if ioIntensity >= T1_WEIGHT_IO_INTENSITY; priority >= "
        "T1_WEIGHT_HIGH_PRIO_MIN gives max(t1Weight, T1_WEIGHT_HIGH_PRIO)",
        "ioIntensity > 500 (strictly); scouts get the high-priority floor too, event service and pre-assigned tasks "
        "never; merge jobs keep a negative t1Weight (then the floor 1)",
        "AtlasProdJobBroker.py:520-527, 1389-1417",
    ),
    Switch(
        "data_weight_as_jedi",
        "production",
        "the data factor counts the input available at the queue's endpoints (disk and tape, best endpoint per "
        "dataset)",
        "only disk counts: every file where a complete replica is on disk, none where the only complete one is on "
        "tape, else the partial disk replicas (of the master only, and not when ioIntensity > IO_INTENSITY_CUTOFF "
        "without pre-staging: secondaries are looked up complete_only); merge "
        "jobs count any replica as complete",
        "AtlasProdJobBroker.py:1545-1612, 1809, 1850-1860, AtlasDDMClient.getAvailableFiles",
    ),
    Switch(
        "non_local_check",
        "production",
        "(the seed has no rule for queues using only local data)",
        "in the weight stage, before the queue cap: a queue whose catchall holds use_only_local_data is skipped "
        "(-non_local) when any input (a MB or a file) is not on its disk",
        "AtlasProdJobBroker.py:1849-1857, 1988",
    ),
    Switch(
        "diskio_per_core",
        "production",
        "the task's diskIO against the queue's limit",
        "a multi-core task's diskIO is floor-divided by the (unified) queue's coreCount before the comparison",
        "AtlasProdJobBroker.py:684-722",
    ),
    Switch(
        "unified_any_pseudo",
        "production",
        "a unified queue is brokered as the pseudo queue of the task's resource type",
        "the scan list holds every pseudo queue of a unified queue (one per resource type its cores allow); the "
        "unified queue stays while any passes and is named by the check that removes its last pseudo queue",
        "AtlasProdJobBroker.py:296-401, 741, SiteMapper.py:105-118, JobBrokerBase.py:117-126",
    ),
    Switch(
        "es_ucore_check",
        "production",
        "(the seed has no rule for event service on unified queues)",
        "an event service task skips the single-core pseudo queues of unified queues (-es_ucore)",
        "AtlasProdJobBroker.py:1280-1290",
    ),
    Switch(
        "many_assigned_as_jedi",
        "production",
        "manyAssigned = assigned / activated, within [1, 2]",
        "manyAssigned = (assigned + 1) / (activated + 1), within [1, 2]",
        "AtlasProdJobBroker.py:1805-1807",
    ),
    Switch(
        "sw_check_as_jedi",
        "production",
        "the regexp in sw_platform is resolved to a relevant string in the cmtconfigs list of the queue (first); "
        "'any' or cvmfs_tag in the cvmfs list and ('any' or '/cvmfs' in the containers list, or sw_platform in the "
        "cmtconfigs list); if the above is not the case, ('any' in containers or no base_platform) and a tag with "
        "sw_platform, sw_project and sw_version",
        "hardware and release first, with sw_platform as written (a regexp is resolved only afterwards: a queue "
        "failing both is -cache); with the cvmfs repository the cmtconfigs route needs a task without base_platform "
        "and the tags are not read; the tags only when the queue lacks the repository; an unmatched regexp with a "
        "leading architecture alternation '(a|b)-rest' resolves with the queue's CPU architectures",
        "AtlasProdJobBroker.py:764-866, AtlasBrokerUtils.py:1061-1131 (JsonSoftwareCheck), 1150-1212",
    ),
    Switch(
        "express_strict_priority",
        "production",
        "processingType=urgent or priority>=1000 makes the FTS transfers of inputs and outputs use the express "
        "activity (an express task: EXPRESS_PRIORITY)",
        "InputChunk.isExpress: processingType urgent or currentPriority > 1000 (strictly), so a task at 1000 is not "
        "express (no network threshold, the queue caps apply, the non-express link queue)",
        "InputChunk.py:1020-1024, AtlasProdJobBroker.py:433, 1990-2013",
    ),
    Switch(
        "job_broker_all_datasets",
        "production",
        "only the primary input dataset is considered if taskBrokerOnMaster is set (a rule of the nucleus' data "
        "locality check; the job broker follows it too)",
        "only the task broker reads taskBrokerOnMaster: the job broker's IO check, data weight and input counts use "
        "every input dataset of the chunk",
        "AtlasProdTaskBroker.py:254 (the only reader), AtlasProdJobBroker.py:1545-1612",
    ),
    Switch(
        "nucleus_state_always_active",
        "nucleus",
        "the nucleus status must be 'ACTIVE' (seed 003: all nuclei are ACTIVE for now; could be set to another "
        "status to be skipped by task brokerage in the future)",
        "every site's state is hard-coded ACTIVE when the site specs are read, so the status check never skips a "
        "nucleus (the snapshot's site state does not reach JEDI)",
        "entity_module.py:1846 (pandasite_state), AtlasProdTaskBroker.py:290-296",
    ),
    Switch(
        "all_capped_wait",
        "production",
        "if all sites are skipped (step 4's caps) candidates with the 3 best weights go to the next step "
        "(ALL_CAPPED_KEEP_BEST, 3)",
        "no primary candidate is left ('available sites all capped'): the task waits JOB_PENDING_MINUTES",
        "AtlasProdJobBroker.py:1901-1902",
    ),
    Switch(
        "data_check_period_as_jedi",
        "nucleus",
        "(the seed's data locality check has no time limit: it applies however long the task has waited)",
        "a task frozen (in assigning) for longer than DATA_LOCATION_CHECK_PERIOD days (7; 0 means 7) skips the data "
        "locality check: every nucleus passes it, while the weight still takes the input's tape factor (and its "
        "local fraction for IO-intensive tasks)",
        "AtlasProdTaskBroker.py:185-189, 434-437, 559-570",
    ),
    Switch(
        "best_pseudo_queues",
        "production",
        "Remaining candidates are sorted by weight. For WORLD tasks, the best 10 candidates are taken.",
        "the best 10 are pseudo queues (under unified_any_pseudo): a unified queue takes one of the 10 places per "
        "pseudo queue that passed the filters, so fewer than 10 queues may be kept",
        "AtlasProdJobBroker.py:2073-2095, JobBrokerBase.py:117-126",
    ),
    Switch(
        "full_chain_only_as_jedi",
        "nucleus",
        "Tasks can set the fullChain parameter: only to be assigned to a nucleus with bareNucleus=only",
        "fullChain=only and require are tested alike: a nucleus without a bare mode fails (-full_chain), one with "
        "bareNucleus=allow passes",
        "AtlasProdTaskBroker.py:516-526",
    ),
)

# DIRAC 9.1.22 (the package the DIRAC crosscheck runs) where it differs from the Matcher and Limiter the project
# followed (DIRAC's 2024 code; the seed has no tags and no limiter): the code profile follows the package.
SWITCHES += (
    Switch("dirac_processor_tags_from_one", "dirac",
           "NumberOfProcessors n offers the tags 2Processors..nProcessors (and MultiProcessor when n > 1)",
           "NumberOfProcessors n offers 1Processors..nProcessors (and MultiProcessor when n > 1)",
           "DIRAC 9.1.22 Matcher.py _processResourceDescription (range(1, n + 1))"),
    Switch("dirac_ram_not_tags", "dirac",
           "MaxRAM m (MB) offers the tags 2GB..<m/1000>GB",
           "MaxRAM adds no tag: it is matched against a task queue's MinRAM (tq_RAM_requirements; the snapshot's "
           "jobs have none), so a job's GB tag needs a pilot that lists it in Tags",
           "DIRAC 9.1.22 Matcher.py _processResourceDescription, TaskQueueDB.py __generateTQMatchSQL (MaxRAM)"),
    Switch("dirac_limits_job_columns", "dirac",
           "a running limit on any match field (Site, GridCE, Platform, JobType, Tag, Owner, OwnerGroup, CPUTime) "
           "builds a negative condition",
           "only attributes that are columns of JobDB's Jobs table build one (JobType, Site, Owner, OwnerGroup); "
           "a limit on Platform, GridCE, Tag or CPUTime is logged 'Attribute does not exist' and ignored",
           "DIRAC 9.1.22 Limiter.py __getRunningCondition (jobDB.jobAttributeNames), JobDB.sql (Jobs)"),
    Switch("dirac_ce_limits_merged", "dirac",
           "a CE-level limit replaces the site's limit on the same value",
           "the site's limits and the pilot CE's limits are checked apart (both against the site-wide count) and "
           "their hits merged: a value is limited when either limit is reached",
           "DIRAC 9.1.22 Limiter.py getNegativeCondForSite (mergeCond)"),
    Switch("dirac_owner_groups_unbracketed", "dirac",
           "a pilot sending an Owner and several OwnerGroups matches a task queue of one of those groups (its "
           "owner's, or any owner's when the group has JobSharing) that meets every other requirement",
           "the per-group conditions are joined with OR and ANDed with the rest without brackets ('c1 OR c2 AND "
           "rest'): a task queue meeting any group's condition but the last one's passes every other condition "
           "(CPUTime, Site, Tags, limits, the mask's Test-only rule)",
           "DIRAC 9.1.22 TaskQueueDB.py __generateTQMatchSQL (ownerConds)"),
)  # fmt: skip

PROFILES: dict[str, frozenset[str]] = {
    SEED: frozenset(),
    PANDA_104: frozenset(s.name for s in SWITCHES),
}
PROFILE_NAMES: tuple[str, ...] = tuple(PROFILES)
BY_NAME: dict[str, Switch] = {s.name: s for s in SWITCHES}


def rule(config: Mapping[str, Any] | Any, name: str) -> bool:
    """True when CONFIG's profile (gdpconfig ``RULES``) follows PanDA's code for switch NAME.

    Usage: ``if rule(ctx.config, "standby_is_online"): ...``
    """
    if name not in BY_NAME:
        raise KeyError(f"unknown rule switch {name!r}; known: {', '.join(BY_NAME)}")
    return name in PROFILES[str(config[PROFILE_KEY])]


def switch_table() -> list[str]:
    """The switches as a Markdown table (docs/crosscheck.md)."""
    rows = ["| switch | broker | seed (profile `seed`) | PanDA 1.0.4 (profile `panda-1.0.4`) | JEDI line |",
            "|---|---|---|---|---|"]  # fmt: skip
    rows += [f"| `{s.name}` | {s.broker} | {s.seed} | {s.code} | {s.where} |" for s in SWITCHES]
    return rows
