"""Component ids of the task page's PanDA 1.0.4 panel (page-prefixed kebab-case, as app/ids.py)."""

PANDA_CARD = "task-panda-card"
PANDA_STATUS = "task-panda-status"
PANDA_BODY = "task-panda-body"
PANDA_JOB = "task-panda-job"
PANDA_POLL = "task-panda-poll"
PANDA_CANCEL = "task-panda-cancel"
PANDA_RUN = "task-panda-run"
