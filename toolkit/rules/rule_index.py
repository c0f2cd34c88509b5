"""BM25 retrieval over rules (behaviour + conditions + exceptions), so resolution scales.

Terms are content stems plus ``@concept`` tokens from the resolution lexicon, so "be more
detailed" finds "keep answers concise". Ties break by rule id, so results never depend on the
order of the library.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

from toolkit.records import Rule
from toolkit.rules.resolution_cues import concept_of, index_terms, term_weight


def rule_text(rule: Rule) -> str:
    """The text a rule is indexed by."""
    return " ".join([rule.behavior, *rule.conditions, *rule.exceptions])


@dataclass
class RuleIndex:
    """An Okapi BM25 index over a library's rules."""

    k1: float = 1.2
    b: float = 0.75

    def fit(self, rules: Sequence[Rule]) -> RuleIndex:
        """Index ``rules``; returns self."""
        self.rules_ = list(rules)
        self.docs_ = [Counter(index_terms(rule_text(r))) for r in self.rules_]
        self.lengths_ = [sum(d.values()) for d in self.docs_]
        self.avglen_ = (sum(self.lengths_) / len(self.lengths_)) if self.lengths_ else 0.0
        df: Counter = Counter()
        for d in self.docs_:
            df.update(d.keys())
        n = len(self.docs_)
        self.idf_ = {t: math.log(1.0 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        return self

    def scores(self, query: str) -> list[float]:
        """BM25 score of every rule for ``query`` (weighted by term strength)."""
        q = Counter(index_terms(query))
        out = []
        for d, length in zip(self.docs_, self.lengths_, strict=True):
            s = 0.0
            norm = self.k1 * (1 - self.b + self.b * length / (self.avglen_ or 1.0))
            for t in q:
                tf = d.get(t, 0)
                if tf:
                    s += term_weight(t) * self.idf_[t] * tf * (self.k1 + 1) / (tf + norm)
            out.append(s)
        return out

    def search(self, query: str, k: int = 8) -> list[tuple[Rule, float]]:
        """The top ``k`` rules with a positive score, best first (ties by id)."""
        sc = self.scores(query)
        ranked = sorted(
            ((r, s) for r, s in zip(self.rules_, sc, strict=True) if s > 0),
            key=lambda rs: (-round(rs[1], 9), rs[0].id),
        )
        return ranked[:k]


@cache
def _terms(text: str) -> frozenset[str]:
    return frozenset(index_terms(text))


@cache
def background_df() -> tuple[int, dict[str, int]]:
    """Document frequencies of terms over the distractor grammar (a generic rule corpus)."""
    from toolkit.rules.distractors import distractor_pool

    df: Counter = Counter()
    pool = distractor_pool()
    for r in pool:
        df.update(_terms(rule_text(r)))
    return len(pool), dict(df)


@dataclass(frozen=True)
class TermWeights:
    """Term informativeness: lexicon strength x IDF over a background corpus plus the library."""

    n: int
    df: dict[str, int]
    #: memo of each term's weight and of each term set's total (the weights never change once
    #: built, so the memo returns exactly what a fresh computation would)
    _memo: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def for_rules(cls, rules: Sequence[Rule]) -> TermWeights:
        """Weights for resolving against ``rules`` (the library adds to the background counts)."""
        n, bg = background_df()
        df = Counter(bg)
        for r in rules:
            df.update(_terms(rule_text(r)))
        return cls(n + len(rules), dict(df))

    def __call__(self, term: str) -> float:
        hit = self._memo.get(term)
        if hit is None:
            idf = math.log((self.n + 1) / (self.df.get(term, 0) + 1)) + 1.0
            hit = self._memo[term] = term_weight(term) * idf
        return hit

    def total(self, terms: frozenset[str]) -> float:
        """The exactly rounded sum of the weights of ``terms`` (memoised per term set)."""
        hit = self._memo.get(terms)
        if hit is None:
            hit = self._memo[terms] = math.fsum(self(x) for x in terms)
        return hit


@cache
def _default_total(terms: frozenset[str]) -> float:
    return math.fsum(term_weight(x) for x in terms)


def overlap(query: str, text: str, weights: TermWeights | None = None) -> float:
    """Weighted F-measure of the terms ``query`` and ``text`` share (0..1)."""
    q, t = _terms(query), _terms(text)
    if not q or not t:
        return 0.0
    w = weights or term_weight
    shared = q & t
    # a concept shared only through a word already shared literally is the same evidence twice
    literal = {concept_of(x) for x in shared if not x.startswith("@")}
    # math.fsum: exactly rounded, so the result does not depend on the sets' (hash-seeded) order
    common = math.fsum(w(x) * (0.5 if x.startswith("@") and x[1:] in literal else 1.0)
                       for x in shared)
    if common == 0:
        return 0.0
    # the totals are memoised per term set (a library's rules and the distractor pool are
    # compared with many corrections): the same exactly rounded sums, computed once
    if weights is None:
        pq, pt = common / _default_total(q), common / _default_total(t)
    else:
        pq, pt = common / weights.total(q), common / weights.total(t)
    return 2 * pq * pt / (pq + pt)
