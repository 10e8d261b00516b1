"""Results: what a run's records say, as a report, a tally and views."""
