"""Offline method for the LLM gating baselines: the B.1 KEEP/DROP rubric as a word list.

The memory-gating paper's LLM gates (B.1) judge whether a fact is durable and user-specific or
low value with a written rubric. Offline, this module matches *only the words of that rubric*
(and of the B.1 gating prompts), kept as validated data in ``toolkit/resources/gating/rubric.yaml``
(each category quotes its B.1 line; each has examples it must and must not match, run as tests).
Nothing in it comes from the fact generator (:mod:`toolkit.gating.simulate`): a test checks that
no generator template phrase occurs in the rubric and no rubric cue occurs in a template phrase,
so on simulated facts this baseline is measured, not handed the generator's hidden kind
(``prefmem reproduce gating`` reports how well it decodes the kinds). The LLM method
(:mod:`toolkit.gating.llm_gates`) asks a model with our own prompts.

Matching is on lower-case word forms, phrases as word sequences, so "likes" matches but
"looks like" does not.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

__all__ = ["KEEP", "DROP", "RubricScore", "rubric_score", "rubric_decision", "summarize_session",
           "context_overlap", "overlap_count", "LEVELS", "content_words", "load_rubric",
           "rubric_words"]


@lru_cache(maxsize=1)
def load_rubric() -> dict[str, dict[str, dict[str, Any]]]:
    """The rubric resource: ``{"keep"|"drop": {category: {source, cues, must_match, ...}}}``."""
    text = resources.files("toolkit").joinpath("resources", "gating", "rubric.yaml").read_text(
        encoding="utf-8")
    data = yaml.safe_load(text)
    for side in ("keep", "drop"):
        for cat, entry in data[side].items():
            missing = {"source", "cues", "must_match", "must_not_match"} - set(entry)
            if missing:
                raise ValueError(f"rubric.yaml {side}.{cat}: missing {sorted(missing)}")
    return data


def _table(side: str) -> dict[str, tuple[str, ...]]:
    return {cat: tuple(str(c) for c in e["cues"]) for cat, e in load_rubric()[side].items()}


#: category -> cue words/phrases (from the B.1 rubric only)
KEEP: dict[str, tuple[str, ...]] = _table("keep")
DROP: dict[str, tuple[str, ...]] = _table("drop")

_CUES = {side: {cat: tuple(tuple(c.lower().split()) for c in cues) for cat, cues in t.items()}
         for side, t in (("keep", KEEP), ("drop", DROP))}
#: one-word cues: word -> (side, category); phrases: (" w1 w2 ", side, category)
_SINGLE: dict[str, list[tuple[str, str]]] = {}
_PHRASES: list[tuple[str, str, str]] = []
for _side, _t in _CUES.items():
    for _cat, _cues in _t.items():
        for _q in _cues:
            if len(_q) == 1:
                _SINGLE.setdefault(_q[0], []).append((_side, _cat))
            else:
                _PHRASES.append((" " + " ".join(_q) + " ", _side, _cat))
_WORD = re.compile(r"[a-z0-9]+(?:['\u2019-][a-z0-9]+)*")


def rubric_words() -> frozenset[str]:
    """Every word of every rubric cue (lower case)."""
    return frozenset(w for t in (KEEP, DROP) for cues in t.values() for c in cues
                     for w in c.lower().split())


def _seq(text: str) -> list[str]:
    """Lower-case word forms (possessive 's dropped), the unit the cues are matched on."""
    return [w.removesuffix("'s").removesuffix("\u2019s") for w in _WORD.findall(text.lower())]


#: capacity levels in order: bank vacant, filling, nearly full (B.1's capacity block)
LEVELS: tuple[str, ...] = ("vacant", "filling", "full")

_STOP = frozenset(
    "a an the and or of to in on for with at by from about as is are was were be been it its "
    "this that these those user users they them their he she his her him i me my we our you "
    "your has have had not no but if so than then there here into over under up down out very "
    "also just some any all more most other such only own same can will would should could "
    "s t don do does did".split()
)


@dataclass(frozen=True)
class RubricScore:
    """Which KEEP and DROP categories a fact matches; ``category`` is the strongest one."""

    keep: tuple[str, ...]
    drop: tuple[str, ...]

    @property
    def margin(self) -> int:
        return len(self.keep) - len(self.drop)

    @property
    def category(self) -> str:
        if self.keep and len(self.keep) >= len(self.drop):
            return "KEEP:" + self.keep[0]
        if self.drop:
            return "DROP:" + self.drop[0]
        return "DROP:unclear"


def rubric_score(text: str) -> RubricScore:
    """Which KEEP and DROP categories' B.1 words occur in a fact."""
    seq = _seq(text)
    hit: set[tuple[str, str]] = set()
    for w in seq:
        hit.update(_SINGLE.get(w, ()))
    if _PHRASES:
        joined = " " + " ".join(seq) + " "
        hit.update((side, cat) for q, side, cat in _PHRASES if q in joined)
    keep = tuple(c for c in _CUES["keep"] if ("keep", c) in hit)
    drop = tuple(c for c in _CUES["drop"] if ("drop", c) in hit)
    return RubricScore(keep, drop)


_STRONG = frozenset({"preference", "constraint", "plan"})


def rubric_decision(score: RubricScore, level: str | None = None, bonus: int = 0) -> bool:
    """Store or not: plain rubric when ``level`` is None, else stricter as the bank fills.

    ``bonus`` (context-aware gates) adds support for a fact whose topic recurs in recent sessions.
    """
    m = score.margin + bonus
    if level is None:
        return m >= 1
    if level == "vacant":
        # B.1: "bias toward KEEPING ... only DROP facts that clearly belong in the DROP list"
        return m >= 1 or not score.drop
    if level == "filling":  # be selective: a clear KEEP without DROP cues
        return m >= 1 and not score.drop
    # nearly full: only firm, high-value KEEPs
    strong = bool(_STRONG.intersection(score.keep))
    return strong and not score.drop and m + (1 if bonus > 0 else 0) >= 1


def content_words(text: str) -> list[str]:
    """Lower-case alphabetic words that are not stop words or cue words."""
    return [w for w in re.findall(r"[a-z][a-z']+", text.lower()) if w not in _STOP and len(w) > 2]


def summarize_session(texts: Sequence[str], k: int = 8) -> str:
    """A one-line offline summary: the session's most frequent content words."""
    counts = Counter(w for t in texts for w in set(content_words(t)))
    top = [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]
    return "talked about " + ", ".join(top) if top else "no notable topics"


def context_overlap(text: str, summaries: Sequence[str]) -> int:
    """How many earlier session summaries mention one of the fact's content words."""
    return overlap_count(text, [set(content_words(s)) for s in summaries])


def overlap_count(text: str, summary_words: Sequence[set[str]]) -> int:
    """:func:`context_overlap` with each summary's content words given (read once per session)."""
    words = set(content_words(text))
    return sum(1 for s in summary_words if words & s)
