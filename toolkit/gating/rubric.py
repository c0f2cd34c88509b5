"""Offline method for the LLM gating baselines: a KEEP/DROP cue grammar over fact text.

The memory-gating paper's LLM gates (B.1) judge whether a fact is durable and user-specific
(preferences, standing plans, constraints, recurring people, stable biography) or low value
(small talk, transient states, one-off questions, speculation, generic statements). This
module scores the same categories with general cue patterns, so the baselines run without a
model; the LLM method (:mod:`toolkit.gating.llm_gates`) asks a model with our own prompts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["KEEP", "DROP", "RubricScore", "rubric_score", "rubric_decision", "summarize_session",
           "context_overlap", "LEVELS", "content_words"]

#: category -> cue patterns (word-boundary regexes, case-insensitive)
KEEP: dict[str, tuple[str, ...]] = {
    "preference": (r"prefer(s|red)?", r"(really |also )?(like|love|enjoy)s?\b", r"dislikes?",
                   r"hates?", r"favou?rite (is|was)", r"can'?t stand", r"cannot stand",
                   r"always (chooses|picks|orders|uses)", r"never (eats|drinks|uses|buys)",
                   r"is (a )?fan of", r"rather than", r"instead of"),
    "constraint": (r"allergic", r"allerg(y|ies)", r"(strict |tight |limited )?budget",
                   r"can ?not (use|eat|drink|afford|do)", r"can'?t (use|eat|drink|afford)",
                   r"must (avoid|not|use|have)", r"is limited to", r"only (eats|uses|has|can)",
                   r"needs? (accessible|to avoid)", r"intoleran(t|ce)", r"is (vegan|vegetarian)",
                   r"deadline", r"restricted to", r"doctor (said|told)"),
    "plan": (r"(is |are )?planning", r"plans? to", r"intends? to", r"committed to",
             r"will (begin|start|move|travel|run)", r"saving (up )?for", r"signed up for",
             r"(is |has )?decided to", r"goal (is|of)", r"is (training|preparing) for",
             r"enrolled in", r"booked", r"scheduled"),
    "relationship": (r"(his|her|their|my) (partner|wife|husband|mother|father|mom|dad|sister|"
                     r"brother|son|daughter|friend|boss|kids?|children)",
                     r"(partner|wife|husband|sister|brother|friend|coworker|colleague|"
                     r"roommate|neighbou?r)s?\b", r"\bpet (dog|cat)\b", r"(dog|cat) named"),
    "biography": (r"works (on|at|as|in)", r"lives (in|near)", r"grew up", r"studied",
                  r"has (owned|years of|been)", r"is (an?|the) \w+ (by trade|professionally)",
                  r"moved to", r"was born", r"graduated"),
}
DROP: dict[str, tuple[str, ...]] = {
    "smalltalk": (r"chatted", r"small ?talk", r"joked", r"greeted", r"said (thanks|hello|hi)",
                  r"thanked", r"the weather", r"pleasantr(y|ies)", r"\bbanter"),
    "transient": (r"today'?s?", r"this (morning|afternoon|evening)", r"right now", r"tonight",
                  r"just (finished|got|arrived|woke)", r"currently (waiting|feeling)",
                  r"\b(is|was) (tired|late|hungry|sleepy|bored)", r"spilled", r"at the moment"),
    "question": (r"asked (how|what|why|for|about)", r"looked up", r"wondered",
                 r"wanted (a|the) (definition|quick)", r"\bchecked\b", r"asked the assistant",
                 r"requested a (quick|short)"),
    "speculative": (r"\bmight\b", r"\bmaybe\b", r"\bperhaps\b", r"is considering",
                    r"is thinking about", r"\bsomeday\b", r"\bhypothetical"),
    "generic": (r"\bin general\b", r"\bpeople (often|usually)\b", r"\bgenerally\b",
                r"\bit is (well )?known\b"),
}

_COMPILED = {
    side: {cat: re.compile(r"\b(?:" + "|".join(pats) + r")", re.I) for cat, pats in table.items()}
    for side, table in (("keep", KEEP), ("drop", DROP))
}

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
    """Match the KEEP and DROP cue grammars against a fact."""
    keep = tuple(c for c, rx in _COMPILED["keep"].items() if rx.search(text))
    drop = tuple(c for c, rx in _COMPILED["drop"].items() if rx.search(text))
    return RubricScore(keep, drop)


_STRONG = frozenset({"preference", "constraint", "plan"})


def rubric_decision(score: RubricScore, level: str | None = None, bonus: int = 0) -> bool:
    """Store or not: plain rubric when ``level`` is None, else stricter as the bank fills.

    ``bonus`` (context-aware gates) adds support for a fact whose topic recurs in recent sessions.
    """
    m = score.margin + bonus
    if level is None:
        return m >= 1
    if level == "vacant":  # plenty of room: keep anything plausibly in a KEEP category
        return m >= 1 or (bool(score.keep) and m >= 0) or (not score.drop and bonus > 0)
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
    words = set(content_words(text))
    return sum(1 for s in summaries if words & set(content_words(s)))
