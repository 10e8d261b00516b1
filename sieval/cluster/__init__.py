"""A run across processes: a frozen plan, shards, scheduler scripts, finalize."""
