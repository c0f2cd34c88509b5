"""Cue grammar for rule resolution: tokens, concept lexicon, and update cues in a correction.

Resolution needs cues that admission does not (replacement, restatement, polarity against an
existing rule), so they live here; generic admission cues come from ``toolkit.rules.cues`` when
it is installed and are merged in :func:`correction_cues`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from toolkit.rules.cues import parse_cues
from toolkit.text import load_table

_T = load_table("resolution/cues")  # toolkit/resources/resolution/cues.yaml

_WORD = _T["word_token"]

STOP = _T["stop"]
_SIBILANT_ES = _T["sibilant_es"]
_DOUBLED_ICK = _T["doubled_ick"]

#: common but weak words: present in many rules, so they count little
WEAK = _T["weak"]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix stripper so that ``commits``/``committing``/``commit`` meet."""
    w = word.lower().strip("'-")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) <= 3:
        return w
    for suf, rep, minlen in (
        ("ies", "y", 5),
        ("ing", "", 6),
        ("ed", "", 5),
        ("ly", "", 6),
        ("es", "", 5),
        ("s", "", 4),
    ):
        if w.endswith(suf) and len(w) >= minlen:
            if suf == "es" and not _SIBILANT_ES.search(w):
                continue
            if suf == "s" and w.endswith(("ss", "us")):
                continue
            w = w[: -len(suf)] + rep
            if suf in ("ing", "ed") and len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]
            if suf in ("ing", "ed") and _DOUBLED_ICK.search(w):
                w = w[:-1]  # panicking -> panic, mimicked -> mimic (the k is added to spell it)
            break
    return w


#: multiword names folded into one token before matching
PHRASES: tuple[tuple[re.Pattern, str], ...] = _T["phrases"]


@lru_cache(maxsize=1 << 16)
def _folded(text: str) -> str:
    """``text`` lower-cased with known multiword names folded into one token (memoised: the
    same rules are read against many corrections, and the folding runs every phrase pattern)."""
    low = text.lower()
    for pat, rep in PHRASES:
        low = pat.sub(rep, low)
    return low


def words(text: str) -> list[str]:
    """Lower-cased word tokens (known multiword names folded into one)."""
    return _WORD.findall(_folded(text))


#: concept -> (pole A words, pole B words); words in different poles of one concept conflict
CONCEPTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = _T["concepts"]

#: topic words that name a concept without taking a side ("answer length")
NEUTRAL: dict[str, tuple[str, ...]] = {k: v[0] for k, v in _T["neutral"].items()}

_CONCEPT_OF: dict[str, tuple[str, int]] = {}
for _c, (_a, _b) in CONCEPTS.items():
    for _w in _a:
        _CONCEPT_OF.setdefault(stem(_w), (_c, 0))
    for _w in _b:
        _CONCEPT_OF.setdefault(stem(_w), (_c, 1))
for _c, _ws in NEUTRAL.items():
    for _w in _ws:
        _CONCEPT_OF.setdefault(stem(_w), (_c, -1))


_VALUE = _T["value_token"]
_STANCE_TOKEN = _T["stance_token"]
_SUBJECT = _T["subject_pronoun"]


def values(text: str) -> set[str]:
    """Specific values in ``text``: numbers and code-like tokens (``72``, ``test_<m>.py``)."""
    return {v.lower().strip("./") for v in _VALUE.findall(text) if v.strip("./")}


_NEGATOR = _T["negator"]
_AFFIRM = _T["affirm"]


_FAILS = _T["fails"]


def stance(text: str) -> dict[str, set[int]]:
    """The pole a text asks for per two-pole concept ("skip bullets, write prose" -> prose)."""
    toks = _STANCE_TOKEN.findall(_folded(text))
    asked: dict[str, set[int]] = {}
    rejected: dict[str, set[int]] = {}
    for i, tok in enumerate(toks):
        hit = _CONCEPT_OF.get(stem(tok.strip(".")))
        if not hit or hit[1] < 0 or not CONCEPTS[hit[0]][1]:
            continue
        if i > 0 and toks[i - 1] in _SUBJECT:
            continue  # "the dates you print": a verb, not the pole ("print" vs logging)
        neg = False
        for j in range(i - 1, max(-1, i - 4), -1):
            if _AFFIRM.match(toks[j]):
                break
            if _NEGATOR.match(toks[j]) or (toks[j] == "of" and j > 0 and toks[j - 1] == "instead"):
                neg = True
                break
        if _FAILS.match(" ".join(toks[i + 1 : i + 6])):
            neg = True  # "the terse style isn't working for me"
        (rejected if neg else asked).setdefault(hit[0], set()).add(hit[1])
    out = {c: set(p) for c, p in asked.items()}
    contrastive = bool(CONTRAST.search(text))
    for c, poles in rejected.items():
        if c not in out:
            if contrastive:
                out[c] = {1 - p for p in poles}
        else:
            out[c] -= poles
            if not out[c]:
                out[c] = {1 - p for p in poles}
    return out


def concept_of(stem_: str) -> str | None:
    """The concept a stem belongs to (None when it names none)."""
    hit = _CONCEPT_OF.get(stem_)
    return hit[0] if hit else None


def content_stems(text: str) -> list[str]:
    """Stems of the content words of ``text`` (stopwords dropped; hyphenated words also split)."""
    out = []
    for w in words(text):
        parts = [p for p in w.split("-") if p] if "-" in w.strip("-") else [w]
        out.extend(stem(p) for p in parts if p not in STOP and len(p) > 1 and not p.isdigit())
    return out


def concepts(text: str) -> dict[str, set[int]]:
    """Concepts mentioned in ``text`` and the poles used (0/1; concepts without poles use 0)."""
    out: dict[str, set[int]] = {}
    compounds = [stem(w) for w in words(text) if "-" in w.strip("-") and w not in STOP]
    for s in compounds + content_stems(text):
        hit = _CONCEPT_OF.get(s)
        if hit:
            out.setdefault(hit[0], set()).add(hit[1])
    return out


@lru_cache(maxsize=65536)
def _index_terms(text: str) -> tuple[str, ...]:
    stems = content_stems(text)
    # a hyphenated compound ("commented-out", "kebab-case") is also one term of its own
    low = text.lower()
    compounds = [stem(w) for w in words(text) if "-" in w.strip("-") and w in low]
    return tuple(stems + compounds + [f"@{c}" for c in sorted(concepts(text))])


def index_terms(text: str) -> list[str]:
    """Retrieval terms: content stems plus ``@concept`` tokens."""
    return list(_index_terms(text))


def term_weight(term: str) -> float:
    """How much a matching term says about a shared requirement."""
    if term.startswith("@"):
        return 0.5
    return 0.35 if term in _WEAK_STEMS else 1.0


_WEAK_STEMS = frozenset(stem(w) for w in WEAK)

# -- cue patterns --------------------------------------------------------------------------------

LASTING = _T["lasting"]
TEMPORARY = _T["temporary"]
RETRACT = _T["retract"]
REPLACE = _T["replace"]
RESTATE = _T["restate"]

PROJECT = _T["project"]
GLOBAL = _T["global"]
CONDITION = _T["condition"]
EXCEPTION = _T["exception"]
CHANGE_TIME = _T["change_time"]
WIDEN = _T["widen"]
CONTRAST = _T["contrast"]
NEGATION = _T["negation"]
DIRECTIVE = _T["directive"]


@dataclass(frozen=True)
class SegmentCues:
    """What one clause of a correction says about the rule library."""

    text: str
    lasting: bool = False
    temporary: bool = False
    retraction: bool = False
    replacement: bool = False
    restatement: bool = False
    negated: bool = False
    project: str | None = None
    global_scope: bool = False
    conditions: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()
    directive: bool = False
    widen: bool = False
    behavior: str = ""
    quotes: tuple[str, ...] = field(default_factory=tuple)


_NOT_A_NAME = _T["not_a_name"]
_LEADIN_CLAUSE = _T["leadin_clause"]
_COMMA_CLAUSE = _T["comma_clause"]


def _project_name(text: str) -> str | None:
    m = PROJECT.search(text)
    if not m:
        return None
    named = _NAMED_BEFORE.search(text)
    if named and named.group(1).lower() not in _NOT_A_NAME:
        return named.group(1)
    named = _NAMED_AFTER.search(text)
    if named and named.group(2).lower() not in STOP:
        return named.group(2)
    return "this"


def _clauses(pattern: re.Pattern, text: str) -> tuple[str, ...]:
    return tuple(m.group(0).strip(" ,") for m in pattern.finditer(text) if m.group(0).strip())


def strip_clauses(text: str, parts: tuple[str, ...]) -> str:
    """``text`` without the condition/exception/scope clauses: what remains is the behaviour."""
    out = text
    for p in parts:
        out = out.replace(p, " ")
    return re.sub(r"\s+", " ", out).strip(" ,.;:")


def _add_clause(found: tuple[str, ...], extra: str | None) -> tuple[str, ...]:
    if not extra or any(extra in f or f in extra for f in found):
        return found
    return found + (extra,)


_LEADIN_WORDS = STOP | _T["leadin_words"]
_TRAIL = _T["trail"]
_LEAD = _T["lead"]


def clean_behavior(text: str) -> str:
    """The requested behaviour without lead-ins ("I changed my mind:", "From now on,")."""
    out = text.strip()
    for _ in range(3):
        m = _LEADIN_CLAUSE.match(out)
        if m and all(w in _LEADIN_WORDS for w in words(m.group(1))):
            out = out[m.end() :]
        out = _LEAD.sub("", out)
    out = _TRAIL.sub("", out).strip(" ,.;:!")
    out = _POLITE.sub("", out)
    return out[:1].upper() + out[1:] if out else text.strip(" .")


_PLACED = _T["placed"][0]
_NAMED_BEFORE = _T["project_named_before"]  # group 1: the name
_NAMED_AFTER = _T["project_named_after"]  # group 2: the name
_POLITE = _T["politeness_lead"]
_PLACEMENT = _T["placement_lead"]
_TRY = _T.entry("try_construct").pattern or ""  # the exception clause's text follows it


@lru_cache(maxsize=4096)
def segment_cues(text: str) -> SegmentCues:
    """Parse one clause: the shared admission grammar (``parse_cues``) plus resolution cues."""
    shared = parse_cues(text)
    low = text.lower()
    conds = _add_clause(_clauses(CONDITION, text), shared.condition)
    excs = _add_clause(_clauses(EXCEPTION, text), shared.exception)
    # "try/except" names a construct, not an exception to the rule
    excs = tuple(e for e in excs if not re.search(_TRY + re.escape(e), text, re.I))
    conds = tuple(c for c in conds if not any(c in e or e in c for e in excs))
    # a leading "When X, do Y" keeps only "When X"; lasting markers are not part of a condition
    conds = tuple(
        dict.fromkeys(
            t for t in (_TRAIL.sub("", c.split(",")[0]).strip(" ,;:") for c in conds) if t
        )
    )
    for part in _COMMA_CLAUSE.split(text)[1:]:
        # "Ask before X, but only on Y": a condition after a comma is a clause of its own
        for extra in _clauses(CONDITION, part):
            if not any(extra in c or c in extra for c in conds + excs):
                conds = (*conds, _TRAIL.sub("", extra).strip(" ,;:"))
    # "a blank line before a return statement" places something; it is not a trigger
    conds = tuple(
        c
        for c in conds
        if not (
            _PLACEMENT.match(c)
            and re.search(_PLACED + re.escape(c), text, re.I)
        )
    )
    temporary = bool(TEMPORARY.search(low)) or shared.temporary
    lasting = bool(LASTING.search(low)) or shared.lasting
    if temporary:
        conds = tuple(c for c in conds if not TEMPORARY.search(c.lower()))
    proj = _project_name(text) or shared.project or ("this" if shared.scope == "project" else None)
    scope_parts = tuple(m.group(0) for m in PROJECT.finditer(text))
    behavior = clean_behavior(strip_clauses(text, conds + excs + scope_parts))
    return SegmentCues(
        text=text,
        lasting=lasting,
        temporary=temporary and not lasting,
        retraction=bool(RETRACT.search(low)),
        replacement=bool(REPLACE.search(low)),
        restatement=bool(RESTATE.search(low)) or shared.friction,
        negated=bool(NEGATION.search(behavior.lower())),
        project=proj,
        global_scope=bool(GLOBAL.search(low)) or shared.explicit_global,
        conditions=conds,
        exceptions=excs,
        directive=bool(
            DIRECTIVE.search(low)
            or CONTRAST.search(low)
            or concepts(text)
            or conds
            or excs
            or proj
            or CHANGE_TIME.search(low)
        ),
        widen=bool(WIDEN.search(low)),
        behavior=behavior or text,
        quotes=(text,),
    )


_SENT = _T["sentence"]
_HAS_LETTER = _T["has_letter"]
_NEXT_DIRECTIVE = _T["next_directive"][0]
_BUNDLE = _T["bundle"]


def split_segments(text: str) -> list[str]:
    """Clauses of a correction, each an exact substring of ``text`` (for bundled corrections)."""
    spans: list[tuple[int, int]] = []
    for m in _SENT.finditer(text):
        s, e = m.span()
        cut = s
        for b in _BUNDLE.finditer(text, s, e):
            spans.append((cut, b.start()))
            cut = b.end()
        spans.append((cut, e))
    out = []
    for s, e in spans:
        seg = text[s:e].strip()
        if seg and _HAS_LETTER.search(seg):
            out.append(seg)
    return out
