"""A package beside the corpus scripts."""
