"""Tasks: one small module per benchmark (data -> IR requests -> metrics), found by the registry."""
