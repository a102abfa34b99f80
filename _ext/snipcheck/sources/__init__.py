"""sources: see the module docstrings."""
