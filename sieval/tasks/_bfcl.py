"""BFCL's data, its two protocols' requests, and how a miss is classified (``bfcl.py`` is the
task).

**Data** (:func:`data_directory`, :func:`entries`): ``bfcl-eval`` 2026.3.23's ``bfcl_eval/data``
(``BFCL_v4_<category>.json``, one JSON entry a line, and ``possible_answer/`` beside it), read
from the ``data`` option, else ``$SIEVAL_BFCL_DATA``, else ``<data dir>/bfcl``, else the copy
``scripts/bfcl-oracle.sh`` installs (``pip install --no-deps bfcl-eval==2026.3.23`` into
``~/.cache/sieval/bfcl-oracle-2026.3.23``). Nothing of it is copied into sieval.

**FC** (native tools, :func:`fc_tools`): each function offered as a function tool, its schema
turned into JSON Schema as BFCL's own handlers turn it (``dict`` → ``object``, ``float`` →
``number`` with ``format: float`` and " This is a float type value." in its description,
``tuple`` → ``array``, ``any`` and unknown types → ``string``, a missing type → ``string``;
items and nested properties likewise), a dot in a name sent as ``_`` (OpenAI's, Anthropic's and
Google's wires refuse dots; the checker then expects the underscored name, as BFCL's does);
``tool_choice: auto``; the question's messages as they are.

**Prompt** (:func:`prompt_system`): no tools on the wire; BFCL's default system prompt
(``ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic``)
with the functions as indented JSON, put before the question's own system message (or as the
first message); on a completions wire the conversation is written as text
(:func:`transcript`). The calls are read from the answer's text (``scoring/bfcl_decode.py``).

Both add BFCL's language hint to each function's description (" Note that the provided
function is in Python 3 syntax.", or Java 8 SDK, or JavaScript, by the category); a Java or
JavaScript parameter goes as a string, its declared type said in its description (:func:`hinted`).

**Not run** (:data:`REFUSED`): web search (a live search API) and ``memory_vector`` (embedding
weights from the hub, faiss), each refused naming why; ``memory_kv`` and ``memory_rec_sum`` are
the ``bfcl_memory`` tasks' (not this one's: they are agentic conversations).

**A miss, classified** (:func:`wire_calls`, :func:`lost_calls`): ``wrong_call`` (calls made,
the checker's reason), ``no_call`` (no call in the reply and none in its text: the raw text is
kept), ``wire_drop`` (the server made a call that did not arrive as one: the raw reply lists
more calls than the dialect lifted, the reply says it called — ``tool_calls`` finish,
``tool_use`` stop — and lists none, or the text holds a well-formed ``<tool_call>`` block that
the server's tool parser should have read).
"""

from __future__ import annotations

import copy
import glob
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..ir.request import FunctionTool
from ..scoring.bfcl_decode import hermes_calls
from ..scoring.bfcl_langs import language_of
from .base import ModelFacts, Requirement

__all__ = [
    "AST_CATEGORIES",
    "CATEGORIES",
    "ORACLE_VERSION",
    "REFUSED",
    "RELEVANCE_CATEGORIES",
    "column_requirements",
    "data_directory",
    "entries",
    "fc_tools",
    "hinted",
    "lost_calls",
    "prompt_system",
    "transcript",
    "wire_calls",
]

ORACLE_VERSION = "2026.3.23"
"""The ``bfcl-eval`` release whose data and checker this task follows."""

AST_CATEGORIES = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
"""Categories graded by the AST checker (Java and JavaScript: their values read first)."""

RELEVANCE_CATEGORIES = ("irrelevance", "live_irrelevance", "live_relevance")
"""Categories graded by whether a call was made (irrelevance: none; relevance: one)."""

CATEGORIES = AST_CATEGORIES + RELEVANCE_CATEGORIES

_SEARCH = (
    "it asks a live web search: bfcl-eval's WebSearchAPI queries DuckDuckGo through SerpAPI "
    "(serpapi, a SERPAPI_API_KEY) and fetches the pages it finds (requests, BeautifulSoup, "
    "html2text), so its answers depend on the network and the day, and sieval runs offline"
)
REFUSED = {
    "web_search_base": _SEARCH,
    "web_search_no_snippet": _SEARCH,
    "memory_vector": "its memory store embeds with sentence-transformers' all-MiniLM-L6-v2 "
    "(weights from the Hugging Face hub, torch) and searches with faiss, neither of which runs "
    "here offline; memory_kv and memory_rec_sum are run by the bfcl_memory and "
    "bfcl_memory_prompt tasks",
}
"""BFCL v4 categories that are not run here, and why (asked for, each is refused naming it)."""

HINTS = {
    "python": " Note that the provided function is in Python 3 syntax.",
    "java": " Note that the provided function is in Java 8 SDK syntax.",
    "javascript": " Note that the provided function is in JavaScript syntax.",
}
"""BFCL's language hint, added to each function's description (by the category's language)."""

_NAMES = {"java": "Java", "javascript": "JavaScript"}

_OPENAPI = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "string": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "dict": "object",
    "object": "object",
    "tuple": "array",
    "any": "string",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "double": "number",
    "char": "string",
}
"""BFCL's parameter types and the JSON Schema type its FC handlers send for each."""


def _oracle_data() -> Path | None:
    cache = Path(os.environ.get("SIEVAL_CACHE", Path.home() / ".cache" / "sieval"))
    pattern = cache / f"bfcl-oracle-{ORACLE_VERSION}" / "lib" / "python3.*"
    for found in sorted(glob.glob(str(pattern / "site-packages" / "bfcl_eval" / "data"))):
        return Path(found)
    return None


def data_directory(data_dir: Path, option: object = None) -> Path:
    """Where BFCL's data is read from (see the module); ``ConfigError`` naming the fix."""
    tried = []
    for given in (option, os.environ.get("SIEVAL_BFCL_DATA"), data_dir / "bfcl"):
        if given:
            path = Path(str(given)).expanduser()
            if (path / "BFCL_v4_simple_python.json").is_file():
                return path
            tried.append(str(path))
    found = _oracle_data()
    if found is not None:
        return found
    raise ConfigError(
        "bfcl: BFCL's data was not found (tried "
        + (", ".join(tried) or "no directory")
        + "); run scripts/bfcl-oracle.sh (pip install --no-deps "
        f"bfcl-eval=={ORACLE_VERSION} into ~/.cache/sieval), or give the data option or "
        "SIEVAL_BFCL_DATA as the path of bfcl_eval/data"
    )


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def entries(data: Path, category: str) -> Iterator[tuple[dict[str, Any], Any]]:
    """Each entry of ``category`` with its possible answer (None for a relevance category)."""
    answers: dict[str, Any] = {}
    if category in AST_CATEGORIES:
        answers = {
            row["id"]: row["ground_truth"]
            for row in _lines(data / "possible_answer" / f"BFCL_v4_{category}.json")
        }
    for entry in _lines(data / f"BFCL_v4_{category}.json"):
        yield entry, answers.get(entry["id"])


def hinted(
    functions: Sequence[Mapping[str, Any]], category: str = "simple_python"
) -> list[dict[str, Any]]:
    """The functions as both columns show them: BFCL's language hint added to each description;
    for Java and JavaScript each parameter declared ``string``, its declared type said in its
    description (see :func:`_as_text`)."""
    language = language_of(category)
    out = copy.deepcopy([dict(f) for f in functions])
    for function in out:
        function["description"] = str(function.get("description", "")) + HINTS[language]
        if language != "python":
            for schema in function["parameters"]["properties"].values():
                _as_text(schema, _NAMES[language])
    return out


def _as_text(schema: dict[str, Any], language: str) -> None:
    """A Java or JavaScript parameter as BFCL shows it: a string whose description says the
    declared type ("This is Java long type parameter in string representation."; ``any``: "of
    any type of Java object"), an array's items' type and an object's entries' schema moved
    into the description too."""
    declared = schema["type"]
    if declared == "any":
        schema["description"] += (
            f" This parameter can be of any type of {language} object in string representation."
        )
    else:
        schema["description"] += (
            f" This is {language} {declared} type parameter in string representation."
        )
    listed = ("ArrayList", "Array") if language == "Java" else ("array",)
    if declared in listed:
        schema["description"] += (
            f" The list elements are of type {schema['items']['type']}; they are not in "
            "string representation."
        )
        del schema["items"]
    if declared == "dict" and language == "JavaScript" and "properties" in schema:
        schema["description"] += (
            " The dictionary entries have the following schema; they are not in string "
            f"representation. {json.dumps(schema['properties'])}"
        )
        del schema["properties"]
    schema["type"] = "string"


def _openapi(properties: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, schema in properties.items():
        schema = dict(schema)
        declared = schema.get("type")
        if declared == "float":
            schema["format"] = "float"
            schema["description"] = str(schema.get("description", "")) + (
                " This is a float type value."
            )
        schema["type"] = _OPENAPI.get(str(declared), "string") if declared else "string"
        if schema["type"] in ("array", "object"):
            if "properties" in schema:
                schema["properties"] = _openapi(schema["properties"])
            elif isinstance(schema.get("items"), dict):
                schema["items"] = _items(schema["items"])
        out[key] = schema
    return out


def _items(items: Mapping[str, Any]) -> dict[str, Any]:
    items = dict(items)
    items["type"] = _OPENAPI.get(str(items.get("type")), "string")
    if items["type"] == "array" and isinstance(items.get("items"), dict):
        inner = dict(items["items"])
        inner["type"] = _OPENAPI.get(str(inner.get("type")), "string")
        items["items"] = inner
    elif items["type"] == "object" and "properties" in items:
        items["properties"] = _openapi(items["properties"])
    return items


def fc_tools(
    functions: Sequence[Mapping[str, Any]], category: str = "simple_python"
) -> tuple[FunctionTool, ...]:
    """The functions as native function tools (see the module)."""
    tools = []
    for function in hinted(functions, category):
        parameters = dict(function.get("parameters", {}))
        parameters["type"] = "object"
        parameters["properties"] = _openapi(parameters.get("properties", {}))
        tools.append(
            FunctionTool(
                name=str(function["name"]).replace(".", "_"),
                description=function["description"],
                parameters=parameters,
            )
        )
    return tuple(tools)


_PERSONA = "You are an expert in composing functions."
_TASK = (
    "You are given a question and a set of possible functions. Based on the question, you will "
    "need to make one or more function/tool calls to achieve the purpose. If none of the "
    "functions can be used, point it out. If the given question lacks the parameters required "
    "by the function, also point it out."
)
_FORMAT = (
    "You should only return the function calls in your response.\n\nIf you decide to invoke "
    "any of the function(s), you MUST put it in the format of [func_name1(params_name1="
    "params_value1, params_name2=params_value2...), func_name2(params)].  You SHOULD NOT "
    "include any other text in the response."
)
_MULTITURN = (
    "At each turn, you should try your best to complete the tasks requested by the user within "
    "the current turn. Continue to output functions to call until you have fulfilled the "
    "user's request to the best of your ability. Once you have no more functions to call, the "
    "system will consider the current turn complete and proceed to the next turn or task."
)


def prompt_system(functions: Sequence[Mapping[str, Any]], category: str = "simple_python") -> str:
    """BFCL's default Prompt-column system prompt for ``functions`` (hinted here)."""
    listed = json.dumps(hinted(functions, category), indent=4)
    tools = f"Here is a list of functions in json format that you can invoke.\n{listed}\n"
    return f"{_PERSONA}{_TASK}\n\n{_FORMAT}\n\n{_MULTITURN}\n\n{tools}"


def transcript(messages: Sequence[Mapping[str, Any]]) -> str:
    """A conversation as the text a completions wire takes: each message as ``Role: text``,
    blank lines between, ending with ``Assistant:`` (no chat template is known here)."""
    turns = [f"{str(m['role']).capitalize()}: {m['content']}" for m in messages]
    return "\n\n".join([*turns, "Assistant:"])


# -- what the wire carried ----------------------------------------------------------------------

_CALLED_FINISHES = frozenset({"tool_calls", "tool_use", "function_call"})
"""Finish reasons that say the reply called a tool (OpenAI's chat, Anthropic's messages)."""


def wire_calls(dialect: str, raw: bytes | None) -> int | None:
    """How many calls the raw reply body lists, read without the dialect (None: not known, such
    as a stream or a wire without native calls)."""
    if not raw:
        return None
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    try:
        if dialect == "openai_chat":
            return len(body["choices"][0]["message"].get("tool_calls") or [])
        if dialect == "openai_responses":
            return sum(
                1 for item in body.get("output") or [] if item.get("type") == "function_call"
            )
        if dialect == "anthropic_messages":
            return sum(1 for item in body.get("content") or [] if item.get("type") == "tool_use")
        if dialect == "google_genai":
            parts = body["candidates"][0].get("content", {}).get("parts") or []
            return sum(1 for part in parts if "functionCall" in part)
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return None


def lost_calls(
    dialect: str, raw: bytes | None, lifted: int, text: str, finish: object
) -> str | None:
    """Why the server's calls did not arrive as calls (a wire drop), or None (see the module)."""
    listed = wire_calls(dialect, raw)
    if listed is not None and listed > lifted:
        return f"the reply lists {listed} calls, the dialect lifted {lifted}"
    if lifted:
        return None
    if isinstance(finish, str) and finish in _CALLED_FINISHES:
        return f"the reply says it called ({finish}) but lists no call"
    marked = hermes_calls(text)
    if marked:
        return f"the text holds {len(marked)} <tool_call> block(s) the server's parser did not read"
    return None


def column_requirements(
    column: str, model: ModelFacts, *, sampling: str, asked: str, history: bool = False
) -> list[Requirement]:
    """What a BFCL column asks of the wire: FC a chat wire with function tools (and, over several
    steps, ``history``: the calls and their results sent back); Prompt a chat wire or raw text.
    ``asked``: what the question is (``the question``, ``the turns``)."""
    out = [Requirement("sampling", sampling)]
    if column == "fc":
        out.append(Requirement("chat", f"{asked} is a conversation"))
        out.append(Requirement("function_tools", "the entry's functions are offered (FC)"))
        if history:
            out.append(Requirement("tool_history", "the calls and their results are sent back"))
    elif model.input_kind == "chat":
        out.append(Requirement("chat", f"{asked} is a conversation"))
    else:
        out.append(Requirement("text_prompt", "the conversation written as text"))
    return out
