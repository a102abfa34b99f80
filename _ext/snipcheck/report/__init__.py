"""report: see the module docstrings."""
