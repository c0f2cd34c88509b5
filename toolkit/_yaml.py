"""YAML loading that remembers the line of every key, so errors can name file:line field.

Safe by construction: the safe loader only (no Python tags), at most
:data:`~toolkit._io.MAX_YAML_ALIASES` aliases and :data:`MAX_YAML_NODES` nodes after alias
expansion (a 400-byte alias bomb expands to hundreds of millions), nesting up to
:data:`~toolkit._io.MAX_DEPTH`, keys that are plain scalars, no duplicate keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from toolkit._io import (
    MAX_DEPTH,
    MAX_NUMBER_CHARS,
    MAX_YAML_ALIASES,
    check_value,
    field_path,
    read_text,
)
from toolkit.errors import InputError

_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
#: most nodes a YAML file may expand to (aliases counted at every use)
MAX_YAML_NODES = 200_000


class _Refused(Exception):
    def __init__(self, line: int, field: str, msg: str):
        self.line, self.field, self.msg = line, field, msg


class _LimitedLoader(yaml.SafeLoader):
    """SafeLoader that counts aliases and nesting while composing."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0

    def compose_node(self, parent, index):  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                mark = self.peek_event().start_mark
                raise _Refused(mark.line + 1, "<yaml>", f"more than {MAX_YAML_ALIASES} aliases (limit)")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise _Refused(mark.line + 1, "<yaml>", f"nested deeper than {MAX_DEPTH} levels (limit)")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _field(path: tuple) -> str:
    return field_path(path) if path else "<root>"


def _walk(loader: _LimitedLoader, node: yaml.Node, path: tuple, lines: dict[tuple, int],
          budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _Refused(node.start_mark.line + 1, _field(path),
                       f"expands to more than {MAX_YAML_NODES} nodes through aliases (limit)")
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for k, v in node.value:
            line = k.start_mark.line + 1
            if not isinstance(k, yaml.ScalarNode):
                raise _Refused(line, _field(path), "a key must be a plain word, not a list or mapping")
            if k.tag == "tag:yaml.org,2002:merge":
                raise _Refused(line, _field(path), "merge keys (<<) are not supported; write the fields out")
            key = k.value
            if key in out:
                raise _Refused(line, _field(path + (key,)), f"duplicate key {key!r}")
            lines[path + (key,)] = line
            out[key] = _walk(loader, v, path + (key,), lines, budget)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_walk(loader, v, path + (i,), lines, budget) for i, v in enumerate(node.value)]
    if node.tag in (_INT, _FLOAT) and len(node.value) > MAX_NUMBER_CHARS:
        raise _Refused(node.start_mark.line + 1, _field(path),
                       f"number with {len(node.value)} characters (limit {MAX_NUMBER_CHARS})")
    try:
        return loader.construct_object(node)
    except (ValueError, OverflowError) as exc:
        raise _Refused(node.start_mark.line + 1, _field(path), f"cannot read this value ({exc})") from None


def load_yaml_with_lines(path: str | Path) -> tuple[Any, dict[tuple, int]]:
    """Parse ``path``; return the data and a map from key path to 1-based line number."""
    p = Path(path)
    text = read_text(p)
    lines: dict[tuple, int] = {}
    try:
        loader = _LimitedLoader(text)  # the reader refuses control characters here
        try:
            node = loader.get_single_node()
            if node is None:
                return None, lines
            data = _walk(loader, node, (), lines, [MAX_YAML_NODES])
        finally:
            loader.dispose()
    except _Refused as exc:
        raise InputError(f"{p}:{exc.line} {exc.field}: {exc.msg}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        msg = " ".join(str(getattr(exc, "problem", None) or exc).split())
        raise InputError(f"{p}:{line} <yaml>: {msg}") from None
    except RecursionError:
        raise InputError(f"{p}:1 <yaml>: nested deeper than {MAX_DEPTH} levels (limit)") from None
    bad = check_value(data)
    if bad is not None:
        loc = tuple(bad[0].split(".")) if bad[0] != "<record>" else ()
        raise InputError(f"{p}:{line_for(lines, loc)} {bad[0]}: {bad[1]}")
    return data, lines


def line_for(lines: dict[tuple, int], loc: tuple) -> int:
    """The line of the deepest known prefix of ``loc``."""
    loc = tuple(loc)
    while loc and loc not in lines:
        loc = loc[:-1]
    return lines.get(loc, 1)
