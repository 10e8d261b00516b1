"""The channel primitives, one by one: each rule on small cases a wrong rule would get wrong, and
each whole-channel path against its walk (``checks.walked()``) on generated channels."""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import UNSET

from sieval.dialects import channels
from sieval.dialects.channels import (
    Placed,
    TopK,
    UsageAt,
    by_bytes,
    clamp_warning,
    echoed_clamp_warning,
    lift_usage,
    located,
    pinned_stop,
    place,
    ranked_by_id,
    run_on_stop,
    spelled,
    tool_arguments,
    top_k,
    top_k_map,
)
from sieval.dialects.reply_checks import Checker, walked
from sieval.errors import ContractViolation
from sieval.ir.response import Usage

CHECK = Checker("test_wire")


def outcome(run: Any) -> Any:
    try:
        return run()
    except ContractViolation as exc:
        return ("refused", str(exc))


def both(run: Any) -> tuple[Any, Any]:
    whole = outcome(run)
    with walked():
        return whole, outcome(run)


# -- placing token texts --------------------------------------------------------------------------


def test_place_covers_specials_where_allowed_and_byte_pieces_by_runs() -> None:
    assert place(["<bos>", "Hi", " there"], "Hi there", "first") == Placed([0, 0, 2], 8, 3)
    assert place(["Hi", "<eos>"], "Hi", "first").stopped == 1  # not first: not skipped
    assert place(["Hi", "<eos>"], "Hi", "anywhere") == Placed([0, 2], 2, 2)
    assert place(["<bos>", "Hi"], "Hi", "none").stopped == 0
    # "é" decoded alone byte by byte reads U+FFFD twice; the run covers the one character
    assert place(["caf", "\ufffd", "\ufffd", "!"], "café!", "anywhere", True).offsets == [
        0,
        3,
        3,
        4,
    ]
    assert place(["caf", "\ufffd", "x"], "café!", "anywhere", True).stopped == 1


def test_spelled_declines_what_only_a_walk_can_place() -> None:
    assert spelled(["a", "b"], "ab") == [0, 1]
    assert spelled(["<bos>", "a"], "a") == [0, 0]
    assert spelled(["a", ""], "a", pieces=True) is None  # an empty piece: walked
    assert spelled(["a", "x"], "ab") is None


@st.composite
def _spellings(draw: st.DrawFn) -> tuple[list[str], str]:
    words = draw(
        st.lists(st.sampled_from(["a", "bc", " d", "é", "<eos>", "\ufffd", ""]), max_size=8)
    )
    target = draw(st.sampled_from(["".join(words), "".join(w for w in words if "<" not in w)]))
    return words, target


@settings(max_examples=300, deadline=None)
@given(_spellings(), st.sampled_from(["none", "first", "anywhere"]), st.booleans())
def test_place_whole_and_walked_agree(
    case: tuple[list[str], str], specials: Any, pieces: bool
) -> None:
    texts, target = case
    whole, walked_ = both(lambda: place(texts, target, specials, pieces))
    assert whole == walked_


def test_a_stop_string_cut_from_the_text_runs_on_or_is_pinned() -> None:
    texts = ["1, 2", ",", " 3"]
    placed = place(texts, "1, 2", "anywhere")
    assert placed.stopped == 1
    # vLLM's chat route: the offsets run on past the text
    assert run_on_stop(texts, "1, 2", placed, ", 3") == [0, 4, 5]
    assert run_on_stop(texts, "1, 2", placed, " 9") is None
    # SGLang: they sit at the text's end; a stop token id must be the last id
    assert pinned_stop(texts, "1, 2", placed, ", 3", None) == [0, 4, 4]
    assert pinned_stop(["a", "<eos>x"], "a", place(["a", "<eos>x"], "a"), 7, 7) == [0, 1]
    assert pinned_stop(["a", "b"], "a", place(["a", "b"], "a"), 7, 8) is None


def test_by_bytes_reads_true_bytes_and_refuses_decoded_ones() -> None:
    e = "é".encode()
    assert by_bytes(["caf", "\\xc3", "\\xa9"], [list(b"caf"), [e[0]], [e[1]]], "café") == [0, 3, 3]
    assert by_bytes(["caf", "é"], [list(b"caf"), list(b"x")], "café") is None


def test_located_re_bases_offsets_past_a_bos_the_text_leaves_out() -> None:
    texts, given = ["<bos>", "Hi", " there"], [0, 5, 7]
    assert located(CHECK, "choices[0].logprobs", texts, given, "Hi there", 0) == [0, 0, 2]
    assert both(lambda: located(CHECK, "w", texts, given, "Hi there", 0)) == ([0, 0, 2],) * 2
    with pytest.raises(ContractViolation, match=r"w.text_offset\[2\]=9 does not locate"):
        located(CHECK, "w", texts, [0, 5, 9], "Hi there", 0)


# -- exact top-k --------------------------------------------------------------------------------


class Alt(NamedTuple):
    token: Any
    logprob: Any
    token_id: Any = None


def test_top_k_k_plus_one_is_sorted_cut_and_ranked() -> None:
    rule = TopK(extra=1)
    scored = [Alt("b", -1.0)]
    lists = [[Alt("b", -1.0), Alt("a", -0.5), Alt("c", -2.0)]]  # sampled first, unsorted
    tops, ranks = top_k(CHECK, "p[{i}]", scored, lists, 2, rule)
    assert [(e.token, e.logprob) for e in tops[0]] == [("a", -0.5), ("b", -1.0)] and ranks == [1]
    with pytest.raises(ContractViolation, match=r"p\[0\] lists 2 alternatives for top-k=2"):
        top_k(CHECK, "p[{i}]", scored, [lists[0][:2]], 2, rule)


def test_top_k_at_least_and_presorted_rules() -> None:
    scored = [Alt("a", -0.5, 7)]
    more = [[Alt("c", -2.0, 9), Alt("a", -0.5, 7), Alt("b", -1.0, 8)]]
    tops, ranks = top_k(CHECK, "p[{i}]", scored, more, 2, TopK(at_least=True, ids=True))
    assert [e.token_id for e in tops[0]] == [7, 8] and ranks == [0]
    presorted = TopK(presorted=True, ids=True, texts=False)
    with pytest.raises(ContractViolation, match="not sorted most likely first"):
        top_k(CHECK, "p[{i}]", scored, [more[0][:2]], 2, presorted)
    twice = [[Alt("a", -0.5, 7), Alt("a", -0.5, 7)]]
    with pytest.raises(ContractViolation, match="lists a token id twice"):
        top_k(CHECK, "p[{i}]", scored, twice, 2, presorted)
    unknown_text = [[Alt(None, -0.5, 7), Alt(None, -1.0, 8)]]
    assert top_k(CHECK, "p[{i}]", scored, unknown_text, 2, presorted)[0][0][0].token == ""


def test_top_k_refuses_a_list_that_contradicts_the_scored_token() -> None:
    scored = [Alt("z", -0.1)]  # not listed, yet above the lowest listed
    lists = [[Alt("a", -0.5), Alt("b", -1.0), Alt("c", -2.0)]]
    with pytest.raises(ContractViolation, match="does not rank the sampled token 'z'"):
        top_k(CHECK, "p[{i}]", scored, lists, 2, TopK(extra=1))


_ALTS = st.lists(
    st.builds(
        Alt,
        st.sampled_from(["a", "b", "c", "d", None]),
        st.one_of(st.floats(-5, 0.5), st.none()),
        st.sampled_from([1, 2, 3, 4, None]),
    ),
    max_size=5,
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.builds(
                Alt, st.sampled_from("abcd"), st.floats(-5, 0), st.sampled_from([1, 2, 3, 4, None])
            ),
            _ALTS,
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(
        [TopK(extra=1), TopK(at_least=True, ids=True), TopK(presorted=True, ids=True, texts=False)]
    ),
    st.integers(1, 3),
)
def test_top_k_whole_and_walked_agree(positions: Any, rule: TopK, k: int) -> None:
    scored = [s for s, _ in positions]
    lists = [alts for _, alts in positions]
    if not rule.ids:  # chat's alternatives always have their text and a logprob
        lists = [
            [a for a in alts if a.token is not None and a.logprob is not None] for alts in lists
        ]
    whole, walked_ = both(lambda: top_k(CHECK, "p[{i}]", scored, lists, k, rule))
    assert whole == walked_


def test_top_k_map_takes_k_or_k_plus_one_with_the_scored_token() -> None:
    tops, rank = top_k_map(CHECK, "p", {"a": -0.5, "b": -1.0}, "b", -1.0, 2)
    assert [e.token for e in tops] == ["a", "b"] and rank == 1
    tops, rank = top_k_map(CHECK, "p", {"a": -0.5, "b": -1.0, "c": -3.0}, "c", -3.0, 2)
    assert [e.token for e in tops] == ["a", "b"] and rank == -1
    with pytest.raises(ContractViolation, match="collapsed"):  # a short map
        top_k_map(CHECK, "p", {"a": -0.5}, "a", -0.5, 2)
    with pytest.raises(ContractViolation, match="overwrote it"):
        top_k_map(CHECK, "p", {"a": -0.5, "b": -1.0}, "b", -0.9, 2)


class Entry(NamedTuple):
    logprob: float
    rank: int
    decoded_token: str


def test_ranked_by_id_checks_k_zero_whole_and_walks_the_rest() -> None:
    rows = [{5: Entry(-1.0, 3, "a")}, {6: Entry(-2.0, 9, "b")}]
    assert (
        both(lambda: ranked_by_id(CHECK, "p[{i}]", rows, [5, 6], 0))
        == (([rows[0][5], rows[1][6]], None, None),) * 2
    )
    short = [{5: Entry(-1.0, 3, "a")}, {}]
    whole, walked_ = both(lambda: ranked_by_id(CHECK, "p[{i}]", short, [5, 6], 0))
    assert whole == walked_ and "p[2] lists 0 entries" in whole[1]
    ranked = [{5: Entry(-1.0, 2, "a"), 4: Entry(-0.5, 1, "z")}]
    (entry,), (top,), (rank,) = ranked_by_id(CHECK, "p[{i}]", ranked, [5], 2)
    assert entry.decoded_token == "a" and [e.token_id for e in top] == [4, 5] and rank == 1


# -- usage, the clamp warning, tool arguments ----------------------------------------------------


class Counts(msgspec.Struct):
    a: int | None = None
    b: int | None = None
    c: int | None = None
    total: int | None = None


class Camel(msgspec.Struct, rename="camel"):
    prompt_count: int | None = None
    answer_count: int | None = None
    total_count: int | None = None


def test_usage_sums_what_is_reported_and_keeps_a_total_that_covers_more() -> None:
    at = UsageAt(input=("a", "b"), output="c", total="total", total_covers=("a", "c"))
    assert lift_usage(CHECK, Counts(a=10, b=None, c=2, total=99), at) == Usage(
        input_tokens=10, output_tokens=2, reported_total_tokens=99
    )
    assert lift_usage(CHECK, Counts(a=None, b=5, c=None), at) == Usage()  # the first decides
    assert lift_usage(CHECK, None, at) == Usage()
    assert lift_usage(CHECK, Counts(a=1, c=2, total=3), at).reported_total_tokens is UNSET


def _refused(wire: Any, at: UsageAt) -> ContractViolation:
    with pytest.raises(ContractViolation) as info:
        lift_usage(CHECK, wire, at)
    return info.value


EXACT = UsageAt(input="a", output="b", cached="c", total="total")


@pytest.mark.parametrize("bad", [-1, -100_000, 10**9 + 1, 10**30])
def test_a_count_that_is_no_token_count_is_refused(bad: int) -> None:
    error = _refused(Counts(a=bad, b=2, total=7), EXACT)
    assert error.path == "usage.a" and error.received == bad
    assert f"usage.a is {bad}, not a token count" in str(error)


def test_a_bad_count_is_refused_even_where_it_is_only_added_or_kept() -> None:
    """A negative cache read would lower Anthropic's summed input; a total is never summed."""
    summed = UsageAt(input=("a", "b"), output="c")
    assert _refused(Counts(a=10, b=-4, c=1), summed).path == "usage.b"
    assert _refused(Counts(a=1, b=2, total=-3), EXACT).path == "usage.total"


def test_bool_and_float_counts_are_refused_by_the_count_check() -> None:
    for bad in (True, 1.0, float("nan")):
        with pytest.raises(ContractViolation, match="not a token count"):
            CHECK.count("usage.x", bad)
    assert CHECK.count("usage.x", None) is None and CHECK.count("usage.x", 0) == 0
    assert CHECK.count("usage.x", 10**9) == 10**9


def test_an_exact_total_must_be_input_plus_output() -> None:
    error = _refused(Counts(a=5, b=2, total=8), EXACT)
    assert error.path == "usage.total" and (error.expected, error.received) == (7, 8)
    assert "usage.a 5 + usage.b 2" in str(error)
    # one part unreported: the total must still cover the other
    assert lift_usage(CHECK, Counts(a=5, total=9), EXACT).reported_total_tokens == 9
    assert _refused(Counts(a=5, total=4), EXACT).path == "usage.total"


def test_a_covering_total_below_what_it_covers_is_refused() -> None:
    at = UsageAt(input="a", output="c", total="total", total_covers=("a", "c"))
    error = _refused(Counts(a=10, c=2, total=11), at)
    assert "less than the 12 tokens it must cover" in str(error)


def test_parts_must_fit_in_their_wholes() -> None:
    error = _refused(Counts(a=5, b=2, c=6, total=7), EXACT)
    assert error.path == "usage.c" and "more than the 5 of usage.a" in str(error)
    reasoning = UsageAt(input="a", output="b", reasoning="c")
    assert _refused(Counts(a=5, b=2, c=3), reasoning).path == "usage.c"
    assert lift_usage(CHECK, Counts(a=5, b=2, c=2), reasoning).reasoning_tokens == 2


def test_a_bad_count_is_named_as_the_wire_spells_it() -> None:
    at = UsageAt(input="prompt_count", output="answer_count", where="usageMetadata")
    error = _refused(Camel(prompt_count=-1, answer_count=1), at)
    assert error.path == "usageMetadata.promptCount"


def test_checked_usage_holds_every_wire_to_the_contract() -> None:
    assert channels.checked_usage(CHECK, Usage(input_tokens=3, cached_tokens=3)).cached_tokens == 3
    with pytest.raises(ContractViolation, match="usage.output_tokens is -2"):
        channels.checked_usage(CHECK, Usage(output_tokens=-2))
    with pytest.raises(ContractViolation, match="more than the 1 of usage.output_tokens"):
        channels.checked_usage(CHECK, Usage(output_tokens=1, reasoning_tokens=2))


def test_clamp_warnings_say_who_shortened_what() -> None:
    said = clamp_warning("w", "choice 0", "length", 3, 8, prompt=2040)
    assert said == (
        "w: choice 0 ended for length after 3 of max_tokens=8 tokens: the server shortened "
        "max_tokens to fit its context window (prompt 2040 tokens), so this generation is cut "
        "by the context"
    )
    assert clamp_warning("w", "the answer", "max_tokens", 3, 8).endswith("context window")
    assert echoed_clamp_warning("w", "max_output_tokens", 8, 3, 10).startswith(
        "w: the server shortened max_output_tokens from 8 to 3 to fit its context window (prompt 10"
    )


def test_tool_arguments_are_an_object_or_refused() -> None:
    assert tool_arguments(CHECK, "p", "f", '{"x": 1}') == {"x": 1}
    with pytest.raises(ContractViolation, match="is not valid JSON .'\\{x'.: the call 'f'"):
        tool_arguments(CHECK, "p", "f", "{x")
    with pytest.raises(ContractViolation, match="JSON but not an object"):
        tool_arguments(CHECK, "p", "f", "[1]")


def test_logprob_checks_agree_whole_and_walked() -> None:
    for values in ([-1.0, None, -0.0], [-1.0, 0.5], [float("nan")], [1e-7]):
        assert len(set(map(str, both(lambda v=values: CHECK.logprobs("p", v))))) == 1


def test_the_primitives_module_is_the_only_home_of_the_special_token_rule() -> None:
    assert channels.SPECIAL.match("<end_of_turn>") and not channels.SPECIAL.match("< x>")
