"""Check compilation (TellOnce B.2): rule -> programmatic | semantic | guidance | inactive.

The loop follows B.2: a *compiler* proposes a check and 3-9 validation cases with expected labels
(compliance, violation, non-applicability; each checking stage gets a compliant and a violating
case, the set at least one non-applicable case); a *reviewer* that is a different method labels
the cases blind (it never sees the expected labels) and checks that the proposal keeps the
rule's scope, conditions and exceptions; the cases are then executed through the real checker
(:func:`toolkit.rules.checks._judge.judge`). Any disagreement rejects the proposal; the compiler
revises from the rejection reason for up to three rounds, then the rule stays as guidance when
its meaning is clear, or inactive.

Offline roles: the compiler reads the rule with the pattern tables in
``toolkit/resources/checks/*.yaml``; the reviewer is the compliance reader
(``toolkit.compliance.read``) on the rule's own words; the checker runs programmatic checks
locally and semantic specifications through the reader. LLM roles go through the gateway with
separate prompts for compiler and reviewer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from toolkit import text as tx
from toolkit.records import EvidenceRecord, Rule
from toolkit.rules.checks import _resources as res
from toolkit.rules.checks._types import (
    Check,
    FieldEquals,
    FieldNotEquals,
    FileLacks,
    JsonFields,
    Judgment,
    Label,
    MaxLines,
    MaxWords,
    SemanticSpec,
    StartsWith,
    make_evidence,
)

Outcome = Literal["programmatic", "semantic", "guidance", "inactive"]
MAX_ROUNDS = 3
MIN_CASES, MAX_CASES = 3, 9


@dataclass(frozen=True)
class Case:
    """One validation case: evidence at a stage and the label the compiler expects."""

    evidence: EvidenceRecord
    expected: Label
    note: str = ""
    slot: str = ""  # which requirement of the case set this case fills (revised per slot)


@dataclass(frozen=True)
class Proposal:
    """A compiler's proposal: a check and its validation cases (or a decline with a reason)."""

    outcome: Outcome
    check: Check | None
    cases: tuple[Case, ...] = ()
    reason: str = ""
    clear: bool = True  # when declined or rejected: is the rule's meaning clear (guidance) or not
    status: Literal["ok", "unknown"] = "ok"  # unknown: the compiler (an LLM) gave no valid answer


@dataclass(frozen=True)
class Review:
    """The reviewer's blind reading: is the proposal faithful, and its own label per case."""

    faithful: bool
    labels: tuple[Label | None, ...]
    reason: str = ""


@dataclass
class Round:
    """What happened in one validation round (kept for the widget and the diagnostic)."""

    number: int
    proposal: Proposal
    review: Review | None = None
    executed: tuple[Judgment, ...] = ()
    accepted: bool = False
    rejection: str = ""


@dataclass
class Compilation:
    """The result for one rule: outcome, activated check, validation counts and the rounds."""

    rule: Rule
    outcome: Outcome | None
    check: Check | None
    status: Literal["ok", "unknown"] = "ok"
    reason: str = ""
    proposed: Literal["programmatic", "semantic"] | None = None
    rounds: list[Round] = field(default_factory=list)

    @property
    def validation(self) -> dict[str, int]:
        last = self.rounds[-1] if self.rounds else None
        if last is None:
            return {"cases": 0, "agreed": 0, "rounds": 0}
        return {"cases": len(last.proposal.cases), "agreed": agreed(last), "rounds": len(self.rounds)}

    def probes(self) -> list[tuple[Label, Label]]:
        """(expected, executed) for every executed validation case of every round."""
        return [(c.expected, j.label) for r in self.rounds for c, j in zip(r.proposal.cases, r.executed, strict=False)]

    def to_record(self, rid: str) -> dict[str, Any]:
        return {"id": rid, "status": self.status, "outcome": self.outcome,
                "check": self.check.to_dict() if self.check is not None else None,
                "validation": self.validation if self.status == "ok" else None,
                "proposed": self.proposed, "reason": self.reason}


def agreed(r: Round) -> int:
    """Cases on which reviewer, checker and the compiler's expected label all agree."""
    if r.review is None:
        return 0
    n = 0
    for i, c in enumerate(r.proposal.cases):
        rv = r.review.labels[i] if i < len(r.review.labels) else None
        ex = r.executed[i].label if i < len(r.executed) else None
        n += int(rv == c.expected and ex == c.expected)
    return n


class Compiler(Protocol):
    name: str

    def propose(self, rule: Rule, feedback: Sequence[Round]) -> Proposal: ...


class Reviewer(Protocol):
    name: str

    def review(self, rule: Rule, check: Check, evidence: Sequence[EvidenceRecord]) -> Review: ...


Checker = Callable[[Rule, Check, EvidenceRecord], Judgment]


# -- the offline compiler: reading a rule with the resource tables ------------------------------
@dataclass(frozen=True)
class Reading:
    """What the offline compiler reads in a rule's behaviour."""

    body: str
    ambiguous: str | None
    unobservable: str | None
    programmatic: tuple[str, dict[str, str]] | None
    targets: tuple[str, ...]
    polarity: Literal["forbid", "require"]
    subject: str


def strip_preamble(text: str) -> str:
    """The behaviour without courtesy and reminder words ("please remember to ...")."""
    s = text.strip()
    m = res.semantic().preamble.search(s)
    if m and m.start() == 0:
        s = s[m.end():]
    return s[:1].upper() + s[1:] if s else s


def inline_condition(behavior: str) -> tuple[str | None, str]:
    """(condition stated inside the behaviour, the requirement) — (None, behaviour) when none."""
    body = strip_preamble(behavior)
    m = res.semantic().leading_condition.search(body)
    if not m:
        return None, body
    req = m.group("req").strip()
    return m.group("cond").strip(), req[:1].upper() + req[1:]


def read_rule(rule: Rule) -> Reading:
    """Read a rule's behaviour: ambiguity, observability, computable form, targets, polarity."""
    body = strip_preamble(rule.behavior)
    sem, prog = res.semantic(), res.programmatic()
    amb = next((k for k, kind in sem.ambiguous.items() if kind.search(body)), None)
    unobs = next((k for k, kind in sem.unobservable.items() if kind.search(body)), None)
    pm = None
    for k, kind in prog.kinds.items():
        m = kind.search(body)
        if m:
            pm = (k, {n: v for n, v in m.groupdict().items() if v})
            break
    cond, req = inline_condition(body)
    # where the requirement shows is read on the requirement: a leading condition ("when a change
    # touches the parser, ...") says when the rule applies, not where its evidence is
    targets = tuple(t for t, kind in sem.targets.items() if kind.search(req)) if cond else ()
    targets = targets or tuple(t for t, kind in sem.targets.items() if kind.search(body))
    if sem.reply_place.search(body):  # "explain in your reply ...": checked on the reply only
        targets = ("reply",)
    ban = sem.ban_cues.search(req)
    forbid = bool(ban) and len(tx.words(req[: ban.start()])) <= 2
    subject = req[ban.end():].strip(" ,.") if forbid and ban else req.rstrip(" .")
    swap = sem.replacement.search(req)
    if swap and not forbid:  # "use X instead of Y" forbids Y
        forbid, subject = True, swap.group("avoid").strip(" ,.")
    return Reading(body, amb, unobs, pm, targets, "forbid" if forbid else "require", subject)


def _field_target(text: str) -> str:
    for t, pats in res.programmatic().targets_for_fields.items():
        if any(re.search(p, text, re.IGNORECASE) for p in pats):
            return t
    return "reply"


def _programmatic_check(kind: str, params: dict[str, str], body: str) -> Check | None:
    if kind == "max_words":
        return MaxWords(value=int(params["value"]))
    if kind == "json_fields":
        raw = params.get("fields", "")
        quoted = re.findall(r"[`\"']([A-Za-z_][\w\-]*)[`\"']", raw)  # quoted names: only those
        # bare names: an article before a name is dropped ("a status"), a lone "a" is a name ("fields a, b")
        names = quoted or [re.sub(r"^(?:the|an?)\s+", "", f.strip(" `\"'."), flags=re.IGNORECASE)
                           for f in re.split(r",|\band\b|\bor\b", raw)]
        names = [n for n in names if re.fullmatch(r"[A-Za-z_][\w\-]*", n) and n.lower() != "the"]
        return JsonFields(fields=tuple(dict.fromkeys(names))) if names else None
    if kind == "max_lines":
        return MaxLines(value=int(params["value"]))
    if kind == "starts_with":
        lits = [x for x in re.findall(r"[`\"']([^`\"']+)[`\"']", params.get("values", "")) if x.strip()]
        words = params.get("field", "").lower().split()
        name = _singular(words[-1]) if words else ""
        if name in ("repl", "reply", "answer", "response"):
            return StartsWith(target="reply", field="", value="|".join(lits)) if lits else None
        target = "action" if words and words[0] in ("commit", "branch", "tag", "pr", "pull") else _field_target(body)
        return StartsWith(target=target, field=name, value="|".join(lits)) if lits and name else None
    if kind == "field_not_equals":
        value = params.get("value", "").strip()
        tool = params.get("tool", "").strip()
        target = "action" if tool else _field_target(body)
        return FieldNotEquals(target=target, field=params["field"].strip(), value=value,
                              tool=tool if target == "action" else "") if value else None
    if kind == "file_lacks_literal":
        endings = res.programmatic().endings(params.get("ftype", ""))
        value = params.get("value", "")
        return FileLacks(endings=endings, value=value) if endings and value.strip() else None
    if kind in ("field_equals", "field_equals_boolean"):
        value = params.get("value") or params.get("bare") or ""  # a quoted literal, or a bare one (an address)
        return FieldEquals(target=_field_target(body), field=params["field"].strip().replace(" ", "_"),
                           value=value.strip()) if value.strip() else None
    return None


_NEUTRAL_TASKS = (
    "Fix the off-by-one error in the pagination helper.",
    "Rename the variable tmp to total in the report module.",
    "Update the copyright year in the footer template.",
)
_NEUTRAL_REPLY = "I fixed the off-by-one error in the pagination helper."
DOMAIN_TASKS = True
ECHO_CASES = False
#: elementless rules get echoed cases (off: they get a specification with no case showing the
#: behaviour, rejected by the structural check before any reviewer or checker call; with echoed
#: cases the reviewer refuses them, so the outcome is the same at more cost)
ECHO_ELEMENTLESS = False
_NEUTRAL_CODE = "def page_count(total, size):\n    return (total + size - 1) // size\n"


_EXAMPLES = re.compile(r"\((?:e\.g\.|for example|such as|like)\s*,?\s*(?P<list>[^)]+)\)|`(?P<code>[^`]+)`", re.IGNORECASE)


def rule_examples(text: str) -> list[str]:
    """Examples the rule itself gives: a parenthesised "e.g. ..." list, or code in backticks."""
    out: list[str] = []
    for m in _EXAMPLES.finditer(text):
        if m.group("list"):
            out += [x.strip(" .") for x in re.split(r",|\bor\b", m.group("list")) if x.strip(" .")]
        elif m.group("code"):
            out.append(m.group("code").strip())
    return out


def _own_instance(rule_text: str, subject: str) -> res.Instance | None:
    """An instance from the rule's own examples: a command it names as an example of what it
    forbids is the violating action (the compliant one stays unknown, so a catalogue instance wins)."""
    sem = res.semantic()
    for ex in rule_examples(rule_text):
        if sem.targets["action"].search(ex) and len(ex.split()) >= 2 and ex.split()[0].isalpha():
            return res.Instance(concept=re.escape(ex), where="action", example=ex, plain="")
    return None


def _instance(subject: str, round_no: int = 1) -> res.Instance | None:
    """The concept the subject names first (its head: "build SQL ..., never with f-strings" is
    about SQL), ties to the longer match."""
    best: tuple[int, int, res.Instance] | None = None
    for ins in res.instances().instances:
        m = re.search(ins.concept, subject, re.IGNORECASE)
        if m and (best is None or (m.start(), -len(m.group(0))) < best[:2]):
            best = (m.start(), -len(m.group(0)), ins)
    return best[2] if best else None


def _task_for(rule: Rule, applicable: bool, salt: int) -> str:
    """A task that meets (or, for a non-applicable case, misses) the rule's scope and condition."""
    base = _NEUTRAL_TASKS[salt % len(_NEUTRAL_TASKS)]
    if applicable:
        parts = []
        if rule.scope.startswith("project:"):
            parts.append(f"In the {rule.scope.split(':', 1)[1]} project:")
        conds = [*rule.conditions, *filter(None, [inline_condition(rule.behavior)[0]])]
        for c in conds[:2]:
            cond = re.sub(r"^(?:when|whenever|if|while|for|in)\s+", "", c.strip().rstrip("."), flags=re.I)
            parts.append(f"{cond[:1].upper()}{cond[1:]}." if DOMAIN_TASKS else f"Note: {cond}.")
        if conds and DOMAIN_TASKS:  # the rule's own domain: the task is what its condition names
            return " ".join(parts)
        return " ".join(parts + [base])
    if rule.scope.startswith("project:"):
        return f"In the unrelated-sandbox project: {base}"
    return base


def _render(stage: str, show: bool, subject: str, ins: res.Instance | None, task: str,
            target: str = "reply") -> EvidenceRecord:
    """Evidence at ``stage`` that shows the subject (``show``) or does not."""
    said = f"As requested, I made sure to {subject[:1].lower() + subject[1:]}."
    if stage == "delivery" and target == "artifact":
        art = _render("artifact", show, subject, ins, task)
        return make_evidence("delivery", task, reply=_NEUTRAL_REPLY,
                             artifacts={a.path: a.content for a in art.artifacts or []})
    if stage == "pre_action":
        if ins is not None and ins.where == "action":
            cmd = ins.example if show else (ins.plain or "git status")
        else:
            cmd = f"echo '{subject}'" if show else "git status"
        return make_evidence("pre_action", task, action={"tool": "shell", "command": cmd})
    if stage == "artifact":
        if ins is not None and ins.where == "code":
            body = ins.example if show else (ins.plain or _NEUTRAL_CODE)
            return make_evidence("artifact", task, artifacts={"src/helpers.py": body})
        body = f"# Notes\n\n{said}\n" if show else "# Notes\n\nPagination fixed.\n"
        return make_evidence("artifact", task, artifacts={"NOTES.md": body})
    if ins is not None and ins.where == "reply":
        reply = ins.example if show else (ins.plain or _NEUTRAL_REPLY)
    elif ins is not None and ins.where == "code":
        reply = (f"Done. The helper now reads:\n\n```python\n{ins.example if show else (ins.plain or _NEUTRAL_CODE)}```")
    else:
        reply = said if show else _NEUTRAL_REPLY
    return make_evidence("delivery", task, reply=reply)


def _programmatic_cases(chk: Check, rule: Rule) -> list[Case]:
    task = _NEUTRAL_TASKS[0]
    na = Case(make_evidence("pre_action", task, action={"tool": "shell", "command": "git status"}),
              "not_applicable", "no reply or artifact at this stage")
    if isinstance(chk, MaxWords):
        ok = " ".join(["word"] * max(1, chk.value - 10))
        bad = " ".join(["word"] * (chk.value + 15))
        return [Case(make_evidence("delivery", task, reply=f"Done: {ok}."), "pass", "under the limit"),
                Case(make_evidence("delivery", task, reply=f"Done: {bad}."), "violation", "over the limit"), na]
    if isinstance(chk, JsonFields):
        full = "{" + ", ".join(f'"{f}": "x"' for f in chk.fields) + "}"
        part = "{" + ", ".join(f'"{f}": "x"' for f in chk.fields[:-1]) + "}"
        return [Case(make_evidence("delivery", task, reply=full), "pass", "all fields"),
                Case(make_evidence("delivery", task, reply=part), "violation", "a field missing"),
                Case(make_evidence("delivery", task, reply="The pagination helper is fixed."), "violation",
                     "not JSON"), na]
    if isinstance(chk, MaxLines):
        return [Case(make_evidence("delivery", task, reply="\n".join(["Done."] * max(1, chk.value - 1))), "pass",
                     "under the limit"),
                Case(make_evidence("delivery", task, reply="\n".join(["Done."] * (chk.value + 3))), "violation",
                     "over the limit"), na]
    if isinstance(chk, StartsWith):
        lit = chk.literals()[0]
        wrong = "x" + lit if not lit[:1].isalpha() else (lit[:1].swapcase() + lit[1:])
        if chk.target == "reply" and not chk.field:
            mk = lambda v: make_evidence("delivery", task, reply=f"{v} the pagination helper is fixed.")  # noqa: E731
            return [Case(mk(lit), "pass", "opens with the literal"), Case(mk(wrong), "violation", "another opening"), na]
    if isinstance(chk, FileLacks):
        ext = next((e for e in chk.endings if e.startswith(".")), "")
        path = f"docs/notes{ext}" if ext else chk.endings[0]
        other = "src/app.py" if ext != ".py" else "docs/notes.md"
        cases = []
        for st in chk.stages():
            mk = lambda files, st=st: make_evidence(st, task, artifacts=files,  # noqa: E731
                                                    reply=_NEUTRAL_REPLY if st == "delivery" else None)
            cases += [Case(mk({path: "# Notes\n\nThe pagination helper is fixed.\n"}), "pass",
                           f"{st}: a file of the type without the literal"),
                      Case(mk({path: f"# Notes\n\n{chk.value}: the pagination helper.\n"}), "violation",
                           f"{st}: a file of the type with the literal")]
        cases.append(Case(make_evidence("artifact", task, artifacts={other: f"# {chk.value}: tidy this\n"}),
                          "not_applicable", "only a file of another type"))
        return cases
    if isinstance(chk, FieldEquals):
        other = "something-else"
        if chk.value.strip().lower() in ("true", "false"):  # a boolean's other value is its negation
            other = "true" if chk.value.strip().lower() == "false" else "false"
        if isinstance(chk, StartsWith):
            lit = chk.literals()[0]
            return [Case(_field_case(chk, f"{lit} fix pagination", task, rule.behavior), "pass", "starts with the literal"),
                    Case(_field_case(chk, f"{lit[:1].swapcase()}{lit[1:]} fix pagination"
                                     if lit[:1].isalpha() else f"fix pagination {lit}", task), "violation",
                         "another opening"),
                    Case(make_evidence("pre_action", task, action={"tool": "shell", "command": "ls"})
                         if chk.target == "action" else na.evidence, "not_applicable", "no such field")]
        if chk.target == "action":
            mk = lambda v: _field_case(chk, v, task, rule.behavior)  # noqa: E731
            na2 = Case(make_evidence("pre_action", task, action={"tool": "shell", "command": "ls"}),
                       "not_applicable", "the action has no such field")
        elif chk.target == "artifact":
            mk = lambda v: make_evidence("artifact", task, artifacts={"config.json": f'{{"{chk.field}": "{v}"}}'})  # noqa: E731
            na2 = Case(make_evidence("artifact", task, artifacts={"README.md": "# Project\n"}), "not_applicable",
                       "no artifact sets the field")
        else:
            mk = lambda v: make_evidence("delivery", task, reply=f'{{"{chk.field}": "{v}"}}')  # noqa: E731
            na2 = na
        if isinstance(chk, FieldNotEquals):
            return [Case(mk(other), "pass", "another value"), Case(mk(chk.value), "violation", "the banned literal"), na2]
        return [Case(mk(chk.value), "pass", "the literal"), Case(mk(other), "violation", "another value"), na2]
    return []


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


#: how an action carries a field, as the shell command an agent would run (for validation cases)
_ACTION_COMMANDS = {"message": 'git commit -m "{v}"', "branch": "git push origin {v}", "remote": "git push {v} main",
                    "title": 'gh pr create --title "{v}"'}


def _field_case(chk: FieldEquals, value: str, task: str, rule_text: str = "") -> EvidenceRecord:
    """Evidence whose ``chk.field`` has ``value`` where the check looks (action, artifact or reply)."""
    if chk.target == "action":
        tmpl = _ACTION_COMMANDS.get(chk.field)
        if chk.field == "branch" and re.search(r"\bcommit", rule_text, re.IGNORECASE):
            tmpl = None  # a commit's branch is an argument of the commit action
        if tmpl:
            act: dict[str, Any] = {"tool": "shell", "command": tmpl.format(v=value)}
        elif chk.field in ("branch", "message"):  # an argument of the commit action
            act = {"tool": "git", "command": 'git commit -m "Update the pagination helper"', "args": {chk.field: value}}
        else:  # a tool call: its arguments live under ``args`` (where FieldEquals reads them first)
            stop = ("the", "a", "an", "every", "each", "any", "all", "your")
            sem = res.semantic()  # the tool named for the field, then the tool an argument belongs to
            names = [m.group("tool").lower() for kind in (sem.tool_name, sem.argument_of)
                     for rx in kind.compiled() for m in rx.finditer(rule_text)]
            tool = chk.tool if isinstance(chk, FieldNotEquals) and chk.tool else \
                next((n for n in names if n not in stop), "tool")
            arg: Any = {"true": True, "false": False}.get(value.strip().lower(), value)  # a bare boolean as JSON's
            act = {"tool": tool, "args": {chk.field: arg}}
        return make_evidence("pre_action", task, action=act)
    if chk.target == "artifact":
        return make_evidence("artifact", task, artifacts={"config.json": json.dumps({chk.field: value})})
    return make_evidence("delivery", task, reply=json.dumps({chk.field: value}))


def _semantic_check(rule: Rule, rd: Reading, targets: Sequence[str]) -> SemanticSpec:
    target = "action" if targets == ("action",) else ("artifact" if "artifact" in targets else
                                                        ("reply" if "reply" in targets else targets[0]))
    stages: dict[str, list[str]] = {}
    for t in targets:
        for st in res.semantic().targets[t].stages:
            need = {"action": "action", "artifact": "artifacts", "reply": "reply"}[t]
            stages.setdefault(st, [])
            if need not in stages[st] and (st != "delivery" or need != "action"):
                stages[st].append(need)
    stages = {s: v for s, v in stages.items() if v}
    cond = " and ".join(rule.conditions) or "always"
    when = cond if rule.scope == "global" else f"{cond}, in project {rule.scope.split(':', 1)[-1]}"
    verb = "must not" if rd.polarity == "forbid" else "must"
    return SemanticSpec(
        applies_when=when, required=f"the agent {verb}: {rd.subject}",
        compliance=f"the evidence {'shows no' if rd.polarity == 'forbid' else 'shows'} {rd.subject}",
        violation=f"the evidence {'shows' if rd.polarity == 'forbid' else 'lacks'} {rd.subject}",
        polarity=rd.polarity, subject=rd.subject, target=target, scope=rule.scope,
        conditions=tuple(rule.conditions), exceptions=tuple(rule.exceptions), evidence=stages)



def _wrong_stage_case(spec: SemanticSpec) -> list[Case]:
    """A not-applicable case at a stage the rule needs no evidence from (none when it reads all three)."""
    other = next((s for s in ("pre_action", "artifact", "delivery") if s not in spec.stages()), None)
    if other is None:
        return []
    return [Case(_render(other, False, spec.subject, None, _NEUTRAL_TASKS[2]), "not_applicable",
                 f"the rule needs no {other} evidence", "na")]

def _semantic_slots(spec: SemanticSpec, rule: Rule) -> dict[str, list[Case]]:
    """Every case slot with its renderings in order of preference; a revision moves a slot whose
    case was rejected to its next rendering and keeps the slots that held."""
    ins = _instance(spec.subject, 1)
    forbid = spec.polarity == "forbid"
    if ins is None and forbid:
        ins = _own_instance(rule.behavior, spec.subject)
    from toolkit.rules.checks._spec import spec_of

    # a rendering that says the subject in words is evidence only when the words carry something
    # concrete (a quoted term, code, a command, a limit, a kind); a rule with none still gets a
    # specification (see OfflineCompiler.propose), never these cases; the blind reviewer refuses
    # evidence that only restates such a rule (:func:`toolkit.rules.checks._review.restates_rule`)
    echo = ECHO_CASES or bool(spec_of(rule).elements) or ECHO_ELEMENTLESS
    slots: dict[str, list[Case]] = {}
    for i, stage in enumerate(spec.stages()):
        task = _task_for(rule, True, i)
        for want, show in (("violation", forbid), ("pass", not forbid)):
            variants = []
            for inst in ([ins, None] if ins is not None else [None]):
                if inst is None and show and not echo:
                    continue  # the rule's own words echoed back are no evidence a reviewer can judge
                variants.append(Case(_render(stage, show, spec.subject, inst, task, spec.target), want,  # type: ignore[arg-type]
                                     f"{stage}: {'violating' if want == 'violation' else 'compliant'}",
                                     f"{stage}:{want}"))
            slots[f"{stage}:{want}"] = variants
    first = spec.stages()[0]
    na: list[Case] = []
    if rule.scope != "global" or rule.conditions or inline_condition(rule.behavior)[0]:
        task = _task_for(rule, False, 2)
        na.append(Case(_render(first, False, spec.subject, None, task, spec.target), "not_applicable",
                       "outside the rule's scope or condition", "na"))
        na.append(Case(_render(first, forbid, spec.subject, ins, task, spec.target), "not_applicable",
                       "outside the rule's scope or condition", "na"))
    if rule.exceptions:
        task = f"{_NEUTRAL_TASKS[1]} Note: {rule.exceptions[0].rstrip('.')}."
        na.append(Case(_render(first, forbid, spec.subject, ins, task, spec.target), "not_applicable",
                       "the exception holds", "na"))
    na.extend(_wrong_stage_case(spec))
    slots["na"] = na
    return slots


def _is_command(text: str) -> bool:
    """Does a rule element read as a shell command (a known tool first; ``command_head`` in semantic.yaml)?"""
    return bool(res.semantic().command_head.search(text.strip()))


def _headed_command(element: str, rule_text: str) -> str | None:
    """The element as a subcommand of the nearest tool the rule names before it ("rails db:drop,
    db:reset or db:schema:load": ``rails db:reset``), or None when no known tool precedes it."""
    at = rule_text.find(element)
    if at < 0:
        return None
    heads = [m for m in re.finditer(r"[\w./-]+", rule_text[:at]) if _is_command(m.group(0))]
    return f"{heads[-1].group(0)} {element}" if heads else None


def _element_code(el: Any, path: str) -> str:
    """A line of code (or text) that uses an element, in the file's language."""
    from toolkit.rules.checks._spec import concepts

    t = el.text
    if el.kind.startswith("concept:"):
        return concepts().concepts[el.kind.split(":", 1)[1]].example
    if t.endswith("()"):
        return f"let value = source.read().{t[:-2]}();"
    if t.startswith("\\"):
        return f"The results are in {t}{{sec:results}}."
    if re.fullmatch(r"[a-z_]+(?:\.[a-z_]+)+", t) and path.endswith((".yml", ".yaml")):
        return f"- name: apply the change\n  {t}:\n    src: files/app.conf\n    dest: /etc/app.conf\n"
    if re.fullmatch(r"\w+", t):
        return f"{t}.launch {{ refresh() }}" if t[:1].isupper() else f"{t}(job)"
    return f"As {t} shows, the result holds."


def _concrete(stage: str, spec: SemanticSpec, rule: Rule, task: str, *, show_forbidden: bool,
              show_required: bool) -> EvidenceRecord | None:
    """Concrete evidence at a stage built from the rule's own elements (terms, tools, files, limits)."""
    from toolkit.rules.checks._spec import concepts, file_for, spec_of

    sp = spec_of(rule)
    path = file_for(" ".join([rule.behavior, *rule.conditions, task]))
    forb = [e for e in sp.forbidden if e.kind != "limit"]
    lim = next((e for e in sp.forbidden if e.kind == "limit" and e.limit), None)
    if stage == "pre_action":
        cmds = []
        for e in forb if show_forbidden else []:
            if e.kind.startswith("concept:") and concepts().concepts[e.kind.split(":", 1)[1]].where == "action":
                cmds.append(concepts().concepts[e.kind.split(":", 1)[1]].example)
            elif _is_command(e.text):
                cmds.append(e.text)
            elif (cmd := _headed_command(e.text, rule.behavior)) is not None:
                cmds.append(cmd)
        if show_forbidden and not cmds:
            return None
        if not show_forbidden:
            plain = [concepts().concepts[e.kind.split(":", 1)[1]].plain for e in forb if e.kind.startswith("concept:")]
            cmds = plain[:1] or ["git status"]
        return make_evidence("pre_action", task, action={"tool": "shell", "command": cmds[0]})
    lines: list[str] = []
    if lim is not None:
        n = lim.limit + max(20, lim.limit // 5) if show_forbidden else max(5, lim.limit // 2)
        lines.append(" ".join(["word"] * n))
    for e in forb:
        if show_forbidden:
            lines.append(_element_code(e, path))
        elif e.kind.startswith("concept:"):
            lines.append(concepts().concepts[e.kind.split(":", 1)[1]].plain)
    keys = [e.text for e in sp.required if re.fullmatch(r"[A-Za-z_][\w\-]*", e.text)]
    if show_required and keys and res.semantic().json_place.search(rule.behavior):  # names the rule puts in JSON are its keys
        lines.append(json.dumps({k: "..." for k in keys}))
        lines += [_element_code(e, path) for e in sp.required if e.text not in keys]
    elif show_required:
        lines += [_element_code(e, path) for e in sp.required]
    if not lines:
        lines.append("value = compute(total)")
    body = "\n".join(lines) + "\n"
    if stage == "artifact":
        return make_evidence("artifact", task, artifacts={path: body})
    reply_only = spec.target == "reply" or not spec.evidence.get("delivery") or \
        spec.evidence.get("delivery") == ["reply"]
    if reply_only:
        return make_evidence("delivery", task, reply=f"Done.\n\n{body}" if lim is None else body)
    return make_evidence("delivery", task, reply=_NEUTRAL_REPLY, artifacts={path: body})


def _concrete_slots(spec: SemanticSpec, rule: Rule) -> dict[str, list[Case]] | None:
    """Validation cases from the rule's own elements, or None when the rule names none."""
    from toolkit.rules.checks._spec import spec_of

    sp = spec_of(rule)
    if not sp.elements:
        return None
    has_forbid = bool(sp.forbidden)
    slots: dict[str, list[Case]] = {}
    for i, stage in enumerate(spec.stages()):
        task = _task_for(rule, True, i)
        bad = _concrete(stage, spec, rule, task, show_forbidden=has_forbid, show_required=not has_forbid and False)
        good = _concrete(stage, spec, rule, task, show_forbidden=False, show_required=True)
        if bad is None or good is None:
            continue
        slots[f"{stage}:violation"] = [Case(bad, "violation", f"{stage}: violating (built from the rule's elements)",
                                            f"{stage}:violation")]
        slots[f"{stage}:pass"] = [Case(good, "pass", f"{stage}: compliant (built from the rule's elements)",
                                       f"{stage}:pass")]
    if not slots:
        return None
    first = next(iter(slots)).split(":")[0]
    na = []
    if rule.scope != "global" or rule.conditions or inline_condition(rule.behavior)[0]:
        task = _task_for(rule, False, 2)
        ev = _concrete(first, spec, rule, task, show_forbidden=has_forbid, show_required=False)
        if ev is not None:
            na.append(Case(ev, "not_applicable", "outside the rule's scope or condition", "na"))
    na.extend(_wrong_stage_case(spec))
    slots["na"] = na
    return slots


class OfflineCompiler:
    """Proposes checks from the resource tables; revises by rendering cases differently or
    narrowing the checked stages to those whose cases held."""

    name = "resource-patterns"

    def propose(self, rule: Rule, feedback: Sequence[Round]) -> Proposal:
        rd = read_rule(rule)
        if rd.ambiguous:
            return Proposal("inactive", None, reason=f"ambiguous ({rd.ambiguous})", clear=False)
        plain = rule.scope == "global" and not rule.conditions and not rule.exceptions
        if rd.programmatic and plain:
            chk = _programmatic_check(*rd.programmatic, rd.body)
            if chk is not None:
                return Proposal("programmatic", chk, tuple(_programmatic_cases(chk, rule)),
                                reason=f"directly computable ({rd.programmatic[0]})")
        if rd.unobservable:
            return Proposal("guidance", None, reason=f"not observable ({rd.unobservable})")
        targets = rd.targets
        if rd.programmatic and not targets:
            targets = ("reply",)
        if not targets:  # the rule's own elements say where they show (code -> files, commands -> actions)
            from toolkit.rules.checks._spec import element_targets

            targets = element_targets(rule)
        placeless = not targets
        if placeless:  # names no place (minutes, a proposal, an ingredient list): whatever is
            targets = ("artifact", "reply")  # delivered, the reply and the files written, is read
        spec = _semantic_check(rule, rd, targets)
        if placeless:
            spec = replace(spec, target="artifact", evidence={"delivery": ["reply", "artifacts"]})
        ins = _instance(spec.subject) or (_own_instance(rule.behavior, spec.subject) if rd.polarity == "forbid" else None)
        where = {"action": "pre_action", "code": "artifact", "reply": "delivery"}.get(ins.where) if ins else None
        if where in spec.evidence and len(spec.evidence) > 1:  # a concrete instance says where it shows
            spec = replace(spec, evidence={where: spec.evidence[where]})
        from toolkit.rules.checks._spec import element_targets, spec_of

        if spec_of(rule).elements and all(e.kind.startswith("concept:") for e in spec_of(rule).elements):
            own = element_targets(rule)  # the kinds the rule names say where they show
            stages_for = {"action": "pre_action", "artifact": "artifact", "reply": "delivery"}
            want = {stages_for[t] for t in own if t in stages_for}
            if want and set(spec.evidence) != want:
                spec = replace(spec, evidence={s: ({"pre_action": ["action"], "artifact": ["artifacts"],
                                                    "delivery": ["reply"]}[s]) for s in sorted(want)})
        own = _semantic_slots(spec, rule)
        if not spec_of(rule).elements and not (ECHO_CASES or ECHO_ELEMENTLESS) and \
                not any(own.get(f"{st}:violation") and own.get(f"{st}:pass") for st in spec.stages()):
            # a rule naming no element and with no case of its own that shows the behaviour: where
            # the nearest development rules' evidence shows it (both a compliant and a violating
            # item) says where it shows, when the stages read from its words have no such evidence
            from toolkit.rules.checks._retrieved import retrieved_cases

            got = retrieved_cases(rule, ("pre_action", "artifact", "delivery"))
            have = {s for s in ("pre_action", "artifact", "delivery") if got.get(f"{s}:violation") and got.get(f"{s}:pass")}
            if have and not have & set(spec.evidence):
                spec = replace(spec, evidence={s: {"pre_action": ["action"], "artifact": ["artifacts"],
                                                   "delivery": ["reply", "artifacts"]}[s] for s in sorted(have)})
        fails = _slot_failures(feedback)
        slots = _merged_slots(spec, rule)
        if not any(slots.get(f"{st}:violation") and slots.get(f"{st}:pass") for st in spec.stages()):
            # no stage has both a compliant and a violating case: nothing concrete to show, no instance
            if feedback:  # its one proposal was rejected for want of cases: the rule stays guidance
                return Proposal("guidance", None, reason="specified, but no validation case the offline compiler "
                                                         "can write shows the behaviour")
            # the specification is proposed with the cases there are (none showing compliance or a
            # violation), so the structural check rejects it before any reviewer or checker call
            return Proposal("semantic", spec, tuple(slots["na"][:MAX_CASES]),
                            reason="specified; no case shows the behaviour")
        dead_stages = {k.split(":")[0] for k, v in slots.items() if k != "na" and fails.get(k, 0) >= len(v)}
        keep = {s: v for s, v in spec.evidence.items() if s not in dead_stages}
        if not keep:
            return Proposal("guidance", None, reason="no checking stage held its validation cases")
        if keep != spec.evidence:
            spec = replace(spec, evidence=keep)
            slots = _merged_slots(spec, rule)
        if not slots["na"] or fails.get("na", 0) >= len(slots["na"]):
            return Proposal("guidance", None, reason="no non-applicable case the reviewer agrees with")
        cases = [v[min(fails.get(k, 0), len(v) - 1)] for k, v in slots.items()]
        return Proposal("semantic", spec, tuple(cases[:MAX_CASES]), reason=f"observable in {', '.join(spec.stages())}")


def _merged_slots(spec: SemanticSpec, rule: Rule) -> dict[str, list[Case]]:
    """Concrete cases (from the rule's elements) first, the generic renderings as revisions."""
    generic = _semantic_slots(spec, rule)
    concrete = _concrete_slots(spec, rule) or {}
    out = {k: concrete.get(k, []) + v for k, v in generic.items()}
    for k, v in concrete.items():
        out.setdefault(k, v)
    from toolkit.rules.checks._spec import spec_of

    if not concrete and not spec_of(rule).elements and not (ECHO_CASES or ECHO_ELEMENTLESS) and \
            not any(generic.get(f"{st}:violation") and generic.get(f"{st}:pass") for st in spec.stages()):
        # a rule naming no element, with no stage its own cases show: development evidence of the
        # nearest rules, gold-labelled (:mod:`toolkit.rules.checks._retrieved`); a rule with cases
        # of its own is revised on those alone, as before
        from toolkit.rules.checks._retrieved import retrieved_cases

        for k, got in retrieved_cases(rule, tuple(spec.stages())).items():
            out.setdefault(k, []).extend(
                Case(ev, lab, f"{k.split(':')[0]}: {'violating' if lab == 'violation' else 'compliant'} "  # type: ignore[arg-type]
                     "(development evidence of a similar rule)", k) for ev, lab in got)
    return out


def _slot_failures(rounds: Sequence[Round]) -> dict[str, int]:
    """How many rounds rejected each slot's case (by the reviewer or on execution)."""
    out: dict[str, int] = {}
    for r in rounds:
        for i, c in enumerate(r.proposal.cases):
            rv = r.review.labels[i] if r.review and i < len(r.review.labels) else c.expected
            ex = r.executed[i].label if i < len(r.executed) else c.expected
            if rv != c.expected or ex != c.expected:
                out[c.slot] = out.get(c.slot, 0) + 1
    return out


# -- the loop -------------------------------------------------------------------------------------
def faithfulness_problems(rule: Rule, check: Check) -> list[str]:
    """Structural faithfulness: scope, conditions and exceptions kept; no stage reads the future."""
    problems = list(check.stage_problems())
    if isinstance(check, SemanticSpec):
        if check.scope != rule.scope:
            problems.append("the specification changes the rule's scope")
        if tuple(check.conditions) != tuple(rule.conditions) or tuple(check.exceptions) != tuple(rule.exceptions):
            problems.append("the specification drops or changes a condition or exception")
    elif check.programmatic and (rule.scope != "global" or rule.conditions or rule.exceptions):
        problems.append("a programmatic check cannot keep a scope, condition or exception")
    return problems


def validate_cases(cases: Sequence[Case], check: Check) -> list[str]:
    """B.2's coverage rule: 3-9 cases; each stage compliant and violating; one non-applicable."""
    problems = []
    if not MIN_CASES <= len(cases) <= MAX_CASES:
        problems.append(f"{len(cases)} validation cases (need {MIN_CASES}-{MAX_CASES})")
    for st in check.stages():
        got = {c.expected for c in cases if c.evidence.stage == st}
        if not {"pass", "violation"} <= got:
            problems.append(f"stage {st} lacks a compliant or a violating case")
    if not any(c.expected == "not_applicable" for c in cases):
        problems.append("no non-applicable case")
    return problems


def compile_rule(rule: Rule, compiler: Compiler, reviewer: Reviewer, checker: Checker,
                 *, max_rounds: int = MAX_ROUNDS) -> Compilation:
    """Run B.2's propose -> review (blind) -> execute loop for one rule."""
    rounds: list[Round] = []
    proposed = None
    for n in range(1, max_rounds + 1):
        prop = compiler.propose(rule, rounds)
        if prop.status == "unknown":
            return Compilation(rule, None, None, status="unknown", reason=prop.reason, rounds=rounds)
        if prop.check is None:
            outcome: Outcome = prop.outcome if not rounds else ("guidance" if prop.clear else "inactive")
            return Compilation(rule, outcome, None, reason=prop.reason, proposed=proposed, rounds=rounds)
        proposed = proposed or prop.outcome  # type: ignore[assignment]
        rnd = Round(n, prop)
        rounds.append(rnd)
        problems = faithfulness_problems(rule, prop.check) + validate_cases(prop.cases, prop.check)
        if problems:
            rnd.rejection = "; ".join(problems)
            continue
        rnd.review = reviewer.review(rule, prop.check, [c.evidence for c in prop.cases])
        rnd.executed = tuple(checker(rule, prop.check, c.evidence) for c in prop.cases)
        if not rnd.review.faithful:
            rnd.rejection = f"reviewer: not faithful ({rnd.review.reason})"
            continue
        off = [i for i, c in enumerate(prop.cases) if rnd.review.labels[i] != c.expected]
        if off:
            rnd.rejection = "reviewer disagrees on case(s) " + ", ".join(
                f"{i + 1} ({prop.cases[i].note}: expected {prop.cases[i].expected}, "
                f"reviewer {rnd.review.labels[i] or 'cannot tell'})" for i in off)
            continue
        bad = [i for i, c in enumerate(prop.cases) if rnd.executed[i].label != c.expected]
        if bad:
            rnd.rejection = "checker disagrees on case(s) " + ", ".join(
                f"{i + 1} (expected {prop.cases[i].expected}, got {rnd.executed[i].label})" for i in bad)
            continue
        rnd.accepted = True
        return Compilation(rule, prop.outcome, prop.check, reason=prop.reason, proposed=proposed, rounds=rounds)
    fallback: Outcome = "guidance" if (not rounds or rounds[-1].proposal.clear) else "inactive"
    why = rounds[-1].rejection if rounds else "no proposal"
    return Compilation(rule, fallback, None, reason=f"no validated check after {len(rounds)} round(s): {why}",
                       proposed=proposed, rounds=rounds)
