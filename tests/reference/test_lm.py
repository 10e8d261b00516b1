"""The reference model and tokenizer, without a server."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sieval.reference.lm import ReferenceModel
from sieval.reference.tokenizer import ALIASES, BOS_ID, EOS_ID


def test_special_ids(model: ReferenceModel) -> None:
    assert BOS_ID == 2 and EOS_ID == 1
    assert model.token_text(BOS_ID) == "<bos>"
    assert model.token_text(EOS_ID) == "<eos>"
    assert model.tokenize("hi")[0] == BOS_ID
    assert 300 <= model.vocab_size <= 2000


@pytest.mark.parametrize("context", ["", "The sun", "Question: Tom has 3", "中国的", "zzqx"])
def test_logprobs_normalised_over_whole_vocab(model: ReferenceModel, context: str) -> None:
    lp = model.logprobs_next(model.tokenize(context))
    assert len(lp) == model.vocab_size
    assert all(math.isfinite(x) for x in lp)
    assert abs(math.fsum(math.exp(x) for x in lp) - 1.0) < 1e-9


def test_cjk_round_trip_and_byte_fallback(model: ReferenceModel) -> None:
    ids = model.tokenize("中国的")
    assert len(ids) == 1 + 9  # BOS + three bytes per character
    assert model.decode(ids) == "中国的"
    assert model.token_text(ids[1]) == "\ufffd"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_round_trips(text: str) -> None:
    from sieval.reference import get_model

    m = get_model()
    assert m.decode(m.tokenize(text, add_bos=False)) == text


def test_decode_alike_pieces_exist(model: ReferenceModel) -> None:
    tok = model.tokenizer
    for alias in ALIASES:
        ids = [i for i in range(tok.vocab_size) if tok.token_text(i) == alias]
        assert len(ids) >= 2, alias  # "." also has its ASCII byte piece
    # an ASCII byte piece decodes like its character piece
    assert tok.token_text(4 + ord("A")) == "A" == tok.token_text(tok.tokenize("A")[0])
    assert 4 + ord("A") != tok.tokenize("A")[0]


def test_decoded_token_completes_utf8_from_context(model: ReferenceModel) -> None:
    tok = model.tokenizer
    ids = tok.encode("中", add_bos=False)
    assert tok.decoded_token(ids[0], []) == ""
    assert tok.decoded_token(ids[1], ids[:1]) == ""
    assert tok.decoded_token(ids[2], ids[:2]) == "中"
    assert tok.decoded_token(ids[2], []) == ""
    # a continuation byte after a clean ASCII token: the clean prefix is stripped
    a = tok.encode("a", add_bos=False)
    assert tok.decoded_token(ids[2], [*a, ids[0], ids[1]]) == "中"


def test_decode_stable_holds_back_incomplete_bytes(model: ReferenceModel) -> None:
    tok = model.tokenizer
    ids = tok.encode("a中", add_bos=False)
    assert tok.decode_stable(ids[:2]) == "a"
    assert tok.decode_stable(ids) == "a中"
    assert tok.decode([BOS_ID, *ids], skip_special=False) == "<bos>a中"


def test_continuation_logprob_matches_score(model: ReferenceModel) -> None:
    ctx, cont = "The sun is", " a star."
    full = model.tokenize(ctx + cont)
    n_ctx = len(model.tokenize(ctx))
    scores = model.score(full)
    expected = math.fsum(x for x in scores[n_ctx:] if x is not None)
    assert abs(model.continuation_logprob(ctx, cont) - expected) < 1e-12
    with pytest.raises(ValueError):
        model.continuation_logprob("The su", "n")


def test_greedy_is_argmax(model: ReferenceModel) -> None:
    prompt = model.tokenize("Once upon a time")
    out = model.greedy(prompt, 10)
    ctx = list(prompt)
    for tid in out:
        lp = model.logprobs_next(ctx)
        assert lp[tid] == max(lp)
        ctx.append(tid)


def test_distribution_rank_and_cache(model: ReferenceModel) -> None:
    dist = model.distribution(model.tokenize("The"))
    best = dist.argmax()
    assert dist.rank(best) == 1
    assert dist.top(3)[0] == best
    assert model.distribution(model.tokenize("The")) is dist


def test_custom_corpus_model() -> None:
    m = ReferenceModel(["the cat sat on the mat.\n\nthe dog sat."])
    assert m.decode(m.tokenize("the cat")) == "the cat"
