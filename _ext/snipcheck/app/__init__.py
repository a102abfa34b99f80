"""app: see the module docstrings."""
