"""Config parsing: strict keys with suggestions, YAML positions, no literal keys."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from runs import options

from sieval.errors import ConfigError
from sieval.plan.config import EMBEDDED, REFERENCE_MODEL, load_config, parse_config

GOOD = """
concurrency: 8
models:
  - name: local
    endpoint: http://127.0.0.1:8000/
    model: gemma
    api_key_env: SIEVAL_TEST_KEY
    concurrency_limit: 4
    request_defaults:
      sampling.temperature: 0.0
      sampling: {top_p: 0.9}
      options: {min_p: 0.1}
  - endpoint: embedded
tasks:
  - name: arc_easy_kshot_ppl
    n: 10
    num_fewshot: 5
    seed: 7
    options: {x: 1}
"""


def test_good_config_decodes_with_defaults() -> None:
    config = parse_config(GOOD)
    local, ref = config.models
    assert config.concurrency == 8
    assert local.dialect_id == "openai_completions"
    assert local.request_defaults == {
        "sampling.temperature": 0.0,
        "sampling.top_p": 0.9,
        "options.min_p": 0.1,
    }
    assert (
        ref.endpoint == EMBEDDED and ref.model == REFERENCE_MODEL and ref.label == REFERENCE_MODEL
    )
    assert config.tasks[0].n == 10 and config.tasks[0].seed == 7
    assert "api_key_env" not in local.identity() and local.identity()["endpoint"].endswith("8000")


def test_chat_kind_defaults_to_openai_chat() -> None:
    config = parse_config("models: [{endpoint: embedded, kind: chat}]\ntasks: [{name: t}]")
    assert config.models[0].dialect_id == "openai_chat"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("models: [{endpoint: embedded, modle: x}]\ntasks: [{name: t}]", "Did you mean 'model'?"),
        ("models: [{endpoint: embedded}]\ntasks: [{name: t, num_fewshots: 3}]", "'num_fewshot'"),
        ("modles: []\nmodels: [{}]\ntasks: [{name: t}]", "Did you mean 'models'?"),
    ],
)
def test_unknown_key_suggests_close_match(text: str, needle: str) -> None:
    with pytest.raises(ConfigError, match="unknown key") as info:
        parse_config(text, source="eval.yaml")
    assert needle in str(info.value) and "eval.yaml" in str(info.value)


def test_unknown_key_without_close_match_lists_known_keys() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config("models: [{zzzzzz: 1}]\ntasks: [{name: t}]")
    assert "Did you mean" not in str(info.value) and "Known keys: name, endpoint" in str(info.value)


def test_wrong_type_names_the_path() -> None:
    with pytest.raises(ConfigError, match=r"concurrency_limit"):
        parse_config("models: [{concurrency_limit: many}]\ntasks: [{name: t}]")


def test_malformed_yaml_gives_file_line_and_column() -> None:
    text = "models:\n  - name: a\n    endpoint: [unclosed\ntasks: []\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, source="eval.yaml")
    assert "eval.yaml:4:" in str(info.value) and "malformed YAML" in str(info.value)


@pytest.mark.parametrize("key", ["api_key", "API_KEY", "token"])
def test_literal_api_key_is_refused(key: str) -> None:
    with pytest.raises(ConfigError, match="api_key_env") as info:
        parse_config(f"models: [{{endpoint: embedded, {key}: sk-secret}}]\ntasks: [{{name: t}}]")
    assert "sk-secret" not in str(info.value)


def test_api_key_from_env_and_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIEVAL_TEST_KEY", "sk-from-env-123")
    (tmp_path / "key").write_text("sk-from-file-456\n")
    (tmp_path / "empty").write_text("\n")
    config = parse_config(
        "models:\n"
        "  - {endpoint: embedded, name: a, api_key_env: SIEVAL_TEST_KEY}\n"
        f"  - {{endpoint: embedded, name: b, api_key_file: {tmp_path / 'key'}}}\n"
        "  - {endpoint: embedded, name: c}\n"
        f"  - {{endpoint: embedded, name: d, api_key_file: {tmp_path / 'missing'}}}\n"
        f"  - {{endpoint: embedded, name: e, api_key_file: {tmp_path / 'empty'}}}\n"
        "  - {endpoint: embedded, name: f, api_key_env: SIEVAL_UNSET_VAR_XYZ}\n"
        "tasks: [{name: t}]"
    )
    a, b, c, d, e, f = config.models
    assert a.api_key() == "sk-from-env-123"
    assert b.api_key() == "sk-from-file-456"
    assert c.api_key() is None
    with pytest.raises(ConfigError, match="cannot read api_key_file"):
        d.api_key()
    with pytest.raises(ConfigError, match="is empty"):
        e.api_key()
    with pytest.raises(ConfigError, match="SIEVAL_UNSET_VAR_XYZ"):
        f.api_key()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("- a\n- b", "expected a mapping"),
        ("models: []\ntasks: [{name: t}]", "'models:' is empty"),
        ("models: [{}]\ntasks: []", "'tasks:' is empty"),
        ("concurrency: 0\nmodels: [{}]\ntasks: [{name: t}]", "concurrency must be"),
        ("models: [{endpoint: ftp://x, model: m}]\ntasks: [{name: t}]", "neither 'embedded'"),
        (
            "models: [{endpoint: 'http://x'}]\ntasks: [{name: t}]",
            "model: ID (the model id) is required",
        ),
        (
            "models: [{endpoint: embedded, api_key_env: A, api_key_file: B}]\ntasks: [{name: t}]",
            "not both",
        ),
        (
            "models: [{endpoint: embedded, concurrency_limit: 0}]\ntasks: [{name: t}]",
            "concurrency_limit must",
        ),
        ("models: [{endpoint: embedded, timeout_s: 0}]\ntasks: [{name: t}]", "timeout_s must"),
        (
            "models: [{endpoint: embedded, request_defaults: {sampling.temprature: 0}}]\n"
            "tasks: [{name: t}]",
            "not a request leaf",
        ),
        (
            "models: [{endpoint: embedded}, {endpoint: embedded}]\ntasks: [{name: t}]",
            "two models are named",
        ),
        ("models: [{endpoint: embedded}]\ntasks: [{name: t}, {name: t}]", "listed twice"),
        ("models: [{endpoint: embedded}]\ntasks: [{name: t, n: 0}]", "must be a whole number >= 1"),
        # a model id without an endpoint once evaluated the reference model under that name
        (
            "models: [{model: meta-llama/Llama-3.1-8B}]\ntasks: [{name: t}]",
            "model 'meta-llama/Llama-3.1-8B' has no endpoint; set endpoint: URL",
        ),
        # two labels that share one results directory once mixed their records
        (
            "models: [{endpoint: embedded, name: team/ref}, {endpoint: embedded, name: team_ref}]\n"
            "tasks: [{name: t}]",
            "would share the results directory 'team_ref'",
        ),
        (
            "models: [{endpoint: embedded, request_defaults: {sampling.top_p: high}}]\n"
            "tasks: [{name: t}]",
            "sampling.top_p='high' is not a valid value",
        ),
        (
            "models: [{endpoint: embedded, request_defaults: {sampling: {seed: [1, 2]}}}]\n"
            "tasks: [{name: t}]",
            "sampling.seed=[1, 2] is not a valid value",
        ),
        (
            "models: [{endpoint: embedded, retries: -1}]\ntasks: [{name: t}]",
            "retries must be an integer in [0, 100]",
        ),
        # numbers out of their range, or not numbers at all (NaN), once tracebacks or endless runs
        (
            "models: [{endpoint: embedded, retries: 1000000000000000000}]\ntasks: [{name: t}]",
            "retries must be an integer in [0, 100]",
        ),
        (
            "models: [{endpoint: embedded, timeout_s: .nan}]\ntasks: [{name: t}]",
            "timeout_s must be a finite number > 0",
        ),
        (
            "models: [{endpoint: embedded, timeout_s: .inf}]\ntasks: [{name: t}]",
            "timeout_s must be a finite number > 0",
        ),
        (
            "models: [{endpoint: embedded, concurrency_limit: 1000000000000000000000000000}]\n"
            "tasks: [{name: t}]",
            "concurrency_limit must be an integer in [1, 65535]",
        ),
        (
            "concurrency: 1000000000000\nmodels: [{endpoint: embedded}]\ntasks: [{name: t}]",
            "concurrency must be an integer in [1, 65535]",
        ),
        (
            "models: [{endpoint: embedded}]\ntasks: [{name: t, seed: 100000000000000000000000}]",
            "seed must be an integer in [-9223372036854775808, 9223372036854775807]",
        ),
        (
            "models: [{endpoint: embedded,\n"
            "  request_defaults: {sampling.n: 100000000000000000000000}}]\ntasks: [{name: t}]",
            "request_defaults.sampling.n=100000000000000000000000 is out of range: it must be an "
            "integer in [1, 128]",
        ),
        (
            "models: [{endpoint: embedded, request_defaults: {sampling.temperature: .nan}}]\n"
            "tasks: [{name: t}]",
            "request_defaults.sampling.temperature=nan is out of range: it must be a finite number "
            ">= 0",
        ),
        (
            "models: [{endpoint: embedded, request_defaults: {sampling.presence_penalty: .inf}}]\n"
            "tasks: [{name: t}]",
            "sampling.presence_penalty=inf is out of range: it must be a finite number in [-2, 2]",
        ),
        (
            "models: [{endpoint: embedded,\n"
            "  request_defaults: {sampling.seed: 18446744073709551616}}]\ntasks: [{name: t}]",
            "sampling.seed=18446744073709551616 is out of range",
        ),
        ("models: [{auth: basic}]\ntasks: [{name: t}]", "auth"),
    ],
)
def test_invalid_configs(text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert needle in str(info.value)


def test_load_config_reads_a_file_and_names_a_missing_one(tmp_path: Path) -> None:
    path = tmp_path / "eval.yaml"
    path.write_text(GOOD)
    assert load_config(path).models[0].label == "local"
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "nope.yaml")


def test_a_password_in_the_endpoint_never_enters_the_identity() -> None:
    config = parse_config(
        "models: [{endpoint: 'http://user:SECRET-pw@host:8000', model: m}]\ntasks: [{name: t}]"
    )
    identity = config.models[0].identity()
    assert "SECRET-pw" not in str(identity) and identity["endpoint"].startswith("http://user:")


def test_the_quickstart_form_is_the_embedded_server() -> None:
    model = parse_config("models: [{name: ref, endpoint: embedded}]\ntasks: [{name: t}]").models[0]
    assert model.endpoint == EMBEDDED and model.model == REFERENCE_MODEL


@pytest.mark.parametrize(
    ("entry", "who"),
    [
        ("{name: gpt-4o}", "model 'gpt-4o'"),
        ("{}", "the entry"),
        ("{concurrency_limit: 2}", "the entry"),
    ],
)
def test_an_entry_without_endpoint_and_model_is_refused(entry: str, who: str) -> None:
    """Never the reference model under the entry's label: ``{name: gpt-4o}`` once scored the
    trigram model as gpt-4o."""
    with pytest.raises(ConfigError) as info:
        parse_config(f"models: [{entry}]\ntasks: [{{name: t}}]")
    message = str(info.value)
    assert f"{who} has no endpoint and no model id" in message
    assert "endpoint: URL" in message and "model: ID" in message
    assert "endpoint: embedded" in message and info.value.path == "endpoint"


def test_auth_is_chosen_per_endpoint() -> None:
    from sieval.dialects.registry import get_dialect
    from sieval.plan.plan import PlannedModel

    config = parse_config(
        "models: [{endpoint: 'http://h', model: m, auth: x-api-key}]\ntasks: [{name: t}]"
    )
    planned = PlannedModel(config.models[0], get_dialect("openai_completions"), api_key="k-123")
    assert planned.auth.headers("k-123") == {"x-api-key": "k-123"}
    default = msgspec.structs.replace(config.models[0], auth="default")
    assert PlannedModel(default, planned.dialect).auth.headers("k") == {"Authorization": "Bearer k"}


@pytest.mark.parametrize(
    ("dialect", "task"),
    [
        ("openai_completions", "arc_easy_kshot_ppl"),
        ("vllm_native", "arc_easy_kshot_ppl"),
        ("sglang_native", "arc_easy_kshot_ppl"),
        ("openai_chat", "mmlu_0shot_gen"),
        ("openai_responses", "mmlu_0shot_gen"),
        ("anthropic_messages", "mmlu_0shot_gen"),
        ("google_genai", "mmlu_0shot_gen"),
    ],
)
@pytest.mark.parametrize("preflight", [True, False])
async def test_the_embedded_server_answers_only_to_its_own_model_on_every_wire(
    tmp_path: Path, dialect: str, task: str, preflight: bool
) -> None:
    """``endpoint: embedded`` with another model id stops before a run directory (exit 2),
    never scores the reference model under that name, ``--no-preflight`` or not (SGLang's
    ``/generate`` names no model, so only the listing can refuse it)."""
    import os

    from sieval.runner import arun_eval

    data = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
    config = parse_config(
        f"models: [{{endpoint: embedded, model: gemini-2.5-pro, dialect: {dialect}}}]\n"
        f"tasks: [{{name: {task}, n: 2, num_fewshot: 0}}]"
    )
    with pytest.raises(ConfigError, match="gemini-2.5-pro") as info:
        await arun_eval(config, options(out=tmp_path / "out", data_dir=data, preflight=preflight))
    assert REFERENCE_MODEL in str(info.value)
    assert not (tmp_path / "out").exists()
