"""Every callback module, imported once so the one app registers each callback exactly once."""

from app.callbacks import (  # noqa: F401
    apilink,
    detail,
    diff,
    dirac,
    freshness,
    levers,
    network,
    nuclei,
    overview,
    pandacheck,
    pending,
    queues,
    refresh,
    reports,
    search,
    simulate,
    stabilizer,
    tasks,
    tuning,
    tuning_future,
)
