"""``python -m sieval``: the console script, for launchers that name an interpreter (Slurm)."""

from .cli.main import main

main()
