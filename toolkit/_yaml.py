"""YAML loading that remembers the line of every key, so errors can name file:line field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from toolkit.errors import InputError


def _walk(node: yaml.Node, path: tuple, lines: dict[tuple, int]) -> Any:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out = {}
        for k, v in node.value:
            key = k.value
            lines[path + (key,)] = k.start_mark.line + 1
            out[key] = _walk(v, path + (key,), lines)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_walk(v, path + (i,), lines) for i, v in enumerate(node.value)]
    return yaml.safe_load(yaml.serialize(node))


def load_yaml_with_lines(path: str | Path) -> tuple[Any, dict[tuple, int]]:
    """Parse ``path``; return the data and a map from key path to 1-based line number."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    text = p.read_text(encoding="utf-8")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise InputError(f"{p}:{line} <yaml>: {getattr(exc, 'problem', None) or exc}") from None
    lines: dict[tuple, int] = {}
    if node is None:
        return None, lines
    return _walk(node, (), lines), lines


def line_for(lines: dict[tuple, int], loc: tuple) -> int:
    """The line of the deepest known prefix of ``loc``."""
    loc = tuple(loc)
    while loc and loc not in lines:
        loc = loc[:-1]
    return lines.get(loc, 1)
