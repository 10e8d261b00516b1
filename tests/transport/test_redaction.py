"""Redaction of text, URLs, headers and JSON."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sieval.transport import (
    REDACTED,
    collect_secrets,
    redact,
    redact_headers,
    redact_json,
    redact_url,
)

KEY = "sk-test-SECRET123"


def test_redact_every_occurrence_longest_first() -> None:
    text = f"{KEY} and {KEY}-extra and sk-test"
    assert redact(text, ["sk-test", KEY, f"{KEY}-extra", ""]) == (
        f"{REDACTED} and {REDACTED} and {REDACTED}"
    )


def test_redact_bearer_tokens_without_secrets() -> None:
    assert redact("Authorization: Bearer abcdefgh12345") == f"Authorization: Bearer {REDACTED}"
    assert redact("bearer   tok.en-123456") == f"bearer   {REDACTED}"
    assert redact("the bearer of news") == "the bearer of news"


@given(st.text(min_size=4), st.text(), st.text())
def test_secret_never_survives(secret: str, before: str, after: str) -> None:
    assert secret not in redact(before + secret + after, [secret]).replace(REDACTED, "\0")


def test_redact_url() -> None:
    url = "https://user:pw@api.example.com/v1?key=abc&x=1&api_key=zzz&access_token=t#frag"
    assert redact_url(url) == (
        f"https://user:{REDACTED}@api.example.com/v1?key={REDACTED}&x=1"
        f"&api_key={REDACTED}&access_token={REDACTED}#frag"
    )
    assert redact_url(f"http://h/{KEY}/x", [KEY]) == f"http://h/{REDACTED}/x"
    assert redact_url("http://h:8000/v1/models") == "http://h:8000/v1/models"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:pw@h:81/v1", f"http://user:{REDACTED}@h:81/v1"),
        ("http://TOKEN@h/v1", f"http://{REDACTED}@h/v1"),  # a token alone is the secret
        ("http://user:p@ss@h/v1", f"http://user:{REDACTED}@h/v1"),  # userinfo ends at the last @
        ("http://u:a@b@c@h/?x=1", f"http://u:{REDACTED}@h/?x=1"),
        ("http://user:p%40ss@h/", f"http://user:{REDACTED}@h/"),
        ("http://user:pw@[::1]:8000/v1", f"http://user:{REDACTED}@[::1]:8000/v1"),
        ("http://tok@[::1]:8000", f"http://{REDACTED}@[::1]:8000"),
        ("http://user:@h/", f"http://user:{REDACTED}@h/"),
        ("http://h/a@b?c=d@e", "http://h/a@b?c=d@e"),  # an @ past the authority is no userinfo
        ("http://[::1", "http://[::1"),  # unparseable for yarl: still no exception here
        (
            "http://h/v1?Api-Key=zz&token=t&k=v#x@y",
            f"http://h/v1?Api-Key={REDACTED}&token={REDACTED}&k=v#x@y",
        ),
        (f"http://user:{REDACTED}@h/", f"http://user:{REDACTED}@h/"),  # idempotent
        ("embedded", "embedded"),
    ],
)
def test_redact_url_parses_every_userinfo_form(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert redact_url(shown) == shown


def test_collect_secrets_takes_the_userinfo() -> None:
    assert set(collect_secrets({}, (), "http://user:p%40ss-long@h/")) == {
        "p%40ss-long",
        "p@ss-long",
    }
    assert collect_secrets({}, (), "http://TOKEN1234@h/") == ("TOKEN1234",)
    assert collect_secrets({}, (), "http://abc@h/") == ()  # too short to hunt in free text


def test_redact_headers() -> None:
    headers = {
        "Authorization": "Bearer x",
        "X-API-KEY": "k",
        "x-goog-api-key": "g",
        "Api-Key": "a",
        "X-Echo": f"prefix {KEY}",
        "Content-Type": "application/json",
    }
    out = redact_headers(headers, [KEY])
    assert out == {
        "Authorization": REDACTED,
        "X-API-KEY": REDACTED,
        "x-goog-api-key": REDACTED,
        "Api-Key": REDACTED,
        "X-Echo": REDACTED,
        "Content-Type": "application/json",
    }
    assert headers["Authorization"] == "Bearer x"  # a copy


def test_redact_json_walks_keys_and_values() -> None:
    data = {KEY: [1, None, {"a": f"x{KEY}y"}], "n": 2.5, "ok": True}
    assert redact_json(data, [KEY]) == {
        REDACTED: [1, None, {"a": f"x{REDACTED}y"}],
        "n": 2.5,
        "ok": True,
    }


def test_collect_secrets() -> None:
    found = collect_secrets(
        {"Authorization": f"Bearer {KEY}", "x-api-key": "short", "X-Other": "not-a-secret-value"},
        ["declared"],
        "http://h/v1?key=querykey123&other=value12345",
    )
    assert set(found) == {f"Bearer {KEY}", KEY, "declared", "querykey123"}
    assert list(found) == sorted(found, key=len, reverse=True)
    assert collect_secrets({"api-key": "rawtoken123"}) == ("rawtoken123",)
    assert collect_secrets({"Authorization": "Bearer EMPTY"}) == ("Bearer EMPTY",)
