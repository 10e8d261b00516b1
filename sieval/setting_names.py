"""A setting named in an error's fix, the way the user set it: a config key or a command line flag.

An error that tells the user to change a setting names it through ``setting()``, never by hand:
a run started from a config file reads ``num_fewshot: N`` (the key of its task entry), a run
started on one line reads ``--num-fewshot N`` (the flag). The command line says which form its
run uses (``named_as("flags")``, a context variable: the run's event loop and its tasks inherit
it); everything else, library use included, gets the config's form::

    raise ConfigError(f"the prompt does not fit; lower it with {setting('num_fewshot', 'N')}")

Static texts (a table of fixes built at import) hold ``{key}`` fields that ``fill`` completes
when the message is made. ``SETTINGS`` is the one table of both forms; ``tests/cli`` checks each
flag form against ``sieval eval --help``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Literal

__all__ = ["SETTINGS", "Form", "fill", "form", "named", "named_as", "setting", "task_setting"]

Form = Literal["config", "flags"]

SETTINGS: dict[str, tuple[str, str]] = {
    # key: (the config's form, the one-line form's flag); {v} is the value shown
    "endpoint": ("endpoint: {v}", "--endpoint {v}"),
    "model": ("model: {v}", "--model {v}"),
    "name": ("name: {v}", "--name {v}"),
    "kind": ("kind: {v}", "--kind {v}"),
    "dialect": ("dialect: {v}", "--dialect {v}"),
    "api_key_env": ("api_key_env: {v}", "--api-key-env {v}"),
    "api_key_file": ("api_key_file: {v}", "--api-key-file {v}"),
    "auth": ("auth: {v}", "--auth {v}"),
    "retries": ("retries: {v}", "--retries {v}"),
    "timeout_s": ("timeout_s: {v}", "--timeout {v}"),
    "max_reply_mib": ("max_reply_mib: {v}", "--max-reply-mib {v}"),
    "concurrency_limit": ("concurrency_limit: {v}", "--concurrency {v}"),
    "concurrency": ("concurrency: {v}", "--concurrency {v}"),
    "n": ("n: {v}", "--limit {v}"),
    "samples": ("samples: [{v}]", "--samples {v}"),
    "num_fewshot": ("num_fewshot: {v}", "--num-fewshot {v}"),
    "seed": ("seed: {v}", "--seed {v}"),
    "options": ("options: {{{name}: {v}}}", "--task-option {name}={v}"),
    "request_defaults": ("request_defaults: {{{name}: {v}}}", "--gen-kwargs {name}={v}"),
    "request_overrides": ("request_overrides: {{{name}: {v}}}", "--gen-kwargs {name}={v}"),
    "system_instruction": ("system_instruction: {v}", "--system-instruction {v}"),
    "price": ("price: {v}", "--price {v}"),
    "server_defaults": ("server_defaults: {v}", "--server-defaults {v}"),
    "allow_mixed_replicas": ("allow_mixed_replicas: {v}", "--allow-mixed-replicas"),
    "fewshot_as_multiturn": ("fewshot_as_multiturn: {v}", "--fewshot-as-multiturn"),
    "apply_chat_template": ("apply_chat_template: {v}", "--apply-chat-template"),
}
"""Each setting a fix may name. ``options`` and ``request_defaults`` hold a named entry (a task
option such as ``top_k``, a request leaf such as ``sampling.temperature``)."""

_FORM: ContextVar[Form] = ContextVar("sieval_setting_form", default="config")


def form() -> Form:
    """How settings are named in the current context."""
    return _FORM.get()


@contextlib.contextmanager
def named_as(how: Form) -> Iterator[None]:
    """Name settings in ``how``'s form for the block (and the tasks started in it)."""
    token = _FORM.set(how)
    try:
        yield
    finally:
        _FORM.reset(token)


def setting(key: str, value: str = "N") -> str:
    """The setting ``key`` with ``value``, as the user would write it. ``key`` may name an entry
    of ``options`` or ``request_defaults``: ``options.top_k``, ``request_defaults.sampling.n``."""
    head, _, name = key.partition(".")
    config, flag = SETTINGS[head if name else key]
    return (flag if form() == "flags" else config).format(v=value, name=name)


def task_setting(task: str, key: str, value: str) -> str:
    """A setting of one task entry: ``--task mmlu_kshot_clp:num_fewshot=2``, or ``num_fewshot: 2
    in the mmlu_kshot_clp entry of tasks:``."""
    if form() == "flags":
        return f"--task {task}:{key}={value}"
    return f"{key}: {value} in the {task} entry of tasks:"


def named(key: str) -> str:
    """The name alone of the setting ``key``: ``concurrency_limit`` or ``--concurrency``;
    ``options.top_k`` or ``--task-option top_k``."""
    head, _, name = key.partition(".")
    if form() == "config":
        return key
    flag = SETTINGS[head if name else key][1].split(" ", 1)[0]
    return f"{flag} {name}" if name else flag


_FIELD = re.compile(r"\{([a-z_]+(?:\.[a-z_.]+)?)\}")


def fill(template: str) -> str:
    """``template`` with each ``{key}`` (a key of ``SETTINGS``) replaced by ``setting(key)``."""
    return _FIELD.sub(lambda m: setting(m.group(1)), template)
