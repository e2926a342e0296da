"""Every callback module, imported once so the one app registers each callback exactly once."""

from app.callbacks import network, nuclei, overview, queues, reports, stabilizer, task, tasks, tuning  # noqa: F401
