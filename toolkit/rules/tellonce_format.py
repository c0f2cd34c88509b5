"""The public TellOnce rule format: one markdown file per rule with YAML front matter.

Front matter fields: ``name, description, type, domain, scope (global | project:<name>),
condition, confidence, atomic_id, supersedes, created, updated``; the markdown body holds the
requirement's details (exceptions, supporting quotes) for people to read.

Round trips are byte-stable: :func:`loads` keeps each front-matter entry's original text, and
:func:`dumps` writes an entry back verbatim unless its value changed, so ``dumps(loads(t)) == t``
for every valid file, and edits touch only the lines they change.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from toolkit.datasets.jsonl import atomic_write_text
from toolkit.errors import InputError
from toolkit.rules.library import LibraryRule, LibraryVersion, RuleLibrary

FIELDS: tuple[str, ...] = (
    "name",
    "description",
    "type",
    "domain",
    "scope",
    "condition",
    "confidence",
    "atomic_id",
    "supersedes",
    "created",
    "updated",
)
_SCOPE = re.compile(r"^(global|project:[A-Za-z0-9_.\-/]+)$")
_NULLS = {"", "null", "~", "Null", "NULL"}
_DEFAULTS: dict[str, object] = {"type": "preference", "domain": "general", "scope": "global"}


@dataclass(frozen=True)
class TellOnceRule:
    """One rule file. ``body`` is the markdown after the front matter, kept exactly."""

    name: str
    description: str
    type: str = "preference"
    domain: str = "general"
    scope: str = "global"
    condition: str | None = None
    confidence: float | None = None
    atomic_id: str | None = None
    supersedes: str | None = None
    created: str | None = None
    updated: str | None = None
    body: str = ""
    raw: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)
    head: str = field(default="---\n", repr=False, compare=False)


def _scalar(raw_value: str) -> str | None:
    """A front-matter value as text (YAML scalars read without type guessing)."""
    v = yaml.load(raw_value, Loader=yaml.BaseLoader) if raw_value.strip() else ""
    if isinstance(v, (list, dict)):
        raise ValueError("expected a single value")
    return None if v in _NULLS and not re.match(r"^\s*['\"]", raw_value) else str(v)


def _emit(value: object) -> str:
    """A canonical YAML scalar that reads back as the same text."""
    if value is None:
        return "null"
    if isinstance(value, float):
        return repr(value)
    s = str(value)
    plain = (
        re.match(r"^[A-Za-z0-9_./()][^:#\n'\"]*$", s)
        and not s.endswith(" ")
        and s not in _NULLS
        and s.lower() not in {"true", "false", "yes", "no", "on", "off"}
        and not re.match(r"^[-+]?(\d|\.\d)", s)
    )
    return s if plain else json.dumps(s, ensure_ascii=False)


def _value_of(rule: TellOnceRule, key: str) -> str | None:
    v = getattr(rule, key)
    return None if v is None else (repr(v) if isinstance(v, float) else str(v))


def loads(text: str, *, source: str = "<rule>") -> TellOnceRule:
    """Parse one rule file; errors name ``source:line field``."""
    m = re.match(r"\A(---[ \t]*\r?\n)(.*?)(^---[ \t]*\r?\n?)", text, re.S | re.M)
    if not m:
        raise InputError(f"{source}:1 <front matter>: a rule file starts with a '---' block")
    head, block = m.group(1), m.group(2)
    close = m.group(3)
    entries: list[tuple[str, str]] = []
    line_of: dict[str, int] = {}
    for i, line in enumerate(block.splitlines(keepends=True), start=2):
        km = re.match(r"^([A-Za-z_][\w-]*):(.*)$", line.rstrip("\r\n"))
        if km and not line[0].isspace():
            entries.append((km.group(1), line))
            line_of[km.group(1)] = i
        elif entries:
            entries[-1] = (entries[-1][0], entries[-1][1] + line)
        elif line.strip() and not line.lstrip().startswith("#"):
            raise InputError(f"{source}:{i} <front matter>: expected 'key: value'")
        else:
            entries.append(("#", line))
    values: dict[str, str | None] = {}
    for key, raw in entries:
        if key == "#":
            continue
        if key not in FIELDS:
            raise InputError(
                f"{source}:{line_of[key]} {key}: unknown field (allowed: {', '.join(FIELDS)})"
            )
        if key in values:
            raise InputError(f"{source}:{line_of[key]} {key}: duplicate field")
        try:
            values[key] = _scalar(raw.split(":", 1)[1])
        except (ValueError, yaml.YAMLError) as exc:
            raise InputError(f"{source}:{line_of[key]} {key}: {exc}") from None
    for req in ("name", "description"):
        if not values.get(req):
            raise InputError(f"{source}:{line_of.get(req, 1)} {req}: required")
    scope = values.get("scope") or "global"
    if not _SCOPE.match(scope):
        raise InputError(
            f"{source}:{line_of.get('scope', 1)} scope: must be 'global' or 'project:<name>'"
        )
    conf = values.get("confidence")
    confidence = None
    if conf is not None:
        try:
            confidence = float(conf)
        except ValueError:
            raise InputError(f"{source}:{line_of['confidence']} confidence: not a number") from None
        if not 0.0 <= confidence <= 1.0:
            raise InputError(f"{source}:{line_of['confidence']} confidence: must be in [0, 1]")
    kw = {k: values.get(k) for k in FIELDS if k not in ("confidence",)}
    kw["type"] = values.get("type") or "preference"
    kw["domain"] = values.get("domain") or "general"
    kw["scope"] = scope
    body = text[m.end() :]
    rule = TellOnceRule(
        **kw,
        confidence=confidence,
        body=body,  # type: ignore[arg-type]
        raw=tuple(entries) + (("---", close),),
        head=head,
    )
    return rule


def dumps(rule: TellOnceRule) -> str:
    """Render a rule file; unchanged entries keep their original bytes."""
    out = [rule.head]
    written: set[str] = set()
    close = "---\n"
    parsed = loads_values(rule.raw)
    for key, raw in rule.raw:
        if key == "---":
            close = raw
            continue
        if key == "#":
            out.append(raw)
            continue
        written.add(key)
        now = _value_of(rule, key)
        if parsed.get(key, "\0") == now:
            out.append(raw)
        else:
            eol = "\r\n" if raw.endswith("\r\n") else "\n"
            out.append(f"{key}: {_emit(getattr(rule, key))}{eol}")
    nl = "\r\n" if rule.head.endswith("\r\n") else "\n"
    for key in FIELDS:
        if key in written:
            continue
        value = getattr(rule, key)
        if rule.raw and value == _DEFAULTS.get(key):
            continue  # a field the file left out, still at its default: keep it out
        out.append(f"{key}: {_emit(value)}{nl}")
    if not close.endswith("\n") and rule.body:
        close += "\n"
    out.append(close)
    out.append(rule.body)
    return "".join(out)


def loads_values(raw: tuple[tuple[str, str], ...]) -> dict[str, str | None]:
    """The text value of every raw front-matter entry (confidence normalised like the field)."""
    vals: dict[str, str | None] = {}
    for key, text in raw:
        if key in FIELDS:
            v = _scalar(text.split(":", 1)[1])
            if key == "confidence" and v is not None:
                v = repr(float(v))
            vals[key] = v
    return vals


def read_rule(path: str | Path) -> TellOnceRule:
    """Read one rule file."""
    p = Path(path)
    return loads(p.read_text(encoding="utf-8"), source=str(p))


def write_rule(rule: TellOnceRule, path: str | Path) -> None:
    """Write one rule file atomically."""
    atomic_write_text(path, dumps(rule))


# -- conversion to and from the library ----------------------------------------------------------
def _body_for(rule: LibraryRule) -> str:
    parts = [f"{rule.behavior}\n"]
    if rule.conditions[1:]:
        parts.append("\n## Conditions\n\n" + "".join(f"- {c}\n" for c in rule.conditions[1:]))
    if rule.exceptions:
        parts.append("\n## Exceptions\n\n" + "".join(f"- {e}\n" for e in rule.exceptions))
    if rule.quotes:
        parts.append("\n## Evidence\n\n" + "".join(f'- "{q}"\n' for q in rule.quotes))
    return "\n" + "".join(parts)


def _section(body: str, title: str) -> tuple[str, ...]:
    m = re.search(rf"^## {title}\s*\n(.*?)(?=^## |\Z)", body, re.S | re.M)
    if not m:
        return ()
    items = re.findall(r"^- (.*)$", m.group(1), re.M)
    return tuple(i.strip() for i in items)


def from_library_rule(rule: LibraryRule) -> TellOnceRule:
    """A library rule in the public format (metadata from ``rule.meta`` where present)."""
    meta = dict(rule.meta)
    conf = meta.get("confidence")
    return TellOnceRule(
        name=meta.get("name", rule.id),
        description=rule.behavior,
        type=meta.get("type", "preference"),
        domain=meta.get("domain", "general"),
        scope=rule.scope if rule.scope != "project" else "project:current",
        condition=rule.conditions[0] if rule.conditions else None,
        confidence=float(conf) if conf is not None else None,
        atomic_id=meta.get("atomic_id", rule.id),
        supersedes=rule.supersedes,
        created=meta.get("created"),
        updated=meta.get("updated"),
        body=_body_for(rule),
    )


def to_library_rule(doc: TellOnceRule) -> LibraryRule:
    """A public-format rule as a library rule (body sections give exceptions and quotes)."""
    conds = ((doc.condition,) if doc.condition else ()) + _section(doc.body, "Conditions")
    quotes = tuple(q.strip('"') for q in _section(doc.body, "Evidence"))
    meta = {
        k: str(getattr(doc, k))
        for k in ("name", "type", "domain", "atomic_id", "created", "updated", "confidence")
        if getattr(doc, k) is not None
    }
    return LibraryRule(
        id=doc.atomic_id or doc.name,
        behavior=doc.description,
        scope=doc.scope,
        conditions=conds,
        exceptions=_section(doc.body, "Exceptions"),
        quotes=quotes,
        supersedes=doc.supersedes,
        meta=meta,
    )


def export_library(version: LibraryVersion, folder: str | Path) -> list[Path]:
    """Write every rule of ``version`` still in force as ``<name>.md`` in ``folder``."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in version.current():
        doc = from_library_rule(r)
        p = out / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', doc.name)}.md"
        write_rule(doc, p)
        paths.append(p)
    return paths


def import_library(folder: str | Path) -> RuleLibrary:
    """A library from a folder of rule files (sorted by file name; superseded ones marked)."""
    docs = [read_rule(p) for p in sorted(Path(folder).glob("*.md"))]
    rules = [to_library_rule(d) for d in docs]
    superseded = {r.supersedes for r in rules if r.supersedes}
    rules = [replace(r, state="superseded") if r.id in superseded else r for r in rules]
    return RuleLibrary(rules)


__all__ = [
    "FIELDS",
    "TellOnceRule",
    "dumps",
    "export_library",
    "from_library_rule",
    "import_library",
    "loads",
    "read_rule",
    "to_library_rule",
    "write_rule",
]
