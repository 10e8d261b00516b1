"""Synthetic IFEval responses aimed at each instruction's edges, built from a row's own kwargs.

For every instruction of a row, ``edge_texts`` gives texts just inside and just outside what the
check accepts (counts at the threshold and one off, markers in and out of place, case, quoting,
fences) and ``loose_texts`` wraps passing texts so only the loose check can accept them (a
preamble line, a closing line, ``*`` markup). Deterministic: no randomness.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "omicron",
]
FRENCH = "Je pense que la vie est belle et que nous devons profiter de chaque moment ensemble."
SPANISH = "Creo que la vida es bella y que debemos disfrutar cada momento juntos en la playa."
GERMAN = "Ich glaube, dass das Leben schön ist und wir jeden Moment gemeinsam genießen sollten."
HINDI = "मुझे लगता है कि जीवन सुंदर है और हमें हर पल का आनंद लेना चाहिए।"
ENGLISH = "I think that life is beautiful and that we should enjoy every moment together."
SENTENCE_PIECES = [
    "Dr. Smith went to Washington.",
    "He arrived at 5 p.m. on Jan. 3.",
    "The U.S. economy grew by 3.5 percent!",
    "Was it worth it?",
    "Mr. and Mrs. Jones agreed.",
    "It cost $4.50... or so they said.",
    "Everyone left.",
]
GENERIC = [
    "",
    "   \n  ",
    "*",
    '"',
    "Sure! Here you go:\n\nThe answer.\n\nHope this helps.",
    '```json\n{"a": 1}\n```',
    "ALL CAPS TEXT HERE, WITH A COMMA.",
    "all lower case text without commas",
    "P.S. a note\n*** \n* item\n- item\n<<Title>>\nSection 1 text",
]


def words(n: int, start: int = 0) -> str:
    return " ".join(WORDS[(start + i) % len(WORDS)] for i in range(n))


def around(n: int) -> list[int]:
    return sorted({max(0, n - 1), n, n + 1})


def edge_texts(instruction_id: str, args: dict[str, Any], prompt: str) -> list[str]:
    kind = instruction_id.split(":", 1)[1]
    make = BUILDERS.get(kind)
    return make(args, prompt) if make else []


def _existence(args: dict[str, Any], prompt: str) -> list[str]:
    keys = args["keywords"]
    return [
        " ".join(keys) + " end.",
        " ".join(k.upper() for k in keys),
        " ".join(keys[:-1]) + " nothing else",
        "prefix" + "".join(keys) + "suffix",
    ]


def _frequency(args: dict[str, Any], prompt: str) -> list[str]:
    key = args["keyword"]
    return [" ".join([key.title()] * n + ["filler"]) for n in around(args["frequency"])] + [
        f"{key}{key} and {key}s"
    ]


def _forbidden(args: dict[str, Any], prompt: str) -> list[str]:
    bad = args["forbidden_words"]
    return [
        "A clean answer with none of them.",
        f"It says {bad[0].upper()} once.",
        f"Words like {bad[-1]}s and re{bad[-1]} contain it.",
        f"{bad[0]}-based thinking",
    ]


def _letter(args: dict[str, Any], prompt: str) -> list[str]:
    letter = args["letter"]
    return [
        " ".join([letter.upper() if i % 2 else letter for i in range(n)]) + " xyz"
        for n in around(args["let_frequency"])
    ]


def _language(args: dict[str, Any], prompt: str) -> list[str]:
    return [ENGLISH, FRENCH, HINDI, "12345 67890 !!!", GERMAN + " " + ENGLISH]


def _sentences(args: dict[str, Any], prompt: str) -> list[str]:
    texts = []
    for n in around(args["num_sentences"]):
        pieces = [SENTENCE_PIECES[i % len(SENTENCE_PIECES)] for i in range(n)]
        texts.append(" ".join(pieces))
    return [*texts, "Dr. No. Mr. Yes. e.g. this one. And i.e. that one."]


def _paragraphs(args: dict[str, Any], prompt: str) -> list[str]:
    n = args["num_paragraphs"]
    body = [f"Paragraph {i} text." for i in range(n)]
    return [
        "\n***\n".join(body),
        "***\n" + "\n***\n".join(body) + "\n***",
        "\n***\n".join(body[:-1]) if n > 1 else "",
        "\n***\n".join([*body[:1], " ", *body[1:]]),
        " *** ".join(body) + " * * * extra",
        "\n\n".join(body),
    ]


def _words(args: dict[str, Any], prompt: str) -> list[str]:
    texts = [words(n) for n in around(args["num_words"])]
    return [*texts, words(max(1, args["num_words"] - 2)) + " don't well-known"]


def _first_word(args: dict[str, Any], prompt: str) -> list[str]:
    n, nth, word = args["num_paragraphs"], args["nth_paragraph"], args["first_word"]
    paragraphs = [f"Other{i} words here." for i in range(n)]
    good = list(paragraphs)
    good[nth - 1] = f"{word.title()}, then more words."
    quoted = list(paragraphs)
    quoted[nth - 1] = f"\"'{word}!' she said.\""
    wrong = list(paragraphs)
    wrong[nth - 1] = f"{word}s are not it."
    return [
        "\n\n".join(good),
        "\n\n".join(quoted),
        "\n\n".join(wrong),
        "\n\n".join(good[:-1]) if n > 1 else word,
        "\n\n\n\n".join(good),
        "\n\n".join([*good, "extra paragraph"]),
        "\n\n" + "\n\n".join(good),
    ]


def _placeholders(args: dict[str, Any], prompt: str) -> list[str]:
    return [
        " ".join(f"[slot{i}]" for i in range(n)) + " [unclosed"
        for n in around(args["num_placeholders"])
    ] + ["[a][b] [[nested]] []"]


def _postscript(args: dict[str, Any], prompt: str) -> list[str]:
    marker = args["postscript_marker"]
    return [
        f"Body.\n\n{marker} A note.",
        f"Body.\n{marker.lower().replace('.', '. ')} spaced",
        f"Body with {marker} inline.",
        "Body.\nP.S. plain",
        "Body.\nP.P.S. double",
        "Body without any note.",
    ]


def _bullets(args: dict[str, Any], prompt: str) -> list[str]:
    n = args["num_bullets"]
    return [
        "Intro\n" + "\n".join(f"* point {i}" for i in range(n)),
        "\n".join(f"- point {i}" for i in range(n + 1)),
        "\n".join(f"  * point {i}" for i in range(max(0, n - 1))) + "\n**bold** line",
        "\n".join(f"* point {i}" for i in range(n)) + "\n\n---",
    ]


def _constrained(args: dict[str, Any], prompt: str) -> list[str]:
    return [
        "My answer is yes.",
        "Well... My answer is maybe. Because.",
        "my answer is no.",
        "My answer is yes",
    ]


def _highlights(args: dict[str, Any], prompt: str) -> list[str]:
    n = args["num_highlights"]
    return [
        " ".join(f"*part {i}*" for i in range(n)),
        " ".join(f"**part {i}**" for i in range(max(0, n - 1))),
        " ".join(["* *"] * (n + 1)) + " *a\nb*",
        "***triple*** and *one*",
    ]


def _sections(args: dict[str, Any], prompt: str) -> list[str]:
    splitter, n = args["section_spliter"], args["num_sections"]
    return [
        "\n".join(f"{splitter} {i + 1}\ncontent" for i in range(n)),
        "\n".join(f"{splitter.upper()}{i + 1} content" for i in range(max(0, n - 1))),
        "\n".join(f"{splitter.lower()} {i + 1}\ncontent" for i in range(n)),
        f"{splitter} one\n{splitter} X",
    ]


def _json(args: dict[str, Any], prompt: str) -> list[str]:
    return [
        '{"a": [1, 2, {"b": null}]}',
        '```JSON\n{"a": 1}\n```',
        '```json```{"a": 1}```',
        "```\n[1, 2\n```",
        'Here: {"a": 1}',
        "NaN",
        '  "just a string"  ',
    ]


def _title(args: dict[str, Any], prompt: str) -> list[str]:
    return ["<<A Poem>>\nbody", "<< >>\nbody", "<<\n>> body", "<<a>> and <<>>", "<title>"]


def _two(args: dict[str, Any], prompt: str) -> list[str]:
    return [
        "First answer.\n******\nSecond answer.",
        "Same.\n******\nSame.",
        "******\nOne.\n******\nTwo.\n******",
        "One.\n******\n\n******\nTwo.",
        "One.****** Two. ****** Three.",
    ]


def _repeat(args: dict[str, Any], prompt: str) -> list[str]:
    request = args["prompt_to_repeat"]
    return [
        f"{request}\nMy answer follows.",
        f"  {request.upper()} then the answer",
        f"Sure: {request}",
        request[: max(1, len(request) // 2)],
    ]


def _end(args: dict[str, Any], prompt: str) -> list[str]:
    phrase = args["end_phrase"]
    return [
        f"Some text. {phrase}",
        f'"Some text. {phrase.upper()}"',
        f"Some text. {phrase} Bye.",
        f"Some text. {phrase}\n\n",
    ]


def _capitals(args: dict[str, Any], prompt: str) -> list[str]:
    n = args["capital_frequency"]
    return [" ".join(["WORD"] * k + ["normal", "text."]) for k in around(n)] + [
        "NON-STOP U.S.A. I AM OK. Don't STOP."
    ]


def _caps(args: dict[str, Any], prompt: str) -> list[str]:
    return [ENGLISH.upper(), SPANISH.upper(), ENGLISH, "123 456"]


def _lower(args: dict[str, Any], prompt: str) -> list[str]:
    return [ENGLISH.lower(), SPANISH.lower(), ENGLISH, "123 456"]


def _comma(args: dict[str, Any], prompt: str) -> list[str]:
    return ["No commas here.", "One, comma.", "A full-width comma，here"]


def _quotation(args: dict[str, Any], prompt: str) -> list[str]:
    return ['"Quoted answer."', ' "padded" ', '"', '"open only', "“curly”"]


BUILDERS = {
    "existence": _existence,
    "frequency": _frequency,
    "forbidden_words": _forbidden,
    "letter_frequency": _letter,
    "response_language": _language,
    "number_sentences": _sentences,
    "number_paragraphs": _paragraphs,
    "number_words": _words,
    "nth_paragraph_first_word": _first_word,
    "number_placeholders": _placeholders,
    "postscript": _postscript,
    "number_bullet_lists": _bullets,
    "constrained_response": _constrained,
    "number_highlighted_sections": _highlights,
    "multiple_sections": _sections,
    "json_format": _json,
    "title": _title,
    "two_responses": _two,
    "repeat_prompt": _repeat,
    "end_checker": _end,
    "capital_word_frequency": _capitals,
    "english_capital": _caps,
    "english_lowercase": _lower,
    "no_comma": _comma,
    "quotation": _quotation,
}


def loose_texts(text: str) -> list[str]:
    """``text`` dressed so that only the loose check's variants can undo the dressing."""
    return [
        f"Sure, here is my response:\n{text}",
        f"{text}\nI hope this helps!",
        f"**Answer:**\n{text}\n---",
        text.replace(" ", " **", 1),
    ]


def synthetic_responses(row: dict[str, Any]) -> Iterator[str]:
    """Every synthetic response for ``row``: its instructions' edge texts, the first of them
    also dressed for the loose check, then the generic texts."""
    seen: set[str] = set()
    for instruction_id, args in zip(row["instruction_id_list"], row["kwargs"], strict=True):
        texts = edge_texts(instruction_id, args, row["prompt"])
        for text in [*texts, *(t for base in texts[:1] for t in loose_texts(base))]:
            if text not in seen:
                seen.add(text)
                yield text
    for text in GENERIC:
        if text not in seen:
            seen.add(text)
            yield text
