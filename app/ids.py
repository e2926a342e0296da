"""Component ids as constants, page-prefixed kebab-case strings."""

# global
URL = "url"

# overview
OVERVIEW_CONTENT = "overview-content"

# queues
QUEUES_GRID = "queues-grid"
QUEUES_EXPORT = "queues-export"
QUEUES_TASK = "queues-task"
QUEUES_CRITERIA = "queues-criteria"
QUEUES_URL_SINK = "queues-url-sink"

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
TASKS_CONTENT = "tasks-content"
TASKS_URL_SINK = "tasks-url-sink"

# nuclei
NUCLEI_TASK = "nuclei-task"
NUCLEI_DECISION = "nuclei-decision"
NUCLEI_URL_SINK = "nuclei-url-sink"
QUEUES_HEADLINE = "queues-headline"
QUEUES_FUNNEL = "queues-funnel"
QUEUES_FACTORS = "queues-factors"
QUEUES_RANKED = "queues-ranked"
QUEUES_NOTES = "queues-notes"
QUEUES_SKIPPED = "queues-skipped"
QUEUES_SKIPPED_TITLE = "queues-skipped-title"
