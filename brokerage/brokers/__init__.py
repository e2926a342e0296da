"""Brokerage algorithms, one module each, and the registry that picks one per task."""
