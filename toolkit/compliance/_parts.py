"""The part stage: tie a preference to the PART of a delivery it names, and find that part.

A preference about one part of a delivery ("a TL;DR of three sentences at most", "subject line
under 72 characters", "posts for X fit in 280 characters", "a one-line comment above each job in
YAML") is checked against that part, not against the whole reply: applied to the whole reply, a
limit on a summary flags every long answer. This stage sits in the reader in front of the catalogue
(and the learned reader's size cues) and narrows the evidence each check sees, without touching the
catalogue's kinds: the checks run unchanged on each located instance of the part.

The knowledge is data (``toolkit/resources/compliance/parts.yaml``: which words name a part, which
generic locators find it, with examples run as tests); the locators here are generic text
operations registered by name (a labelled block, list items, fenced blocks, quoted blocks, the first
paragraph, docstrings, workspace files by type). A part that is named but not found leaves the whole
delivery to the later stages, and that is marked (the learned reader sees it as a feature).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from toolkit import text as tx
from toolkit.compliance._checks import CODE_EXT, View

RESOURCE = "parts.yaml"
MAX_INSTANCES = 8


class Instance(BaseModel):
    """One located piece of evidence: a span of the reply, or a workspace file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str
    path: str | None = None


class FindExample(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reply: str
    files: dict[str, str] = Field(default_factory=dict)
    parts: list[str]


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")
    locator: str
    label: str | None = None
    ext: str | None = None
    lang: str | None = None
    one_line: bool | None = None


class Part(BaseModel):
    """A part a preference can name: the pattern that names it, the locators that find it, examples."""

    model_config = ConfigDict(extra="forbid")
    name: str
    named_by: str
    locate: list[Step] = Field(min_length=1)
    names: list[str] = Field(min_length=1)
    not_names: list[str] = Field(min_length=1)
    finds: list[FindExample] = Field(min_length=1)

    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.named_by)


class PartFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    parts: list[Part] = Field(min_length=1)


@lru_cache(maxsize=256)
def _compiled(p: str) -> re.Pattern[str]:
    return re.compile(p, re.I)


# -- locators (generic; registered by name) --------------------------------------------------------
_LOCATORS: dict[str, Callable[..., list[Instance]]] = {}


def locator(name: str):
    """Register a locator under ``name`` (the ``locator`` field of a part's ``locate`` steps)."""

    def deco(fn):
        _LOCATORS[name] = fn
        return fn

    return deco


_HEAD = r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*|__)?[ \t]*"


@locator("labelled")
def _labelled(view: View, *, label: str, one_line: bool = False, **_: Any) -> list[Instance]:
    """Blocks introduced by a label: ``Label: text``, ``**Label:** text``, ``## Label`` then a paragraph."""
    text = tx.prose(view.reply)
    lines = text.split("\n")
    rx = re.compile(_HEAD + r"(?:" + label + r")\b[^\n:*]{0,30}?(?:\*\*|__)?[ \t]*([:\u2014-]?)[ \t]*(?:\*\*|__)?[ \t]*(.*)$",
                    re.I)
    out: list[Instance] = []
    for i, line in enumerate(lines):
        m = rx.match(line)
        if not m:
            continue
        is_label = bool(m.group(1)) or line.lstrip().startswith(("#", "**", "__")) or not m.group(2).strip()
        if not is_label:
            continue
        rest = m.group(2).strip().strip("*_ ").strip()
        body: list[str] = [rest] if rest else []
        if not (rest and one_line):
            j = i + 1
            if not rest:
                while j < len(lines) and not lines[j].strip():
                    j += 1
            while j < len(lines) and lines[j].strip() and not tx.HEADING_RE.match(lines[j]):
                body.append(lines[j].strip())
                j += 1
        if body:
            out.append(Instance(text="\n".join(body)))
    return out


@locator("list_items")
def _list_items(view: View, **_: Any) -> list[Instance]:
    """The text of each top-level list item (two or more), without markers or indented sub-items."""
    items = [m.group(1).strip() for m in re.finditer(r"^(?:[-*\u2022+]|\d+[.)])[ \t]+(\S[^\n]*)$",
                                                       tx.prose(view.reply), re.M)]
    return [Instance(text=t) for t in items] if len(items) >= 2 else []


@locator("fenced")
def _fenced(view: View, **_: Any) -> list[Instance]:
    return [Instance(text=b.strip()) for b in tx.code_blocks(view.reply) if b.strip()]


@locator("fenced_first_line")
def _fenced_first_line(view: View, **_: Any) -> list[Instance]:
    out = []
    for b in tx.code_blocks(view.reply):
        first = next((x.strip() for x in b.split("\n") if x.strip()), "")
        if first:
            out.append(Instance(text=first))
    return out


@locator("fenced_lang")
def _fenced_lang(view: View, *, lang: str, **_: Any) -> list[Instance]:
    rx = re.compile(r"```[ \t]*(?:" + lang + r")\b[^\n]*\n(.*?)(?:```|\Z)", re.S | re.I)
    return [Instance(text=b.strip()) for b in rx.findall(view.reply) if b.strip()]


@locator("quoted")
def _quoted(view: View, **_: Any) -> list[Instance]:
    out, cur = [], []
    for line in view.reply.split("\n") + [""]:
        if line.lstrip().startswith(">"):
            cur.append(line.lstrip()[1:].strip())
        elif cur:
            out.append(Instance(text="\n".join(cur).strip()))
            cur = []
    return [i for i in out if i.text]


@locator("first_paragraph")
def _first_paragraph(view: View, **_: Any) -> list[Instance]:
    """The first paragraph of prose that is not a heading."""
    for para in re.split(r"\n\s*\n", tx.prose(view.reply)):
        lines = [x for x in para.strip().split("\n") if x.strip() and not tx.HEADING_RE.match(x)]
        if lines:
            return [Instance(text="\n".join(x.strip() for x in lines))]
    return []


@locator("docstrings")
def _docstrings(view: View, **_: Any) -> list[Instance]:
    code = "\n".join(tx.code_blocks(view.reply)) + "\n" + "\n".join(
        b for p, b in sorted((view.artifacts or {}).items()) if p.endswith(CODE_EXT))
    found = re.findall(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', code, re.S)
    return [Instance(text=(a or b).strip()) for a, b in found if (a or b).strip()]


@locator("files")
def _files(view: View, *, ext: str, **_: Any) -> list[Instance]:
    rx = _compiled(ext)
    return [Instance(text=b, path=p) for p, b in sorted((view.artifacts or {}).items()) if rx.search(p)]


# -- the stage ---------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def catalogue() -> tuple[Part, ...]:
    """The parts, validated (``parts.yaml``; a malformed file fails loudly)."""
    f = resources.files("toolkit.resources.compliance").joinpath(RESOURCE)
    data = PartFile.model_validate(yaml.safe_load(f.read_text("utf-8")))
    for p in data.parts:
        p.pattern()
        for s in p.locate:
            if s.locator not in _LOCATORS:
                raise ValueError(f"{RESOURCE}: part {p.name}: unknown locator {s.locator!r}")
    return tuple(data.parts)


@lru_cache(maxsize=8192)
def named_part(rule_text: str) -> Part | None:
    """The first part (in the file's order) the preference's text names, or None."""
    for p in catalogue():
        if p.pattern().search(rule_text):
            return p
    return None


def find(part: Part, view: View) -> list[Instance]:
    """The part's instances in the evidence: the first locator that finds anything wins."""
    for s in part.locate:
        params = {k: v for k, v in s.model_dump().items() if k != "locator" and v is not None}
        found = _LOCATORS[s.locator](view, **params)
        if found:
            return found[:MAX_INSTANCES]
    return []


@dataclass(frozen=True)
class Scope:
    """What a check sees: the named part (``""`` when none), whether it was found, and the views."""

    part: str
    located: bool
    views: tuple[View, ...]


def scope(rule_text: str, view: View) -> Scope:
    """Narrow the evidence to the part the preference names (one view per instance), else the whole."""
    part = named_part(rule_text)
    if part is None:
        return Scope("", False, (view,))
    found = find(part, view)
    if not found:
        return Scope(part.name, False, (view,))
    views = tuple(View(view.task, "", {i.path: i.text}, view.history) if i.path else
                  View(view.task, i.text, None, view.history) for i in found)
    return Scope(part.name, True, views)


def read_in_scope(rule: Any, view: View, *, holding: bool) -> tuple[Any, Scope]:
    """The catalogue's reading of ``rule`` on the part it names (each instance read alone: the first
    violated instance decides, else a pass when every instance passes, else the first other reading),
    or on the whole delivery when it names none or the part is not found."""
    from toolkit.compliance._catalogue import read_catalogue

    sc = scope(rule.text, view)
    if not sc.located:
        return read_catalogue(rule, view, holding=holding), sc
    readings = [read_catalogue(rule, v, holding=holding) for v in sc.views]
    for r in readings:
        if r.finding.verdict == "violated":
            return r, sc
    if all(r.finding.verdict == "satisfied" for r in readings):
        return readings[0], sc
    return next(r for r in readings if r.finding.verdict != "satisfied"), sc
