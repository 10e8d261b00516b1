"""IFEval's 25 verifiable instructions: one check per instruction id, ``(text, args) -> bool``.

The semantics are those of the IFEval reference checker (Zhou et al. 2023, "Instruction-Following
Evaluation for Large Language Models", arXiv:2311.07911; google-research
``instruction_following_eval/instructions.py``, the revision kept in
``shared/data/ifeval/reference/``), written anew here. Where the reference reads its own quirks,
so does this: keywords, section splitters and postscript markers are regular expressions, not
literal strings; a bullet is a line starting ``*`` or ``-``; "less than" is ``<`` and
"at least" is ``>=``.

Departures, all where the reference would draw at random: an argument it would replace by a
random draw (missing, negative, or out of range) is an error here (a benchmark row must say what
it checks), and so is an unknown instruction id; the one exception is
``keywords:letter_frequency`` on a character that is not an ASCII letter, counted as given
(the reference draws a random letter instead; two rows of the 541 do this).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from . import text as measures

__all__ = ["CHECKS", "Check", "InstructionArgsError", "check_instruction"]

Check = Callable[[str, Mapping[str, Any]], bool]

RELATIONS = ("less than", "at least")
CONSTRAINED_RESPONSES = ("My answer is yes.", "My answer is no.", "My answer is maybe.")
JSON_FENCES = ("```json", "```Json", "```JSON", "```")


class InstructionArgsError(ValueError):
    """An IFEval row's ``kwargs`` lack, or give an unusable value for, what its check needs."""


def _int(args: Mapping[str, Any], name: str) -> int:
    value = args.get(name)
    if not isinstance(value, int) or value < 0:
        raise InstructionArgsError(
            f"kwargs[{name!r}] must be a non-negative integer, not {value!r}"
        )
    return value


def _str(args: Mapping[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str):
        raise InstructionArgsError(f"kwargs[{name!r}] must be a string, not {value!r}")
    return value


def _compare(count: int, args: Mapping[str, Any], relation: str, threshold: str) -> bool:
    how = args.get(relation)
    if how not in RELATIONS:
        raise InstructionArgsError(f"kwargs[{relation!r}] must be one of {RELATIONS}, not {how!r}")
    limit = _int(args, threshold)
    return count < limit if how == "less than" else count >= limit


def _language_is(text: str, language: str) -> bool:
    """The reference counts an undetectable language as followed."""
    try:
        return measures.detect_language(text) == language
    except measures.LanguageUndetected:
        return True


def keywords_existence(text: str, args: Mapping[str, Any]) -> bool:
    keywords = args.get("keywords")
    if not keywords or not isinstance(keywords, list):
        raise InstructionArgsError(f"kwargs['keywords'] must be a non-empty list, not {keywords!r}")
    return all(re.search(keyword, text, flags=re.IGNORECASE) for keyword in keywords)


def keywords_frequency(text: str, args: Mapping[str, Any]) -> bool:
    keyword = _str(args, "keyword").strip()
    count = len(re.findall(keyword, text, flags=re.IGNORECASE))
    return _compare(count, args, "relation", "frequency")


def keywords_forbidden_words(text: str, args: Mapping[str, Any]) -> bool:
    words = args.get("forbidden_words")
    if not words or not isinstance(words, list):
        raise InstructionArgsError(f"kwargs['forbidden_words'] must be a non-empty list: {words!r}")
    return not any(re.search(rf"\b{word}\b", text, flags=re.IGNORECASE) for word in words)


def keywords_letter_frequency(text: str, args: Mapping[str, Any]) -> bool:
    """Occurrences of the character, any case. The reference swaps a character that is not an
    ASCII letter for a random letter; two IFEval rows ask for one ("#" in key 1122, "!" in
    key 1129), and this counts what they ask for."""
    letter = _str(args, "letter")
    if len(letter) != 1:
        raise InstructionArgsError(f"kwargs['letter'] must be one character, not {letter!r}")
    return _compare(text.lower().count(letter.lower()), args, "let_relation", "let_frequency")


def language_response_language(text: str, args: Mapping[str, Any]) -> bool:
    return _language_is(text, _str(args, "language"))


def number_sentences(text: str, args: Mapping[str, Any]) -> bool:
    return _compare(measures.count_sentences(text), args, "relation", "num_sentences")


def number_paragraphs(text: str, args: Mapping[str, Any]) -> bool:
    """Paragraphs split on ``***``; an empty one is allowed only at either end."""
    paragraphs = re.split(r"\s?\*\*\*\s?", text)
    count = len(paragraphs)
    for index, paragraph in enumerate(paragraphs):
        if not paragraph.strip():
            if 0 < index < len(paragraphs) - 1:
                return False
            count -= 1
    return count == _int(args, "num_paragraphs")


def number_words(text: str, args: Mapping[str, Any]) -> bool:
    return _compare(measures.count_words(text), args, "relation", "num_words")


def nth_paragraph_first_word(text: str, args: Mapping[str, Any]) -> bool:
    """Paragraphs split on blank lines: their count (empty ones not counted) must be
    ``num_paragraphs`` and the ``nth_paragraph``-th piece (empty ones counted) must start with
    ``first_word``, read up to its first ``.,?!'"`` and lowercased."""
    wanted = _int(args, "num_paragraphs")
    nth = _int(args, "nth_paragraph")
    first_word = _str(args, "first_word").lower()
    if not 0 < nth <= wanted:
        raise InstructionArgsError(
            f"kwargs['nth_paragraph'] must be between 1 and num_paragraphs ({wanted}), not {nth}"
        )
    paragraphs = text.split("\n\n")
    count = sum(1 for paragraph in paragraphs if paragraph.strip())
    if nth > count:
        return False
    paragraph = paragraphs[nth - 1].strip()
    if not paragraph:
        return False
    word = paragraph.split()[0].lstrip("'").lstrip('"')
    head = re.split(r"[.,?!'\"]", word, maxsplit=1)[0]
    # lowercased one character at a time, as the reference does (a final sigma stays "σ")
    found = "".join(c.lower() for c in head)
    return count == wanted and found == first_word


def number_placeholders(text: str, args: Mapping[str, Any]) -> bool:
    return len(re.findall(r"\[.*?\]", text)) >= _int(args, "num_placeholders")


def postscript(text: str, args: Mapping[str, Any]) -> bool:
    marker = _str(args, "postscript_marker").strip()
    if marker == "P.P.S":
        pattern = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "P.S.":
        pattern = r"\s*p\.\s?s\..*$"
    else:
        pattern = r"\s*" + marker.lower() + r".*$"
    return bool(re.findall(pattern, text.lower(), flags=re.MULTILINE))


def number_bullet_lists(text: str, args: Mapping[str, Any]) -> bool:
    stars = re.findall(r"^\s*\*[^\*].*$", text, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", text, flags=re.MULTILINE)
    return len(stars) + len(dashes) == _int(args, "num_bullets")


def constrained_response(text: str, args: Mapping[str, Any]) -> bool:
    stripped = text.strip()
    return any(option in stripped for option in CONSTRAINED_RESPONSES)


def number_highlighted_sections(text: str, args: Mapping[str, Any]) -> bool:
    """``*…*`` spans within a line with something inside, plus ``**…**`` spans likewise."""
    single = [s for s in re.findall(r"\*[^\n\*]*\*", text) if s.strip("*").strip()]
    double = [s for s in re.findall(r"\*\*[^\n\*]*\*\*", text) if s[2:-2].strip()]
    return len(single) + len(double) >= _int(args, "num_highlights")


def multiple_sections(text: str, args: Mapping[str, Any]) -> bool:
    splitter = _str(args, "section_spliter").strip()
    pieces = re.split(r"\s?" + splitter + r"\s?\d+\s?", text)
    return len(pieces) - 1 >= _int(args, "num_sections")


def json_format(text: str, args: Mapping[str, Any]) -> bool:
    """The whole text parses as JSON once the leading fences ```json, ```Json, ```JSON and ```
    are removed in turn (each once, if it leads at that point) and a trailing ``` too."""
    body = text.strip()
    for fence in JSON_FENCES:
        body = body.removeprefix(fence)
    body = body.removesuffix("```").strip()
    try:
        json.loads(body)
    except (ValueError, RecursionError):
        return False
    return True


def title(text: str, args: Mapping[str, Any]) -> bool:
    return any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", text))


def two_responses(text: str, args: Mapping[str, Any]) -> bool:
    """Exactly two non-empty, different parts around ``******``; empty parts only at the ends."""
    parts = text.split("******")
    kept = []
    for index, part in enumerate(parts):
        if part.strip():
            kept.append(part.strip())
        elif 0 < index < len(parts) - 1:
            return False
    return len(kept) == 2 and kept[0] != kept[1]


def repeat_prompt(text: str, args: Mapping[str, Any]) -> bool:
    prompt = _str(args, "prompt_to_repeat")
    return text.strip().lower().startswith(prompt.strip().lower())


def end_checker(text: str, args: Mapping[str, Any]) -> bool:
    phrase = _str(args, "end_phrase")
    return text.strip().strip('"').lower().endswith(phrase.strip().lower())


def capital_word_frequency(text: str, args: Mapping[str, Any]) -> bool:
    capitals = sum(1 for word in measures.word_tokens(text) if word.isupper())
    return _compare(capitals, args, "capital_relation", "capital_frequency")


def english_capital(text: str, args: Mapping[str, Any]) -> bool:
    return text.isupper() and _language_is(text, "en")


def english_lowercase(text: str, args: Mapping[str, Any]) -> bool:
    return text.islower() and _language_is(text, "en")


def no_comma(text: str, args: Mapping[str, Any]) -> bool:
    return "," not in text


def quotation(text: str, args: Mapping[str, Any]) -> bool:
    stripped = text.strip()
    return len(stripped) > 1 and stripped[0] == stripped[-1] == '"'


CHECKS: dict[str, Check] = {
    "keywords:existence": keywords_existence,
    "keywords:frequency": keywords_frequency,
    "keywords:forbidden_words": keywords_forbidden_words,
    "keywords:letter_frequency": keywords_letter_frequency,
    "language:response_language": language_response_language,
    "length_constraints:number_sentences": number_sentences,
    "length_constraints:number_paragraphs": number_paragraphs,
    "length_constraints:number_words": number_words,
    "length_constraints:nth_paragraph_first_word": nth_paragraph_first_word,
    "detectable_content:number_placeholders": number_placeholders,
    "detectable_content:postscript": postscript,
    "detectable_format:number_bullet_lists": number_bullet_lists,
    "detectable_format:constrained_response": constrained_response,
    "detectable_format:number_highlighted_sections": number_highlighted_sections,
    "detectable_format:multiple_sections": multiple_sections,
    "detectable_format:json_format": json_format,
    "detectable_format:title": title,
    "combination:two_responses": two_responses,
    "combination:repeat_prompt": repeat_prompt,
    "startend:end_checker": end_checker,
    "change_case:capital_word_frequency": capital_word_frequency,
    "change_case:english_capital": english_capital,
    "change_case:english_lowercase": english_lowercase,
    "punctuation:no_comma": no_comma,
    "startend:quotation": quotation,
}
"""Every instruction id of the reference registry, to its check."""


def check_instruction(instruction_id: str, text: str, args: Mapping[str, Any]) -> bool:
    """Whether ``text`` follows instruction ``instruction_id`` with arguments ``args``."""
    check = CHECKS.get(instruction_id)
    if check is None:
        raise InstructionArgsError(
            f"unknown IFEval instruction id {instruction_id!r}; known ids: {', '.join(CHECKS)}"
        )
    return check(text, args)
