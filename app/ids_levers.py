"""Component ids of the levers boxes on the Queues, Nuclei and Tuning pages (page-prefixed kebab-case)."""

QUEUES_LEVERS = "queues-levers"
NUCLEI_LEVERS = "nuclei-levers"
TUNE_LEVERS = "tune-levers"
# pattern-matching: the Nuclei page's candidate tables, made by a callback {"type": LEVERS_GRID, "table": ranked|skipped}
LEVERS_GRID = "levers-grid"
# pattern-matching: a clickable candidate name on the tuning page {"type": LEVERS_PICK, "kind": queue|nucleus, "name": N}
LEVERS_PICK = "levers-pick"
