"""JSONL records validated by pydantic models; errors name file, line and field."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from toolkit._io import OutputTarget, field_path, iter_text_lines, parse_json_line, write_output
from toolkit.errors import InputError

M = TypeVar("M", bound=BaseModel)


def format_validation_error(path: str | os.PathLike, line: int | None, err: ValidationError) -> list[str]:
    """Turn a pydantic error into ``file:line field: message`` lines."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    out = []
    for e in err.errors():
        field = field_path(e.get("loc", ()))
        msg = e.get("msg", "invalid")
        if e.get("type") == "extra_forbidden":
            msg = "unknown field (not allowed)"
        out.append(f"{where} {field}: {one_line(msg)}")
    return out


def one_line(s: str, limit: int = 200) -> str:
    """``s`` with control characters escaped and cut to ``limit``: it must fit on one line."""
    if s.isprintable() and len(s) <= limit:
        return s
    esc = "".join(c if c.isprintable() else repr(c)[1:-1] for c in s[:limit])
    return esc + ("..." if len(s) > limit else "")


#: fields that identify a record, by model name, when it is not ``id`` (duplicates are refused)
RECORD_KEYS: dict[str, tuple[str, ...]] = {"Fact": ("user", "fact_id")}
#: most problems listed for one file (the rest are counted)
MAX_PROBLEMS = 50


def record_key_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields whose values must be unique across a file of ``model`` records."""
    if model.__name__ in RECORD_KEYS:
        return RECORD_KEYS[model.__name__]
    return ("id",) if "id" in model.model_fields else ()


def iter_json_objects(path: str | os.PathLike, problems: list[str]):
    """Yield ``(line_no, object)`` for each JSON object line; bad lines go to ``problems``.

    File-level problems (missing, a directory, binary, not UTF-8, over a size limit) raise
    :class:`InputError` at once; line-level ones are collected and the reading goes on.
    """
    p = Path(path)
    for i, raw in iter_text_lines(p):
        if not raw.strip():
            continue
        try:
            obj = parse_json_line(raw, f"{p}:{i}")
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        if not isinstance(obj, dict):
            problems.append(f"{p}:{i} <record>: expected a JSON object, got {type(obj).__name__}")
            continue
        yield i, obj


def _capped(problems: list[str], path: Path) -> list[str]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return problems[:MAX_PROBLEMS] + [f"{path}: ... and {len(problems) - MAX_PROBLEMS} more problems"]


def validate_objects(path: Path, pairs, model: type[M], problems: list[str],
                     key_fields: tuple[str, ...] | None = None) -> list[M]:
    """Validate ``(line, object)`` pairs as ``model``; refuse duplicate keys; collect problems."""
    keys = record_key_fields(model) if key_fields is None else key_fields
    seen: dict[tuple, int] = {}
    records: list[M] = []
    for i, obj in pairs:
        try:
            # strict: "5" is not an int, true is not a number (JSON types as written)
            rec = model.model_validate_json(json.dumps(obj), strict=True)
        except ValidationError as exc:
            problems.extend(format_validation_error(path, i, exc))
            continue
        if keys:
            k = tuple(obj.get(f) for f in keys)
            if k in seen:
                shown = ", ".join(f"{f}={v!r}" for f, v in zip(keys, k, strict=True))
                problems.append(f"{path}:{i} {keys[-1]}: duplicate {shown} (first on line {seen[k]})")
                continue
            seen[k] = i
        records.append(rec)
    return records


def read_jsonl(path: str | os.PathLike, model: type[M], *,
               key_fields: tuple[str, ...] | None = None) -> list[M]:
    """Read every line of ``path`` as ``model``; raise InputError listing every bad line.

    The one loader for every verb: UTF-8 only, the limits of :mod:`toolkit._io` (size, line
    length, depth, number length), unknown fields refused, duplicate ids refused (``id``, or
    ``user`` + ``fact_id`` for facts; override with ``key_fields``).
    """
    p = Path(path)
    problems: list[str] = []
    records = validate_objects(p, iter_json_objects(p, problems), model, problems, key_fields)
    if problems:
        raise InputError(_capped(problems, p))
    return records


def dump_records(records: Iterable[BaseModel | dict]) -> str:
    """Records as JSONL text (stable key order, UTF-8, one object per line)."""
    lines = []
    for r in records:
        obj = r.model_dump(mode="json") if isinstance(r, BaseModel) else r
        lines.append(json.dumps(obj, ensure_ascii=False, sort_keys=False))
    return "".join(line + "\n" for line in lines)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` never half-written: a regular file is replaced atomically, a
    symlink's target is written (the link stays), a FIFO or device is written through."""
    write_output(path, text)


def write_jsonl(records: Iterable[BaseModel | dict], out: str | os.PathLike | OutputTarget | None) -> None:
    """Write records to ``out`` (a path, ``-``/None for stdout, or a checked OutputTarget)."""
    write_output(out, dump_records(records))
