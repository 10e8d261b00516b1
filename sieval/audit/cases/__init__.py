"""Live probe cases, one module per dialect id, each declaring ``CASES``."""
