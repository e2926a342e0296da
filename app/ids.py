"""Component ids as constants, page-prefixed kebab-case strings."""

# global
URL = "url"

# overview
OVERVIEW_CONTENT = "overview-content"
OVERVIEW_POLL = "overview-poll"

# queues
QUEUES_GRID = "queues-grid"
QUEUES_EXPORT = "queues-export"
QUEUES_TASK = "queues-task"
QUEUES_CRITERIA = "queues-criteria"
QUEUES_URL_SINK = "queues-url-sink"
QUEUES_PICK = "queues-pick"  # the URL's task (or None): a callback sets the picker, a showcase task when None

# network
NETWORK_METRIC = "network-metric"
NETWORK_HEATMAP = "network-heatmap"
NETWORK_DETAIL = "network-detail"
NETWORK_URL_SINK = "network-url-sink"

# stabilizer
STAB_USER = "stab-user"
STAB_QUEUE = "stab-queue"
STAB_CONTENT = "stab-content"
STAB_URL_SINK = "stab-url-sink"

# task states
TASKS_WINDOW = "tasks-window"
TASKS_FUTURE = "tasks-future"  # a stored simulation run whose task transitions extend the diagram
TASKS_CONTENT = "tasks-content"
TASKS_URL_SINK = "tasks-url-sink"
TASKS_EMPTY = "tasks-empty"  # "hide" drops the empty states from the diagram

# nuclei
NUCLEI_TASK = "nuclei-task"
NUCLEI_DECISION = "nuclei-decision"
NUCLEI_URL_SINK = "nuclei-url-sink"
NUCLEI_PICK = "nuclei-pick"
QUEUES_HEADLINE = "queues-headline"
QUEUES_FUNNEL = "queues-funnel"
QUEUES_FACTORS = "queues-factors"
QUEUES_RANKED = "queues-ranked"
QUEUES_NOTES = "queues-notes"
QUEUES_SKIPPED = "queues-skipped"
QUEUES_SKIPPED_TITLE = "queues-skipped-title"

# tuning
TUNE_EDITOR = "tune-editor"
TUNE_RAW = "tune-raw"  # the raw edits {key: value} read from the editor, validated server-side
TUNE_SEARCH = "tune-search"
TUNE_EDIT_SUMMARY = "tune-edit-summary"
TUNE_RESET = "tune-reset"
TUNE_PERMALINK = "tune-permalink"
TUNE_SIM_LINK = "tune-sim-link"
TUNE_COPY = "tune-copy"
TUNE_TASK = "tune-task"
TUNE_TASK_VIEW = "tune-task-view"
TUNE_GRID_VIEW = "tune-grid-view"
TUNE_GRID_TRIGGER = "tune-grid-trigger"  # the edits, passed on by the task view when it is done
TUNE_GRID_PROGRESS = "tune-grid-progress"
TUNE_GRID_CANCEL = "tune-grid-cancel"
TUNE_GRID_JOB = "tune-grid-job"  # the id of the whole-grid job the page waits for
TUNE_GRID_POLL = "tune-grid-poll"  # ticks while that job runs
TUNE_FUTURE_RUN = "tune-future-run"  # simulate the next hours: stored vs proposed
TUNE_FUTURE_VIEW = "tune-future-view"
TUNE_FUTURE_JOB = "tune-future-job"
TUNE_FUTURE_POLL = "tune-future-poll"
TUNE_FUTURE_PROGRESS = "tune-future-progress"
TUNE_FUTURE_CANCEL = "tune-future-cancel"
TUNE_FUTURE_REPLICAS = "tune-future-replicas"  # seeds per config of that simulation
TUNE_SAVE_USER = "tune-save-user"
TUNE_SAVE_SECRET = "tune-save-secret"
TUNE_SAVE_COMMENT = "tune-save-comment"
TUNE_SAVE = "tune-save"
TUNE_SAVE_RESULT = "tune-save-result"
TUNE_BASE_VERSION = "tune-base-version"
TUNE_REDIRECT = "tune-redirect"
TUNE_DIFF_A = "tune-diff-a"
TUNE_DIFF_B = "tune-diff-b"
TUNE_DIFF_VIEW = "tune-diff-view"
TUNE_RESTORE = "tune-restore"
TUNE_REPORT_SCOPE = "tune-report-scope"
TUNE_REPORT_FORMAT = "tune-report-format"
TUNE_REPORT_BUTTON = "tune-report-button"
TUNE_REPORT_CANCEL = "tune-report-cancel"
TUNE_REPORT_PROGRESS = "tune-report-progress"
TUNE_REPORT_STATUS = "tune-report-status"
TUNE_REPORT_DOWNLOAD = "tune-report-download"
TUNE_REPORT_JOB = "tune-report-job"
TUNE_REPORT_FETCH = "tune-report-fetch"
TUNE_REPORT_FETCHED = "tune-report-fetched"
TUNE_REPORT_POLL = "tune-report-poll"
TUNE_URL_SINK = "tune-url-sink"
TUNE_PICK = "tune-pick"

# task detail
TASK_ID = "task-id"
TASK_JOBS = "task-jobs"

# queue detail
QUEUE_NAME = "queue-name"
QUEUE_STAB = "queue-stab"
QUEUE_VO_COUNTS = "queue-vo-counts"

# pending tasks
PENDING_CONTENT = "pending-content"
PENDING_GRID = "pending-grid"
PENDING_TRIGGER = "pending-trigger"
PENDING_PROGRESS = "pending-progress"
PENDING_PROGRESS_BOX = "pending-progress-box"
PENDING_POLL = "pending-poll"
PENDING_CRITERIA = "pending-criteria"

# job decision panel: the part below the headline, hidden when a throttle held the task before any filter ran
QUEUES_DECISION_BODY = "queues-decision-body"
QUEUES_WHY = "queues-why"  # a queue name the operator asks about
QUEUES_WHY_ANSWER = "queues-why-answer"
NETWORK_NUCLEUS = "network-nucleus"
NETWORK_SITE = "network-site"  # the site (row) picked, mirrored into ?site=
NETWORK_LINK = "network-link"  # the clicked link "SITE>NUCLEUS", mirrored into ?link=
NETWORK_CONGESTED = "network-congested"  # the grid of the most congested links
TUNE_RESTORE_BOX = "tune-restore-box"  # the confirmation asked before a restore
TUNE_RESTORE_PROMPT = "tune-restore-prompt"
TUNE_RESTORE_COMMENT = "tune-restore-comment"
TUNE_RESTORE_CONFIRM = "tune-restore-confirm"
TUNE_RESTORE_BACK = "tune-restore-back"

# navbar search
NAV_SEARCH = "nav-search"
NAV_SEARCH_GO = "nav-search-go"
NAV_API = "nav-api"  # the JSON (/api/…) answer of the page shown
NAV_SEARCH_LIST = "nav-search-list"  # the names matching what is typed
NAV_SEARCH_BOX = "nav-search-box"  # carries the search's answer as its tooltip
TASKS_SIM_HOURS = "tasks-sim-hours"  # hours to simulate from the task states page
TASKS_SIM_GO = "tasks-sim-go"
TASKS_SIM_POLL = "tasks-sim-poll"
TASKS_SIM_JOB = "tasks-sim-job"
TASKS_SIM_STATUS = "tasks-sim-status"
TASKS_SIM_PROGRESS = "tasks-sim-progress"
TASKS_SIM_RESULT = "tasks-sim-result"  # a just-run simulation's task changes when runs are not stored

# auto-refresh of the views with time (overview, queues, task states, stabilizer)
REFRESH_EVERY = "refresh-every"  # off / 1 / 5 / 15 minutes, kept in the URL as ?refresh=
REFRESH_TICK = "refresh-tick"  # dcc.Interval that reloads the view
REFRESH_AT = "refresh-at"  # when the view was built (its data's age is in the navbar)
REFRESH_SINK = "refresh-sink"
