"""acme_chat: a made-up OpenAI-shaped chat wire, the worked example of ``docs/dialect-layer.md``.

OpenAI's ``POST /v1/chat/completions`` with three differences a real server could have: the seed
is ``random_seed``, the budget is ``max_tokens``, and ``top_logprobs`` lists exactly the k best
(no sampled-first cut as on vLLM), so sieval asks for k, not k + 1. Dropped into
``sieval/dialects/``, the registry finds it; nothing else changes.
"""

from __future__ import annotations

import dataclasses

from sieval.dialects import openai_chat as chat
from sieval.dialects.channels import TopK
from sieval.dialects.vocabulary import Dialect, Endpoint, Field, Row

ID = "acme_chat"

# -- the decision table: OpenAI chat's, with the rows that differ -------------------------------

ROWS: dict[str, Row] = {
    **chat.ROWS,
    "sampling.seed": Field("random_seed"),  # acme's name for the seed
    "sampling.max_tokens": Field("max_tokens"),  # no max_completion_tokens on acme
    "scoring.sampled_top_k": Field("top_logprobs"),  # k: acme lists the k best, no more
}

# -- the reply: OpenAI chat's, with acme's top-k rule ----------------------------------------------

REPLY = dataclasses.replace(chat.REPLY, top_k=TopK())  # exactly k, sorted by the reader

DIALECT = Dialect(
    id=ID,
    endpoint=Endpoint("/v1/chat/completions"),
    rows=ROWS,
    channels=chat.CHANNELS,
    reply=REPLY,
    stream=chat.DIALECT.stream,
    retry=chat.DIALECT.retry,
    summary="acme's POST /v1/chat/completions (the worked example: OpenAI-shaped)",
)
