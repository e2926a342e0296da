"""JEDI task statuses and their transitions, the waiting-task query and the demo history (no dataset or file machines yet)."""
