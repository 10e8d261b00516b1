"""Statistics across runs: paired comparison and power."""
