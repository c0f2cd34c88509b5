"""The specification judge (TellOnce B.3, D.3), offline: a rule's compiled specification judged
on evidence at a stage.

A specification names *elements*: what the rule forbids and what it requires, read from the
rule's own words (quoted terms and code in backticks, code-like tokens such as ``unwrap()``,
``\\cref``, ``GlobalScope``, ``ansible.builtin.copy``, explicit limits such as "under 300 words",
and kinds from ``toolkit/resources/checks/concepts.yaml`` such as secret values or force pushes).
:func:`locate` finds each element in the evidence: in a proposed command, in a written file (a
comment line is a mention, not a use), in a reply's code or prose (a negated mention, "I didn't
run `mix ecto.reset`", is not a use; the text layer's negation scope decides).

:class:`SpecJudge` turns these into features together with the stage (does the specification check
anything at this stage), the scope and condition/exception stage (``toolkit.compliance.applies`` on
the task, and on the task plus the evidence), MiniLM similarity of the conditions and exceptions to
the evidence, and the compliance reader's own verdict (``toolkit.compliance.read``), and learns
``violation | pass | not_applicable`` with a logistic model fit on development judge sets (rules
grouped in cross-validation). Its operating point: ``violation`` only at or above the probability
whose cross-validated precision reaches ``min_precision``; between ``unknown_band`` below that and
the threshold the answer is ``unknown`` (never a default pass).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field

from toolkit import text as tx
from toolkit.records import EvidenceRecord, Rule


# -- the concept resource -----------------------------------------------------------------------
class Concept(BaseModel):
    model_config = ConfigDict(extra="forbid")

    where: str
    cue: list[str] = Field(min_length=1)
    cue_must_match: list[str] = Field(default_factory=list)
    cue_must_not_match: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(min_length=1)
    must_match: list[str] = Field(default_factory=list)
    must_not_match: list[str] = Field(default_factory=list)
    example: str
    plain: str

    def cued(self, text: str) -> bool:
        return any(re.search(p, text, re.IGNORECASE) for p in self.cue)

    def find(self, text: str) -> list[re.Match[str]]:
        return [m for p in self.evidence for m in re.finditer(p, text)]


class FileKind(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cue: str
    path: str


class Cue(BaseModel):
    """One phrase cue of the specification reader (clause split, ban word, limit, ...)."""

    model_config = ConfigDict(extra="forbid")

    about: str
    pattern: str
    case_sensitive: bool = False
    must_match: list[str] = Field(min_length=1)
    must_not_match: list[str] = Field(min_length=1)

    @property
    def rx(self) -> re.Pattern[str]:
        return _compiled(self.pattern, self.case_sensitive)


@cache
def _compiled(pattern: str, case_sensitive: bool) -> re.Pattern[str]:
    return re.compile(pattern, 0 if case_sensitive else re.IGNORECASE)


class ConceptsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    about: str
    concepts: dict[str, Concept]
    files: list[FileKind] = Field(default_factory=list)
    cues: dict[str, Cue] = Field(default_factory=dict)


def cue(name: str) -> re.Pattern[str]:
    """The compiled phrase cue ``name`` of ``concepts.yaml``."""
    return concepts().cues[name].rx


def file_for(rule_text: str) -> str:
    """Where a rule's code lives (a path the rule's own words suggest), for validation cases."""
    m = re.search(r"[\w./*-]+\.(?:py|rs|kt|tex|liquid|ya?ml|cpp|hpp|h|ex|exs|ts|js|go|md|json|toml)\b", rule_text)
    if m and "*" not in m.group(0):
        return m.group(0)
    for f in concepts().files:
        if re.search(f.cue, rule_text, re.IGNORECASE):
            return f.path
    return "src/module.py"


@cache
def concepts() -> ConceptsFile:
    """``concepts.yaml``: requirement elements named by kind."""
    raw = resources.files("toolkit").joinpath("resources", "checks", "concepts.yaml").read_text(encoding="utf-8")
    return ConceptsFile.model_validate(yaml.safe_load(raw))


def concept_failures() -> list[str]:
    """Examples a concept gets wrong (tests call this; empty when the file behaves as documented)."""
    bad = []
    for name, c in concepts().concepts.items():
        bad += [f"{name}: cue must match {x!r}" for x in c.cue_must_match if not c.cued(x)]
        bad += [f"{name}: cue must not match {x!r}" for x in c.cue_must_not_match if c.cued(x)]
        bad += [f"{name}: must match {x!r}" for x in [*c.must_match, c.example] if not c.find(x)]
        bad += [f"{name}: must not match {x!r}" for x in [*c.must_not_match, c.plain] if c.find(x)]
    for name, q in concepts().cues.items():
        bad += [f"cue {name}: must match {x!r}" for x in q.must_match if not q.rx.search(x)]
        bad += [f"cue {name}: must not match {x!r}" for x in q.must_not_match if q.rx.search(x)]
    return bad


# -- elements -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Element:
    """One thing a rule forbids or requires, with the regex that finds it in evidence."""

    text: str
    pattern: str
    kind: str  # quoted | code | concept:<name> | limit
    polarity: str  # forbid | require
    limit: int | None = None

    def finditer(self, text: str) -> list[re.Match[str]]:
        if self.kind.startswith("concept:"):
            return concepts().concepts[self.kind.split(":", 1)[1]].find(text)
        return list(re.finditer(self.pattern, text, re.IGNORECASE))


_QUOTED = re.compile(r"`([^`]+)`|(?<![\w])'([^']{2,40})'(?![\w])|\"([^\"]{2,40})\"")
_CODEY = re.compile(r"\\[A-Za-z]+|\b[A-Za-z_]\w*\(\)|\b[a-z][A-Za-z]*[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b"
                    r"|\b[a-z_]+(?:\.[a-z_]+){1,3}\b|\B--[a-z][\w-]+")
_STOP_CODE = {"e.g", "i.e", "etc.", "vs."}


def _literal_pattern(s: str) -> str:
    """A quoted literal as a regex: numbers generalised ("Figure 3" also finds "Figure 5.3"),
    a trailing ``()`` a call of that name, spaces flexible."""
    s = s.strip()
    s = re.sub(r"\s*(?:\.\.\.|…)$", "", s) or s  # a quote ending in an ellipsis opens with what it shows
    call = s.endswith("()")
    core = s[:-2] if call else s
    parts = re.split(r"(\d+(?:\.\d+)*)", core)
    rx = "".join(r"\d+(?:\.\d+)*" if re.fullmatch(r"\d+(?:\.\d+)*", p) else re.escape(p) for p in parts)
    rx = re.sub(r"(?:\\ )+", r"\\s+", rx)
    if re.fullmatch(r"[\w-]+\.js", core, re.IGNORECASE):  # a JS package is named without ".js" in manifests and imports
        rx = re.escape(core[:-3]) + r"(?:\.js)?"
    lead = r"(?<![\w])" if core[:1].isalnum() else ""
    tail = r"\s*\(" if call else (r"(?![\w])" if core[-1:].isalnum() else "")
    return lead + rx + tail


def clauses(behavior: str) -> list[tuple[str, str]]:
    """(polarity, clause) pieces of a behaviour: ``;`` splits, "X instead of Y" forbids Y,
    "(A, not B)" forbids B; a clause led by a ban word forbids its elements, others require."""
    out: list[tuple[str, str]] = []
    for part in cue("clause_split").split(behavior):
        part = part.strip(" .")
        if not part:
            continue
        ban = bool(cue("ban_lead").search(part))
        m = cue("swap").search(part)
        if m:
            out.append(("forbid" if not ban else "require", part[m.end():]))
            part = part[: m.start()]
        for paren in re.finditer(r"\(([^()]*)\)", part):
            inner = paren.group(1)
            nm = re.search(r",\s*not\s+(.+)$", inner)
            if nm:
                out.append(("forbid" if not ban else "require", nm.group(1)))
                part = part.replace(paren.group(0), "(" + inner[: nm.start()] + ")")
        out.append(("forbid" if ban else "require", part))
    return out


@dataclass(frozen=True)
class Spec:
    """A concrete specification: the elements a rule forbids / requires and its limits."""

    forbidden: tuple[Element, ...]
    required: tuple[Element, ...]
    source: str = field(default="", compare=False)  # the behaviour it was read from
    #: where a ban holds, when it names places ("calls inside Update or LateUpdate"): code functions
    places: tuple[str, ...] = ()

    @property
    def elements(self) -> tuple[Element, ...]:
        return self.forbidden + self.required

    def to_dict(self) -> dict[str, Any]:
        return {"forbidden": [e.text for e in self.forbidden], "required": [e.text for e in self.required]}


@cache
def _spec_cached(behavior: str) -> Spec:
    from toolkit.rules.checks._compiler import strip_preamble

    forb: list[Element] = []
    req: list[Element] = []
    places: list[str] = []
    for pol, clause in clauses(strip_preamble(behavior)):
        bucket = forb if pol == "forbid" else req
        if pol == "require":  # a requirement's own examples illustrate it: they are not required
            clause = cue("illustration").sub(" ", clause)
        seen = {e.text.lower() for e in forb + req}
        for m in cue("limit").finditer(clause):
            n = int((m.group("n") or m.group("n2")).replace(",", ""))
            unit = (m.group("unit") or m.group("unit2")).lower().rstrip("s")
            forb.append(Element(f"more than {n} {unit}s", "", "limit", "forbid", n))
        # in a ban, what follows a place preposition says where it holds ("calls inside Update")
        place = cue("ban_place").search(clause) if pol == "forbid" else None
        named = clause[: place.start()] if place else clause
        if place:  # the places: code names up to the end of the clause or a dash
            tail = re.split(r"\s[—–-]\s|[;:.]\s", clause[place.end():])[0]
            places += [t for t in re.findall(r"[`'\"]?([A-Za-z_]\w*)(?:\(\))?", tail)
                       if t[:1].isupper() or "_" in t or f"{t}()" in tail or f"`{t}" in tail]
        quoted = []
        for m in _QUOTED.finditer(named):
            q = next(g for g in m.groups() if g)
            quoted.append(q)
            if q.lower() not in seen and len(q.strip()) >= 2:
                bucket.append(Element(q, _literal_pattern(q), "quoted", pol))
                seen.add(q.lower())
        bare = _QUOTED.sub(" ", named)
        for m in _CODEY.finditer(bare):
            t = m.group(0)
            if t.lower() in seen or t.lower() in _STOP_CODE or len(t) < 3:
                continue
            bucket.append(Element(t, _literal_pattern(t), "code", pol))
            seen.add(t.lower())
        for m in cue("code_list").finditer(bare):  # "malloc/calloc/realloc", "db:schema:load"
            for t in m.group(0).split("/"):
                if t.lower() not in seen and len(t) >= 3:
                    bucket.append(Element(t, _literal_pattern(t), "code", pol))
                    seen.add(t.lower())
        for name, c in concepts().concepts.items():
            if c.cued(clause) and f"concept:{name}" not in seen:
                bucket.append(Element(name.replace("_", " "), "", f"concept:{name}", pol))
                seen.add(f"concept:{name}")
    return Spec(tuple(forb), tuple(req), behavior, tuple(dict.fromkeys(places)))


def spec_of(rule: Rule | str) -> Spec:
    """The concrete specification of a rule's behaviour."""
    return _spec_cached(rule if isinstance(rule, str) else rule.behavior)


# -- locating elements in evidence -----------------------------------------------------------------
_COMMENT = re.compile(r"^\s*(?://|#(?!include|define|if|endif|else|pragma)|%|--\s|/\*|\*|<!--|\{%-?\s*comment|;;)")


@dataclass
class Hit:
    element: Element
    where: str  # action | code | comment | reply_code | reply_prose
    negated: bool
    quote: str


def _line_of(text: str, start: int) -> str:
    a = text.rfind("\n", 0, start) + 1
    b = text.find("\n", start)
    return text[a: b if b >= 0 else len(text)]


def _prose_hits(el: Element, reply: str) -> list[Hit]:
    out = []
    spans = [(m.start(), m.end()) for m in re.finditer(r"```.*?```", reply, re.DOTALL)]
    for m in el.finditer(reply):
        in_code = any(a <= m.start() < b for a, b in spans)
        neg = False if in_code else (tx.negated_at(reply, m.start()) or _avoided(reply, m.start()))
        out.append(Hit(el, "reply_code" if in_code else "reply_prose", neg, m.group(0)))
    return out


def _avoided(text: str, start: int) -> bool:
    """A mention in the scope of a removal or avoidance ("replaced GlobalScope.launch with ...")."""
    head = text[max(0, start - 80): start]
    head = re.split(r"[.;!?\n]", head)[-1]
    return bool(cue("avoided").search(head))


#: a trailing comment opened earlier on a line ("x = 1  // don't call Find here"): a mention after it is a comment
_TRAILING_COMMENT = re.compile(r"(?<![:/])//|/\*|\s#\s|\s--\s")
_FUNC = re.compile(r"\b(?P<name>[A-Za-z_]\w*)\s*\([^;()]*\)\s*(?:->\s*[\w\[\], .]+)?\s*(?:\{|:|=>)?\s*")
_NOT_FUNC = {"if", "for", "foreach", "while", "switch", "catch", "using", "lock", "return", "elif", "with", "match"}


def enclosing_function(content: str, start: int) -> str | None:
    """The name of the function a position of a code file sits in: a declaration earlier on the
    same line (``void Awake() { ... }``), else the nearest less-indented declaration line above.
    None when no declaration encloses it (file level, or a form this reading does not know)."""
    a = content.rfind("\n", 0, start) + 1
    same = [m for m in _FUNC.finditer(content[a:start]) if m.group("name") not in _NOT_FUNC
            and "{" in m.group(0)]
    if same:
        return same[-1].group("name")
    line = _line_of(content, start)
    ind = len(line) - len(line.lstrip())
    for ln in reversed(content[:a].splitlines()):
        if not ln.strip() or ln.strip() in ("{", "}"):
            continue
        i = len(ln) - len(ln.lstrip())
        if i >= ind:
            continue
        m = _FUNC.fullmatch(ln.strip())
        if m and m.group("name") not in _NOT_FUNC:
            return m.group("name")
        m = re.match(r"\s*(?:[\w<>\[\],]+\s+)+(?P<name>[A-Za-z_]\w*)\s*\(", ln)
        if m and m.group("name") not in _NOT_FUNC and ln.rstrip().endswith(("{", ")", ":")):
            return m.group("name")
        ind = i
    return None


def locate(spec: Spec, ev: EvidenceRecord) -> list[Hit]:
    """Every occurrence of every element in the evidence, with where it is and whether it is used."""
    hits: list[Hit] = []
    for el in spec.elements:
        if el.kind == "limit":
            continue
        if ev.action is not None:
            cmd = ev.action.get("command") if isinstance(ev.action.get("command"), str) else ""
            blob = cmd + "\n" + json.dumps({k: v for k, v in ev.action.items() if k != "command"}, ensure_ascii=False)
            hits += [Hit(el, "action", False, m.group(0)) for m in el.finditer(blob)]
        for a in ev.artifacts or []:
            if a.deleted:
                continue
            for m in el.finditer(a.content):
                line = _line_of(a.content, m.start())
                comment = bool(_COMMENT.search(line)) or bool(re.search(r"\{%-?\s*comment", line)) \
                    or bool(_TRAILING_COMMENT.search(a.content[a.content.rfind("\n", 0, m.start()) + 1: m.start()]))
                where = "comment" if comment else "code"
                # a ban that holds in some functions, in a file that declares one of them (else the
                # words after the preposition were no function names: "in Python")
                if where == "code" and el.polarity == "forbid" and \
                        any(re.search(rf"\b{re.escape(p)}\s*\(", a.content) for p in spec.places):
                    fn = enclosing_function(a.content, m.start())
                    if fn is not None and fn not in spec.places:
                        where = "code_elsewhere"  # used outside the places the ban names: not a use
                hits.append(Hit(el, where, False, line.strip()[:120]))
        if ev.reply:
            hits += _prose_hits(el, ev.reply)
    return hits


def limit_over(spec: Spec, ev: EvidenceRecord) -> float:
    """How far the evidence's files (or, without files, the reply) exceed the rule's explicit limit:
    (count - limit) / limit, 0 when within, -1 when the rule has no limit or nothing to count."""
    lims = [e for e in spec.forbidden if e.kind == "limit" and e.limit]
    if not lims:
        return -1.0
    el = lims[0]
    texts = [a.content for a in ev.artifacts or [] if not a.deleted] or ([ev.reply] if ev.reply else []) \
        or action_texts(ev.action)
    if not texts:
        return -1.0
    unit = el.text.split()[-1]
    if unit.startswith("character"):  # a character limit on a named line (subject, title) is on its first line
        one = bool(_LINE_PART.search(spec.source))
        counts = [len(next((x for x in t.splitlines() if x.strip()), "").strip()) if one else len(t.strip())
                  for t in texts]
    else:
        counts = [len([x for x in t.splitlines() if x.strip()]) if unit.startswith("line") else len(t.split())
                  for t in texts]
    return max(0.0, (max(counts) - el.limit) / el.limit) if el.limit else -1.0


_LINE_PART = re.compile(r"\b(?:subject|title|headline|heading|header|first line|summary line)s?\b", re.IGNORECASE)


def action_texts(action: dict | None) -> list[str]:
    """The free texts an action carries: string arguments other than the tool and command names,
    and the message of a ``-m``/``--message`` flag in a shell command."""
    if not action:
        return []
    out: list[str] = []
    args = action.get("args") if isinstance(action.get("args"), dict) else {}
    for k, v in [*action.items(), *args.items()]:
        if isinstance(v, str) and k not in ("tool", "command", "name", "verb", "resource") and v.strip():
            out.append(v)
    cmd = action.get("command") or args.get("command")
    if isinstance(cmd, str):
        out += [a or b for a, b in re.findall(r"(?:-m|--message)[= ]\s*(?:\"([^\"]*)\"|'([^']*)')", cmd)]
    return out


# -- the learned specification judge ---------------------------------------------------------------
FEATURES: tuple[str, ...] = (
    "stage_ok", "forbid_used", "forbid_mentioned_only", "required_found", "has_forbidden", "has_required",
    "limit_over", "limit_within", "scope_out", "applies_task_true", "applies_task_false", "applies_ev_true",
    "applies_ev_false", "condition_sim", "exception_sim", "reader_violation", "reader_pass", "reader_na",
    "prog_violation", "prog_pass", "prog_na", "has_conditions", "stage_evidence_present", "condition_cover",
    "require_cover", "forbid_cover", "place_violation", "place_pass")
CLASSES: tuple[str, ...] = ("violation", "pass", "not_applicable")


def spec_stages(rule: Rule, check: Any) -> tuple[str, ...]:
    """The stages a rule's specification checks: the compiled check's, else the rule's reading."""
    from toolkit.rules.checks._compiler import _semantic_check, read_rule

    if check is not None:
        return tuple(check.needs())
    rd = read_rule(rule)
    targets = list(rd.targets)
    for el in spec_of(rule).elements:
        if el.kind.startswith("concept:"):
            w = concepts().concepts[el.kind.split(":", 1)[1]].where
            targets.append({"code": "artifact"}.get(w, w))
    if not targets:
        targets = ["reply"]
    return tuple(_semantic_check(rule, rd, tuple(dict.fromkeys(targets))).evidence)


def element_targets(rule: Rule) -> tuple[str, ...]:
    """Where a rule's elements show: a concept's place, a command in an action, code in files."""
    from toolkit.rules.checks._compiler import _is_command

    out = []
    for el in spec_of(rule).elements:
        if el.kind.startswith("concept:"):
            w = concepts().concepts[el.kind.split(":", 1)[1]].where
            out.append({"code": "artifact"}.get(w, w))
        elif el.kind == "limit":
            out.append("reply")
        elif _is_command(el.text):
            out.append("action")
        else:
            out.append("artifact")
    return tuple(dict.fromkeys(out))


def policy_label(rule: Rule, check: Any, ev: EvidenceRecord) -> str | None:
    """The deterministic stages before the learned judge: a programmatic check (the compiled one,
    or the one the rule's structure gives) runs locally; a stage the specification does not check
    and a task of another project are not applicable. None: the learned judge decides."""
    from toolkit.rules.checks._api import auto_check
    from toolkit.rules.checks._judge import scope_stage

    chk = check if check is not None else auto_check(rule)
    if chk is not None and chk.programmatic:
        return chk.run(ev).label
    if check is not None and ev.stage not in check.needs():
        return "not_applicable"
    if scope_stage(rule, ev.task) is False:
        return "not_applicable"
    return None


def _evidence_parts(ev: EvidenceRecord) -> list[str]:
    parts = list(tx.sentences(ev.task or ""))[:6] or [ev.task or ""]
    if ev.action is not None:
        parts.append(str(ev.action.get("command") or json.dumps(ev.action, ensure_ascii=False))[:300])
    for a in ev.artifacts or []:
        parts.append(a.path)
        parts.append(f"{a.path}: {a.content[:300]}")
    if ev.reply:
        parts += list(tx.sentences(tx.prose(ev.reply)))[:4]
    return [p for p in parts if p.strip()]


def _produced_text(ev: EvidenceRecord) -> str:
    """What the agent produced at this stage: the action, the files written, the reply (not the task)."""
    bits = []
    if ev.action is not None:
        bits.append(json.dumps(ev.action, ensure_ascii=False))
    bits += [a.content for a in ev.artifacts or [] if not a.deleted]
    if ev.reply:
        bits.append(ev.reply)
    return "\n".join(bits)


def clause_cover(behavior: str, ev: EvidenceRecord) -> tuple[float, float]:
    """Share of the content words of the rule's requirement clauses (and of its ban clauses) that
    the produced evidence carries (stems; 0 when the rule has no such clause): a requirement
    named in words ("requests and limits for cpu and memory") leaves its words in compliant output."""
    from toolkit.rules.checks._compiler import strip_preamble
    from toolkit.rules.checks._selection import _content_stems

    got = _content_stems(re.sub(r"[/_.\-:]", " ", _produced_text(ev)))
    out = []
    for pol in ("require", "forbid"):
        words = frozenset().union(*[_content_stems(c) for p, c in clauses(strip_preamble(behavior)) if p == pol])
        out.append(len(words & got) / len(words) if words else 0.0)
    return out[0], out[1]


def _evidence_summary(ev: EvidenceRecord) -> str:
    bits = [ev.task or ""]
    if ev.action is not None:
        bits.append(str(ev.action.get("command") or ""))
    bits += [f"{a.path} {a.content[:400]}" for a in ev.artifacts or []]
    if ev.reply:
        bits.append(ev.reply[:400])
    return "\n".join(bits)


def surely_applies(rule: Rule, check: Any, ev: EvidenceRecord) -> bool:
    """Whether ``not_applicable`` is impossible for this item: a global rule with no conditions and
    no exceptions, judged at a stage its specification checks, with that stage's evidence present.
    ``not_applicable`` needs a reason (stage, scope, a failing condition, a holding exception); the
    learned judge may only choose it where one of those can hold."""
    present = {"pre_action": ev.action is not None, "artifact": bool(ev.artifacts),
               "delivery": ev.reply is not None}.get(ev.stage, False)
    return (rule.scope == "global" and not rule.conditions and not rule.exceptions and present
            and ev.stage in spec_stages(rule, check))


@dataclass
class SpecJudge:
    """Learned specification judge (see the module docstring). scikit-learn contract: ``fit``
    returns self, learned attributes end in ``_``; constants chosen by rule-grouped CV."""

    embedder: str = "minilm"
    # rule-grouped 5-fold CV on development (pooled BA, violation vs not, 170 items with w8), re-run
    # after the compliance reader's part stage changed the reader features this judge reads:
    # C=2 0.645, 1 0.669, 0.5 0.669, 0.3 0.759, 0.1 0.794, 0.03 0.759 (before that change: 0.1 0.794, 1 0.806).
    # Re-run with w11 as development (218 items, 5 sets; the reader fixes of issue 16's fourth pass):
    # C=0.03 0.760, 0.1 0.771, 0.3 0.784, 1 0.784; the smaller of the tie, 0.3
    # With w14 as development (266 items, 6 sets): three-class P(violation) 0.716 (28 of 110
    # violations called not_applicable: the class probability is split between pass and
    # not_applicable); a separate violation-vs-rest model for P(violation) (``binary``) 0.749
    # (C=0.1 0.750, 0.3 0.749, 1 0.744; min_precision 0.75 0.747, 0.8 0.748, 0.85 0.749, 0.9 0.704)
    # After merging issue 15's fifth pass (the reader's scope cues change the features), same CV:
    # C=0.1 0.701, 0.3 0.740, 1 0.749, 3 0.731; so 1
    # With w16 as development (314 items, 7 sets), leave-one-batch-out (each batch judged by a judge
    # fit on the other six, its threshold from their rule-grouped CV: what a first contact sees),
    # pooled BA by min_precision at C=1: 0.85 0.679, 0.8 0.694, 0.75 0.720, 0.7 0.755, 0.65 0.741,
    # 0.6 0.752 (C=0.3: 0.684, 0.706, 0.724, 0.756, 0.750, 0.756); so 0.7 at C=1. The 0.85 floor
    # had left 60% of the violations below the threshold (recall 0.40 out of fold). Tried, same
    # leave-one-batch-out at 0.7, not kept: CV folds grouped by batch for the threshold (0.736), the
    # selection's condition model P(conditions hold | task) as a feature (0.752).
    # After merging issue 15's sixth pass (the reader's learned applicability model changes the
    # features), the same leave-one-batch-out at C=1: 0.85 0.691, 0.8 0.705, 0.75 0.721, 0.7 0.720,
    # 0.65 0.710, 0.6 0.707: 0.75 and 0.7 tie within one item, so 0.7 stays.
    # With w19 as development (362 items, 8 sets), the same leave-one-batch-out at C=1: 0.6 0.719,
    # 0.65 0.712, 0.7 0.712, 0.75 0.696; the threshold of the highest CV balanced accuracy instead
    # of a precision floor 0.708; boosted trees 0.699 (none kept: within noise, the features are the
    # limit, out-of-fold AUC 0.73 on the items the policy leaves to the model). The debug-output kind
    # in concepts.yaml (print statements, console.log, IO.inspect left in code): 0.712 -> 0.735;
    # "the `X` argument of <tool>" read as a programmatic field: 0.739. Tried, not kept: commands a
    # ban clause lists in parentheses ("(rm -rf, cargo flash)") as code elements: 0.736.
    # With w23 as development (410 items, 9 sets), the same leave-one-batch-out: 0.730; a ban's
    # places ("calls inside Update or LateUpdate") and trailing comments read apart: 0.754; then by
    # min_precision at C=1: 0.6 0.730, 0.65 0.752, 0.7 0.754, 0.75 0.722, so 0.7 stays.
    # With w26 as development (458 items, 10 sets), the same leave-one-batch-out: 0.722; code lists,
    # illustrations and ellipsis-ended quotes in the element reader 0.731; the requirement / ban word
    # cover features 0.732 (checkable validated 38 -> 41/119, the checker being this judge); then by
    # min_precision: 0.7 0.732 (41 validated), 0.65 0.753 (41), 0.6 0.760 (33): 0.65 keeps the
    # validations and gains 0.02, so it is the new value.
    # With w30 as development (506 items, 11 sets), leave-one-batch-out (each batch judged by a judge
    # fit on the other ten; the policy stage's labels as in the pipeline): 0.709 (violation recall
    # 0.648); the deletion-place and preservation kinds (:mod:`toolkit.rules.checks._places`: a
    # deletion inside a banned place or outside every allowed one, a kept file written) as two
    # features 0.722 (0.676); then by min_precision: 0.65 0.722, 0.6 0.737 (violation recall 0.795),
    # 0.55 0.726; without the place features 0.6 gives 0.729. So 0.6.
    C: float = 1.0
    min_precision: float = 0.6
    unknown_band: float = 0.0
    folds: int = 5
    random_state: int = 0
    #: P(violation) from its own violation-vs-rest model (the three-class model then only orders
    #: pass against not_applicable below the threshold)
    binary: bool = True
    _vec: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    #: feature rows by item content (the diagnostic judges the development items it was fit on)
    _feat: dict[tuple[str, str, str], np.ndarray] = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the in-process memos (vectors, feature rows): not part of the fit."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_vec", "_feat")} | {"_vec": {}, "_feat": {}}

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._vec]
        if todo:
            from toolkit.rules.checks._selection import _shared_embedder

            for t, v in zip(todo, _shared_embedder(self.embedder).embed(todo), strict=True):
                self._vec[t] = np.asarray(v, dtype=float)
        return np.stack([self._vec[t] for t in texts]) if texts else np.zeros((0, 1))

    def features(self, items: Sequence[tuple[Rule, Any, EvidenceRecord]]) -> np.ndarray:
        """One row of :data:`FEATURES` per (rule, check, evidence); rows are memoised by the
        item's content (they are a deterministic function of it)."""
        keys = [(r.model_dump_json(), json.dumps(c.to_dict(), sort_keys=True) if c is not None else "",
                 ev.model_dump_json()) for r, c, ev in items]
        first = {k: i for i, k in reversed(list(enumerate(keys)))}  # each new key's first item
        todo = [k for k in first if k not in self._feat]
        if todo:
            for k, row in zip(todo, self._features([items[first[k]] for k in todo]), strict=True):
                self._feat[k] = row
        return np.asarray([self._feat[k] for k in keys], dtype=float).reshape(len(items), len(FEATURES))

    def _features(self, items: Sequence[tuple[Rule, Any, EvidenceRecord]]) -> np.ndarray:
        from toolkit.compliance import read_many
        from toolkit.rules.checks._api import auto_check
        from toolkit.rules.checks._judge import scope_stage, to_reader_evidence, to_reader_rule
        from toolkit.rules.checks._places import place_verdict
        from toolkit.rules.checks._selection import _applies, task_project

        verdicts = read_many([(to_reader_rule(r), to_reader_evidence(ev), ()) for r, _, ev in items])
        # every text the rows compare, embedded in one call (same-length batches are larger; a
        # vector depends on its text alone, so the rows are the same as text by text)
        self._vectors(list(dict.fromkeys(t for r, _, ev in items for t in
                                         [*_evidence_parts(ev), *r.conditions, *r.exceptions])))
        rows = []
        for (rule, check, ev), v in zip(items, verdicts, strict=True):
            spec = spec_of(rule)
            stages = spec_stages(rule, check)
            hits = locate(spec, ev)
            fh = [h for h in hits if h.element.polarity == "forbid"]
            used = [h for h in fh if h.where in ("action", "code", "reply_code") or
                    (h.where == "reply_prose" and not h.negated)]
            rh = [h for h in hits if h.element.polarity == "require" and not h.negated and h.where != "comment"]
            lo = limit_over(spec, ev)
            proj = rule.scope.split(":", 1)[1] if rule.scope.startswith("project:") else None
            named = proj if proj and scope_stage(rule, ev.task) else None
            at = _applies(rule, ev.task, named or task_project(ev.task, [rule]))
            aev = _applies(rule, _evidence_summary(ev), named)
            parts = _evidence_parts(ev)
            pv = self._vectors(parts)
            csim = 1.0
            if rule.conditions:
                cv = self._vectors(list(rule.conditions))
                csim = float((cv @ pv.T).max(axis=1).min())
            esim = 0.0
            if rule.exceptions:
                xv = self._vectors(list(rule.exceptions))
                esim = float((xv @ pv.T).max())
            prog = auto_check(rule)
            pj = prog.run(ev).label if prog is not None else None
            pl = place_verdict(rule, ev)  # deletions and writes against the places the rule names
            present = {"pre_action": ev.action is not None, "artifact": bool(ev.artifacts),
                       "delivery": ev.reply is not None}.get(ev.stage, False)
            cover = 1.0
            if rule.conditions:
                from toolkit.rules.checks._selection import _content_stems

                es = _content_stems(re.sub(r"[/_.\-]", " ", _evidence_summary(ev)))
                cover = min(len(_content_stems(c) & es) / max(1, len(_content_stems(c))) for c in rule.conditions)
            rows.append([
                float(ev.stage in stages), float(bool(used)), float(bool(fh) and not used), float(bool(rh)),
                float(any(e.kind != "limit" for e in spec.forbidden)), float(bool(spec.required)),
                float(lo > 0), float(lo == 0), float(scope_stage(rule, ev.task) is False),
                float(at is True), float(at is False), float(aev is True), float(aev is False), csim, esim,
                float(v.label == "violation"), float(v.label == "pass"), float(v.label == "not_applicable"),
                float(pj == "violation"), float(pj == "pass"), float(pj == "not_applicable"),
                float(bool(rule.conditions)), float(present), cover, *clause_cover(rule.behavior, ev),
                float(pl == "violation"), float(pl == "pass")])
        return np.asarray(rows, dtype=float)

    def _make(self) -> Any:
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(StandardScaler(), LogisticRegression(C=self.C, class_weight="balanced", max_iter=2000,
                                                                  random_state=self.random_state))

    def fit(self, items: Sequence[tuple[Rule, Any, EvidenceRecord]], labels: Sequence[str],
            groups: Sequence[str]) -> SpecJudge:
        """Fit on labelled development items; the violation threshold from rule-grouped CV
        predictions (the lowest threshold whose CV precision reaches ``min_precision``)."""
        from sklearn.model_selection import GroupKFold

        forced = [policy_label(r, c, ev) for r, c, ev in items]
        keep = [i for i, f in enumerate(forced) if f is None]
        x = self.features([items[i] for i in keep])
        y = np.asarray([CLASSES.index(labels[i]) for i in keep])
        g = np.asarray([groups[i] for i in keep])
        n_groups = len(set(groups))
        proba = np.zeros((len(y), len(CLASSES)))
        for tr, te in GroupKFold(n_splits=min(self.folds, n_groups)).split(x, y, g):
            m = self._make().fit(x[tr], y[tr])
            p = m.predict_proba(x[te])
            for k, c in enumerate(m[-1].classes_):
                proba[te, c] = p[:, k]
            if self.binary:
                proba[te, 0] = self._make().fit(x[tr], (y[tr] == 0).astype(int)).predict_proba(x[te])[:, 1]
        pv = proba[:, 0]
        best = (1.01, 0.0)
        for th in np.round(np.arange(0.95, 0.14, -0.01), 2):
            pred = pv >= th
            if pred.sum() == 0:
                continue
            prec = float((y[pred] == 0).mean())
            if prec >= self.min_precision:
                best = (float(th), prec)
        self.threshold_ = best[0] if best[0] <= 1.0 else 0.5
        self.cv_proba_ = proba
        sure = [surely_applies(*items[i]) for i in keep]
        learned = iter([self._decide(p, a) for p, a in zip(proba, sure, strict=True)])
        self.cv_labels_ = [f if f is not None else next(learned) for f in forced]
        self.model_ = self._make().fit(x, y)
        self.violation_model_ = self._make().fit(x, (y == 0).astype(int)) if self.binary else None
        self.n_items_, self.n_rules_, self.n_policy_ = len(items), n_groups, len(items) - len(keep)
        return self

    def _decide(self, p: np.ndarray, applies: bool = False) -> str:
        """The label for class probabilities ``p``; ``applies``: nothing can make the rule not
        applicable here (see :func:`surely_applies`), so below the violation threshold it is a pass."""
        if p[0] >= self.threshold_:
            return "violation"
        if p[0] >= self.threshold_ - self.unknown_band:
            return "unknown"
        return "pass" if applies or p[1] >= p[2] else "not_applicable"

    def predict_proba(self, items: Sequence[tuple[Rule, Any, EvidenceRecord]]) -> np.ndarray:
        x = self.features(items)
        p = self.model_.predict_proba(x)
        out = np.zeros((len(items), len(CLASSES)))
        for k, c in enumerate(self.model_[-1].classes_):
            out[:, c] = p[:, k]
        if self.violation_model_ is not None:
            out[:, 0] = self.violation_model_.predict_proba(x)[:, 1]
        return out

    def predict(self, items: Sequence[tuple[Rule, Any, EvidenceRecord]]) -> list[str]:
        return [self._decide(p, surely_applies(*it)) for p, it in
                zip(self.predict_proba(items), items, strict=True)] if items else []

    def explain(self, rule: Rule, ev: EvidenceRecord, label: str, p: np.ndarray) -> tuple[str, tuple[str, ...]]:
        """A reason and verbatim quotes for one judgment (the element hits behind it)."""
        spec = spec_of(rule)
        hits = locate(spec, ev)
        used = [h for h in hits if h.element.polarity == "forbid" and (h.where in ("action", "code", "reply_code")
                                                                          or (h.where == "reply_prose"
                                                                              and not h.negated))]
        req = [h for h in hits if h.element.polarity == "require" and not h.negated]
        if label == "violation":
            if used:
                why = "forbidden " + ", ".join(dict.fromkeys(h.element.text for h in used)) + " used in " + \
                      ", ".join(dict.fromkeys(h.where for h in used))
            elif limit_over(spec, ev) > 0:
                why = "over the limit (" + next(e.text for e in spec.forbidden if e.kind == "limit") + ")"
            else:
                miss = [e.text for e in spec.required if e not in {h.element for h in req}]
                why = "required " + (", ".join(miss) or "behaviour") + " not shown"
            quotes = tuple(h.quote for h in used) or tuple(h.quote for h in hits[:2])
        elif label == "pass":
            why = "no forbidden element used" + (
                "; required " + ", ".join(dict.fromkeys(h.element.text for h in req)) + " present" if req else "")
            quotes = tuple(h.quote for h in req[:3])
        elif label == "not_applicable":
            why, quotes = "the rule's stage, scope or condition does not hold for this evidence", ()
        else:
            why, quotes = "cannot tell (P(violation) just under the operating point)", ()
        return f"{why} (P(violation)={p[0]:.2f}, threshold {self.threshold_:.2f})", quotes


def development_judge_sets() -> list[tuple[str, list, dict[str, str]]]:
    """Every development judge set (role checked: fitting on held-out or first-contact raises)."""
    from toolkit.diagnostics.checks import batch_folders, load_judge_set
    from toolkit.paper import fixtures_dir
    from toolkit.splits import require_role, role_of

    base = fixtures_dir() / "checks"
    out = []
    for folder, stem in [(base, "dev_judge"), *[(f, "judge") for f in batch_folders(base)]]:
        path = folder / f"{stem}.jsonl"
        if role_of(path) != "development":
            continue
        require_role(path, "fit")
        recs, gold = load_judge_set(folder, stem)
        out.append((folder.name if folder != base else "dev", recs, gold))
    return out


def development_judge_files() -> list[Any]:
    """The files a development judge fit reads: every development judge set with its gold, and
    ``SPLITS.json`` (which decides the roles)."""
    from toolkit.diagnostics.checks import batch_folders, gold_path
    from toolkit.paper import fixtures_dir
    from toolkit.splits import role_of

    base = fixtures_dir() / "checks"
    out = [fixtures_dir() / "SPLITS.json"]
    for folder, stem in [(base, "dev_judge"), *[(f, "judge") for f in batch_folders(base)]]:
        if role_of(folder / f"{stem}.jsonl") == "development":
            out += [folder / f"{stem}.jsonl", gold_path(folder, stem)]
    return out


#: the code a judge fit runs (the modules with everything they import, and every resource table,
#: the compliance reader's shipped model included): a change to any of them refits
JUDGE_CODE: tuple[str, ...] = ("toolkit.rules.checks._spec", "toolkit.rules.checks._places",
                               "toolkit.rules.checks._api", "toolkit.rules.checks._judge", "toolkit.compliance",
                               "resources/**/*.yaml", "resources/**/*.json")


@cache
def default_spec_judge(embedder: str = "minilm") -> SpecJudge:
    """The offline specification judge fit on every development judge set (cached on disk by
    :func:`toolkit.rules._model_cache.cached_fit`, keyed by the training files, parameters and
    code, so CLI calls, notebooks and tests reuse one fit; the fitted judge is the same object)."""
    from toolkit.rules._model_cache import cached_fit

    def build() -> SpecJudge:
        items, labels, groups = [], [], []
        for name, recs, gold in development_judge_sets():
            for r in recs:
                items.append((r.rule, None, r.evidence))
                labels.append(gold[r.id])
                groups.append(f"{name}:{r.rule.id}")
        return SpecJudge(embedder=embedder).fit(items, labels, groups)

    return cached_fit("checks-judge", development_judge_files(), {"embedder": embedder, "version": 1}, build,
                      code=JUDGE_CODE)
