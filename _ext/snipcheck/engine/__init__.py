"""engine: see the module docstrings."""
