"""The ``brokerage`` command line: one module per command group; nothing in the core imports it."""
