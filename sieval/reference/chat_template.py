"""The chat template the reference server applies, the same turn format as the live Gemma.

``scripts/prepare_gemma.py`` gives the real model this template (vLLM renders it with Jinja);
this is the same text in Python, so a chat route of the reference server turns messages into the
prompt the live server would build:

    <start_of_turn>user
    {system text}\\n\\n{user text}<end_of_turn>
    <start_of_turn>model
    {assistant text}<end_of_turn>
    <start_of_turn>model            (add_generation_prompt)

A system message is held and prefixed to the next user turn; ``assistant`` is written ``model``;
any other role (``tool``) keeps its name; each turn's text is trimmed. A message's content is a
string or a list of ``{"type": "text", "text"}`` parts (joined with newlines, as vLLM does for a
string-format template). The live template writes ``<bos>`` as text; here the completions
renderer adds the BOS token instead (its tokenizer has no text form of special tokens). The
chat-shaped wires translate their bodies to this message list and then onto the completions
renderer, as vLLM translates them onto its chat pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["END_OF_TURN", "message_text", "render_messages"]

END_OF_TURN = "<end_of_turn>"


def message_text(content: Any) -> str:
    """A message's content as the template writes it (text parts joined by newlines)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def render_messages(messages: Sequence[dict[str, Any]], add_generation_prompt: bool = True) -> str:
    """The prompt text for ``messages`` (each ``{"role", "content"}``), without the BOS."""
    out: list[str] = []
    system = ""
    for message in messages:
        role = str(message.get("role", "user"))
        text = message_text(message.get("content"))
        if role == "system":
            system = text + "\n\n"
            continue
        turn = "model" if role == "assistant" else role
        out.append(f"<start_of_turn>{turn}\n")
        if turn == "user":
            out.append(system)
            system = ""
        out.append(f"{text.strip()}{END_OF_TURN}\n")
    if add_generation_prompt:
        out.append("<start_of_turn>model\n")
    return "".join(out)
