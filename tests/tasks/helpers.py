"""Hand-built replies for task tests."""

from __future__ import annotations

from sieval.ir.request import Request
from sieval.ir.response import Choice, Response, Token, TopEntry


def prompt_of(request: Request) -> str:
    text = request.input.text  # type: ignore[union-attr]
    assert isinstance(text, str)
    return text


def scored(prompt: str, context_chars: int, logprob: float) -> Response:
    """Input tokens: a BOS, the context as one token, the continuation as one token."""
    tokens = (
        Token(text="<bos>", logprob=None, offset=0),
        Token(text=prompt[:context_chars], logprob=-9.0, offset=0),
        Token(text=prompt[context_chars:], logprob=logprob, offset=context_chars),
    )
    return Response(choices=(Choice(index=0, text="\n"),), input_tokens=tokens)


def next_token(top: dict[str, float]) -> Response:
    """A one-token generation whose top-k list is ``top``."""
    entries = tuple(TopEntry(token=t, logprob=lp) for t, lp in top.items())
    first = entries[0]
    token = Token(text=first.token, logprob=first.logprob, top=entries, scored_rank=0)
    return Response(choices=(Choice(index=0, text=first.token, tokens=(token,)),))


def generated(text: str) -> Response:
    return Response(choices=(Choice(index=0, text=text, finish_reason="stop"),))
