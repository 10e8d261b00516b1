"""Small fake tasks and an OpenAI-shaped completions server for the runner tests.

The server answers ``Q: <word>`` with `` <WORD>`` when the word has an even length and `` nope``
otherwise, so a fake task's accuracy is known in advance. Words containing ``reject`` get a 400,
and the task raises a ``ContractViolation`` on ``bad`` and a ``KeyError`` on ``boom``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
from aiohttp import web

from sieval.errors import ConfigError, ContractViolation
from sieval.ir.request import Request, Sampling
from sieval.ir.response import Response
from sieval.tasks.base import (
    COMPLETION_MODEL,
    ModelFacts,
    Requirement,
    Sample,
    SampleResult,
    StaticTask,
    TaskConfig,
)
from sieval.transport import FakeTransport, HttpReply, HttpRequest, json_reply

DATA_FILE = "fake.txt"


def write_data(data_dir: Path, words: Sequence[str]) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / DATA_FILE
    path.write_text("\n".join(words) + "\n")
    return path


class FakeTask(StaticTask):
    protocol = "exact match of the upper-cased word"
    headline = "acc"
    defaults: Mapping[str, Any] = {}

    def __init__(
        self,
        name: str = "fake_qa",
        *,
        requirements: Sequence[Requirement] | None = None,
        per_sample: int = 2,
        request_extra: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.requirements = tuple(
            requirements
            if requirements is not None
            else (
                Requirement("text_prompt", "raw text prompt"),
                Requirement("sampling", "max_tokens set"),
            )
        )
        self.per_sample = per_sample
        self.request_extra = request_extra or {}

    def data_files(self, data_dir: Path) -> list[Path]:
        return [data_dir / DATA_FILE]

    def load(self, data_dir: Path, config: TaskConfig) -> list[Sample]:
        path = data_dir / DATA_FILE
        if not path.is_file():
            raise ConfigError(f"{self.name}: dataset {path} is missing; pass --data-dir")
        words = path.read_text().split()
        return [
            Sample(id=f"s{i}", data={"word": w}, gold=w.upper(), group="even" if i % 2 else "odd")
            for i, w in enumerate(words)
        ]

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request]:
        word = sample.data["word"]
        return {
            f"r{j}": Request.completion(
                f"Q: {word}", sampling=Sampling(max_tokens=4, temperature=0.0), **self.request_extra
            )
            for j in range(self.per_sample)
        }

    def score(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        word = sample.data["word"]
        if "bad" in word:
            raise ContractViolation(f"the reply for {word} cannot be trusted", path="choices[0]")
        if "boom" in word:
            raise KeyError("boom")
        text = responses["r0"].choices[0].text.strip()
        return SampleResult(
            prediction=text,
            gold=sample.gold,
            metrics={"acc": float(text == sample.gold)},
            channels={"text": text},
        )

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        accs = [r.metrics["acc"] for _, r in results]
        return {"n": len(accs), "acc": sum(accs) / len(accs), "ids": [s.id for s, _ in results]}


def answer(path: str, body: bytes | None, auth: str = "") -> tuple[int, Any]:
    """The fake server's reply to one request: ``(status, json)``."""
    if path.endswith("/v1/models"):
        return 200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]}
    if path.endswith("/version"):
        return 200, {"version": "9.9.9"}
    if path.endswith("/health"):
        return 200, {}
    data = msgspec.json.decode(body or b"{}")
    word = str(data.get("prompt", "")).removeprefix("Q: ")
    if "reject" in word:
        return 400, {"error": {"message": f"bad prompt {word} (auth was {auth})", "code": 400}}
    text = f" {word.upper()}" if len(word) % 2 == 0 else " nope"
    return 200, {
        "id": "cmpl-1",
        "object": "text_completion",
        "model": "fake-model",
        "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }


def fake_transport(
    hook: Callable[[HttpRequest], None] | None = None,
) -> FakeTransport:
    def handler(request: HttpRequest) -> HttpReply:
        if hook is not None:
            hook(request)
        status, data = answer(request.url, request.body)
        return json_reply(data, status=status)

    return FakeTransport(handler)


@contextlib.asynccontextmanager
async def serve(
    *,
    delay_s: float = 0.0,
    key: str | None = None,
    seen: list[dict[str, Any]] | None = None,
    gate: asyncio.Event | None = None,
    host: str = "127.0.0.1",
) -> AsyncIterator[str]:
    """A real HTTP server on ``host`` port 0 speaking the fake completions wire; yields its URL.
    With ``gate``, a completion is answered only while the event is set (a test holds a client
    mid-run by clearing it)."""

    async def handle(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        body = await request.read() if request.can_read_body else None
        if seen is not None:  # the pre-flight's route probe is an empty body: it generates nothing
            seen.append({"path": request.path, "auth": auth, "route_probe": body == b"{}"})
        if key is not None and auth != f"Bearer {key}":
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        generates = request.path.endswith("/completions") and body != b"{}"
        if delay_s and generates:
            await asyncio.sleep(delay_s)
        if gate is not None and generates:
            await gate.wait()
        status, data = answer(request.path, body, auth)
        return web.json_response(data, status=status)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://{f'[{host}]' if ':' in host else host}:{port}"
    finally:
        await runner.cleanup()
