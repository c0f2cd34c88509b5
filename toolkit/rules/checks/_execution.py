"""The execution layer (TellOnce B.3): checking stages, the repair budget, appeals, unknowns.

One :class:`ExecutionLayer` holds a compiled rule library (each rule with its outcome and check).
At each user-input boundary :meth:`ExecutionLayer.begin_turn` selects the applicable rules once
(the same library version for the whole turn) and opens a :class:`Turn`. The agent's integration
points then call :meth:`Turn.check` at

- ``pre_action``: before a tool call; a violation rejects the proposed action;
- ``artifact``: after a file is produced or modified; a violation gives feedback (it cannot undo);
- ``delivery``: before the reply is returned; violations in one candidate are combined into one
  revision request, and the revised candidate is checked again.

Rules (B.3): at most ``max_repairs`` (3) revision requests per user input, shared across rules and
stages; once spent, unresolved violations are recorded and nothing blocks. ``unknown`` never blocks:
before an action or after an artifact it becomes a non-blocking reminder, at delivery it is
recorded. An ``unknown`` never clears an existing violation of the same rule on an unchanged
candidate; only ``pass`` or ``not_applicable`` clears it. The agent may appeal one judgment per
delivery; a separate review upholds or overturns it, and an overturn applies only to that unchanged
candidate (the stored rules do not change). Guidance rules are presented, never checked; inactive
rules are neither.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from toolkit.llm import ChatModel
from toolkit.records import EvidenceRecord, Rule
from toolkit.rules.checks._types import Check, Judgment, check_from_dict

Outcome = Literal["programmatic", "semantic", "guidance", "inactive"]
Decision = Literal["proceed", "block", "feedback", "revise", "deliver"]
MAX_REPAIRS = 3
PRECEDENCE = ("The user's current instructions and required submission formats take precedence over these "
              "learned rules. The rules describe how the user likes work done; they are not facts about the task.")


@dataclass(frozen=True)
class CompiledRule:
    """A library rule with its compilation outcome and (for executable outcomes) its check."""

    rule: Rule
    outcome: Outcome
    check: Check | None = None

    @property
    def checked(self) -> bool:
        return self.outcome in ("programmatic", "semantic") and self.check is not None

    @property
    def presented(self) -> bool:
        return self.outcome != "inactive"

    @classmethod
    def from_record(cls, rule: Rule, record: dict) -> CompiledRule:
        """From a rule and its ``prefmem compile`` output record."""
        chk = check_from_dict(record["check"]) if record.get("check") else None
        return cls(rule, record.get("outcome") or "inactive", chk)


def candidate_key(ev: EvidenceRecord) -> str:
    """Identity of a candidate (action, artifacts, reply): unchanged candidate <=> same key."""
    blob = json.dumps([ev.stage, ev.action, [(a.path, a.content, a.deleted) for a in ev.artifacts or []], ev.reply],
                      sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class StageReport:
    """What one check at one stage found and what the execution layer does about it."""

    stage: str
    candidate: str
    judgments: dict[str, Judgment]
    violations: tuple[str, ...]
    unknown: tuple[str, ...]
    decision: Decision
    message: str | None
    repairs_left: int
    overturned: tuple[str, ...] = ()

    @property
    def blocking(self) -> bool:
        return self.decision in ("block", "revise")


Judge = Callable[[Sequence[tuple[Rule, Check | None, EvidenceRecord, Sequence[Rule]]]], list[Judgment]]
Selector = Callable[[str, str | None, Sequence[Rule]], list[str]]
AppealReview = Callable[[Rule, Check | None, EvidenceRecord, Judgment, str], bool]


@dataclass
class Turn:
    """One user input: the adopted rules, the selection, the shared repair budget and the event log."""

    task: str
    instruction: str | None
    rules: dict[str, CompiledRule]
    selected: tuple[str, ...]
    judge_fn: Judge
    appeal_fn: AppealReview
    max_repairs: int = MAX_REPAIRS
    repairs_used: int = 0
    open_violations: dict[tuple[str, str], Judgment] = field(default_factory=dict)  # (rule, candidate)
    overturned: set[tuple[str, str]] = field(default_factory=set)
    appealed: set[str] = field(default_factory=set)  # candidates already appealed
    unresolved: list[tuple[str, str, str]] = field(default_factory=list)  # (stage, rule, candidate)
    log: list[StageReport] = field(default_factory=list)

    @property
    def repairs_left(self) -> int:
        return self.max_repairs - self.repairs_used

    def presented(self) -> list[CompiledRule]:
        """Selected rules shown to the agent (executable and guidance; never inactive)."""
        return [self.rules[r] for r in self.selected if self.rules[r].presented]

    def checked(self) -> list[CompiledRule]:
        return [self.rules[r] for r in self.selected if self.rules[r].checked]

    def prompt_block(self) -> str:
        """The selected rules in full (type, scope, conditions, exceptions) plus the precedence note."""
        lines = [PRECEDENCE]
        for cr in self.presented():
            r = cr.rule
            extra = "".join([f"; when: {', '.join(r.conditions)}" if r.conditions else "",
                             f"; except: {', '.join(r.exceptions)}" if r.exceptions else ""])
            kind = "checked" if cr.checked else "guidance"
            lines.append(f"- [{r.id}] ({kind}, {r.scope}{extra}) {r.behavior}")
        return "\n".join(lines)

    def check(self, evidence: EvidenceRecord) -> StageReport:
        """Check the selected executable rules on ``evidence`` at its stage and decide what happens."""
        cand = candidate_key(evidence)
        todo = [cr for cr in self.checked() if evidence.stage in cr.check.needs()]  # type: ignore[union-attr]
        others = [cr.rule for cr in self.presented()]
        items = [(cr.rule, cr.check, evidence, [o for o in others if o.id != cr.rule.id]) for cr in todo]
        judged = dict(zip([cr.rule.id for cr in todo], self.judge_fn(items) if items else [], strict=True))
        violations, unknown, overturned = [], [], []
        for rid, j in judged.items():
            key = (rid, cand)
            if j.label in ("pass", "not_applicable"):
                self.open_violations.pop(key, None)
            elif j.label == "violation":
                if key in self.overturned:
                    overturned.append(rid)
                    continue
                self.open_violations[key] = j
                violations.append(rid)
            else:  # unknown: never clears a violation of the same rule on the same candidate
                if key in self.open_violations and key not in self.overturned:
                    violations.append(rid)
                else:
                    unknown.append(rid)
        decision, message = self._decide(evidence.stage, violations, unknown, judged)
        if decision in ("proceed", "deliver", "feedback") and violations and self.repairs_left <= 0:
            self.unresolved.extend((evidence.stage, rid, cand) for rid in violations)
        rep = StageReport(evidence.stage, cand, judged, tuple(violations), tuple(unknown), decision, message,
                          self.repairs_left, tuple(overturned))
        self.log.append(rep)
        return rep

    def _decide(self, stage: str, violations: list[str], unknown: list[str],
                judged: dict[str, Judgment]) -> tuple[Decision, str | None]:
        reminder = ("Reminder (not blocking): could not tell whether these rules are followed: "
                    + "; ".join(self.rules[r].rule.behavior for r in unknown)) if unknown else None
        if violations and self.repairs_left > 0:
            self.repairs_used += 1
            body = "\n".join(f"- {self.rules[r].rule.behavior}: {judged[r].reason}"
                             + (f" (\"{judged[r].quotes[0]}\")" if judged[r].quotes else "") for r in violations)
            verb = {"pre_action": "This action was not run. Revise it", "artifact": "The file was written. Fix it",
                    "delivery": "Revise the reply"}[stage]
            msg = f"{verb} so it follows these rules:\n{body}"
            if reminder and stage != "delivery":
                msg += "\n" + reminder
            return ({"pre_action": "block", "artifact": "feedback", "delivery": "revise"}[stage], msg)  # type: ignore[return-value]
        final: Decision = "deliver" if stage == "delivery" else "proceed"
        if stage == "delivery":
            return final, None  # unknowns at delivery are recorded in the log, nothing is sent
        return final, reminder

    def appeal(self, rule_id: str, evidence: EvidenceRecord, argument: str) -> bool:
        """The agent disputes one violation on this candidate (once per delivery). True: overturned."""
        cand = candidate_key(evidence)
        if evidence.stage != "delivery" or cand in self.appealed:
            return False
        j = self.open_violations.get((rule_id, cand))
        if j is None:
            return False
        self.appealed.add(cand)
        cr = self.rules[rule_id]
        if self.appeal_fn(cr.rule, cr.check, evidence, j, argument):
            self.overturned.add((rule_id, cand))
            self.open_violations.pop((rule_id, cand), None)
            return True
        return False

    def summary(self) -> dict[str, object]:
        """Counts for the turn: checks, violations, unknowns, repairs used, unresolved at the end."""
        last = {}
        for rep in self.log:
            for rid, j in rep.judgments.items():
                last[(rep.stage, rid)] = j.label
        return {"selected": list(self.selected), "checked": [c.rule.id for c in self.checked()],
                "repairs_used": self.repairs_used, "unresolved": list(self.unresolved),
                "open_violations": sorted({r for r, _ in self.open_violations}),
                "final_labels": {f"{s}:{r}": lab for (s, r), lab in sorted(last.items())}}


class ExecutionLayer:
    """A compiled library plus the roles that select, judge and review appeals (offline or LLM)."""

    def __init__(self, library: Sequence[CompiledRule], *, model: ChatModel | None = None,
                 selector: Selector | None = None, judge_fn: Judge | None = None,
                 appeal_fn: AppealReview | None = None, max_repairs: int = MAX_REPAIRS):
        self.library = {cr.rule.id: cr for cr in library}
        self.model = model
        self.selector = selector
        self.judge_fn = judge_fn
        self.appeal_fn = appeal_fn
        self.max_repairs = max_repairs

    def _select(self, task: str, instruction: str | None) -> list[str]:
        active = [cr.rule for cr in self.library.values() if cr.outcome != "inactive"]
        if self.selector is not None:
            return list(self.selector(task, instruction, active))
        from toolkit.rules.checks._selection import select_rules

        return select_rules(task, instruction, active, model=self.model)

    def _judge(self, items):
        if self.judge_fn is not None:
            return self.judge_fn(items)
        from toolkit.rules.checks._judge import judge_many

        return judge_many(items, self.model)

    def _appeal(self, rule: Rule, check: Check | None, ev: EvidenceRecord, j: Judgment, argument: str) -> bool:
        if self.appeal_fn is not None:
            return self.appeal_fn(rule, check, ev, j, argument)
        return review_appeal(rule, check, ev, j, argument, model=self.model)

    def begin_turn(self, task: str, instruction: str | None = None, *, selected: Sequence[str] | None = None) -> Turn:
        """Adopt the library for this user input and select its applicable rules (once)."""
        sel = list(selected) if selected is not None else self._select(task, instruction)
        sel = [r for r in sel if r in self.library]
        return Turn(task, instruction, dict(self.library), tuple(sel), self._judge, self._appeal, self.max_repairs)


def review_appeal(rule: Rule, check: Check | None, ev: EvidenceRecord, j: Judgment, argument: str,
                  *, model: ChatModel | None = None) -> bool:
    """A separate review of an appealed violation. Offline: the compliance reader re-reads the rule on
    the full evidence plus the agent's argument as context, without the compiled specification; the
    violation is overturned only if that reading finds a pass or non-applicability. With a model, the
    LLM judge rereads with the argument appended to the task."""
    from toolkit.rules.checks._judge import judge_many

    ev2 = ev.model_copy(update={"task": f"{ev.task}\n\n(Agent's appeal: {argument})"})
    again = judge_many([(rule, None if (check is None or not check.programmatic) else check, ev2, ())], model)[0]
    return again.label in ("pass", "not_applicable")
