"""A cue grammar for corrections: duration, scope, activation, exceptions, vagueness, friction.

:func:`parse_cues` reads one user message and returns a frozen :class:`Cues`. It is the shared,
model-free reading of a correction used by admission (issue 4) and resolution (issue 5); the
field names are a stable interface (fields may be added, never renamed or removed).

Every span the grammar relies on is returned in ``Cues.quotes`` as an exact substring of the
message, so downstream decisions can always be grounded in the user's own words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from toolkit.text import load_table

_T = load_table("admission/cues")  # toolkit/resources/admission/cues.yaml

__all__ = ["Cues", "parse_cues", "Span"]

_F = re.IGNORECASE

# -- lexicons (regular expressions over the raw message) --------------------------------------
_TASK_NOUNS = _T["task_nouns"][0]
_PROJECT_NOUNS = _T["project_nouns"][0]

_LASTING = _T["lasting"]
_FRICTION = _T["friction"]
_TEMPORARY = _T["temporary"]
_VAGUE = _T["vague"]
# hedges on commitment (not on activation): vague alone, but a firm lasting cue outweighs them
# ("it'd be great if you always added tests from now on" is a politely worded lasting rule)
_HEDGE = _T["hedge"]
# lasting cues too weak to outweigh a hedge ("would be nice in general")
_WEAK_LASTING = _T["weak_lasting"]
_COMPLETION = _T["completion"]
# firm duration phrases (stronger than always/never): they lift a rule out of the current artefact
_FIRM_DURATION = _T["firm_duration"]
# an instruction confined to one artefact at hand ("in this function", "throughout that file")
_ARTEFACT_SCOPE = _T["artefact_scope"][0]
_RETRACTION = _T["retraction"]
_PREFERENCE = _T["preference"]
# references to the artefact being delivered right now ("the function you just wrote")
_DEICTIC = _T["deictic"]
# explicit project / repository scope ("in this repo", "in the billing-api project")
_PROJECT_SCOPE = _T["project_scope"]
_GLOBAL_SCOPE = _T["global_scope"]
# clause openers that introduce an activating condition (the rule fires only then)
# the opener of an activating clause (when / if / every time ..., and a fronted before / after)
_CONDITION_OPENER = _T["condition_openers"]
_WISH_OPENERS = _T["wish_openers"]
_TIMING_OPENERS = _T["timing_openers"]
_RECURRENCE_OPENERS = _T["recurrence_openers"]
_HEDGEABLE_OPENERS = _T["hedgeable_openers"]
_REPORT_OPENERS = _T["report_openers"]
_HABIT_ADVERBS = _T["habit_adverbs"]
_KEPT_IN_BEHAVIOUR = _T["kept_in_behaviour"]
# punctuation and word shapes the grammar splits on (each a validated table entry too)
_NEXT_WORD = _T["next_word"]
_COLON_AHEAD = _T["colon_ahead"]
_CLAUSE_BREAK_NEXT = _T["clause_break_next"]
_CLAUSE_SPLIT = _T["clause_split"]
_EXCEPTION_END = _T["exception_end"]
_WHITESPACE_RUN = _T["whitespace_run"]
_SPACE_BEFORE_PUNCT = _T["space_before_punct"]
_BEHAVIOUR_WORD = _T["behaviour_word"]
_CLAUSE_PUNCT = _T["clause_punct"]
_WORD_RUN = _T["word_run"]
_WORD_OR_APOSTROPHE = _T["word_or_apostrophe"]
_FILE_NOUNS = _T["file_nouns"][0]
_CONDITION_RESTRICT = _T["condition_restrict"][0]
_EXCEPTION = _T["exception"][0]
_POLITE = _T["polite"][0]
_LEAD_INS = _T["lead_ins"][0]
_ONE_OFF = _T["one_off"]
# what follows or precedes a cue word and changes its reading (each a validated table entry)
_CLAUSE_END = _T["clause_end"]
_TIMING_NOT_TRIGGER = _T["timing_not_trigger"]
_ONCE_TRIGGER_NEXT = _T["once_trigger_next"]
_RECURRENCE_TRIGGER_NEXT = _T["recurrence_trigger_next"]
_NOT_ACTIVATION_NEXT = _T["not_activation_next"]
_WIDENING_BEFORE = _T["widening_before"]
_REPORT_NEXT = _T["report_next"]
_PAST_VERB_NEXT = _T["past_verb_next"]
_THIRD_PERSON_VERB_NEXT = _T["third_person_verb_next"]
_CONTAINER_NOUNS = _T["container_nouns"]
_HABITUAL_SUBJECTS = _T["habitual_subjects"]
_NOT_PROJECT_NAMES = _T["not_project_names"]
_FRICTION_ONLY_TAIL = _T["friction_only_tail"]
_SAME_LENGTH = str.maketrans(
    {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "}
)
# the dash branch starts only at the start of a whitespace run ((?<!\s)): same splits, but a
# long run of spaces is no longer retried from every position (quadratic: 40 KB took 53 s)
#: how far back a cue looks for its sentence's start: scanning back to the sentence start for
#: every cue was quadratic on long unpunctuated text (a 1 MB message); real sentences are shorter
_LOOKBACK = 1000
_SENT_SPLIT = _T["sentence_split"]


@dataclass(frozen=True)
class Span:
    """A cue occurrence: its kind and exact character offsets in the message."""

    kind: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Cues:
    """What the cue grammar reads in one message (stable interface; see module docstring).

    ``lasting``/``temporary``: duration cues. ``scope``: ``"project"`` when an explicit
    project/repository scope is named, ``"global"`` when a lasting rule names no project (or says
    everywhere), ``None`` when nothing lasting or scoped is said. ``condition``/``exception``: the
    activating and excepting clauses (exact substrings). ``vague``: the activation is left to
    judgement. ``retraction``: an earlier rule is withdrawn. ``friction``: recurring annoyance.
    ``behavior``: the reusable behaviour clause with cue words removed. ``quotes``: exact
    substrings of the message supporting the reading (cue phrases and the behaviour clause).
    ``hedged``: the only vagueness is a politeness hedge ("it'd be great if"), which a firm
    duration outweighs. ``firm_lasting``: a lasting cue stronger than "in general"/"remember to".
    ``generic_condition``: the activating clause names a recurring kind of situation ("if a
    migration is destructive", "for YAML files"), so the rule lasts even without a duration cue.
    """

    lasting: bool = False
    temporary: bool = False
    scope: Literal["global", "project"] | None = None
    project: str | None = None
    condition: str | None = None
    exception: str | None = None
    vague: bool = False
    retraction: bool = False
    friction: bool = False
    behavior: str | None = None
    quotes: tuple[str, ...] = ()
    preference: bool = False
    explicit_global: bool = False
    behavior_quote: str | None = None
    deictic: bool = False
    spans: tuple[Span, ...] = field(default=(), repr=False)
    hedged: bool = False
    firm_lasting: bool = False
    generic_condition: bool = False

    def features(self) -> dict[str, float]:
        """Numeric cue features (for classifiers); keys are stable."""
        return {
            "lasting": float(self.lasting),
            "temporary": float(self.temporary),
            "project": float(self.scope == "project"),
            "condition": float(self.condition is not None),
            "exception": float(self.exception is not None),
            "vague": float(self.vague),
            "retraction": float(self.retraction),
            "friction": float(self.friction),
            "preference": float(self.preference),
            "has_behavior": float(bool(self.behavior)),
            "deictic": float(self.deictic),
        }


def _finditer(patterns: list[str] | str, text: str, kind: str) -> list[Span]:
    """All non-overlapping matches of any pattern, as spans sorted by position."""
    pats = [patterns] if isinstance(patterns, str) else patterns
    found: list[Span] = []
    for p in pats:
        for m in re.finditer(p, text, _F):
            if m.end() > m.start():
                found.append(Span(kind, m.start(), m.end(), m.group(0)))
    found.sort(key=lambda s: (s.start, -(s.end - s.start)))
    out: list[Span] = []
    for s in found:
        if out and s.start < out[-1].end:
            continue
        out.append(s)
    return out


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` to exclude surrounding whitespace and punctuation."""
    while start < end and text[start] in " \t\n,;:.!?-\u2013\u2014\"'(":
        start += 1
    while end > start and text[end - 1] in " \t\n,;:.!?-\u2013\u2014\"')":
        end -= 1
    return start, end


def _clause_end(text: str, start: int) -> int:
    """Where a subordinate clause that begins at ``start`` ends (comma, dash or sentence end)."""
    m = _CLAUSE_END.search(text, start)
    return m.start() if m else len(text)


def _sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans of ``text`` (offsets into the original string)."""
    spans, pos = [], 0
    for m in _SENT_SPLIT.finditer(text):
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


# imperative verbs that open the main clause after a comma-less fronted condition
# ("when you add strings to the UI put them in the catalogue"); nouns-that-are-verbs left out
_MAIN_VERB = _T["main_verb"]
_SUBJECTS = _T["subjects"]
_FRONT_LEADS = _T["front_leads"]


_WISH_BEFORE = _T["wish_before"]


def _is_fronted(text: str, pos: int, scoped: list[Span]) -> bool:
    """Whether ``pos`` opens its sentence (after at most lead-ins and scope/duration phrases)."""
    start = max(max(text.rfind(ch, 0, pos) for ch in ".!?;:\n") + 1, pos - _LOOKBACK)
    prefix = list(text[start:pos])
    for s in scoped:
        for i in range(max(s.start, start), min(s.end, pos)):
            prefix[i - start] = " "
    return bool(_FRONT_LEADS.match("".join(prefix).strip(" ,-\"'(")))


def _fronted_clause_end(text: str, start: int, end: int) -> int:
    """Cut a comma-less fronted condition where the imperative main clause begins."""
    for m in _MAIN_VERB.finditer(text, start, end):
        before = _WORD_RUN.findall(text[max(start, m.start() - _LOOKBACK) : m.start()])
        if len(before) >= 2 and before[-1].lower() not in _SUBJECTS:
            return m.start()
    return end


def _condition(text: str, blocked: list[Span], lasting: list[Span]) -> Span | None:
    """The activating clause: a when/if/whenever... clause or a file-type restriction.

    A fronted ``before/after`` clause ("Before you push, run the checks") is a trigger too; a
    trailing one ("run the checks before you push") is the behaviour's own timing.
    """

    def inside_blocked(i: int) -> bool:
        return any(b.start <= i < b.end for b in blocked)

    scoped = [b for b in blocked if b.kind == "project"] + list(lasting)
    for m in _CONDITION_OPENER.finditer(text):
        if inside_blocked(m.start()):
            continue
        word = m.group(0).lower()
        rest = text[m.end() :]
        fronted = _is_fronted(text, m.start(), scoped)
        # "it'd be great if you ...": the if-clause is the wished-for behaviour, not a trigger
        if word in _WISH_OPENERS and _WISH_BEFORE.search(text[: m.start()]):
            continue
        if word in _TIMING_OPENERS and (
            not fronted
            or any(s.start <= m.start() < s.end for s in lasting)
            or not _NEXT_WORD.match(rest)
            or _TIMING_NOT_TRIGGER.match(rest)
            or _COLON_AHEAD.match(rest)
        ):
            continue
        # "once" as a count ("just once") and "if" inside "if you want" hedges are not activations
        if word == "once" and not _ONCE_TRIGGER_NEXT.match(rest):
            continue
        if word in _RECURRENCE_OPENERS and not (
            _RECURRENCE_TRIGGER_NEXT.match(rest)
        ):
            continue
        if word in _HEDGEABLE_OPENERS and _NOT_ACTIVATION_NEXT.match(rest):
            continue
        end = _clause_end(text, m.end())
        if fronted and not _CLAUSE_BREAK_NEXT.match(text[end : end + 2]):
            end = _fronted_clause_end(text, m.end(), end)
        a, b = _strip_span(text, m.start(), end)
        if b - a > len(word) + 2:
            return Span("condition", a, b, text[a:b])
    for m in re.finditer(_CONDITION_RESTRICT, text, _F):
        if inside_blocked(m.start()):
            continue
        a, b = _strip_span(text, m.start(), m.end())
        return Span("condition", a, b, text[a:b])
    for m in _FRONTED_QUANT.finditer(text):
        if inside_blocked(m.start()) or any(s.start <= m.start() < s.end for s in lasting):
            continue
        a, b = _strip_span(text, m.start(), m.end())
        return Span("condition", a, b, text[a:b])
    return None


_FRONTED_QUANT = _T["fronted_quant"]


def _scope_giving(text: str, project: list[Span], deictic: bool) -> list[Span]:
    """Keep project spans that set a rule's scope; drop locatives of one-off actions.

    "Revert the last commit in this repo" names where a one-off action happens; "In this repo,
    squash before merging" (fronted) or "This repo uses yarn" (subject) sets a scope.
    """
    kept = []
    for sp in project:
        start = max(text.rfind(ch, 0, sp.start) for ch in ".!?;:\n")
        before = text[start + 1 : sp.start].strip(" ,\"'(-")
        fronted = len(before.split()) <= 2
        sentence = text[start + 1 :].lstrip(" \"'(")
        possessive = text[sp.end : sp.end + 2] == "'s"
        if fronted and not possessive:
            kept.append(sp)
        elif not (
            deictic or possessive or _ONE_OFF.match(sentence) or _DEFINITE_EDIT.match(sentence)
        ):
            kept.append(sp)
    return kept


# a one-off edit of one definite thing: "Update the README ...", "Add a test for the parser ..."
_DEFINITE_EDIT = _T["definite_edit"]


# inherently corrective one-offs (you fix or investigate one specific thing); rule-like verbs such
# as merge/deploy/squash stay scope-giving after a fronted project ("In this repo, squash ...")
_ONE_OFF_DEFINITE = _T["one_off_definite"]


def _one_off_after(text: str, sp: Span) -> bool:
    """Whether the directive that follows a fronted scope is a one-off on a definite thing."""
    end = min([i for i in (text.find(ch, sp.end) for ch in ".!?;\n") if i >= 0] + [len(text)])
    clauses = [c.strip(" ,:-") for c in _CLAUSE_SPLIT.split(text[sp.end : end])]
    clauses = [c for c in clauses if c]
    return bool(clauses) and bool(_ONE_OFF_DEFINITE.match(clauses[-1]))


def _exception(text: str) -> Span | None:
    """The excepting clause (unless / except ...), up to the end of its clause."""
    m = re.search(_EXCEPTION, text, _F)
    if not m:
        return None
    end = _EXCEPTION_END.search(text, m.end())
    a, b = _strip_span(text, m.start(), end.start() if end else len(text))
    return Span("exception", a, b, text[a:b])


def _project_name(spans: list[Span]) -> str | None:
    """A project name from an explicit ``in the <name> repo`` phrase, if any."""
    for s in spans:
        m = next(
            (
                x
                for x in (re.search(pat, s.text, _F) for pat in _PROJECT_SCOPE if "?P<" in pat)
                if x
            ),
            None,
        )
        if m:
            g = m.groupdict()
            name = (g.get("name") or g.get("name2") or g.get("name3") or "").strip("`'")
            if name and name.lower() not in _NOT_PROJECT_NAMES:
                return name
    return None


def _merge_fragments(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join runs of one-word "sentences" ("Do. Not. Use. Var.") into one emphatic clause."""
    out: list[tuple[int, int]] = []
    short_run = False
    for a, b in spans:
        short = len(text[a:b].split()) <= 1
        if short and short_run and out:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
        short_run = short
    return out


_DIRECTIVE_OPENER = _T["directive_opener"]
_AGAIN_TAIL = _T["again_tail"]


def _behavior(text: str, removed: list[Span]) -> tuple[str | None, str | None]:
    """The behaviour clause: the main sentence with cue, condition and exception spans removed.

    Returns ``(cleaned behaviour, longest exact substring of it in the message)``.
    """
    sentences = _merge_fragments(text, _sentences(text))
    if not sentences:
        return None, None
    mask = [True] * len(text)
    for s in removed:
        for i in range(s.start, s.end):
            mask[i] = False
    best: tuple[float, str, str] | None = None
    for a, b in sentences:
        kept = "".join(ch if mask[i] else "\x00" for i, ch in enumerate(text[a:b], start=a))
        pieces = [p for p in kept.split("\x00")]
        cleaned = _WHITESPACE_RUN.sub(" ", " ".join(p.strip(" ,;:") for p in pieces if p.strip(" ,;:")))
        cleaned = _SPACE_BEFORE_PUNCT.sub(r"\1", cleaned).strip(" ,;:.!?-")
        for _ in range(3):
            cleaned = re.sub(_POLITE, "", cleaned, flags=_F).strip(" ,;:.!?-")
            cleaned = re.sub(_LEAD_INS, "", cleaned, flags=_F).strip(" ,;:.!?-")
        words = _BEHAVIOUR_WORD.findall(cleaned)
        if len(words) < 2:
            continue
        longest = max((p.strip(" ,;:.!?-") for p in pieces), key=len, default="")
        score = len(words) + (4 if _DIRECTIVE_OPENER.match(cleaned) else 0)
        score -= 6 if _is_friction_only(text[a:b]) else 0
        if best is None or score > best[0]:
            best = (score, cleaned, longest)
    if best is None:
        # a friction sentence that is all cue ("You forgot the tests AGAIN"): the complaint itself
        # names the behaviour once the repetition words are dropped
        for a, b in sentences:
            m = _AGAIN_TAIL.match(text[a:b].strip())
            if m and len(m.group(1).split()) >= 3:
                best = (0.0, m.group(1), m.group(1))
                break
    if best is None:
        return None, None
    cleaned = best[1][:1].upper() + best[1][1:]
    return cleaned, best[2] or None


_AGENTIVE_BEFORE = _T["agentive_before"]
_REPORT_SUBJECT = _T["report_subject"]
_ARTEFACT = _T["artefact"]


def _descriptive(text: str, span: Span) -> bool:
    """An always/never that describes an artefact ("the function you wrote always returns None")."""
    low = span.text.lower()
    after = text[span.end :]
    if low in _REPORT_OPENERS and _REPORT_NEXT.match(
        after
    ):
        # "every time I run it, it crashes": the user's report, not a rule for the agent
        cut = _CLAUSE_PUNCT.search(after)
        main = after[cut.end() :] if cut and after[cut.start()] == "," else ""
        return bool(_REPORT_SUBJECT.match(main))
    if low not in _HABIT_ADVERBS:
        return False
    start = max(max(text.rfind(ch, 0, span.start) for ch in ".!?;:,\n") + 1, span.start - _LOOKBACK)
    before = text[start : span.start]
    words = _WORD_OR_APOSTROPHE.findall(before.lower())
    if (
        words
        and _PAST_VERB_NEXT.match(after)
        and words[-1] != "you"
    ):
        return True
    if not words or words[-1] in _AGENTIVE_BEFORE:
        return False
    if _ARTEFACT.search(before):
        return True
    return (
        bool(_THIRD_PERSON_VERB_NEXT.match(after))
        and words[-1] not in _HABITUAL_SUBJECTS
        and not _CONTAINER_NOUNS.search(before)
    )


_GENERIC_COND = _T["generic_cond"]


def _generic_condition(condition: str) -> bool:
    """Whether an activating clause names a recurring kind of situation (so the rule lasts)."""
    return bool(_GENERIC_COND.match(condition.strip()))


def _is_friction_only(sentence: str) -> bool:
    """A sentence that only voices annoyance ("I keep having to tell you this.")."""
    return bool(_FRICTION_ONLY_TAIL.search(sentence.strip())) and bool(
        _finditer(_FRICTION, sentence, "friction")
    )


@lru_cache(maxsize=8192)
def parse_cues(text: str) -> Cues:
    """Read duration, scope, activation, exception, vagueness, retraction and friction cues.

    Pure and deterministic (results are memoised per text; ``Cues`` is immutable).
    """
    original = text
    # same-length normalisation so offsets still index the original message
    text = text.translate(_SAME_LENGTH)
    lasting = [s for s in _finditer(_LASTING, text, "lasting") if not _descriptive(text, s)]
    # "whenever you're ready" / "when you're done" anchor a one-off to the current task
    completion = _finditer(_COMPLETION, text, "completion")
    lasting = [s for s in lasting if not any(c.start <= s.start < c.end for c in completion)]
    if completion and all(_WEAK_LASTING.match(s.text.strip()) for s in lasting):
        lasting = []
    friction = _finditer(_FRICTION, text, "friction")
    temporary = _finditer(_TEMPORARY, text, "temporary")
    # "not just today's work" / "not only for this PR" widens the rule instead of limiting it
    temporary = [
        t
        for t in temporary
        if not _WIDENING_BEFORE.search(text[max(0, t.start - 24) : t.start])
    ]
    if not _FIRM_DURATION.search(text):
        temporary = sorted(
            temporary
            + [
                t
                for t in _finditer(_ARTEFACT_SCOPE, text, "temporary")
                if not any(x.start < t.end and t.start < x.end for x in temporary)
            ],
            key=lambda t: t.start,
        )
    vague = _finditer(_VAGUE, text, "vague")
    hedges = [
        h
        for h in _finditer(_HEDGE, text, "vague")
        if not any(v.start < h.end and h.start < v.end for v in vague)
    ]
    hedged = bool(hedges) and not vague
    vague = sorted(vague + hedges, key=lambda v: v.start)
    retraction = _finditer(_RETRACTION, text, "retraction")
    preference = _finditer(_PREFERENCE, text, "preference")
    project = _finditer(_PROJECT_SCOPE, text, "project")
    deictic = _finditer(_DEICTIC, text, "deictic")
    project = _scope_giving(text, project, bool(deictic))
    explicit_global = _finditer(_GLOBAL_SCOPE, text, "global")
    # an explicit "every project" / "not just this repo" overrides a project noun inside it
    project = [
        p for p in project if not any(g.start < p.end and p.start < g.end for g in explicit_global)
    ]
    # "this task" style spans that are really project nouns are handled by the project grammar;
    # a temporary span fully inside a project span is not temporary ("for this service's PRs")
    temporary = [
        t for t in temporary if not any(p.start <= t.start and t.end <= p.end for p in project)
    ]
    blocked = vague + temporary + project
    exception = _exception(text)
    blocked_cond = blocked + ([exception] if exception else [])
    condition = _condition(text, blocked_cond, lasting + friction)
    if (
        condition is not None
        and exception is not None
        and condition.start >= exception.start
        and condition.end <= exception.end
    ):
        condition = None
    # a vague clause ("when it seems right") is not a usable activation
    if condition is not None and any(
        v.start < condition.end and condition.start < v.end for v in vague
    ):
        condition = None
    generic = condition is not None and not deictic and _generic_condition(condition.text)
    if not (lasting or friction or condition is not None):
        project = [p for p in project if not _one_off_after(text, p)]
    removed = [s for s in lasting if s.text.lower() not in _KEPT_IN_BEHAVIOUR]
    removed += friction + temporary + vague + project + explicit_global
    removed += [s for s in (condition, exception) if s is not None]
    behavior, behavior_quote = _behavior(text, removed)
    is_lasting = bool(lasting)
    scope: Literal["global", "project"] | None = None
    if project:
        scope = "project"
    elif is_lasting or friction or explicit_global or preference:
        scope = "global"
    quotes: list[str] = []
    for s in sorted(
        lasting
        + friction
        + temporary
        + vague
        + project
        + explicit_global
        + retraction
        + [x for x in (condition, exception) if x is not None],
        key=lambda s: s.start,
    ):
        a, b = _strip_span(text, s.start, s.end)
        if b > a and original[a:b] not in quotes:
            quotes.append(original[a:b])
    if behavior_quote:
        at = text.find(behavior_quote)
        behavior_quote = original[at : at + len(behavior_quote)] if at >= 0 else None
    if behavior_quote and behavior_quote not in quotes:
        quotes.append(behavior_quote)
    quotes = [q for q in quotes if not any(q != o and q in o for o in quotes)]
    spans = tuple(
        Span(x.kind, x.start, x.end, original[x.start : x.end])
        for x in sorted(
            lasting
            + friction
            + temporary
            + vague
            + retraction
            + preference
            + project
            + explicit_global
            + deictic
            + [x for x in (condition, exception) if x is not None],
            key=lambda s: s.start,
        )
    )
    if condition is not None:
        condition = Span(
            "condition", condition.start, condition.end, original[condition.start : condition.end]
        )
    if exception is not None:
        exception = Span(
            "exception", exception.start, exception.end, original[exception.start : exception.end]
        )
    return Cues(
        lasting=is_lasting,
        temporary=bool(temporary),
        scope=scope,
        project=_project_name(project),
        condition=condition.text if condition else None,
        exception=exception.text if exception else None,
        vague=bool(vague),
        retraction=bool(retraction),
        friction=bool(friction),
        behavior=behavior,
        quotes=tuple(quotes),
        preference=bool(preference),
        explicit_global=bool(explicit_global),
        behavior_quote=behavior_quote,
        deictic=bool(deictic),
        spans=spans,
        hedged=hedged,
        generic_condition=generic,
        firm_lasting=any(not _WEAK_LASTING.match(s.text.strip()) for s in lasting),
    )
