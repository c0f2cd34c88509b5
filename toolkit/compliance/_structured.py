"""Structured checks registered by name: the first stage of the compliance cascade.

A rule may carry a machine-checkable predicate (``{type: max_words, value: 120}``). Each type is
registered here with a builder that turns the spec into a compiled check; the profile schema's
check types (``toolkit.profiles.CHECK_TYPES``) are generated from this registry, so a type exists
in the schema exactly when the reader can run it (the registry pattern of inspect_ai's providers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from toolkit import text as tx
from toolkit.compliance._checks import (
    Check,
    Cleanup,
    CodeStyle,
    Forbid,
    Headings,
    JsonFields,
    ListFormat,
    Matcher,
    MaxCount,
    MinCount,
    NoMarkdown,
    Require,
    Unknown,
    matcher,
)
from toolkit.compliance._types import CheckSpec

Builder = Callable[[CheckSpec], Check]


@dataclass(frozen=True)
class CheckType:
    """One registered structured-check type: its builder and what its spec must carry."""

    name: str
    build: Builder
    needs: str = ""  # "" | "int" (a positive integer value) | "pattern" (a regular expression)
    doc: str = ""


REGISTRY: dict[str, CheckType] = {}


def register(*names: str, needs: str = "", doc: str = "") -> Callable[[Builder], Builder]:
    """Register a builder under one or more check-type names."""

    def deco(fn: Builder) -> Builder:
        for n in names:
            if n in REGISTRY:
                raise ValueError(f"check type {n!r} registered twice")
            REGISTRY[n] = CheckType(n, fn, needs, doc or (fn.__doc__ or "").strip().splitlines()[0])
        return fn

    return deco


def _where(spec: CheckSpec) -> str:
    return {"reply": "reply", "artifacts": "any", "code": "code", None: "reply"}.get(spec.target, "any")


def _values(v: object) -> list[str]:
    return [str(x) for x in (v if isinstance(v, (list, tuple)) else [v]) if x is not None]


@register("max_words", "max_sentences", "max_lines", "max_chars", needs="int")
def _max_count(spec: CheckSpec) -> Check:
    """At most N words / sentences / lines / characters in the reply."""
    unit = spec.type.removeprefix("max_").replace("chars", "characters")
    return MaxCount(unit, int(spec.value))


@register("min_words", needs="int")
def _min_words(spec: CheckSpec) -> Check:
    """At least N words in the reply."""
    return MinCount("words", int(spec.value))


@register("forbid_pattern", "require_pattern", needs="pattern")
def _pattern(spec: CheckSpec) -> Check:
    """A regular expression that must not / must match."""
    pat = spec.pattern or str(spec.value)
    m = Matcher((), (pat,))
    if spec.type == "forbid_pattern":
        return Forbid(f"pattern {pat}", m, where=_where(spec), task_override=False)
    return Require(f"pattern {pat}", m, where=_where(spec))


@register("forbid_terms", "require_terms")
def _terms(spec: CheckSpec) -> Check:
    """Words or phrases that must not / must occur."""
    terms = _values(spec.value)
    m = matcher(terms)
    if spec.type == "forbid_terms":
        return Forbid(", ".join(terms), m, where=_where(spec))
    return Require(", ".join(terms), m, where=_where(spec))


@register("no_files")
def _no_files(spec: CheckSpec) -> Check:
    """No workspace file matching these globs is left behind."""
    pats = _values(spec.value) if spec.value is not None else _values(spec.pattern)
    return Cleanup(globs=tuple(p for p in pats if p))


@register("bullets", "no_bullets", "numbered")
def _lists(spec: CheckSpec) -> Check:
    """Bulleted / not bulleted / numbered lists."""
    return ListFormat(numbered=spec.type == "numbered", required=spec.type != "no_bullets")


@register("headings", "no_headings")
def _headings(spec: CheckSpec) -> Check:
    """Headings required / forbidden."""
    return Headings(required=spec.type == "headings")


@register("no_markdown")
def _no_markdown(spec: CheckSpec) -> Check:
    """Plain text, no markdown."""
    return NoMarkdown()


@register("json_fields")
def _json_fields(spec: CheckSpec) -> Check:
    """JSON objects in the reply carry these fields."""
    return JsonFields(tuple(spec.fields or _values(spec.value or [])))


@register("no_emoji")
def _no_emoji(spec: CheckSpec) -> Check:
    """No emoji."""
    return Forbid("emoji", Matcher((), (tx.EMOJI_RE.pattern,)), task_override=False)


@register("date_format")
def _date_format(spec: CheckSpec) -> Check:
    """Dates written in one style: iso, numeric or month_name."""
    from toolkit.compliance._kinds import DateFormat

    style = str(spec.value or "iso")
    if style not in ("iso", "numeric", "month_name", "dmy", "mdy"):
        return Unknown(reason=f"date_format: unknown style {style!r}")
    return DateFormat(style, f"{style} dates")


@register("ask_before", "never_do", "always_do")
def _actions(spec: CheckSpec) -> Check:
    """Ask before / never / always take an action named in words."""
    from toolkit.compliance._interpreter import _action

    mode = {"ask_before": "ask", "never_do": "forbid", "always_do": "require"}[spec.type]
    rule = _action(mode, str(spec.value or spec.pattern or ""))
    return rule or Unknown(reason=f"check {spec.type}: no action recognised in {spec.value!r}")


@register("type_hints", "docstrings")
def _code_style(spec: CheckSpec) -> Check:
    """Python functions carry type hints / docstrings."""
    return CodeStyle(spec.type)  # type: ignore[arg-type]


@register("max_line_length", needs="int")
def _line_length(spec: CheckSpec) -> Check:
    """No code line longer than N characters."""
    return CodeStyle("max_line_length", int(spec.value))


def compile_check(spec: CheckSpec) -> Check:
    """A rule's structured check as a compiled check (an unknown type compiles to ``Unknown``)."""
    entry = REGISTRY.get(spec.type)
    if entry is None:
        return Unknown(reason=f"unsupported check type {spec.type!r}")
    return entry.build(spec)


#: every registered structured-check type, in registration order (the profile schema uses this)
CHECK_TYPES: tuple[str, ...] = tuple(REGISTRY)
#: check types whose ``value`` must be a positive integer
NEEDS_INT: frozenset[str] = frozenset(n for n, e in REGISTRY.items() if e.needs == "int")
#: check types that need a regular expression in ``pattern`` (or ``value``)
NEEDS_PATTERN: frozenset[str] = frozenset(n for n, e in REGISTRY.items() if e.needs == "pattern")
