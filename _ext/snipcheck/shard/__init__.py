"""shard: see the module docstrings."""
