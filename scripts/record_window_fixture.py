"""Record one rolling-log-likelihood window from a running vLLM (rerunnable).

    .venv/bin/python scripts/record_window_fixture.py http://127.0.0.1:18321

A document of 23 token ids (below 1,062, so that the reference server's fixture check can
replay it too) is cut into lm-eval's rolling windows of 8 predicted tokens after the BOS (2), and
the second window is sent as the token prompt the openai_completions dialect lowers; writes
``tests/fixtures/openai_completions/0.32.0/echo_token_window.json`` (the usual route, request,
status, reply and server, plus the window's tokens), which ``tests/scoring/test_rolling.py``
lifts and scores.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lower
from sieval.ir.request import CompletionInput, Request, Sampling, Scoring
from sieval.scoring.rolling import rolling_windows

OUT = Path(__file__).parents[1] / "tests/fixtures/openai_completions/0.32.0/echo_token_window.json"
url = sys.argv[1].rstrip("/")


def post(path, body):
    req = urllib.request.Request(
        url + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req) as r:
        return r.status, json.loads(r.read())


ids = list(
    range(300, 323)
)  # a document of 23 ids every vocabulary here has (the reference's: 1,062)
windows = list(rolling_windows(ids, 2, 8))
context, predicted = windows[1]
request = Request(
    input=CompletionInput(token_ids=tuple(context + predicted)),
    sampling=Sampling(temperature=0.0, max_tokens=1),
    scoring=Scoring(input_logprobs=True),
)
body = lower(get_dialect("openai_completions"), request, "gemma-3-270m").body
status, reply = post("/v1/completions", body)
_, version = 200, json.loads(urllib.request.urlopen(url + "/version").read())
json.dump(
    {
        "route": "/v1/completions",
        "method": "POST",
        "request": body,
        "status": status,
        "reply": reply,
        "server": version,
        "window": {"context": context, "predicted": predicted, "document_tokens": ids},
    },
    OUT.open("w"),
    indent=1,
)
print(len(ids), windows)
