"""The plan: the config and everything decided before the first request."""
