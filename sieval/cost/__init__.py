"""Cost: prompts counted, forecasts before I/O, budgets, and what a run spent."""
