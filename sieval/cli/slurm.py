"""``sieval slurm RUN_DIR``: the sbatch array, the dependent finalize job, and the Kubernetes
Indexed Job equivalent, for a run made by ``sieval plan``. Nothing is submitted."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from ..errors import ConfigError, StorageError
from . import common
from .app import app

__all__: list[str] = []


@app.command("slurm")
def slurm_command(
    run_dir: Path = typer.Argument(..., help="A run directory made by 'sieval plan'."),
    partition: str | None = typer.Option(None, "--partition", help="sbatch --partition."),
    time: str | None = typer.Option(None, "--time", help="sbatch --time (per shard)."),
    account: str | None = typer.Option(None, "--account", help="sbatch --account."),
    cpus_per_task: int = typer.Option(1, "--cpus-per-task", min=1, help="sbatch --cpus-per-task."),
    launcher: str | None = typer.Option(
        None, "--launcher", help="The command that starts sieval in a job (default: this Python)."
    ),
    image: str = typer.Option("sieval:latest", "--image", help="Kubernetes: the container image."),
    pvc: str = typer.Option(
        "sieval-runs", "--pvc", help="Kubernetes: the claim holding the run directory."
    ),
    config: Path | None = typer.Option(
        None, "--config", help="The run's config file, for an endpoint URL with a password."
    ),
) -> None:
    """Write RUN_DIR/slurm/ (shards.sbatch, finalize.sbatch, submit.sh) and RUN_DIR/k8s/."""
    from ..cluster.scheduler_scripts import kubernetes_manifests, slurm_scripts
    from ..cluster.shards import read_plan
    from ..plan.run_config import load_run_config
    from ..runner import load_config

    try:
        frozen = read_plan(run_dir)
        again = f"sieval slurm {run_dir} --config CONFIG"
        load_run_config(  # the shards will find every endpoint (a password from --config)
            run_dir, endpoints=load_config(config) if config else None, again=again
        )
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message) from None
    slurm = slurm_scripts(
        run_dir,
        frozen,
        partition=partition,
        time=time,
        account=account,
        cpus_per_task=cpus_per_task,
        launcher=launcher,
        config=config,
    )
    k8s = kubernetes_manifests(
        run_dir, frozen, image=image, pvc=pvc, launcher=launcher or "sieval", config=config
    )
    out = Console(highlight=False, soft_wrap=True)
    for path in [*slurm.values(), *k8s.values()]:
        out.print(f"wrote {path}")
    out.print(
        f"submit: {slurm['submit.sh']}   (rerun shard K alone: sbatch --array=K "
        f"{slurm['shards.sbatch']})"
    )
