"""judge: see the module docstrings."""
