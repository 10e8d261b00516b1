"""Capability keys: named groups of request leaves, each leaf owned by exactly one key.

A dialect's outcome per key (supported / partial / unsupported) is derived from its decision table
by the dialect layer (``sieval dialects`` prints the matrix); nothing here is per dialect. An entry
ending in ``.*`` owns every leaf below it; any other entry owns exactly that leaf.
"""

from __future__ import annotations

import functools

from .leaves import schema_leaves

__all__ = ["CAPABILITIES", "capability_of"]

CAPABILITIES: dict[str, tuple[str, ...]] = {
    "text_prompt": ("input.completion.text",),
    "token_prompt": ("input.completion.token_ids",),
    "fim_suffix": ("input.completion.suffix",),
    "chat": ("input.chat.messages", "input.chat.messages.content.text"),
    "message_names": ("input.chat.messages.name",),
    "image_input": ("input.chat.messages.content.image", "input.chat.messages.content.image.*"),
    "tool_history": (
        "input.chat.messages.content.tool_call",
        "input.chat.messages.content.tool_result",
        "input.chat.messages.content.tool_result.*",
    ),
    "sampling": ("sampling.temperature", "sampling.top_p", "sampling.max_tokens"),
    "stop_strings": ("sampling.stop",),
    "penalties": ("sampling.frequency_penalty", "sampling.presence_penalty"),
    "top_k_sampling": ("sampling.top_k",),
    "seed": ("sampling.seed",),
    "multiple_choices": ("sampling.n",),
    "input_scoring": ("scoring.input_logprobs",),
    "input_top_k": ("scoring.input_top_k",),
    "sampled_logprobs": ("scoring.sampled_logprobs",),
    "sampled_top_k": ("scoring.sampled_top_k",),
    "token_ids": ("scoring.token_ids",),
    "candidate_scoring": ("scoring.candidate_token_ids",),
    "structured_output": ("structured_output.*",),
    "reasoning": ("reasoning.*",),
    "function_tools": ("tools.*",),
    "streaming": ("scheduling.stream",),
    "timeout": ("scheduling.timeout_s",),
    "engine_options": ("options.*",),
}


def _owns(entry: str, leaf: str) -> bool:
    if entry.endswith(".*"):
        return leaf.startswith(entry[:-1])
    return leaf == entry


@functools.cache
def _owner_table() -> dict[str, str]:
    owners: dict[str, list[str]] = {leaf: [] for leaf in schema_leaves()}
    for key, entries in CAPABILITIES.items():
        for entry in entries:
            matched = [leaf for leaf in owners if _owns(entry, leaf)]
            if not matched:
                raise AssertionError(f"capability {key}: {entry!r} matches no schema leaf")
            for leaf in matched:
                owners[leaf].append(key)
    bad = {leaf: keys for leaf, keys in owners.items() if len(keys) != 1}
    if bad:
        raise AssertionError(f"every schema leaf needs exactly one capability: {bad}")
    return {leaf: keys[0] for leaf, keys in owners.items()}


def capability_of(schema_leaf: str) -> str:
    """The capability key that owns a schema leaf (``sampling.seed`` -> ``seed``)."""
    return _owner_table()[schema_leaf]
