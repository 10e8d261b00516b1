"""Scripts that run a planned run's shards on the user's scheduler: a Slurm job array with a
dependent finalize job, and the Kubernetes Indexed Job equivalent.

``slurm_scripts`` writes into ``RUN_DIR/slurm/``:

* ``shards.sbatch``: ``--array=0-<N-1>``; each task runs ``sieval eval --run RUN_DIR --shard
  slurm`` (k from ``SLURM_ARRAY_TASK_ID``, N from the plan, so ``sbatch --array=2 shards.sbatch``
  reruns shard 2 alone);
* ``finalize.sbatch``: ``sieval finalize RUN_DIR``;
* ``submit.sh``: submits the array, then finalize with ``--dependency=afterok:<array>
  --kill-on-invalid-dep=yes`` (a failed shard cancels finalize instead of leaving it pending), and
  prints both job ids. ``sbatch --wait`` exit codes do not tell a cancelled finalize from a
  finished one (it returns 0 for both): read job states (``scontrol show job``, ``sacct``).

``kubernetes_manifests`` writes ``RUN_DIR/k8s/shards.yaml`` (an Indexed Job: ``completions`` =
``parallelism`` = N, k from ``JOB_COMPLETION_INDEX``, retried per index) and ``finalize.yaml`` (a
Job to apply once the first is complete; Kubernetes has no job dependencies). The run directory
must be on a volume every pod mounts at the same path (``--pvc``).

A shard exits 0 once every sample it owns is recorded (scored or failed: failures are the run's
result, counted by finalize), non-zero when it could not finish: that is what keeps finalize from
running on an incomplete run.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from .shards import FrozenPlan

__all__ = ["default_launcher", "kubernetes_manifests", "slurm_scripts"]


def default_launcher() -> str:
    """How a job starts sieval: this interpreter (``python -m sieval``), so the job runs the
    installation that planned the run (on a cluster: a shared filesystem's virtualenv)."""
    return shlex.join([sys.executable, "-m", "sieval"])


def _config_arg(config: Path | None) -> str:
    return f"{shlex.quote(str(config.resolve()))} " if config is not None else ""


def _sbatch_header(
    name: str, log: Path, partition: str | None, time: str | None, account: str | None
) -> list[str]:
    lines = ["#!/usr/bin/env bash", f"#SBATCH --job-name={name}", f"#SBATCH --output={log}"]
    for option, value in (("partition", partition), ("time", time), ("account", account)):
        if value:
            lines.append(f"#SBATCH --{option}={value}")
    return lines


def slurm_scripts(
    run_dir: Path,
    frozen: FrozenPlan,
    *,
    partition: str | None = None,
    time: str | None = None,
    account: str | None = None,
    cpus_per_task: int = 1,
    launcher: str | None = None,
    config: Path | None = None,
) -> dict[str, Path]:
    """Write the Slurm scripts (``shards.sbatch``, ``finalize.sbatch``, ``submit.sh``) into
    ``RUN_DIR/slurm/``; returns their paths by name. ``config``: the config file each shard
    passes (``sieval eval CONFIG --run ...``) for an endpoint password run.json does not hold."""
    run_dir = run_dir.resolve()
    out = run_dir / "slurm"
    (out / "logs").mkdir(parents=True, exist_ok=True)  # Slurm does not create --output's folder
    sieval = launcher or default_launcher()
    tag = frozen.identity.removeprefix("sha256:")[:8]
    where = shlex.quote(str(run_dir))
    shards = _sbatch_header(
        f"sieval-{tag}", out / "logs" / "shard-%a.out", partition, time, account
    )
    shards += [
        f"#SBATCH --array=0-{frozen.shards - 1}",
        f"#SBATCH --cpus-per-task={cpus_per_task}",
        "# one shard of the planned run; N comes from plan.json, so resubmitting one task",
        "# (sbatch --array=K shards.sbatch) reruns shard K alone, resuming from its own records",
        "set -euo pipefail",
        f"exec {sieval} eval {_config_arg(config)}--run {where} --shard slurm",
    ]
    final = _sbatch_header(
        f"sieval-{tag}-finalize", out / "logs" / "finalize.out", partition, time, account
    )
    final += [
        "# checks every planned sample is recorded, merges the shards, writes report.json",
        "set -euo pipefail",
        f"exec {sieval} finalize {where}",
    ]
    submit = [
        "#!/usr/bin/env bash",
        "# submit the shards as one job array, and finalize to run only when every shard completed",
        "set -euo pipefail",
        'cd "$(dirname "$0")"',
        'array=$(sbatch --parsable "$@" shards.sbatch)',
        "array=${array%%;*}",
        'final=$(sbatch --parsable "$@" --dependency=afterok:"$array" --kill-on-invalid-dep=yes '
        "finalize.sbatch)",
        "final=${final%%;*}",
        'echo "shards: job $array (array 0-' + str(frozen.shards - 1) + '); finalize: job $final"',
    ]
    paths = {}
    for name, lines in (
        ("shards.sbatch", shards),
        ("finalize.sbatch", final),
        ("submit.sh", submit),
    ):
        path = out / name
        path.write_text("\n".join(lines) + "\n")
        path.chmod(0o755)
        paths[name] = path
    return paths


def kubernetes_manifests(
    run_dir: Path,
    frozen: FrozenPlan,
    *,
    image: str = "sieval:latest",
    pvc: str = "sieval-runs",
    launcher: str = "sieval",
    retries_per_shard: int = 2,
    config: Path | None = None,
) -> dict[str, Path]:
    """Write ``RUN_DIR/k8s/shards.yaml`` (an Indexed Job) and ``finalize.yaml``; the run
    directory is mounted from the PersistentVolumeClaim ``pvc`` at its own path (``config``:
    as for ``slurm_scripts``; it must be on that volume too)."""
    run_dir = run_dir.resolve()
    out = run_dir / "k8s"
    out.mkdir(parents=True, exist_ok=True)
    tag = frozen.identity.removeprefix("sha256:")[:8]
    command = shlex.split(launcher)
    shards = _job(
        f"sieval-{tag}",
        image,
        pvc,
        run_dir,
        [
            *command,
            "eval",
            *([str(config.resolve())] if config is not None else []),
            *["--run", str(run_dir), "--shard", "indexed"],
        ],
        indexed=frozen.shards,
        retries=retries_per_shard,
    )
    final = _job(
        f"sieval-{tag}-finalize", image, pvc, run_dir, [*command, "finalize", str(run_dir)]
    )
    paths = {"shards.yaml": out / "shards.yaml", "finalize.yaml": out / "finalize.yaml"}
    paths["shards.yaml"].write_text(shards)
    paths["finalize.yaml"].write_text(final)
    return paths


def _job(
    name: str,
    image: str,
    pvc: str,
    run_dir: Path,
    command: list[str],
    *,
    indexed: int | None = None,
    retries: int = 0,
) -> str:
    import yaml

    spec: dict[str, object] = {"backoffLimit": retries}
    if indexed is not None:
        spec = {
            "completionMode": "Indexed",  # each pod gets JOB_COMPLETION_INDEX = its shard
            "completions": indexed,
            "parallelism": indexed,
            "backoffLimitPerIndex": retries,  # a failed shard is retried alone (Kubernetes 1.29+)
            "maxFailedIndexes": 0,
        }
    mount = {"name": "runs", "mountPath": str(run_dir.parent)}
    spec["template"] = {
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "sieval",
                    "image": image,
                    "command": command,
                    "volumeMounts": [mount],
                }
            ],
            "volumes": [{"name": "runs", "persistentVolumeClaim": {"claimName": pvc}}],
        }
    }
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}
    head = (
        "# generated by 'sieval slurm'; apply shards.yaml, wait for it, then"
        " finalize.yaml:\n"
        f"#   kubectl apply -f shards.yaml && kubectl wait --for=condition=complete"
        f" --timeout=24h job/{name.removesuffix('-finalize')} && kubectl apply -f finalize.yaml\n"
    )
    return head + yaml.safe_dump(job, sort_keys=False)
