"""The user's intents YAML (hassil's template format), checked before any sentence is expanded.

    language: en
    intents:
      BrewCoffee:
        data:
          - sentences:
              - "(make|brew) [me] [a] {drink}"
    lists:
      drink:
        values: [espresso, latte]

`load(path)` returns the parsed mapping, or stops with one line naming `file:line` for what hassil would
otherwise report deep inside the expansion (or silently expand into nothing): text that is not UTF-8, YAML
syntax, a missing `intents:` mapping, an intent without sentences, `sentences:` given as one string instead of
a list, and a template that does not parse (an unbalanced `(`, `[`, `{` or `<`, an empty alternative list).
"""
from __future__ import annotations

import re

from ..errors import UserError, yaml_error
from ..textio import read_text

OPENING = {")": "(", "]": "[", "}": "{", ">": "<"}


def _line(node) -> int:
    return node.start_mark.line + 1


def _mapping(node) -> dict:
    """key -> (key node, value node) of a YAML mapping node."""
    return {k.value: (k, v) for k, v in node.value} if node.tag.endswith(":map") else {}


def _is_map(node) -> bool:
    return node is not None and node.tag.endswith(":map")


def _is_seq(node) -> bool:
    return node is not None and node.tag.endswith(":seq")


def check_template(text: str, where: str, what: str) -> None:
    """Parse one template with hassil, as the expansion will; a UserError naming `where` otherwise."""
    from hassil.parse_expression import parse_sentence
    if not text.strip():
        raise UserError(f"{where}: empty {what}: write a sentence, or remove the line")
    try:
        parse_sentence(text)
    except Exception as exc:   # hassil raises ParseError, ParseExpressionError, AssertionError
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        m = re.match(r"Unable to find end of \w+ '(.)'", why)
        if m:
            why = f"a {OPENING.get(m.group(1), '')} without its {m.group(1)}"
        raise UserError(f"{where}: {what} {text!r} does not parse ({why}): close every ( [ {{ < it opens, and "
                        "separate alternatives with |") from None


def load(path) -> dict:
    """The intents mapping of a user's YAML file, checked (see the module's doc)."""
    import yaml
    text = read_text(path, "intents file")
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UserError(yaml_error(path, exc)) from None
    if not _is_map(root) or not _is_map(_mapping(root).get("intents", (None, None))[1]):
        raise UserError(f"{path}: no 'intents:' mapping: write hassil intents YAML (see models/README.md, "
                        "models/examples/coffee-machine.yaml)")
    for name, (key, value) in _mapping(_mapping(root)["intents"][1]).items():
        where = f"{path}:{_line(key)}"
        data_node = _mapping(value).get("data", (None, None))[1] if _is_map(value) else None
        if not _is_seq(data_node) or not data_node.value:
            raise UserError(f"{where}: intent {name} has no sentences: give it `data:` with a `- sentences:` list")
        count = 0
        for block in data_node.value:
            sentences = _mapping(block).get("sentences", (None, None))[1] if _is_map(block) else None
            if sentences is None:
                raise UserError(f"{path}:{_line(block)}: a data block of intent {name} has no `sentences:` list")
            if not _is_seq(sentences):
                raise UserError(f"{path}:{_line(sentences)}: `sentences:` of intent {name} must be a list, one "
                                "`- \"template\"` a line, not a single value")
            for s in sentences.value:
                if not s.tag.endswith(":str"):
                    raise UserError(f"{path}:{_line(s)}: a sentence of intent {name} must be a string (quote it)")
                check_template(s.value, f"{path}:{_line(s)}", "template")
                count += 1
        if not count:
            raise UserError(f"{where}: intent {name} has no sentences: add templates under `- sentences:`")
    rules = _mapping(root).get("expansion_rules", (None, None))[1]
    for rule, (key, value) in (_mapping(rules).items() if _is_map(rules) else []):
        if not value.tag.endswith(":str"):
            raise UserError(f"{path}:{_line(key)}: expansion rule <{rule}> must be a template string")
        check_template(value.value, f"{path}:{_line(value)}", f"expansion rule <{rule}>")
    lists = _mapping(root).get("lists", (None, None))[1]
    for name, (key, value) in (_mapping(lists).items() if _is_map(lists) else []):
        values = _mapping(value).get("values", (None, None))[1] if _is_map(value) else None
        for v in (values.value if _is_seq(values) else []):
            text = v if v.tag.endswith(":str") else _mapping(v).get("in", (None, None))[1] if _is_map(v) else None
            if text is not None and text.tag.endswith(":str"):
                check_template(text.value, f"{path}:{_line(text)}", f"value of list {{{name}}}")
    return data
