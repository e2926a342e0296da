"""Vectorised filters shared by the brokers."""
