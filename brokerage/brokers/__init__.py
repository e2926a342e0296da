"""Brokerage algorithms, one module each, and the router that picks one per task."""
