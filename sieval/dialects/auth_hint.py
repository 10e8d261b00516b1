"""What to say when a server refuses the key (401/403): how it was sent, and the other way to try.

A right key sent under the wrong scheme is refused exactly like a wrong key: vLLM's
``/v1/messages`` reads only ``Authorization: Bearer`` and answers an ``x-api-key`` with a bare
401, while Anthropic's own API reads ``x-api-key``. So the message names the scheme used and the
setting that switches it (``auth: bearer`` / ``--auth bearer``), then the key itself.
"""

from __future__ import annotations

from ..setting_names import setting
from .vocabulary import Auth

__all__ = ["rejected_key"]

_NAMES = {
    ("Authorization", "Bearer"): "bearer",
    ("x-api-key", None): "x-api-key",
    ("x-goog-api-key", None): "x-goog-api-key",
}


def _name(auth: Auth) -> str:
    return _NAMES.get((auth.header, auth.scheme), "custom")


def rejected_key(used: Auth, default: Auth, *, key_sent: bool) -> str:
    """The fix for a 401/403, as a clause to follow the status: ``"no key was sent: ..."``, or
    ``"the key was sent as `x-api-key: <key>` (the dialect's default); if the key is right the
    server may want it sent another way: try auth: bearer; else check the key ..."``."""
    if not key_sent:
        return (
            f"no key was sent: name the variable holding it with {setting('api_key_env', 'VAR')} "
            f"(or {setting('api_key_file', 'PATH')})"
        )
    is_default = (used.header, used.scheme) == (default.header, default.scheme)
    how = "the dialect's default" if is_default else setting("auth", _name(used))
    sent = f"{used.header}: {used.scheme + ' ' if used.scheme else ''}<key>"
    if _name(used) != "bearer":
        other = setting("auth", "bearer")  # what OpenAI-compatible servers and proxies read
    elif not is_default:
        other = f"{setting('auth', 'default')} ({default.header})"  # the dialect's own scheme
    else:
        other = ""
    retry = f"; if the key is right the server may want it sent another way: try {other}"
    return (
        f"the key was sent as `{sent}` ({how})"
        + (retry if other else "")
        + "; else check the key (its environment variable or file)"
    )
