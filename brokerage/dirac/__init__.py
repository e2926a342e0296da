"""DIRAC task-queue matching (seed 004): task queues from waiting jobs, priorities from shares, the pilot matcher."""
