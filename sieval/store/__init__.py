"""A run on disk: its directory, its records, its lock, its identity."""
