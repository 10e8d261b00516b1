"""The server's tokenizer as a task's ``generate`` asks it (``tasks.base.Tokenizer``): counts
through the server's tokenize route, and the tokens a prompt is sent with beyond its own.

The route is the dialect's (``Endpoint.tokenize``), else vLLM's ``/tokenize`` on the same server
(a chat wire has none of its own; vLLM serves it beside every route). The template's tokens are
counted, not guessed: for a text prompt, the special tokens the tokenizer adds (``x`` with and
without them); for a chat prompt, vLLM's count of one user message ``x`` through the model's
chat template with the generation prompt, less ``x``'s own tokens.
"""

from __future__ import annotations

from typing import Any

from ..dialects.vocabulary import tokenized
from ..errors import ConfigError, SievalError
from ..model import Model

__all__ = ["ServedTokenizer"]

_PROBE = "x"


class ServedTokenizer:
    def __init__(self, model: Model, max_length: int | None, chat: bool) -> None:
        self.model = model
        self.max_length = max_length
        self.chat = chat
        self.route = str(model.dialect.endpoint.tokenize or "/tokenize")
        self.asked = 0
        """How many tokenize requests were sent (the setup says it)."""

    async def _ask(self, body: dict[str, Any], text: str) -> list[int]:
        self.asked += 1
        try:
            status, data = await self.model.fetch(
                self.route, {"model": self.model.model_id, **body}
            )
        except SievalError as exc:
            raise self._refused(f"failed: {exc.message}") from exc
        tokens = tokenized(data, text) if status == 200 else None
        if tokens is None:
            raise self._refused(f"answered HTTP {status}: {str(data)[:200]!r}")
        return tokens

    def _refused(self, what: str) -> ConfigError:
        return ConfigError(
            f"the server's tokenize route {self.route} {what}; RULER's samples are sized with the "
            "served model's tokenizer: serve it with vLLM or SGLang (their /tokenize)",
            path="tokenize",
        )

    async def count(self, text: str) -> int:
        return len(await self._ask({"prompt": text, "add_special_tokens": False}, text))

    async def sent(self, text: str) -> int:
        if self.chat:
            messages = [{"role": "user", "content": text}]
            body = {"messages": messages, "add_generation_prompt": True}
            return len(await self._ask(body, text))
        return len(await self._ask({"prompt": text, "add_special_tokens": True}, text))

    async def overhead(self) -> int:
        plain = await self.count(_PROBE)
        if self.chat:
            try:
                return await self.sent(_PROBE) - plain
            except ConfigError as exc:
                said = exc.message.split("; RULER's samples")[0]
                raise ConfigError(
                    "the chat template's own tokens are counted by the server's tokenize route "
                    f"given one user message (vLLM's {self.route} takes messages), and {said}; "
                    "use a completion wire (openai_completions, vllm_native) for RULER's raw "
                    "template, or a vLLM",
                    path="tokenize",
                ) from exc
        return await self.sent(_PROBE) - plain
