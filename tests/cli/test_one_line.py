"""The one-line form says everything a config says: few-shot, task options (both spellings),
request defaults, retries, timeout, concurrency, keys; ``--write-config`` saves it as the config
that runs with the same identity; and every hint names the flag to a one-line run and the config
key to a config run (``sieval/setting_names.py``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from runs import DATA, options
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.cli.oneline import OneLine
from sieval.reference import ReferenceServer, start_in_thread
from sieval.setting_names import SETTINGS, named, named_as, setting
from sieval.tasks.registry import TASKS

runner = CliRunner()


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), env={"COLUMNS": "300"})


def test_every_flag_a_hint_names_is_a_flag_of_eval() -> None:
    """The settings table and ``sieval eval --help`` never drift apart."""
    helped = invoke("eval", "--help").output
    flags = set(re.findall(r"--[a-z][a-z-_]+", helped))
    for key, (config, flag) in SETTINGS.items():
        assert flag.split()[0] in flags, key
        assert config.startswith(key)


def test_a_setting_is_named_as_the_run_was_started() -> None:
    assert setting("num_fewshot") == "num_fewshot: N" and named("retries") == "retries"
    assert setting("options.top_k") == "options: {top_k: N}"
    with named_as("flags"):
        assert setting("num_fewshot") == "--num-fewshot N" and named("retries") == "--retries"
        assert setting("options.top_k", "19") == "--task-option top_k=19"
        assert named("request_defaults.sampling.seed") == "--gen-kwargs sampling.seed"
    assert setting("model", "ID") == "model: ID"  # the block ended


def test_the_flags_become_the_config_they_stand_for() -> None:
    one = OneLine(
        endpoint="http://127.0.0.1:8000/v1",
        model="m",
        tasks=["mmlu_kshot_clp:top_k=19:num_fewshot=2,arc_easy_kshot_ppl", "gsm8k_kshot_base_gen"],
        num_fewshot=5,
        seed=7,
        task_options=["max_tokens=64"],
        gen_kwargs=["temperature=0,max_gen_toks=32", "until=Question:,options.min_p=0.1"],
        retries=1,
        timeout=30.0,
        max_reply_mib=8.0,
        concurrency=100,
        api_key_env="MY_KEY",
        dialect="vllm_native",
        limit=10,
    )
    config = one.config(TASKS)
    (model,) = config.models
    assert (model.base_url, model.model, model.dialect_id) == (
        "http://127.0.0.1:8000",
        "m",
        "vllm_native",
    )
    assert (model.retries, model.timeout_s, model.concurrency_limit) == (1, 30.0, 100)
    assert (model.max_reply_mib, model.max_reply_bytes) == (8.0, 8 * 2**20)
    assert model.api_key_env == "MY_KEY" and config.concurrency == 100
    assert model.request_overrides == {  # lm-eval's --gen_kwargs: over what a task sets
        "sampling.temperature": 0,
        "sampling.max_tokens": 32,
        "sampling.stop": ["Question:"],
        "options.min_p": 0.1,
    }
    tasks = {t.name: t for t in config.tasks}
    assert (tasks["mmlu_kshot_clp"].num_fewshot, tasks["mmlu_kshot_clp"].options) == (
        2,
        {"top_k": 19},
    )
    assert (tasks["arc_easy_kshot_ppl"].num_fewshot, tasks["arc_easy_kshot_ppl"].options) == (5, {})
    assert tasks["gsm8k_kshot_base_gen"].options == {"max_tokens": 64}  # the one task that has it
    assert {t.seed for t in config.tasks} == {7} and {t.n for t in config.tasks} == {10}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--task-option", "top_k=5", "--task", "arc_easy_kshot_ppl"], "none of the tasks takes"),
        (["--task", "top_k=5"], "name the task first"),
        (["--task", "arc_easy_kshot_ppl:oops"], "expected KEY=VALUE"),
        (["--gen-kwargs", "temp=0"], "'temp' is not a sampling field"),
        (["--gen-kwargs", "temperature=hot"], "--gen-kwargs sampling.temperature='hot'"),
        (["--retries", "-1"], "--retries must be an integer in [0, 100]"),
        (["--timeout", "0"], "--timeout must be a finite number > 0"),
        (["--max-reply-mib", "0"], "--max-reply-mib must be a finite number > 0"),
        (["--concurrency", "0"], "--concurrency must be an integer in [1, 65535]"),
        (["--task", "nope"], "unknown task 'nope'"),
        (["--max-failures", "nan"], "--max-failures 'nan'"),
        (["--allow-mixed-replicas"], "replicas; list them with --endpoint URL repeated"),
    ],
)
def test_a_bad_flag_is_named_as_a_flag(args: list[str], needle: str, tmp_path: Path) -> None:
    base = ["eval", "--endpoint", "embedded", "--data-dir", str(DATA), "--out", str(tmp_path)]
    if "--task" not in args:
        base += ["--task", "arc_easy_kshot_ppl"]
    result = invoke(*base, *args)
    assert result.exit_code == 2 and needle in result.output, result.output
    assert "Traceback" not in result.output and "the command line:" not in result.output
    assert not list(tmp_path.iterdir())


def test_one_line_flags_beside_a_config_name_its_key() -> None:
    result = invoke("eval", "examples/quickstart.yaml", "--num_fewshot", "3")
    assert result.exit_code == 2
    assert "--num-fewshot belongs to the one-line form" in result.output
    assert "a config sets num_fewshot: N" in result.output
    result = invoke("eval", "examples/quickstart.yaml", "--task", "mmlu_kshot_clp:top_k=19")
    assert result.exit_code == 2 and "options: {top_k: 19}" in result.output


def test_write_config_never_writes_into_a_run(tmp_path: Path) -> None:
    """A run's report.json and plan.json are not written before the run ends (or is finalized):
    ``--write-config RUN/report.json`` once put YAML there, and a link to a run's file that did
    not exist yet was written through."""
    args = ["--endpoint", "embedded", "--task", "arc_easy_kshot_ppl", "--limit", "1"]
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text("{}")
    for target in (run / "report.json", run / "plan.json", run / "ref" / "notes.yaml"):
        target.parent.mkdir(exist_ok=True)
        result = invoke("eval", *args, "--write-config", str(target))
        assert result.exit_code == 2, result.output
        assert f"is inside the run directory {run}" in " ".join(result.output.split())
        assert not target.exists()
    link = tmp_path / "cfg.yaml"
    link.symlink_to(run / "report.json")  # dangling: the report is not written yet
    result = invoke("eval", *args, "--write-config", str(link))
    assert result.exit_code == 2 and not (run / "report.json").exists(), result.output
    elsewhere = tmp_path / "other.yaml"
    elsewhere.symlink_to(tmp_path / "missing.yaml")
    result = invoke("eval", *args, "--write-config", str(elsewhere))
    assert result.exit_code == 2 and "exists; name a new file" in result.output
    assert not (tmp_path / "missing.yaml").exists()


def test_the_saved_config_runs_with_the_same_identity(tmp_path: Path) -> None:
    args = ["--endpoint", "embedded", "--task", "mmlu_kshot_clp:top_k=19,arc_easy_kshot_ppl"]
    args += ["--num_fewshot", "2", "--gen-kwargs", "seed=3", "--limit", "3", "--retries", "1"]
    args += ["--timeout", "60", "--concurrency", "4", "--data-dir", str(DATA)]
    saved = tmp_path / "run.yaml"
    wrote = invoke("eval", *args, "--write-config", str(saved))
    assert wrote.exit_code == 0 and f"run it with: sieval eval {saved}" in wrote.output
    assert not (tmp_path / "results").exists()  # nothing ran
    mapping = yaml.safe_load(saved.read_text())
    assert mapping["tasks"][0] == {
        "name": "mmlu_kshot_clp",
        "options": {"top_k": 19},
        "num_fewshot": 2,
        "n": 3,
    }
    assert invoke("eval", *args, "--write-config", str(saved)).exit_code == 2  # never overwritten
    one = invoke("eval", *args, "--out", str(tmp_path / "a"))
    from_file = invoke("eval", str(saved), "--out", str(tmp_path / "b"))
    assert one.exit_code == 0 and from_file.exit_code == 0, one.output + from_file.output
    (run_a,), (run_b,) = (tmp_path / "a").iterdir(), (tmp_path / "b").iterdir()
    identity = [json.loads((d / "run.json").read_text())["identity"] for d in (run_a, run_b)]
    assert identity[0] == identity[1]
    few = json.loads((run_a / "run.json").read_text())["config"]
    assert [t["num_fewshot"] for t in few["tasks"]] == [2, 2]
    assert few["models"][0]["request_overrides"] == {"sampling.seed": 3}


def test_a_repeated_endpoint_is_the_replicas_of_one_model(tmp_path: Path) -> None:
    urls = ["http://127.0.0.1:9001", "http://127.0.0.1:9002/v1"]
    saved = tmp_path / "run.yaml"
    args = ["eval", "--endpoint", urls[0], "--endpoint", urls[1], "--model", "m"]
    wrote = invoke(
        *args, "--task", "arc_easy", "--allow-mixed-replicas", "--write-config", str(saved)
    )
    assert wrote.exit_code == 0, wrote.output
    (entry,) = yaml.safe_load(saved.read_text())["models"]
    assert entry["endpoint"] == urls and entry["allow_mixed_replicas"] is True


def test_hints_name_the_flag_or_the_key_as_the_run_was_started(tmp_path: Path) -> None:
    """One mechanism, three hints: a context overflow, a wrong model id, a dead port."""
    handle = start_in_thread(port=0, max_model_len=300)
    try:
        line = ["eval", "--endpoint", handle.url, "--model", "sieval-reference"]
        line += ["--task", "arc_easy_kshot_ppl", "--num-fewshot", "5", "--limit", "2"]
        line += ["--data-dir", str(DATA), "--out", str(tmp_path)]
        flags = invoke(*line)
        config = tmp_path / "c.yaml"
        config.write_text(
            f"models: [{{endpoint: '{handle.url}', model: sieval-reference}}]\n"
            "tasks: [{name: arc_easy_kshot_ppl, n: 2, num_fewshot: 5}]\n"
        )
        keyed = invoke("eval", str(config), "--data-dir", str(DATA), "--out", str(tmp_path))
        wrong = invoke(*[("gpt-4" if a == "sieval-reference" else a) for a in line])
    finally:
        handle.stop()
    assert flags.exit_code == keyed.exit_code == wrong.exit_code == 2
    assert re.search(r"lower the shots with --num-fewshot \d ", flags.output)
    keyed_hint = re.search(r"lower the shots with num_fewshot: \d ", keyed.output)
    assert keyed_hint and "--num" not in keyed.output
    assert "set --model ID to one of them" in wrong.output
    dead = invoke("eval", "--endpoint", "http://127.0.0.1:9", "--model", "m", "--task",
                  "arc_easy_kshot_ppl", "--data-dir", str(DATA))  # fmt: skip
    # one hint, and not "raise the retries" after the one attempt a pre-flight makes
    assert dead.exit_code == 2 and "raise the retries" not in dead.output
    assert dead.output.count("check that the server") == 1


async def test_a_config_run_is_told_the_config_key(tmp_path: Path) -> None:
    from sieval.errors import ConfigError
    from sieval.runner import arun_eval, parse_config

    async with ReferenceServer() as server:
        config = parse_config(
            f"models: [{{endpoint: '{server.url}', model: gpt-4}}]\n"
            "tasks: [{name: arc_easy_kshot_ppl, n: 1}]"
        )
        with pytest.raises(ConfigError, match="set model: ID to one of them"):  # a pre-run check
            await arun_eval(config, options(out=tmp_path, preflight=True))


def test_the_readme_lists_every_flag_of_the_one_line_form() -> None:
    from sieval.cli.eval import ONE_LINE_ONLY

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    table = readme[readme.index("| flag | config key | what |") :].split("\n\n")[0]
    listed = set(re.findall(r"`(--[a-z-]+)", table))
    assert {*ONE_LINE_ONLY, "--endpoint", "--model", "--task", "--limit", "--concurrency"} <= listed
    for key, (config, _) in SETTINGS.items():
        if key not in ("concurrency", "options", "request_defaults"):
            assert f"`{config.split(':')[0]}:" in table, key
