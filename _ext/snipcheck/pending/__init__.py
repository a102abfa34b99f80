"""pending: see the module docstrings."""
