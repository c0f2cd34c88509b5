"""Clause, condition, exception and negation scope for rule text, ConText-style.

After medspaCy's ConText (Harkema et al. 2009; ``medspacy.context``): a table of modifier rules,
each with a literal, a category (NEGATION, CONDITION, EXCEPTION, TERMINATE), a direction
(``forward``, ``backward``, ``bidirectional``, ``terminate``, ``pseudo``) and a maximum scope in
tokens. A modifier's scope runs from the modifier in its direction to the end of its clause
(sentence punctuation; for conditions and exceptions also a comma or colon), is cut at a
``terminate`` modifier ("but", "however"), and never exceeds ``max_scope`` tokens. ``pseudo`` rules
match longer phrases that contain a modifier but are not one ("not just", "no more than"), so the
shorter modifier inside them does not fire. The rules are data (``toolkit/resources/text/context.yaml``)
and each carries examples that the tests run.

Every reader of rule text (the compliance reader, admission, resolution) asks this one stage whether
a word is negated, conditioned or excepted, instead of patching phrasings locally.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

import yaml

from toolkit.text._tokens import tokens

Category = Literal["NEGATION", "CONDITION", "EXCEPTION", "TERMINATE"]
Direction = Literal["forward", "backward", "bidirectional", "terminate", "pseudo"]
_CLAUSE_END = re.compile(r"[.!?;\n](?=\s|$)|\n")
_SOFT_END = re.compile(r"[,:]")


@dataclass(frozen=True)
class ContextRule:
    """One modifier rule (medspaCy's ``ConTextRule``: literal, category, direction, max_scope)."""

    literal: str
    category: Category
    direction: Direction
    max_scope: int | None = None
    clause_initial: bool = False
    modifies: tuple[tuple[str, str], ...] = ()
    not_modifies: tuple[tuple[str, str], ...] = ()

    @property
    def pattern(self) -> re.Pattern[str]:
        body = r"\s+".join(re.escape(w) for w in self.literal.split()).replace("'", "['\u2019]")
        return re.compile(rf"(?<![\w'])({body})(?![\w'])", re.I)


@dataclass(frozen=True)
class Modifier:
    """A modifier found in a text: its rule, its own span and the character span it governs."""

    rule: ContextRule
    start: int
    end: int
    scope_start: int
    scope_end: int

    @property
    def category(self) -> str:
        return self.rule.category

    def covers(self, start: int, end: int) -> bool:
        """Whether the target span lies inside this modifier's scope (and outside the modifier itself)."""
        return self.scope_start <= start and end <= self.scope_end and not (self.start <= start < self.end)


@dataclass(frozen=True)
class Clause:
    """A span of a rule's text with its role: ``main``, ``condition`` or ``exception``."""

    text: str
    start: int
    end: int
    role: Literal["main", "condition", "exception"]


@lru_cache(maxsize=1)
def context_rules() -> tuple[ContextRule, ...]:
    """The modifier table, loaded and validated from package data."""
    raw = yaml.safe_load(resources.files("toolkit.resources.text").joinpath("context.yaml").read_text("utf-8"))
    out = []
    for i, r in enumerate(raw["rules"]):
        unknown = set(r) - {"literal", "category", "direction", "max_scope", "clause_initial", "modifies",
                            "not_modifies"}
        if unknown:
            raise ValueError(f"context.yaml rules[{i}]: unknown fields {sorted(unknown)}")
        if r["category"] not in ("NEGATION", "CONDITION", "EXCEPTION", "TERMINATE"):
            raise ValueError(f"context.yaml rules[{i}].category: {r['category']!r}")
        if r["direction"] not in ("forward", "backward", "bidirectional", "terminate", "pseudo"):
            raise ValueError(f"context.yaml rules[{i}].direction: {r['direction']!r}")
        out.append(ContextRule(r["literal"], r["category"], r["direction"], r.get("max_scope"),
                               bool(r.get("clause_initial", False)),
                               tuple(tuple(x) for x in r.get("modifies", ())),
                               tuple(tuple(x) for x in r.get("not_modifies", ()))))
    # longer literals first, so a pseudo phrase claims its words before the shorter modifier inside it
    return tuple(sorted(out, key=lambda r: -len(r.literal)))


def _clause_bounds(text: str, pos: int, soft: bool) -> tuple[int, int]:
    """The start and end of the clause around ``pos`` (soft: commas and colons also end it)."""
    ends = [m.start() for m in _CLAUSE_END.finditer(text)]
    if soft:
        ends += [m.start() for m in _SOFT_END.finditer(text)]
    before = [e + 1 for e in ends if e < pos]
    after = [e for e in ends if e >= pos]
    return (max(before) if before else 0), (min(after) if after else len(text))


def find_modifiers(text: str) -> list[Modifier]:
    """Every modifier in ``text`` with its scope (ConText's matching then scope-setting passes)."""
    taken: list[tuple[int, int]] = []
    found: list[tuple[ContextRule, int, int]] = []
    for rule in context_rules():
        for m in rule.pattern.finditer(text):
            s, e = m.span(1)
            if any(s < b and a < e for a, b in taken):
                continue
            if rule.clause_initial:
                cs, _ = _clause_bounds(text, s, soft=True)
                if text[cs:s].strip():
                    continue
            taken.append((s, e))
            found.append((rule, s, e))
    found.sort(key=lambda x: x[1])
    terms = [s for r, s, _ in found if r.direction == "terminate"]
    toks = tokens(text)
    out = []
    for rule, s, e in found:
        if rule.direction in ("terminate", "pseudo"):
            continue
        soft = rule.category in ("CONDITION", "EXCEPTION")
        cs, ce = _clause_bounds(text, s, soft)
        lo, hi = s, e
        if rule.direction in ("forward", "bidirectional"):
            hi = min([ce, *[t for t in terms if t >= e]])
            if rule.max_scope:
                after = [t for t in toks if t.start >= e and t.end <= hi]
                if len(after) > rule.max_scope:
                    hi = after[rule.max_scope - 1].end
        if rule.direction in ("backward", "bidirectional"):
            lo = max([cs, *[t for t in terms if t < s]])
            if rule.max_scope:
                before = [t for t in toks if t.end <= s and t.start >= lo]
                if len(before) > rule.max_scope:
                    lo = before[-rule.max_scope].start
        out.append(Modifier(rule, s, e, lo, hi))
    return out


def modifiers_at(text: str, start: int, end: int | None = None) -> list[Modifier]:
    """The modifiers whose scope covers the span ``[start, end)`` of ``text``."""
    end = start + 1 if end is None else end
    return [m for m in find_modifiers(text) if m.covers(start, end)]


def negated(text: str, start: int, end: int | None = None) -> bool:
    """Whether a NEGATION modifier governs the span (pseudo-negations such as "not just" do not)."""
    return any(m.category == "NEGATION" for m in modifiers_at(text, start, end))


def word_modifiers(text: str, word: str) -> set[str]:
    """Categories governing the first occurrence of ``word`` (case-insensitive) in ``text``."""
    m = re.search(rf"(?<!\w){re.escape(word)}", text, re.I)
    if not m:
        raise ValueError(f"{word!r} does not occur in {text!r}")
    return {x.category for x in modifiers_at(text, m.start(), m.end())}


def clauses(text: str) -> list[Clause]:
    """Split a rule's text into main, condition and exception clauses by the CONDITION/EXCEPTION scopes."""
    mods = sorted((m for m in find_modifiers(text) if m.category in ("CONDITION", "EXCEPTION")),
                  key=lambda m: m.start)
    out: list[Clause] = []
    pos = 0
    for m in mods:
        if m.start < pos:
            continue
        if text[pos:m.start].strip():
            out.append(Clause(text[pos:m.start], pos, m.start, "main"))
        role = "condition" if m.category == "CONDITION" else "exception"
        out.append(Clause(text[m.start:m.scope_end], m.start, m.scope_end, role))
        pos = m.scope_end
    if text[pos:].strip():
        out.append(Clause(text[pos:], pos, len(text), "main"))
    return out


def split_rule(text: str) -> tuple[str, list[str], list[str]]:
    """The main behaviour, the conditions and the exceptions of a rule's text (modifier words dropped)."""
    main, conds, excs = [], [], []
    for c in clauses(text):
        if c.role == "main":
            main.append(c.text)
            continue
        body = re.sub(r"^\W*\w+(?:\s+(?:than|for|if|when))?\s*", "", c.text).strip(" ,.;:")
        (conds if c.role == "condition" else excs).append(body)
    return re.sub(r"\s+", " ", " ".join(main)).strip(" ,;"), conds, excs
