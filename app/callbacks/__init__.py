"""Every callback module, imported once so the one app registers each callback exactly once."""

from app.callbacks import dirac, network, nuclei, overview, queues, reports, stabilizer, tasks, tuning  # noqa: F401
