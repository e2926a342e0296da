"""The analysis broker's rule-profile switches: where AtlasAnalJobBroker 1.0.4 differs from the seeds."""

from __future__ import annotations

from brokerage.model.switch import Switch

_A = "AtlasAnalJobBroker.py"
ANALYSIS_SWITCHES: tuple[Switch, ...] = (
    Switch(
        "anal_order_as_jedi",
        "analysis",
        "throttles; preliminary candidates; persistent filters (status, locality, diskIO, cores, VP, software, "
        "memory, scratch, storage, blacklist, walltime, pilot); temporary filters; pass 2 without the locality "
        "check when the first leaves nothing for persistent issues or closed jobs; locality off for priority >= "
        "ANAL_LOCALITY_PRIORITY or low ioIntensity",
        "loop 1 with the input data check (per dataset: complete disk replicas first, else complete anywhere, "
        "incomplete ones when no truly complete disk replica exists, the union when no queue has all; no skip "
        "line), then status, zero share, diskIO, avoid VP (union locality or loop 2), cores, closed jobs, SW/HW, "
        "memory, scratch, storage, walltime, pilot, include/exclude, pre-assignment, overload; loop 2 without "
        "the data check whenever every input dataset is WAN-readable (getNumSitesPerJob() >= 1); the first "
        "loop with a candidate wins, each queue keeps its first skip; no (nearly) complete readable replica: "
        "the task fails ('incomplete at online storage')",
        f"{_A}:470-1780, AtlasBrokerUtils.py:150-316",
    ),
    Switch(
        "anal_status_as_jedi",
        "analysis",
        "the queue status must be online unless the queues are pre-assigned",
        "only offline fails; brokeroff and test fail unless the task names includedSite or pre-assigns that "
        "site (standby and others pass)",
        f"{_A}:663-682",
    ),
    Switch(
        "anal_zeroshare_check",
        "analysis",
        "(the seed's analysis broker has no zero share check)",
        "AtlasBrokerUtils.hasZeroShare for tasks not pre-assigned (merge chunks skip the priority fields)",
        f"{_A}:688-704",
    ),
    Switch(
        "anal_diskio_per_core",
        "analysis",
        "the task's diskIO against the queue's limit",
        "a multi-core task's diskIO divided by the queue's coreCount",
        f"{_A}:712-760",
    ),
    Switch(
        "anal_closed_check",
        "analysis",
        "(closed jobs count only in the failed/closed check)",
        "queues with any closed job of the task in the last TW_DONE_JOB_STAT hours are skipped (-closed), "
        "not for pre-assigned tasks or merge chunks",
        f"{_A}:876-893",
    ),
    Switch(
        "anal_software_as_jedi",
        "analysis",
        "every task's release, cache and architecture are checked",
        "PanDA's AUTO rules (no_auto_queues, hw_spec_needs_cpu_entry) for every task not pre-assigned",
        f"{_A}:906-1060",
    ),
    Switch(
        "anal_sw_check_as_jedi",
        "analysis",
        "'any' or cvmfs_tag in the cvmfs list and ('any' or '/cvmfs' in the containers list, or sw_platform in the "
        "cmtconfigs list); if the above is not the case, ('any' in containers or no base_platform) and a tag with "
        "sw_platform, sw_project and sw_version; the regexp in sw_platform is resolved in the cmtconfigs list",
        "the production broker's order and resolution (sw_check_as_jedi) with the analysis broker's arguments: "
        "need_container off (a base platform changes nothing: the cmtconfigs route and the tags stay open); the "
        "transHome read after stripping 'AnalysisTransforms-' and '_' as '-' (a release X.Y.Z or a cache: atlas; a "
        "time stamp: nightlies with need_cvmfs, tags never read; no transHome: platform, hardware and container "
        "only; a base release not of two parts: no queue)",
        f"{_A}:897-1060, AtlasBrokerUtils.py:931-1131 (JsonSoftwareCheck)",
    ),
    Switch(
        "anal_memory_as_jedi",
        "analysis",
        "(baseRamCount + ramCount x coreCount) x 0.9 within [minrss, maxrss]",
        "int(ramCount [x queue cores for per-core units] x 0.9), no baseRamCount; merge chunks not checked "
        "(no mergeRamCount)",
        f"{_A}:1063-1100",
    ),
    Switch(
        "anal_scratch_as_jedi",
        "analysis",
        "(0 or inputDiskCount) + outDiskCount x inputDiskCount + workDiskCount < maxwdir / coreCount",
        "direct-IO-only tasks skip queues without direct IO (-remoteio); outDisk x effective MB + workDisk + 300 "
        "MiB (+ the input bytes unless read directly; 2 x one file for merges) against maxwdir x task cores / "
        "queue cores",
        f"{_A}:1103-1175",
    ),
    Switch(
        "anal_storage_as_jedi",
        "analysis",
        "free + expired > STORAGE_MIN_FREE_SIZE, then the LAN/WAN blacklists with their own codes",
        "output space_usable >= STORAGE_MIN_FREE_SIZE_OUTPUT (200 GB), then check_endpoints_with_blacklist "
        "(WAN only for queues without the data) as one code, -blacklist",
        f"{_A}:1180-1232",
    ),
    Switch(
        "anal_walltime_as_jedi",
        "analysis",
        "the seed's walltime and scout walltime checks",
        "cpuTime x events against the scaled maxtime/mintime (no check for merge chunks or without an "
        "estimate); scouts and tasks without cpuTime need a scaled maxtime of 24 h x 10 HS06 x cores",
        f"{_A}:1237-1372",
    ),
    Switch(
        "anal_overload_as_jedi",
        "analysis",
        "skip queues if defined+activated+assigned+starting > 2 x max(20, running)",
        "nQueue > OVERLOAD_MIN_QUEUE and (nRunning = 0 or nQueue/nRunning > the gshare's grand "
        "ratio x OVERLOAD_RATIO_OFFSET) in the task's gshare, unless every queue left is overloaded; not for "
        "merge chunks",
        f"{_A}:1545-1610",
    ),
    Switch(
        "anal_problems_as_jedi",
        "analysis",
        "failed/closed jobs and the Stabilizer are temporary filters (-badsite, -tmp_user_problem)",
        "they, and nQueue > OVERLOAD_MIN_QUEUE with nothing running, mark queues problematic: the final check "
        "drops them (-badsite); in loop 1 of a task ignoring locality, all candidates problematic fail the loop "
        "(-tmp_user_problem)",
        f"{_A}:1560-1760, AtlasBrokerUtils.py:518",
    ),
    Switch(
        "anal_stabilizer_as_jedi",
        "analysis",
        "nR, trr and nUsers of the PQ in the task's gshare",
        "trr scaled by the gshare's share of the queue's running jobs, nR from the _total pseudo-user, nUsers "
        "counting that pseudo-user (1 at a queue without user jobs)",
        f"{_A}:1615-1700, 1990-2040",
    ),
    Switch(
        "anal_weight_as_jedi",
        "analysis",
        "ANAL_BASIC_WEIGHT picks the original or the new basic weight; W_s "
        "from the seed's table with N_j = chunk_njobs",
        "the new basic weight always: the jobs of the chunk (getSubChunk) shared over site classes with "
        "epsilons 0.001/0.05/0.002/0.1, x the queue's share of the remaining room (shared over every candidate, "
        "the problematic ones too: the final check drops those afterwards), + 2^-20; x the data weight (1 per "
        "dataset on disk, 0.001 tape; 1 + local disk GB / 10 without locality, every file record (event range) "
        "counting its file's size, any replica complete for merge chunks)",
        f"{_A}:1775-1840, 1900-2225, 2270-2275",
    ),
    Switch(
        "anal_unified_any_pseudo",
        "analysis",
        "a unified queue is brokered as the pseudo queue of the task's resource type",
        "the scan list holds every pseudo queue of a unified queue (one per resource type its cores allow); the "
        "unified queue stays while any passes",
        f"{_A}:441, JobBrokerBase.py:70-86",
    ),
    Switch(
        "anal_user_counts_every_vo",
        "analysis",
        "a user is a (USERNAME, VO) pair: the user caps and the Stabilizer count the task's VO's user jobs",
        "the per-user counts have no VO condition (getUsersJobsStats_JEDI, countJobsPerTarget_JEDI): a user's "
        "jobs of every VO count, and users of the same name in two VOs are one",
        f"{_A}:170-172, AtlasBrokerUtils.py:724, task_standalone_module.py:3701, 4468",
    ),
    Switch(
        "anal_gpu_architecture_check",
        "analysis",
        "(the seed's analysis broker has no GPU queue rule: a GPU queue is judged by the software check only)",
        "after the CPU core check every GPU queue (catchall 'gpu') is skipped when the task has no sw_platform, "
        "else unless it is AUTO with a software description holding no 'excl' CPU or GPU attribute (the "
        "JsonSoftwareCheck gets no CPU/GPU spec); the skip line has no criteria token (ours: -architecture)",
        f"{_A}:846-873, AtlasBrokerUtils.py:932-1000",
    ),
    Switch(
        "anal_job_of_whole_files",
        "analysis",
        "the job is chunk_nevents events and chunk_input_mb of input (walltime: cpuTime x events; scratch: the "
        "input of the job)",
        "nEventsPerJob packs whole files while their events fit (a file's events or more: whole files, never a "
        "part), so the walltime and scratch checks see floor(nEventsPerJob / file events) whole files, their "
        "events and bytes (getMaxAtomSize)",
        f"{_A}:1106-1125, 1241-1255, InputChunk.py:323-375",
    ),
    Switch(
        "anal_site_lists_as_jedi",
        "analysis",
        "excludedSite, includedSite and the task's site name queues or ATLAS sites, '*' a shell wildcard over "
        "the whole name",
        "AtlasBrokerUtils.isMatched on the queue name only: a pattern with '*' is a regular expression ('*' as "
        "'.*') found anywhere in the name, any other pattern must equal it; the site pre-assigns only the queue of "
        "exactly that name, and the data check then keeps the queues holding the input when that queue is one of "
        "them, else their union when it is in it, else none (no disk-only list); a site naming no queue replaces "
        "the include list by the queues reading an endpoint of that name (none: no include list); the scan list "
        "never adds a site-named queue that is not analysis or unified; the temp user problem check does not "
        "exempt the pre-assigned queue",
        f"{_A}:117-135, 623-628, 1400-1440, 1737-1755, AtlasBrokerUtils.py:476-491",
    ),
)
