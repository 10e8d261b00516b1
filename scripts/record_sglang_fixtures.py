"""Record real replies from a running SGLang as test fixtures (rerunnable).

    python scripts/record_sglang_fixtures.py http://127.0.0.1:18331 [--only NAME[,NAME...]]
    python scripts/record_sglang_fixtures.py --check-contract PATH/TO/sglang/api/v1/api_types.py

Writes ``tests/fixtures/sglang_native/<server-version>/<name>.json``, each
``{"route", "method", "request", "status", "reply" | "reply_sse", "server"}``, the same layout as
``scripts/record_fixtures.py`` writes for vLLM. Request bodies are written exactly as sent. No
``Authorization`` header is sent (the server has no api key), so nothing needs redacting; volatile
ids, latencies and timestamps are kept as the server sent them.

Three cases are built from earlier replies: ``score_input_ids`` sends the prompt ids that
``score_top3`` returned, and ``token_ids_letters`` scores the ids that ``tokenize_letters``
returned for " A", " B", " C", " D". Every ``/generate`` body states every sampling field that
changes the result (SGLang's ``/generate`` defaults are 128 new tokens at temperature 1).

``--check-contract`` loads SGLang's generated request contract (``api_types.py``, needs only
msgspec) on its own and validates every recorded ``/generate`` request body with
``GenerateRequest.from_json_value``, the call SGLang's HTTP gate makes; it prints one line a
fixture and exits non-zero when a body that the server answered 200 is refused.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

MODEL = "gemma-3-270m"
DIALECT = "sglang_native"
QA = "Question: What is the capital of France?\nAnswer: Paris"
MMLU = (
    "The following is a multiple choice question.\n\n"
    "What is 2 + 2?\nA. 3\nB. 4\nC. 5\nD. 22\nAnswer:"
)
STORY = "Once upon a time"
FRANCE = "The capital of France is"
LONG = "hello " * 2100  # > the server's --context-length 2048
HELLO = 23391  # the token "hello" in Gemma 3's vocabulary; [BOS] + [HELLO] * (n - 1) is n tokens
OBJECT = '{"type": "object"}'  # what SGLang's own OpenAI routes send for json_object
SAMPLED = {"return_logprob": True, "return_text_in_logprobs": True}
TOKENIZE_LETTERS = {"model": MODEL, "prompt": " A B C D", "add_special_tokens": False}
FIXTURES = Path(__file__).resolve().parent.parent / "tests/fixtures"


def sp(max_new_tokens: int, temperature: float, **extra) -> dict:
    """sampling_params with every result-changing field explicit (top_k -1 = all)."""
    base = {
        "max_new_tokens": max_new_tokens,
        "temperature": temperature,
        "top_p": 1.0,
        "top_k": -1,
        "min_p": 0.0,
        "frequency_penalty": 0.0,
        "presence_penalty": 0.0,
        "repetition_penalty": 1.0,
    }
    base.update(extra)
    return base


def scoring(text: str, start: int, top: int, max_new_tokens: int = 1) -> dict:
    return {
        "text": text,
        "sampling_params": sp(max_new_tokens, 0.0),
        "return_logprob": True,
        "logprob_start_len": start,
        "top_logprobs_num": top,
        "return_text_in_logprobs": True,
    }


def gen(text: str, max_new_tokens: int, temperature: float, **sampling) -> dict:
    return {"text": text, "sampling_params": sp(max_new_tokens, temperature, **sampling)}


# (name, method, route, body); a body that is a str names a builder below that uses earlier replies.
CASES: list[tuple[str, str, str, dict | str | None]] = [
    ("server_info", "GET", "/server_info", None),
    ("get_server_info", "GET", "/get_server_info", None),
    ("model_info", "GET", "/model_info", None),
    ("get_model_info", "GET", "/get_model_info", None),
    ("health", "GET", "/health", None),
    ("version_route_absent", "GET", "/version", None),
    ("v1_models", "GET", "/v1/models", None),
    ("tokenize_letters", "POST", "/tokenize", TOKENIZE_LETTERS),
    ("score_top3", "POST", "/generate", scoring(QA, 0, 3)),
    ("score_only", "POST", "/generate", scoring(QA, 0, 0)),
    ("score_start5", "POST", "/generate", scoring(QA, 5, 0)),
    ("score_input_ids", "POST", "/generate", "input_ids_from_score_top3"),
    ("score_max_new_tokens_0", "POST", "/generate", scoring(QA, 0, 2, max_new_tokens=0)),
    ("token_ids_letters", "POST", "/generate", "letters_from_tokenize"),
    (
        "gen_top2",
        "POST",
        "/generate",
        {
            **gen(FRANCE, 6, 0.0),
            "return_logprob": True,
            "top_logprobs_num": 2,
            "return_text_in_logprobs": True,
        },
    ),
    ("gen_stop", "POST", "/generate", gen("1, 2, 3, 4,", 12, 0.0, stop=[" 7", "\n"])),
    ("n2_temp1", "POST", "/generate", gen(STORY, 4, 1.0, n=2)),
    (
        "batch_text",
        "POST",
        "/generate",
        {"text": [FRANCE, STORY], "sampling_params": sp(2, 0.0)},
    ),
    ("stream", "POST", "/generate", {**gen(FRANCE, 4, 0.0), "stream": True}),
    (
        "stream_logprobs",
        "POST",
        "/generate",
        {
            **gen(FRANCE, 3, 0.0),
            "stream": True,
            "return_logprob": True,
            "top_logprobs_num": 2,
            "return_text_in_logprobs": True,
        },
    ),
    (
        "json_schema",
        "POST",
        "/generate",
        gen(
            "A JSON object saying whether Paris is in France:",
            16,
            0.0,
            json_schema=json.dumps(
                {
                    "type": "object",
                    "properties": {"in_france": {"type": "boolean"}},
                    "required": ["in_france"],
                    "additionalProperties": False,
                }
            ),
        ),
    ),
    (
        "regex",
        "POST",
        "/generate",
        gen("Is Paris in France? Yes or no:", 4, 0.0, regex=" (yes|no)"),
    ),
    ("seed_11", "POST", "/generate", gen(STORY, 6, 1.0, sampling_seed=11)),
    ("seed_11_again", "POST", "/generate", gen(STORY, 6, 1.0, sampling_seed=11)),
    ("seed_12", "POST", "/generate", gen(STORY, 6, 1.0, sampling_seed=12)),
    ("error_top_k_0", "POST", "/generate", gen(FRANCE, 1, 1.0, top_k=0)),
    (
        "error_unknown_sampling_key",
        "POST",
        "/generate",
        {"text": FRANCE, "sampling_params": {**sp(1, 0.0), "max_tokens": 1}},
    ),
    (
        "unknown_top_level_key",
        "POST",
        "/generate",
        {**gen(FRANCE, 1, 0.0), "max_tokens": 5, "not_a_field": True},
    ),
    ("error_context_overflow", "POST", "/generate", gen(LONG, 1, 0.0)),
    # Near the limit (context 2048; /server_info max_req_input_len 2042), by exact token counts.
    ("error_input_over_max_req_input_len", "POST", "/generate", "ids_2044_new_1"),
    ("error_input_plus_new_over_context", "POST", "/generate", "ids_2040_new_20"),
    ("length_capped_near_context", "POST", "/generate", "ids_2040_new_8"),
    ("error_logprob_start_len_past_prompt", "POST", "/generate", scoring(QA, 100, 0)),
    # Streamed, the same two mistakes are HTTP 200: an in-band error event, or an abort chunk.
    (
        "stream_error_top_k_0",
        "POST",
        "/generate",
        {**gen(FRANCE, 1, 1.0, top_k=0), "stream": True},
    ),
    (
        "stream_abort_logprob_start_len_past_prompt",
        "POST",
        "/generate",
        {**scoring(QA, 100, 0), "stream": True},
    ),
    # Bodies as the sglang_native dialect lowers them (tests assert lowered.body == request).
    ("candidates_letters", "POST", "/generate", "candidates_from_tokenize"),
    (
        "stream_n2_logprobs",
        "POST",
        "/generate",
        {**gen(STORY, 3, 1.0, n=2), "stream": True, **SAMPLED, "top_logprobs_num": 2},
    ),
    ("json_object", "POST", "/generate", gen("A JSON object:", 16, 0.0, json_schema=OBJECT)),
    ("score_byte_pieces", "POST", "/generate", scoring("\ua66e\U00013000 x", 0, 2)),
    (
        "gen_stop_logprobs",
        "POST",
        "/generate",
        {**gen("1, 2, 3, 4,", 12, 0.0, stop=[" 7", "\n"]), **SAMPLED},
    ),
    (
        "options_stop_token",
        "POST",
        "/generate",
        {
            **gen(
                FRANCE,
                6,
                0.0,
                min_p=0.05,
                repetition_penalty=1.2,
                min_new_tokens=2,
                stop_token_ids=[529],
            ),
            **SAMPLED,
        },
    ),
    (
        "error_regex_and_json_schema",
        "POST",
        "/generate",
        gen(FRANCE, 2, 0.0, json_schema=OBJECT, regex=" (yes|no)"),
    ),
]


def call(base: str, method: str, route: str, body: dict | None) -> tuple[int, str, str]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + route, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=600) as resp:
            return resp.status, resp.headers.get("content-type", ""), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("content-type", ""), err.read().decode()


def build(kind: str, replies: dict[str, object], base: str) -> dict:
    if kind == "input_ids_from_score_top3":
        first = replies.get("score_top3")
        if not isinstance(first, dict):
            first = json.loads(call(base, "POST", "/generate", scoring(QA, 0, 3))[2])
        ids = [entry[1] for entry in first["meta_info"]["input_token_logprobs"]]
        body = scoring(QA, 0, 3)
        del body["text"]
        return {"input_ids": ids, **body}
    if kind == "letters_from_tokenize":
        tok = replies.get("tokenize_letters")
        if not isinstance(tok, dict):
            tok = json.loads(call(base, "POST", "/tokenize", TOKENIZE_LETTERS)[2])
        ids = tok["tokens"]
        return {
            "text": MMLU,
            "sampling_params": sp(1, 0.0),
            "return_logprob": True,
            "logprob_start_len": -1,
            "top_logprobs_num": 5,
            "token_ids_logprob": ids,
            "return_text_in_logprobs": True,
        }
    if kind == "candidates_from_tokenize":
        tok = replies.get("tokenize_letters")
        if not isinstance(tok, dict):
            tok = json.loads(call(base, "POST", "/tokenize", TOKENIZE_LETTERS)[2])
        return {
            "text": MMLU,
            "sampling_params": sp(1, 0.0),
            **SAMPLED,
            "top_logprobs_num": 5,
            "token_ids_logprob": tok["tokens"],
        }
    if kind.startswith("ids_"):
        _, n, _, new = kind.split("_")
        return {"input_ids": [2] + [HELLO] * (int(n) - 1), "sampling_params": sp(int(new), 0.0)}
    raise ValueError(kind)


def record_all(base: str, only: str | None, out: Path) -> None:
    _, _, info_text = call(base, "GET", "/server_info", None)
    version = json.loads(info_text)["version"]
    replies: dict[str, object] = {}
    for name, method, route, spec in CASES:
        if only and name not in only.split(","):
            continue
        body = build(spec, replies, base) if isinstance(spec, str) else spec
        status, ctype, text = call(base, method, route, body)
        record: dict = {"route": route, "method": method, "request": body, "status": status}
        if "text/event-stream" in ctype:
            record["reply_sse"] = text
        else:
            record["reply"] = json.loads(text) if text else None
            replies[name] = record["reply"]
        record["server"] = {"engine": "sglang", "version": version, "model": MODEL}
        path = out / DIALECT / version / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        print(f"{DIALECT}/{name}: HTTP {status}", file=sys.stderr)
    seeds = [replies.get(n) for n in ("seed_11", "seed_11_again", "seed_12")]
    if all(isinstance(r, dict) for r in seeds):
        texts = [r["text"] for r in seeds]  # type: ignore[index]
        same = texts[0] == texts[1]
        print(f"sampling_seed 11 twice equal: {same}; texts {texts!r}", file=sys.stderr)


def _replies(record: dict) -> list:
    """The JSON objects a /generate fixture's server sent: one, a list's items, or SSE chunks."""
    if "reply_sse" in record:
        chunks = [c.removeprefix("data: ") for c in record["reply_sse"].split("\n\n") if c]
        return [json.loads(c) for c in chunks if c != "[DONE]"]
    reply = record["reply"]
    return reply if isinstance(reply, list) else [reply]


def check_contract(api_types: Path, out: Path) -> int:
    spec = importlib.util.spec_from_file_location("sglang_api_v1_types", api_types)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    bad = 0
    for path in sorted(out.glob(f"{DIALECT}/*/*.json")):
        record = json.loads(path.read_text())
        if record["route"] != "/generate":
            continue
        try:
            mod.GenerateRequest.from_json_value(record["request"])
            verdict, ok = "admitted", True
        except mod.JsonContractError as err:
            # The server's gate answers 400 {"error": <the contract's own text>}.
            same = record["status"] == 400 and record.get("reply") == {"error": str(err)}
            verdict, ok = f"refused, server's 400 text identical: {same}", same
        decoded = ""
        if record["status"] == 200:
            replies = _replies(record)
            for reply in replies:  # each raises JsonContractError on a contract violation
                if "error" in reply:
                    mod.GenerateStreamError.from_json_value(reply)
                else:
                    mod.GenerateResponse.from_json_value(reply)
            decoded = f"; {len(replies)} repl{'y' if len(replies) == 1 else 'ies'} decode"
            ok = ok and verdict == "admitted"
        bad += not ok
        name = f"{path.parent.name}/{path.stem}"
        print(f"{name}: HTTP {record['status']}; request {verdict}{decoded}")
    return 1 if bad else 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base", nargs="?")
    parser.add_argument("--only")
    parser.add_argument("--out", default=str(FIXTURES))
    parser.add_argument("--check-contract", metavar="API_TYPES_PY")
    args = parser.parse_args()
    if args.check_contract:
        sys.exit(check_contract(Path(args.check_contract), Path(args.out)))
    if not args.base:
        parser.error("give the server's base URL, or --check-contract")
    record_all(args.base.rstrip("/"), args.only, Path(args.out))


if __name__ == "__main__":
    main()
