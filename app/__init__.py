"""Dash dashboard over the brokerage core: nuclei, queues, network weights, Stabilizer and task states."""
