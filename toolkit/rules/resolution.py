"""Rule resolution: reconcile a correction with the rule library (reuse/revise/replace/add/retract).

Two methods side by side, chosen by ``model.is_offline``:

- offline: BM25 retrieval of candidate rules, the resolution cue grammar, and a concept
  lexicon that spots a changed requirement (e.g. concise -> detailed) give a reading
  (:func:`resolve_offline`); the learned operation and target models of
  :mod:`toolkit.rules.resolution_model` weigh it with embedding and cue features and decide
  (:func:`resolve` offline), abstaining to ``unknown`` below their operating point;
- LLM: our own prompt (``toolkit/prompts/resolution.md``) with structured output.

Both share the same guard rails: every update is quoted from the user's words, retraction
needs an explicit retraction, ``add`` needs a requirement not yet covered; an invalid proposal
is returned once for revision, then dropped. An ambiguous target triggers one retry with up to
five exact excerpts from the same session.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from toolkit.llm.gateway import ChatModel, Outcome, StructuredRequest
from toolkit.llm.prompts import load_prompt
from toolkit.paper import fixtures_dir
from toolkit.records import ResolutionInput, ResolutionOutput, Rule, Update
from toolkit.rules.library import Change
from toolkit.rules.resolution_cues import (
    CHANGE_TIME,
    CONTRAST,
    DIRECTIVE,
    NEGATION,
    RETRACT,
    STOP,
    SegmentCues,
    concept_of,
    content_stems,
    index_terms,
    segment_cues,
    split_segments,
    stance,
    stem,
    strip_clauses,
    term_weight,
    values,
    words,
)
from toolkit.rules.resolution_eval import (
    ResolutionGold,
    load_cases,
)
from toolkit.rules.resolution_semantic import SemanticParams
from toolkit.rules.resolution_semantic import check as semantic_check
from toolkit.rules.rule_index import RuleIndex, TermWeights, overlap, rule_text
from toolkit.text import load_table

_T = load_table("resolution/updates")  # toolkit/resources/resolution/updates.yaml
_CONTEXT_SENTENCE = load_table("resolution/cues")["context_sentence"]
_CLAUSE_MARK = load_table("resolution/cues")["clause_mark"]

Op = Literal["reuse", "revise", "replace", "add", "retract"]
OPS: tuple[str, ...] = ("reuse", "revise", "replace", "add", "retract")
#: when two updates hit one rule, the stronger one wins
_STRENGTH = {"reuse": 0, "revise": 1, "replace": 2, "retract": 3, "add": 0}

TOP_K = 10  #: candidates retrieved per query, plus sqrt(library size)
MATCH = 0.26  #: overlap at which a rule expresses the same requirement family
REUSE = 0.40  #: overlap at which a rule already says what the clause asks (no cue needed)
COVER = 0.55  #: overlap at which an ``add`` duplicates an existing rule
PARAPHRASE = 0.75  #: share of a rule's stems met (by stem or concept) for a paraphrased reuse
AMBIGUOUS = 0.04  #: two candidates this close are ambiguous
MAX_EXCERPTS = 5  #: session excerpts retrieved for an ambiguous target


@dataclass(frozen=True)
class Proposal:
    """One proposed library update, grounded in an exact quote of the correction."""

    op: str
    target: str | None
    quote: str
    behavior: str | None = None
    scope: str | None = None
    conditions: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()

    def update(self) -> Update:
        """The DESIGN §3 update record."""
        return Update(op=self.op, target=self.target)  # type: ignore[arg-type]

    def change(self) -> Change:
        """The library change this proposal asks for (see :meth:`RuleLibrary.apply`)."""
        keep = self.op in ("revise", "replace", "add")
        return Change(
            op=self.op,
            target=self.target,
            behavior=self.behavior if keep else None,
            scope=self.scope if keep else None,
            conditions=self.conditions if keep else None,
            exceptions=self.exceptions if keep else None,
            quotes=(self.quote,),
        )


@dataclass
class Resolution:
    """The outcome for one correction: proposals, retrieved candidates, and what happened."""

    id: str
    proposals: list[Proposal] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    excerpts: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    retried: bool = False
    status: Literal["ok", "unknown"] = "ok"

    def output(self) -> ResolutionOutput:
        """The DESIGN §3 output record (``updates: null`` when the answer is unknown)."""
        if self.status == "unknown":
            return ResolutionOutput(id=self.id, status="unknown", updates=None)
        return ResolutionOutput(id=self.id, updates=[p.update() for p in self.proposals])


# -- retrieval -----------------------------------------------------------------------------------
def top_k(n_rules: int, k: int = TOP_K) -> int:
    """How many candidates to retrieve per query: grows slowly with the library."""
    return k + int(math.sqrt(n_rules))


def retrieve_candidates(
    record: ResolutionInput, index: RuleIndex | None = None, k: int = TOP_K
) -> list[Rule]:
    """Rules retrieved for the whole correction and for each of its clauses (union, ranked)."""
    index = index or RuleIndex().fit(record.library)
    k = top_k(len(record.library), k)
    seen: dict[str, tuple[int, Rule]] = {}
    queries = [record.correction, *split_segments(record.correction)]
    for qi, q in enumerate(queries):
        for rank, (rule, _) in enumerate(index.search(q, k)):
            key = rank * 10 + min(qi, 9)
            if rule.id not in seen or key < seen[rule.id][0]:
                seen[rule.id] = (key, rule)
    ranked = [r for _, r in sorted(seen.values(), key=lambda kr: (kr[0], kr[1].id))]
    # the semantic layer: rules nearest by sentence vectors (a restatement with no shared word)
    from toolkit.rules.resolution_semantic import nearest_rules

    have = {r.id for r in ranked}
    return ranked + [r for r in nearest_rules(record, k) if r.id not in have]


def session_excerpts(record: ResolutionInput, query: str, n: int = MAX_EXCERPTS) -> list[str]:
    """Up to ``n`` exact sentences from the session context that share terms with ``query``."""
    if not record.context:
        return []
    sents: list[tuple[float, int, str]] = []
    order = 0
    for m in record.context:
        for s in _CONTEXT_SENTENCE.findall(m.content):
            s = s.strip()
            if len(s) < 3:
                continue
            score = overlap(query, s) if query else 0.0
            sents.append((score, order, s))
            order += 1
    # the most related first; the most recent breaks ties (people refer back to what just happened)
    ranked = sorted(sents, key=lambda t: (-t[0], -t[1]))
    picked = [s for sc, _, s in ranked if sc > 0][:n]
    if not picked:
        picked = [s for _, _, s in sorted(sents, key=lambda t: -t[1])][: min(2, n)]
    return picked


# -- offline method ------------------------------------------------------------------------------
#: a text's stance, memoised: the grammar compares each clause with every candidate rule, so the
#: same rule texts are read again and again (the dicts are shared: read, never changed)
_stance = lru_cache(maxsize=1 << 16)(stance)


def _conflicts(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` take opposite poles of one concept (tabs vs spaces)."""
    ca, cb = _stance(a), _stance(b)
    return any(ca[c] and cb[c] and not (ca[c] & cb[c]) for c in set(ca) & set(cb))


def _agrees(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` ask for the same pole of a two-pole concept in different words
    ("short" ~ "concise"; one shared word is not a paraphrase)."""
    ca, cb = _stance(a), _stance(b)
    same = {c for c in set(ca) & set(cb) if ca[c] and ca[c] == cb[c]}
    if not same:
        return False
    literal = {concept_of(x) for x in set(content_stems(a)) & set(content_stems(b))}
    return bool(same - literal)


_TRIGGER = _T["trigger"]


def _other_trigger(cues: SegmentCues, rule: Rule) -> bool:
    """The rule's wording carries its own trigger ("ask before installing packages") and the
    clause names a different one ("before deleting files"): a new rule, not a revision."""
    m = _TRIGGER.search(rule.behavior)
    if not m or not cues.conditions:
        return False
    core = rule.behavior[: m.start()] + rule.behavior[m.end() :]
    if len({t for t in content_stems(core) if term_weight(t) >= 1.0}) > 1:
        return False  # the rule is about its own object ("run the integration tests")
    own = {t for t in content_stems(m.group(0)) if term_weight(t) >= 1.0}
    new = {t for c in cues.conditions for t in content_stems(c) if term_weight(t) >= 1.0}
    return bool(own) and bool(new) and not (own & new)


def _evidence(clause: str, rule: Rule, text: str | None = None) -> int:
    """Independent pieces of shared evidence: shared stems, plus concepts met through
    different words (one shared word such as "explain" is not a shared requirement)."""
    ct, rt = set(index_terms(clause)), set(index_terms(text or rule_text(rule)))
    shared = ct & rt
    literal = {concept_of(x) for x in shared if not x.startswith("@")}
    same_slot = bool(values(clause)) and bool(values(text or rule_text(rule)))  # "100" vs "79"
    return same_slot + sum(1 for x in shared if not x.startswith("@") or x[1:] not in literal)


def _rejected_in_rule(text: str, rule: Rule) -> bool:
    """ "X instead of Y" / "Y -> X" where the rejected Y is worded in the rule: a replacement."""
    # the dropped value is named literally ("requests" the library, not "request a review")
    rt = {w for w in words(rule.behavior) if w not in STOP}
    # values the rule itself rejects ("pathlib over os.path") are not being dropped
    rt -= {w for m in _REJECTED.finditer(rule.behavior) for w in words(m.group("old"))}
    for m in _REJECTED.finditer(text):
        got = [w for w in words(m.group("old")) if w not in STOP and term_weight(stem(w)) >= 1.0]
        if got and all(t in rt for t in got[:2]):
            return True
    return False


_REJECTED = _T["rejected"]


def _negation_hits(text: str, rule: Rule, cues: SegmentCues) -> bool:
    """Whether what the negation governs ("never hardcode API keys") is what the other side
    is about; a "never X; do Y" clause about another X does not flip the rule."""
    m = NEGATION.search(text)
    if m is None:
        return True
    span = _CLAUSE_MARK.split(text[m.end() :], maxsplit=1)[0]
    other = cues.behavior if text is rule.behavior else rule_text(rule)
    return bool(set(index_terms(span)) & set(index_terms(other)))


def _negated(text: str) -> bool:
    return bool(NEGATION.search(text))


def _covered(clause: str, existing: Sequence[str]) -> bool:
    return any(overlap(clause, e) >= 0.5 for e in existing)


def _new_applicability(cues: SegmentCues, rule: Rule) -> bool:
    """Does the clause bring a scope, condition or exception the rule does not have yet?"""
    if cues.project and rule.scope == "global":
        return True
    if cues.global_scope and rule.scope.startswith("project"):
        return True
    have = [*rule.conditions, *rule.exceptions]
    if any(not _covered(e, have) for e in cues.exceptions):
        return True
    own = _TRIGGER.search(rule.behavior)
    if (
        cues.restatement
        and own
        and all(c.split()[0].lower() == own.group(1).lower() for c in cues.conditions if c.split())
    ):
        return False  # "check it builds before you hand it over, like we agreed": its own trigger
    # a condition the rule's own wording already carries ("when updating branches") is not new
    rt = set(content_stems(rule_text(rule)))
    return any(
        not _covered(c, have)
        and (_contained(c, rule_text(rule)) < 0.6 or any(not _stem_in(t, rt) for t in _strong(c)))
        for c in cues.conditions
    )


def _strong(text: str) -> list[str]:
    """Content stems of ``text`` that carry meaning on their own (not weak lexicon words)."""
    return [t for t in content_stems(text) if term_weight(t) >= 1.0]


def _stem_in(term: str, stems: set[str]) -> bool:
    """``term`` is among ``stems``, allowing for stemmer slips ("updat" ~ "update")."""
    return term in stems or any(len(t) >= 5 and len(term) >= 5 and t[:5] == term[:5] for t in stems)


def _contained(clause: str, text: str) -> float:
    """Weighted share of the clause's terms that ``text`` contains."""
    ct, tt = set(index_terms(clause)), set(index_terms(text))
    total = sum(term_weight(t) for t in ct)
    return sum(term_weight(t) for t in ct & tt) / total if total else 0.0


def _rule_coverage(clause: str, rule: Rule, w: TermWeights | None) -> float:
    """Weighted share of the rule's terms that the clause mentions (is it about the same thing?)."""
    rt = {t for t in index_terms(rule_text(rule)) if not t.startswith("@")}
    ct = set(index_terms(clause))
    weight = w or term_weight
    total = sum(weight(t) for t in rt)
    return sum(weight(t) for t in rt & ct) / total if total else 0.0


def _scope_of(cues: SegmentCues, rule: Rule | None) -> str:
    if cues.global_scope:
        return "global"
    if cues.project:
        return "project" if cues.project == "this" else f"project:{cues.project}"
    return rule.scope if rule is not None else "global"


def _match_scores(
    cues: SegmentCues, cands: Sequence[Rule], extra: str, w: TermWeights | None = None
) -> list[tuple[float, Rule]]:
    query = (cues.behavior + " " + extra).strip()
    whole = (cues.text + " " + extra).strip()
    # a scope change, exception or widening, or "the X rule", names the rule by its topic
    refers = bool(
        cues.project
        or cues.global_scope
        or cues.exceptions
        or cues.widen
        or _NAMES_A_RULE.search(cues.text)
    )
    scored = []
    for r in cands:
        rt = rule_text(r) + (" " + r.scope.split(":", 1)[1] if ":" in r.scope else "")
        s = 0.7 * overlap(query, rt, w) + 0.3 * overlap(whole, rt, w)
        short = (cues.exceptions or cues.conditions) and len(content_stems(cues.behavior)) <= 1
        if short:
            # "Docstrings aren't needed for tests": the subject alone names the rule
            s = max(s, 0.5 * _contained(cues.behavior, r.behavior) + 0.3 * overlap(whole, rt, w))
        if _conflicts(cues.text, r.behavior):
            # a changed requirement names the same concept with the other pole; without a
            # change cue a paraphrase of the same pole ("short" ~ "brief") is the better sign
            s += (
                0.15
                if (cues.replacement or cues.lasting or _agrees(cues.text, r.behavior))
                else 0.1
            )
        elif _agrees(cues.text, r.behavior):
            s += 0.15  # a paraphrase names the same pole in other words ("short" ~ "concise")
        elif _rejected_in_rule(cues.text, r):
            s += 0.15  # "httpx instead of requests": the rule names the value being dropped
        elif (
            not (short or refers)
            and _evidence(query, r, rt) < 2
            and len(set(content_stems(rt))) > 1
        ):
            s *= 0.5  # one shared word ("explain", "keyword") is not the same requirement
        scored.append((s, r))
    return sorted(scored, key=lambda sr: (-round(sr[0], 9), sr[1].id))


_POSITIVE_SWITCH = _T["positive_switch"]
_REFERENTIAL = _T["referential"]
_NAMES_A_RULE = _T["names_a_rule"]
_IN_PLACE = _T["in_place"]


def _is_referential(cues: SegmentCues) -> bool:
    return len(content_stems(cues.behavior)) <= 3 and bool(
        _REFERENTIAL.search(cues.text)
    )


_ONLY = _T["only"]


_CEASE = _T["cease"]
_ALTERNATIVE = _T["alternative"]


def _ceases(cues: SegmentCues, rule: Rule) -> bool:
    """ "Stop adding X" / "no more X" against a rule that requires X withdraws the requirement
    (a retraction); a replacement needs a new requirement in its place ("use Y instead")."""
    m = _CEASE.search(cues.text)
    if m is None or _ALTERNATIVE.search(cues.text) or _negated(rule.behavior):
        return False
    if cues.restatement or cues.conditions or cues.exceptions or cues.project or cues.widen:
        return False
    if _agrees(cues.text, rule.behavior) or _conflicts(cues.text, rule.behavior):
        return False  # "stop rambling" vs "keep it concise" restates; a pole flip changes it
    rest = cues.text[m.end() :]
    if content_stems(rest) and (DIRECTIVE.search(rest) or _ONLY.search(rest.lstrip(" ,;:-"))):
        return False  # "stop X; only do Y": a new requirement takes its place
    what = {t for t in index_terms(m.group("what")) if not t.startswith("@")}
    return len(what & set(index_terms(rule.behavior))) >= 1


def _paraphrase(clause: str, text: str) -> float:
    """Share of ``text``'s meaning-bearing stems that ``clause`` meets by the same stem or by a
    lexicon concept reached in other words ("reference pages" ~ "documentation")."""
    want = set(_strong(text))
    if not want:
        return 0.0
    have = set(content_stems(clause))
    met = {concept_of(t) for t in have} - {None}
    hit = sum(1 for t in want if _stem_in(t, have) or (concept_of(t) or "") in met)
    return hit / len(want)


def _new_core(cues: SegmentCues, rule: Rule) -> bool:
    """The clause's requirement, without its conditions, asks for things the rule does not name
    ("add an index hint comment" vs "explain code with comments"): a new rule, not a revision."""
    core = strip_clauses(cues.behavior, cues.conditions + cues.exceptions)
    rt = set(content_stems(rule_text(rule)))
    fresh = [t for t in dict.fromkeys(_strong(core)) if not _stem_in(t, rt)]
    return len(fresh) >= 3 and _paraphrase(core, rule.behavior) <= 0.5


def _differs(cues: SegmentCues, rule: Rule) -> bool:
    """Clause and rule each name things the other lacks ("a blank line before a return
    statement" vs "one blank line between methods"): related wording, another requirement."""
    core = strip_clauses(cues.behavior, cues.conditions + cues.exceptions)
    have, want = set(content_stems(core)), set(content_stems(rule.behavior))
    cm = {concept_of(t) for t in have} - {None}
    rm = {concept_of(t) for t in want} - {None}
    fresh_c = [t for t in set(_strong(core)) if not _stem_in(t, want) and concept_of(t) not in rm]
    fresh_r = [
        t for t in set(_strong(rule.behavior)) if not _stem_in(t, have) and concept_of(t) not in cm
    ]
    return len(fresh_c) >= 2 and len(fresh_r) >= 1


_REMARK = _T["remark"]


def _narrowing(cues: SegmentCues, rule: Rule) -> str | None:
    """The restriction an "Only <do X> <for Y>" clause adds to ``rule`` (None if it adds none)."""
    if not _ONLY.search(cues.text) or cues.temporary:
        return None
    rt = set(content_stems(rule_text(rule)))
    extra = [t for t in content_stems(cues.text) if t not in rt and term_weight(t) >= 1.0]
    return cues.text.strip(" .") if extra else None


def _add_proposal(cues: SegmentCues, q: str) -> Proposal:
    """A new rule built from the correction's own behaviour, scope, conditions and exceptions."""
    return Proposal("add", None, q, behavior=cues.behavior, scope=_scope_of(cues, None),
                    conditions=cues.conditions, exceptions=cues.exceptions)


def _revision(cues: SegmentCues, rule: Rule, quote: str) -> Proposal:
    """A revise proposal: the rule's requirement with the clause's scope/conditions/exceptions."""
    return Proposal(
        "revise",
        rule.id,
        quote,
        behavior=rule.behavior,
        scope=_scope_of(cues, rule),
        conditions=tuple(dict.fromkeys([*rule.conditions, *cues.conditions])),
        exceptions=tuple(dict.fromkeys([*rule.exceptions, *cues.exceptions])),
    )


def _decide(
    cues: SegmentCues, cands: Sequence[Rule], extra: str = "", w: TermWeights | None = None
) -> tuple[list[Proposal], bool]:
    """Offline decision for one clause; returns (proposals, target_ambiguous)."""
    if cues.temporary and not cues.retraction:
        return [], False
    if cues.temporary and cues.retraction:
        return [], False
    scored = _match_scores(cues, cands, extra, w)
    best = scored[0] if scored else (0.0, None)
    ambiguous = (
        len(scored) > 1 and scored[0][0] >= MATCH and scored[0][0] - scored[1][0] < AMBIGUOUS
    )
    rule = best[1] if best[0] >= MATCH else None
    second = scored[1][0] if len(scored) > 1 else 0.0
    if best[1] is not None and cues.replacement and _conflicts(cues.text, best[1].behavior):
        # "X rather than Y": only rules holding the other pole compete for the change
        rivals = [sc for sc, r in scored[1:] if _conflicts(cues.text, r.behavior)]
        second = rivals[0] if rivals else 0.0
    if (
        rule is None
        and best[1] is not None
        and best[0] >= 0.6 * MATCH
        and best[0] - second >= 0.05
        # a restatement asks for the same pole; one that clashes is about another rule
        and not (cues.restatement and _conflicts(cues.text, best[1].behavior))
        and (
            cues.restatement
            or _conflicts(cues.text, best[1].behavior)
            or _agrees(cues.text, best[1].behavior)
            or (
                (cues.replacement or cues.exceptions or cues.project)
                and _evidence(cues.behavior, best[1]) >= 2
            )
        )
    ):
        # "Again - annotate the types" / "asyncio rather than blocking calls": the clause names
        # the rule's topic or its other pole in different words
        rule = best[1]
    if rule is None and _is_referential(cues):
        ambiguous = True
    q = cues.text
    if cues.retraction and rule is not None and _POSITIVE_SWITCH.search(cues.behavior):
        return [
            Proposal("replace", rule.id, q, behavior=cues.behavior, scope=_scope_of(cues, rule))
        ], ambiguous
    if cues.retraction:
        if rule is None:
            # "drop the rule about X" names the rule's topic, not its wording: score whole text
            whole = sorted(
                ((overlap(cues.text + " " + extra, rule_text(r), w), r) for r in cands),
                key=lambda sr: (-round(sr[0], 9), sr[1].id),
            )
            if whole:
                top, nxt = whole[0][0], (whole[1][0] if len(whole) > 1 else 0.0)
                if top >= 0.1 and top - nxt >= 0.05:
                    rule = whole[0][1]
        return ([Proposal("retract", rule.id, q)] if rule else []), ambiguous
    if not cues.directive or _REMARK.search(cues.text):
        # "Nobody reads long replies." is a remark about a rule, not a new requirement
        if rule is not None and cues.restatement:
            return [Proposal("reuse", rule.id, q)], ambiguous  # "Ugh, X again." is a restatement
        return [], False
    if rule is None and not content_stems(cues.behavior):
        return [], ambiguous  # "I need that every time": nothing new to store on its own
    if rule is None and cues.restatement and cues.text.rstrip().endswith("?"):
        return [], ambiguous  # "Why are you still doing X?": a complaint, not a new rule
    if rule is None:
        return [_add_proposal(cues, q)], ambiguous
    if cues.exceptions and _new_applicability(cues, rule) and not cues.replacement:
        return [_revision(cues, rule, q)], ambiguous
    if cues.widen and not cues.replacement and not _conflicts(cues.text, rule.behavior):
        # "X too, not just Y": the same requirement reaches further
        return [_revision(cues, rule, q)], ambiguous
    if cues.conditions and _other_trigger(cues, rule) and not cues.replacement:
        return [_add_proposal(cues, q)], ambiguous
    flipped = (
        not _agrees(cues.text, rule.behavior)
        and _negated(cues.behavior) != _negated(rule.behavior)
        and _negation_hits(cues.behavior if _negated(cues.behavior) else rule.behavior, rule, cues)
        and best[0] >= MATCH
        and not cues.restatement
        and not cues.exceptions
        and not cues.conditions
        and not cues.project
        and not cues.global_scope
        and not CONTRAST.search(cues.behavior)
        and not CONTRAST.search(rule.behavior)
    )
    if _ceases(cues, rule):
        return [Proposal("retract", rule.id, q)], ambiguous
    vc, vr = values(cues.behavior), values(rule_text(rule))
    new_value = bool(vc) and bool(vr) and not (vc & vr)
    changing = (
        cues.replacement
        or _conflicts(cues.text, rule.behavior)
        or flipped
        or new_value
        or _rejected_in_rule(cues.text, rule)
    )
    explicit_switch = _rejected_in_rule(cues.text, rule) and CHANGE_TIME.search(cues.text)
    if changing and cues.conditions and _new_applicability(cues, rule) and not explicit_switch:
        # "when the file is short, show it whole instead": the rule stands, with an exception
        return [_revision(cues, rule, q)], ambiguous
    if (
        not changing
        and CHANGE_TIME.search(cues.text)
        and not cues.restatement
        and not _new_applicability(cues, rule)
        and best[0] < 0.9
        and _rule_coverage(cues.behavior, rule, w) >= 0.4
    ):
        changing = True  # "docstrings in Google style going forward" changes the stored rule
    if changing:
        return [
            Proposal(
                "replace",
                rule.id,
                q,
                behavior=cues.behavior,
                scope=_scope_of(cues, rule),
                conditions=cues.conditions,
                exceptions=cues.exceptions,
            )
        ], ambiguous
    if _new_applicability(cues, rule) and not (cues.conditions and _new_core(cues, rule)):
        return [_revision(cues, rule, q)], ambiguous
    narrowed = _narrowing(cues, rule)
    if narrowed is not None:
        # "Only add examples to docstrings of public functions": the same rule, narrowed
        return [_revision(replace(cues, conditions=(*cues.conditions, narrowed)), rule, q)], (
            ambiguous
        )
    if (
        best[0] < REUSE
        and not cues.restatement
        and not extra
        and not _agrees(q, rule.behavior)
        and _paraphrase(cues.behavior, rule.behavior) < PARAPHRASE
    ) or (
        best[0] < 0.6
        and not cues.restatement
        and not extra
        and not _agrees(q, rule.behavior)
        and _differs(cues, rule)
    ):
        # related but not the same requirement: a rule is reused only when it already says this
        return [_add_proposal(cues, q)], ambiguous
    return [Proposal("reuse", rule.id, q)], ambiguous


def _segments(correction: str) -> list[SegmentCues]:
    """Clause cues, with message-level duration applied and bare refinements joined to the
    clause they refine."""
    raw = split_segments(correction) or [correction]
    cues = [segment_cues(s) for s in raw]
    lasting_any = any(c.lasting for c in cues)
    # "X. I've told you this twice now.": a clause of pure friction makes the message a restatement
    if any(c.restatement and not content_stems(c.behavior) for c in cues):
        cues = [replace(c, restatement=True) for c in cues]
    temporary_any = any(c.temporary for c in cues)
    out: list[SegmentCues] = []
    for c in cues:
        if not content_stems(c.behavior) and (c.conditions or c.exceptions or c.project):
            c = replace(c, behavior=c.text, directive=True)  # a bare refinement: "But only in X."
        if not c.lasting and not c.temporary and temporary_any and not lasting_any:
            c = replace(c, temporary=True)
        out.append(c)
    return out


def _merge(props: list[Proposal]) -> list[Proposal]:
    """One update per target (the strongest), adds deduplicated, order kept."""
    by_target: dict[str, Proposal] = {}
    adds: list[Proposal] = []
    order: list[str] = []
    for p in props:
        if p.target is None:
            if not any(overlap(p.quote, a.quote) >= 0.8 for a in adds):
                adds.append(p)
            continue
        old = by_target.get(p.target)
        if old is None:
            order.append(p.target)
            by_target[p.target] = p
        elif _STRENGTH[p.op] > _STRENGTH[old.op]:
            by_target[p.target] = p
    return [by_target[t] for t in order] + adds


def validate(
    p: Proposal, record: ResolutionInput, weights: TermWeights | None = None
) -> str | None:
    """Why a proposal breaks the update constraints (None when it is valid)."""
    ids = {r.id for r in record.library}
    if p.op not in OPS:
        return f"unknown operation {p.op!r}"
    if not p.quote or p.quote not in record.correction:
        return "the quote is not an exact excerpt of the user's correction"
    if p.op == "add":
        if p.target is not None:
            return "add takes no target"
        for r in record.library:
            if (
                overlap(p.behavior or p.quote, rule_text(r), weights) >= COVER
                and not _conflicts(p.quote, r.behavior)
                and _negated(p.behavior or p.quote) == _negated(r.behavior)
            ):
                return f"the requirement is already covered by rule {r.id}; reuse or revise it"
        return None
    if p.target not in ids:
        return f"target {p.target!r} is not a rule in the library"
    if p.op == "retract" and not (RETRACT.search(p.quote.lower()) or _CEASE.search(p.quote)):
        return "rules are removed only on an explicit retraction in the user's words"
    return None


def _repair(p: Proposal, error: str, record: ResolutionInput) -> Proposal | None:
    """The offline revision round: fix what the validator objected to, once."""
    m = re.search(r"covered by rule (\S+);", error)
    if m:
        return Proposal("reuse", m.group(1), p.quote)
    if p.op == "retract" and p.target:
        return None
    return None


def check_and_revise(
    props: list[Proposal], record: ResolutionInput, reviser=None, weights: TermWeights | None = None
) -> tuple[list[Proposal], list[str]]:
    """Validate proposals; send invalid ones back once (``reviser``), drop what stays invalid."""
    kept, dropped = [], []
    for p in props:
        err = validate(p, record, weights)
        if err is None:
            kept.append(p)
            continue
        fixed = (reviser or _repair)(p, err, record)
        err2 = validate(fixed, record, weights) if fixed is not None else "no revision offered"
        if fixed is not None and err2 is None:
            kept.append(fixed)
        else:
            dropped.append(f"{p.op} {p.target}: {err}")
    return _merge(kept), dropped


def resolve_offline(
    record: ResolutionInput, *, index: RuleIndex | None = None, k: int = TOP_K,
    params: SemanticParams | None = None,
) -> Resolution:
    """The offline resolver for one correction (deterministic, order-independent): the cue
    grammar's proposals, then the semantic checks (:mod:`toolkit.rules.resolution_semantic`)
    with thresholds chosen on development cases; an untrusted reuse becomes ``unknown``."""
    res = resolve_grammar(record, index=index, k=k)
    return apply_semantic(record, res, params or semantic_params())


def apply_semantic(record: ResolutionInput, res: Resolution, params: SemanticParams) -> Resolution:
    """The semantic checks on a grammar resolution (a new object; ``res`` is not changed)."""
    chk = semantic_check(record, res.proposals, params)
    out = replace(res, proposals=list(chk.proposals), dropped=[*res.dropped, *chk.notes])
    if chk.abstain:
        out.status = "unknown"
        out.proposals = []
    return out


def resolve_grammar(
    record: ResolutionInput, *, index: RuleIndex | None = None, k: int = TOP_K
) -> Resolution:
    """The cue grammar's resolution of one correction (before the semantic checks)."""
    index = index or RuleIndex().fit(record.library)
    w = TermWeights.for_rules(record.library)
    cands = retrieve_candidates(record, index, k)
    res = Resolution(id=record.id, candidates=[r.id for r in cands])
    props: list[Proposal] = []
    for cues in _segments(record.correction):
        refines = bool(cues.conditions or cues.exceptions or cues.project)
        seg_cands = [r for r, _ in index.search(cues.text, top_k(len(record.library), k))] or cands
        pool = list({r.id: r for r in [*seg_cands, *cands]}.values())
        out, ambiguous = _decide(cues, pool, "", w)
        if ambiguous and record.context:
            ex = session_excerpts(record, cues.text)
            res.excerpts.extend(e for e in ex if e not in res.excerpts)
            res.retried = True
            extra = " ".join(ex)
            more = [
                r for r, _ in index.search(cues.text + " " + extra, top_k(len(record.library), k))
            ]
            pool = list({r.id: r for r in [*pool, *more]}.values())
            res.candidates.extend(r.id for r in more if r.id not in res.candidates)
            out, _ = _decide(cues, pool, extra, w)
        prev = [p for p in props if p.target is not None and p.op in ("reuse", "revise")]
        elaborates = _is_referential(cues) or (
            len(content_stems(cues.behavior)) <= 2 and not cues.lasting
        )
        if prev and elaborates and all(p.op == "add" for p in out) and out:
            # "Keep it under 72": the pronoun points at the rule the message is already about
            tgt = next(r for r in record.library if r.id == prev[-1].target)
            out, _ = _decide(cues, [tgt], tgt.behavior, w)
        if prev and out and all(p.op == "add" for p in out):
            tgt = next(r for r in record.library if r.id == prev[-1].target)
            if _paraphrase(tgt.behavior, cues.behavior) >= PARAPHRASE:
                # "Why no rationale again? Tell me the reasoning each time.": the second
                # clause says the rule just named again, in other words
                out = [Proposal("reuse", tgt.id, cues.text)]
        if (
            refines
            and prev
            and all(p.op == "add" for p in out)
            and len(content_stems(strip_clauses(cues.text, cues.conditions + cues.exceptions))) <= 1
        ):
            # a bare refinement of the clause before it ("Use black. But not in migrations.")
            tgt = next(r for r in record.library if r.id == prev[-1].target)
            out = [_revision(cues, tgt, cues.text)]
        done = {p.target for p in props if p.op in ("replace", "revise", "retract")}
        if len(out) == 1 and out[0].op == "reuse" and out[0].target in done and cues.lasting:
            # one message does not both change a rule and restate it: this clause is new
            out = [
                Proposal(
                    "add",
                    None,
                    cues.text,
                    behavior=cues.behavior,
                    scope=_scope_of(cues, None),
                    conditions=cues.conditions,
                    exceptions=cues.exceptions,
                )
            ]
        if cues.retraction and not out and prev:
            # "X at the end? Scrap that rule.": the retraction points at the rule just named
            out = [Proposal("retract", prev[-1].target, cues.text)]
        props.extend(out)
    for i, p in enumerate(props):
        nxt = props[i + 1] if i + 1 < len(props) else None
        if (
            p.op == "retract"
            and _CEASE.search(p.quote)
            and nxt is not None
            and nxt.op == "add"
            and _IN_PLACE.search(nxt.quote)
        ):
            # "Stop adding X; put Y there instead.": the second clause replaces what stopped
            props[i : i + 2] = [
                Proposal("replace", p.target, nxt.quote, behavior=nxt.behavior, scope=nxt.scope)
            ]
            break
    reuse_from = [p for p in props if p.op == "reuse"]
    if len(reuse_from) > 1:
        # "Where are the units? Every measurement needs its unit.": the bare complaint question
        # is about the rule the fuller clause names, not a second one
        def _bare_question(p: Proposal) -> bool:
            return p.quote.rstrip().endswith("?") and len(content_stems(p.quote)) <= 2

        if any(not _bare_question(p) for p in reuse_from):
            props = [p for p in props if not (p.op == "reuse" and _bare_question(p))]
    if any(p.target is not None for p in props):
        # a short clause next to one that names a rule elaborates it ("SELECT, not select.")
        props = [
            p
            for p in props
            if not (
                p.op == "add"
                and not segment_cues(p.quote).lasting
                and len(content_stems(segment_cues(p.quote).behavior)) <= 2
            )
        ]
    res.proposals, res.dropped = check_and_revise(_merge(props), record, weights=w)
    return res


_SEMANTIC: dict[str, SemanticParams] = {}
#: development case files (``fixtures/resolution/<name>.jsonl``); dev2 holds informal wordings
DEV_CASES: tuple[str, ...] = ("dev", "dev2")


def semantic_params(embedder: str = "minilm") -> SemanticParams:
    """Thresholds of the semantic checks, read off the development cases (cached per process;
    see :func:`toolkit.rules.resolution_semantic.thresholds_from_cases`):
    the 28 development cases in their own 2-rule libraries and grown to 60 rules with related
    distractors; held-out and first-contact cases are never read here."""
    if embedder not in _SEMANTIC:
        from toolkit.rules.resolution_semantic import thresholds_from_cases

        _SEMANTIC[embedder], _ = thresholds_from_cases(development_cases(), embedder)
    return _SEMANTIC[embedder]


def development_cases() -> list[tuple[ResolutionInput, ResolutionGold]]:
    """Development cases at 2 rules and grown to 60 (one shuffled order), for tuning only."""
    from toolkit.rules.distractors import grow_library
    from toolkit.splits import require_role

    d = fixtures_dir() / "resolution"
    require_role(d / "dev.jsonl", "fit")
    require_role(d / "dev_gold.jsonl", "fit")
    out = []
    for name in DEV_CASES:
        require_role(d / f"{name}.jsonl", "fit")
        recs, gold = load_cases(name)
        out += [(r, gold[r.id]) for r in recs]
        out += [(grow_library(r, 60, 0, seed=0), gold[r.id]) for r in recs]
    return out


# -- LLM method ----------------------------------------------------------------------------------
class ProposedUpdate(BaseModel):
    """One update as the model proposes it."""

    model_config = ConfigDict(extra="forbid")
    op: Literal["reuse", "revise", "replace", "add", "retract"]
    target: str | None = Field(default=None, description="id of the affected rule; null for add")
    quote: str = Field(description="exact words from the user's correction that support it")
    behavior: str | None = None
    condition: str | None = None
    exception: str | None = None
    scope: str | None = None


class ResolutionAnswer(BaseModel):
    """The model's structured answer."""

    model_config = ConfigDict(extra="forbid")
    lasting: bool = Field(description="false when the correction only concerns the current task")
    target_unclear: bool = Field(
        default=False, description="true when it is unclear which rule is meant"
    )
    updates: list[ProposedUpdate] = Field(default_factory=list)


def _rules_block(rules: Sequence[Rule]) -> str:
    return "\n".join(json.dumps(r.model_dump(), ensure_ascii=False) for r in rules) or "(none)"


def _messages(record: ResolutionInput, cands: Sequence[Rule], excerpts: Sequence[str]) -> tuple:
    prompt = load_prompt("resolution")
    ex = "\n".join(f"- {e}" for e in excerpts) or "(none)"
    user = prompt.render_user(correction=record.correction, rules=_rules_block(cands), excerpts=ex)
    return ({"role": "system", "content": prompt.system}, {"role": "user", "content": user})


def _to_proposals(ans: ResolutionAnswer) -> list[Proposal]:
    if not ans.lasting:
        return []
    out = []
    for u in ans.updates:
        out.append(
            Proposal(
                u.op,
                u.target if u.op != "add" else None,
                u.quote.strip(),
                behavior=u.behavior,
                scope=u.scope,
                conditions=(u.condition,) if u.condition else (),
                exceptions=(u.exception,) if u.exception else (),
            )
        )
    return out


def resolve_llm(
    records: Sequence[ResolutionInput], model: ChatModel, *, k: int = TOP_K
) -> list[Resolution]:
    """The LLM resolver: retrieve, ask, retry once with excerpts, revise invalid ones once."""
    prompt = load_prompt("resolution")
    results, convos = [], []
    for rec in records:
        cands = retrieve_candidates(rec, k=k)
        results.append(Resolution(id=rec.id, candidates=[r.id for r in cands]))
        convos.append(_messages(rec, cands, []))

    def ask(idx: list[int], msgs: list[tuple], role: str) -> dict[int, Outcome]:
        reqs = [
            StructuredRequest(
                messages=m,
                schema=ResolutionAnswer,
                role=role,
                prompt_version=prompt.version,
                id=records[i].id,
            )
            for i, m in zip(idx, msgs, strict=True)
        ]
        return dict(zip(idx, model.run(reqs, desc="resolution"), strict=True)) if reqs else {}

    first = ask(list(range(len(records))), convos, "resolution")
    answers: dict[int, Outcome] = dict(first)
    # ambiguous target: one retry with up to five exact session excerpts
    amb = [i for i, o in first.items() if o.ok and o.value.target_unclear and records[i].context]
    if amb:
        msgs = []
        for i in amb:
            ex = session_excerpts(records[i], records[i].correction)
            results[i].excerpts, results[i].retried = ex, True
            convos[i] = _messages(
                records[i], [r for r in records[i].library if r.id in results[i].candidates], ex
            )
            msgs.append(convos[i])
        answers.update(ask(amb, msgs, "resolution-retry"))
    # invalid proposals: returned once with the reasons, then dropped
    pending: dict[int, list[str]] = {}
    for i, o in answers.items():
        if not o.ok:
            results[i].status = "unknown"
            continue
        errs = [
            f"{p.op} {p.target}: {e}"
            for p in _to_proposals(o.value)
            if (e := validate(p, records[i]))
        ]
        if errs:
            pending[i] = errs
    if pending:
        idx = sorted(pending)
        msgs = []
        for i in idx:
            fb = (
                "Some proposed updates break the rules: "
                + "; ".join(pending[i])
                + ". Revise the whole answer; drop updates you cannot support."
            )
            msgs.append(
                convos[i]
                + (
                    {"role": "assistant", "content": answers[i].value.model_dump_json()},
                    {"role": "user", "content": fb},
                )
            )
        revised = ask(idx, msgs, "resolution-revise")
        for i in idx:
            if revised[i].ok:
                answers[i] = revised[i]
    for i, o in answers.items():
        if not o.ok:
            continue
        props = _to_proposals(o.value)
        kept = [p for p in props if validate(p, records[i]) is None]
        results[i].dropped = [
            f"{p.op} {p.target}: {validate(p, records[i])}"
            for p in props
            if validate(p, records[i]) is not None
        ]
        results[i].proposals = _merge(kept)
    return results


# -- entry points --------------------------------------------------------------------------------
def resolve(
    records: Sequence[ResolutionInput], model: ChatModel, *, seed: int = 0, k: int = TOP_K
) -> list[Resolution]:
    """Resolve every record with the model's method: offline (``model.is_offline``) the learned
    operation and target models of :mod:`toolkit.rules.resolution_model` over the cue grammar's
    reading (``k`` is the grammar's retrieval depth there), else the LLM."""
    del seed  # both methods are deterministic given their inputs (the gateway seeds LLM calls)
    if model.is_offline:
        from toolkit.rules.resolution_model import resolve_learned

        return resolve_learned(records)
    return resolve_llm(records, model, k=k)


def resolve_records(
    records: list[ResolutionInput], model: ChatModel, *, seed: int = 0
) -> list[ResolutionOutput]:
    """DESIGN §3 resolution outputs for ``prefmem resolve`` (unknowns: ``updates: null``)."""
    return [r.output() for r in resolve(records, model, seed=seed)]
