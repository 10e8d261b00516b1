"""Java and JavaScript calls read from a Prompt-column answer, as BFCL's Prompt column reads
them (``bfcl-eval`` 2026.3.23; ``bfcl_decode.py`` reads Python).

BFCL parses the answer with tree-sitter's Java or JavaScript grammar, so sieval does too: the
optional extra ``sieval[bfcl]`` (``tree_sitter`` 0.21.3, ``tree-sitter-java`` 0.21.0,
``tree-sitter-javascript`` 0.21.4: BFCL's versions, three wheels of about 3 MB with no
dependencies of their own), imported only here and only when a Java or JavaScript entry is
read in the Prompt column. Which text is a well-formed call is the grammar's to say; what is
read from the tree is written here.

The answer is stripped of backticks, newlines and spaces at its ends, and one ``[`` at its start
and one ``]`` at its end are dropped (the Python syntax the prompt asks for wraps the calls in a
list); a text the grammar finds an error in is no call list (:class:`NotCalls`). Then:

- **Java** (:func:`java_calls`): the first method invocation of the tree (depth first) is the
  one call, named ``object.name`` when it has an object; its arguments ``name=value``
  (assignments) are kept as the value's source text — a string or char literal without its
  quotes at the top, an array creation as ``new T[]{...}``, an object creation as ``new
  T(args)`` (its class body dropped), any other node as its leaves' text joined without
  spaces; a bare identifier, class literal or set among the arguments is kept under the name
  ``None``. No invocation: no call list (``{}``, BFCL's wrong output format).
- **JavaScript** (:func:`javascript_calls`): the first call expression directly in a top-level
  expression statement is the one call, named by its callee's text; its arguments ``name=value``
  are kept as the value's text, a string's quotes dropped; a bare identifier or ``true`` is kept
  under ``None``. None found: no call list (``{}``, BFCL's wrong output format).

An argument named twice, or a tree without a part that is read, is no call list.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from .bfcl_decode import NotCalls

__all__ = ["java_calls", "javascript_calls", "parser_available"]

_EXTRA = (
    "reading Java or JavaScript calls from text needs tree_sitter and its grammars, as BFCL "
    "uses them: pip install 'sieval[bfcl]'"
)


@cache
def _parser(language: str) -> Any:
    try:
        import tree_sitter
        import tree_sitter_java
        import tree_sitter_javascript
    except ImportError as exc:
        raise ImportError(_EXTRA) from exc
    grammar = tree_sitter_java if language == "java" else tree_sitter_javascript
    parser = tree_sitter.Parser()
    parser.set_language(tree_sitter.Language(grammar.language(), language))
    return parser


def parser_available() -> str | None:
    """None when the grammars can be loaded, else what to install."""
    try:
        _parser("java")
        _parser("javascript")
    except (ImportError, TypeError, AttributeError, ValueError) as exc:
        return f"{_EXTRA} ({exc.__cause__ or exc})"
    return None


def _source(text: str) -> str:
    text = text.strip("`\n ")
    if text.startswith("["):
        text = text[1:]
    if text.endswith("]"):
        text = text[:-1]
    return text


def _tree(language: str, source: str) -> Any:
    root = _parser(language).parse(source.encode("utf-8")).root_node
    if "ERROR" in root.sexp():
        raise NotCalls(f"the {language} grammar finds an error in the text")
    return root


def _keep(arguments: dict[Any, Any], name: Any, value: Any) -> None:
    if name in arguments:
        raise NotCalls(f"the argument {name!r} is given twice")
    arguments[name] = value


# -- Java ---------------------------------------------------------------------------------------


def _span(node: Any, source: str) -> str:
    """A node's text as BFCL takes it: the source *string* cut at the node's *byte* offsets
    (the same text for ASCII; shifted past a multi-byte character, as in BFCL)."""
    return source[node.start_byte : node.end_byte]


def _java_text(node: Any, source: str, top: bool = False) -> str:
    """A Java argument's value as text (see the module)."""
    text = _span(node, source)
    kind = node.type
    if kind in ("string_literal", "character_literal"):
        return text[1:-1] if top else text
    if kind in ("identifier", "class_literal", "type_identifier", "method_invocation"):
        return text
    if kind == "array_creation_expression":
        element = _java_text(node.child_by_field_name("type"), source)
        value = node.child_by_field_name("value")
        if value is None:
            raise NotCalls("an array is created without its values")
        return f"new {element}[]{_java_text(value, source)}"
    if kind == "object_creation_expression":
        created = _java_text(node.child_by_field_name("type"), source)
        arguments = node.child_by_field_name("arguments")
        if arguments is None:
            return f"new {created}()"
        given = [
            _java_text(child, source)
            for child in arguments.children
            if child.type not in (",", "(", ")")
        ]
        return f"new {created}({', '.join(given)})"
    if kind == "set":
        items = [_java_text(c, source) for c in node.children if c.type not in (",", "set")]
        return "{" + ", ".join(items) + "}"
    if node.child_count:
        return "".join(_java_text(child, source) for child in node.children)
    return text


def _java_first_call(node: Any, source: str) -> dict[str, Any] | None:
    if node.type == "method_invocation":
        arguments = node.child_by_field_name("arguments")
        if arguments is None:
            return None
        name = _span(node.child_by_field_name("name"), source)
        owner = node.child_by_field_name("object")
        if owner is not None:
            name = f"{_span(owner, source)}.{name}"
        given: dict[Any, Any] = {}
        for child in arguments.children:
            if child.type == "assignment_expression":
                key = _span(child.children[0], source)
                _keep(given, key, _java_text(child.children[2], source, top=True))
            elif child.type in ("identifier", "class_literal", "set"):
                _keep(given, None, _java_text(child, source, top=True))
        return {name: given}
    for child in node.children:
        found = _java_first_call(child, source)
        if found:
            return found
    return None


def java_calls(text: str) -> Any:
    """The call in a Prompt answer read as Java (see the module): ``[{name: {param: text}}]``,
    ``{}`` when the text holds no invocation, or ``NotCalls``."""
    source = _source(text)
    root = _tree("java", source)
    try:
        found = _java_first_call(root, source)
    except NotCalls:
        raise
    except Exception as exc:  # a node without a field BFCL reads: its decoder fails too
        raise NotCalls(f"the Java call could not be read: {exc!r}") from exc
    return [found] if found else {}


# -- JavaScript ---------------------------------------------------------------------------------


def _js_text(node: Any) -> str:
    return bytes(node.text).decode("utf-8")


def javascript_calls(text: str) -> Any:
    """The call in a Prompt answer read as JavaScript (see the module): ``[{name: {param:
    text}}]``, ``{}`` when the text holds no top-level call, or ``NotCalls``."""
    root = _tree("javascript", _source(text))
    if root.type != "program":
        return {}
    for statement in root.children:
        if statement.type != "expression_statement":
            continue
        for call in statement.children:
            if call.type != "call_expression":
                continue
            given: dict[Any, Any] = {}
            for child in call.children[1].children:
                if child.type == "assignment_expression":
                    value = _js_text(child.children[2])
                    if (value.startswith('"') and value.endswith('"')) or (
                        value.startswith("'") and value.endswith("'")
                    ):
                        value = value[1:-1]
                    _keep(given, _js_text(child.children[0]), value)
                elif child.type in ("identifier", "true"):
                    _keep(given, None, _js_text(child))
            return [{_js_text(call.children[0]): given}]
    return {}
