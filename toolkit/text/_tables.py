"""Cue tables as data: validated YAML files under ``toolkit/resources/`` (package data).

A table file holds named entries; each entry is one piece of phrase knowledge (a list of
patterns, one pattern, a word list, rewrites or a concept lexicon) with the examples it must
match and must not match. The examples are run as tests (``tests/test_cue_tables.py``), so a
pattern that stops matching what it was written for, or starts matching what it must not,
fails loudly instead of silently changing a score. Code reads tables with :func:`load_table`
and never spells a phrase itself.

Example semantics per entry type:

- ``patterns`` / ``pattern``: each ``match`` example is found by (one of) the pattern(s) with
  ``re.search``; no ``not_match`` example is;
- ``words``: each ``match`` word is in the list, no ``not_match`` word is;
- ``rewrites``: each ``match`` example is changed by some rewrite, no ``not_match`` example is;
- ``concepts``: each ``match`` example ``"word: concept"`` names a word listed under that
  concept; ``not_match`` examples name words under no concept.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolkit._yaml import load_yaml_with_lines
from toolkit.errors import InputError

EntryType = Literal["patterns", "pattern", "words", "rewrites", "concepts"]
#: resource folders whose YAML files are cue tables in this format (others have their own schema)
TABLE_DIRS = ("admission", "resolution")
_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


class Rewrite(BaseModel):
    """One rewrite: a pattern and what replaces it."""

    model_config = ConfigDict(extra="forbid")
    pattern: str
    replace: str


class Entry(BaseModel):
    """One named piece of phrase knowledge with its examples."""

    model_config = ConfigDict(extra="forbid")

    type: EntryType
    description: str = Field(min_length=3)
    flags: str = ""
    patterns: list[str] | None = None
    pattern: str | None = None
    words: list[str] | None = None
    rewrites: list[Rewrite] | None = None
    concepts: dict[str, list[list[str]]] | None = None
    match: list[str] = Field(min_length=1)
    not_match: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_payload(self) -> Entry:
        payload = {"patterns": self.patterns, "pattern": self.pattern, "words": self.words,
                   "rewrites": self.rewrites, "concepts": self.concepts}
        given = [k for k, v in payload.items() if v is not None]
        if given != [self.type]:
            raise ValueError(f"type {self.type!r} needs exactly the field {self.type!r} "
                             f"(given: {given})")
        if set(self.flags) - set(_FLAGS):
            raise ValueError(f"unknown flags {self.flags!r} (use {''.join(_FLAGS)})")
        for p in self.all_patterns():
            re.compile(p, self.re_flags())
        return self

    def re_flags(self) -> int:
        """The ``re`` flags the entry's patterns are compiled with."""
        out = 0
        for c in self.flags:
            out |= _FLAGS[c]
        return out

    def all_patterns(self) -> list[str]:
        """Every regular expression of the entry (empty for word lists and concepts)."""
        if self.patterns is not None:
            return list(self.patterns)
        if self.pattern is not None:
            return [self.pattern]
        if self.rewrites is not None:
            return [r.pattern for r in self.rewrites]
        return []

    def value(self) -> Any:
        """The Python value code uses: list of pattern strings, a compiled pattern, a frozenset,
        a tuple of (compiled pattern, replacement), or a concept dict of pole tuples."""
        if self.type == "patterns":
            return list(self.patterns or [])
        if self.type == "pattern":
            return re.compile(self.pattern or "", self.re_flags())
        if self.type == "words":
            return frozenset(self.words or [])
        if self.type == "rewrites":
            return tuple((re.compile(r.pattern, self.re_flags()), r.replace)
                         for r in self.rewrites or [])
        return {k: tuple(tuple(p) for p in v) for k, v in (self.concepts or {}).items()}

    def hits(self, example: str) -> bool:
        """Whether the entry matches ``example`` in the sense of the module docstring."""
        if self.type in ("patterns", "pattern"):
            return any(re.search(p, example, self.re_flags()) for p in self.all_patterns())
        if self.type == "words":
            return example in set(self.words or [])
        if self.type == "rewrites":
            return any(pat.sub(rep, example) != example for pat, rep in self.value())
        word, _, concept = example.partition(":")
        word, concept = word.strip(), concept.strip()
        for name, poles in (self.concepts or {}).items():
            if word in {w for pole in poles for w in pole} and (not concept or concept == name):
                return True
        return False


class TableFile(BaseModel):
    """A whole table file."""

    model_config = ConfigDict(extra="forbid")
    about: str = Field(min_length=3)
    entries: dict[str, Entry]


class Table:
    """A loaded table: ``table["lasting"]`` is the entry's Python value."""

    def __init__(self, name: str, spec: TableFile):
        self.name = name
        self.spec = spec

    def __getitem__(self, key: str) -> Any:
        try:
            return self.spec.entries[key].value()
        except KeyError:
            raise KeyError(f"table {self.name!r} has no entry {key!r}") from None

    def entry(self, key: str) -> Entry:
        """The validated entry (with its examples)."""
        return self.spec.entries[key]


def table_names() -> list[str]:
    """Every table shipped under ``toolkit/resources`` (``"admission/cues"``, ...)."""
    root = resources.files("toolkit") / "resources"
    out = []
    for d in sorted(root.iterdir(), key=lambda p: p.name):
        if d.is_dir() and d.name in TABLE_DIRS:
            out += [f"{d.name}/{f.name[:-5]}" for f in sorted(d.iterdir(), key=lambda p: p.name)
                    if f.name.endswith(".yaml")]
    return out


@cache
def load_table(name: str) -> Table:
    """Load and validate ``toolkit/resources/<name>.yaml`` (cached per process)."""
    path = resources.files("toolkit") / "resources" / f"{name}.yaml"
    data, lines = load_yaml_with_lines(str(path))
    try:
        spec = TableFile.model_validate(data)
    except Exception as e:  # pydantic ValidationError -> one line with file:line field
        errs = getattr(e, "errors", lambda: [])()
        if errs:
            loc = tuple(errs[0]["loc"])
            line = next((lines[loc[:i]] for i in range(len(loc), 0, -1) if loc[:i] in lines), 1)
            raise InputError(f"{path}:{line} {'.'.join(map(str, loc))}: {errs[0]['msg']}") from None
        raise InputError(f"{path}: {e}") from None
    return Table(name, spec)
