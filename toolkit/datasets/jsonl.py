"""JSONL records validated by pydantic models; errors name file, line and field."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from toolkit.errors import InputError

M = TypeVar("M", bound=BaseModel)


def format_validation_error(path: str | os.PathLike, line: int | None, err: ValidationError) -> list[str]:
    """Turn a pydantic error into ``file:line field: message`` lines."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    out = []
    for e in err.errors():
        field = ".".join(str(p) for p in e.get("loc", ())) or "<record>"
        msg = e.get("msg", "invalid")
        if e.get("type") == "extra_forbidden":
            msg = "unknown field (not allowed)"
        out.append(f"{where} {field}: {msg}")
    return out


def iter_json_objects(path: Path, problems: list[str]):
    """Yield ``(line_no, object)`` for each JSON object line; bad lines go to ``problems``."""
    with path.open(encoding="utf-8") as fh:
        for i, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                problems.append(f"{path}:{i} <record>: not valid JSON ({exc.msg})")
                continue
            if not isinstance(obj, dict):
                problems.append(f"{path}:{i} <record>: expected a JSON object")
                continue
            yield i, obj


def read_jsonl(path: str | os.PathLike, model: type[M]) -> list[M]:
    """Read every line of ``path`` as ``model``; raise InputError listing every bad line."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    records: list[M] = []
    problems: list[str] = []
    seen_ids: dict[str, int] = {}
    for i, obj in iter_json_objects(p, problems):
        try:
            rec = model.model_validate(obj)
        except ValidationError as exc:
            problems.extend(format_validation_error(p, i, exc))
            continue
        rid = obj.get("id")
        if isinstance(rid, str):
            if rid in seen_ids:
                problems.append(f"{p}:{i} id: duplicate id {rid!r} (first on line {seen_ids[rid]})")
                continue
            seen_ids[rid] = i
        records.append(rec)
    if problems:
        raise InputError(problems)
    return records


def dump_records(records: Iterable[BaseModel | dict]) -> str:
    """Records as JSONL text (stable key order, UTF-8, one object per line)."""
    lines = []
    for r in records:
        obj = r.model_dump(mode="json") if isinstance(r, BaseModel) else r
        lines.append(json.dumps(obj, ensure_ascii=False, sort_keys=False))
    return "".join(line + "\n" for line in lines)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and rename: never half-written."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; results are meant to be shared
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_jsonl(records: Iterable[BaseModel | dict], out: str | os.PathLike | None) -> None:
    """Write records to ``out`` atomically, or to stdout when ``out`` is None or ``-``."""
    text = dump_records(records)
    if out is None or str(out) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        atomic_write_text(out, text)
