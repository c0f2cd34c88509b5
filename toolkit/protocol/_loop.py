"""Learn -> freeze -> evaluate (TellOnce C.1) for one (benchmark, agent, method, user), and the
access-compliance check on held-out tasks (§3) with the same frozen state.

The harness is the only place that holds both sides: the simulated user (hidden profile) reviews
deliveries and sends feedback; the memory method receives a :class:`FeedbackEvent` with the
feedback text only. Units are scored by the same reader the user judges with (C.5): a unit is
violated when at least one applicable preference is confirmed violated; units judged unknown or
not applicable stay in the denominator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolkit.agents import Agent, MemoryContext, Task, TaskDelivery
from toolkit.memory import FeedbackEvent, MemoryMethod
from toolkit.profiles import Profile
from toolkit.protocol._tasks import SuiteTask, native_score
from toolkit.simuser import Delivery, SimulatedUser
from toolkit.simuser.trace import Trace


def to_user_delivery(task: Task, d: TaskDelivery, unit: str) -> Delivery:
    """What the simulated user looks at: the task, the reply and the workspace at delivery."""
    artifacts = dict(d.files) if task.benchmark != "travel" else None
    return Delivery(task=task.prompt, reply=d.reply, artifacts=artifacts, unit=unit, id=f"{unit}")


def unit_outcome(trace: Trace, delivery: TaskDelivery) -> tuple[str, dict[str, str]]:
    """``violated`` | ``unknown`` | ``ok`` for a unit, with the per-preference verdicts."""
    verdicts = {j.preference_id: j.verdict for j in trace.judgements}
    if delivery.status != "ok" or trace.decision == "unknown":
        return "unknown", verdicts
    if any(v == "violated" for v in verdicts.values()):
        return "violated", verdicts
    if any(v == "unknown" for v in verdicts.values()):
        return "unknown", verdicts
    return "ok", verdicts


def deliver(agent: Agent, method: MemoryMethod, task: Task, key: str) -> tuple[TaskDelivery, MemoryContext, int]:
    """One user-facing delivery: context, attempt, then the method's own checks and repair (if any)."""
    ctx = method.context(task)
    d = agent.attempt(task, ctx, key=key)
    check = getattr(method, "check", None)
    repairs = 0
    if callable(check):
        for _ in range(int(getattr(method, "repair_budget", 3))):
            msg = check(task, ctx, d)
            if not msg:
                break
            repairs += 1
            d = agent.revise(task, ctx, d, msg, key=f"{key}/repair{repairs}")
    return d, ctx, repairs


@dataclass
class GroupResult:
    """Everything one (benchmark, agent, method, user) run produced, JSON-serialisable."""

    units: list[dict[str, Any]] = field(default_factory=list)
    access: list[dict[str, Any]] = field(default_factory=list)
    learning: list[dict[str, Any]] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"units": self.units, "access": self.access, "learning": self.learning, "state": self.state}


def run_group(agent: Agent, method: MemoryMethod, profile: Profile, suite: Sequence[SuiteTask],
              access: Sequence[SuiteTask] = (), *, seed: int = 0, user_model: Any = None) -> GroupResult:
    """Learning tasks in order (feedback from the user reacting to this method's agent), freeze,
    test tasks without feedback, then the held-out access tasks whose checks name this user."""
    user = SimulatedUser(profile, user_model, seed=seed)
    state = user.init_state()
    out = GroupResult()
    learn = [t for t in suite if t.phase == "learn"]
    test = [t for t in suite if t.phase == "test"]
    for st in learn:
        d, ctx, repairs = deliver(agent, method, st.task, key="learn")
        fb, state = user.respond(to_user_delivery(st.task, d, st.id), state)
        outcome, verdicts = unit_outcome(state.traces[-1], d)
        if fb is not None:
            method.learn(FeedbackEvent(st.id, st.task.prompt, d.reply, str(fb), st.task.project))
            agent.revise(st.task, ctx, d, str(fb), key="learn/feedback")  # full feedback; not reviewed again
        out.units.append(_unit_row(st, "learn", outcome, verdicts, d, ctx, repairs, fb is not None))
        out.learning.append({"task": st.id, "corrected": fb is not None, "feedback": str(fb) if fb else "",
                             "context": len(ctx), **_sizes(method)})
    method.freeze()
    out.state = {"after_learning": _sizes(method)}
    for st in test:
        d, ctx, repairs = deliver(agent, method, st.task, key="test")
        outcome, verdicts = unit_outcome(user.judge(to_user_delivery(st.task, d, st.id)), d)
        out.units.append(_unit_row(st, "test", outcome, verdicts, d, ctx, repairs, False))
    for st in access:
        mine = [c for c in st.checks if c.user == profile.id]
        if not mine:
            continue
        d, ctx, repairs = deliver(agent, method, st.task, key="access")
        tr = user.judge(to_user_delivery(st.task, d, st.id))
        verdicts = {j.preference_id: j.verdict for j in tr.judgements}
        for c in mine:
            v = "unknown" if d.status != "ok" or tr.decision == "unknown" else verdicts.get(c.preference, "unknown")
            out.access.append({"check": c.id, "task": st.id, "preference": c.preference,
                               "outcome": {"satisfied": "satisfied", "not_applicable": "satisfied",
                                           "violated": "violated"}.get(v, "unknown"),
                               "verdict": v, "context": len(ctx), "repairs": repairs})
    return out


def _sizes(method: MemoryMethod) -> dict[str, Any]:
    describe = getattr(method, "describe", None)
    return dict(describe()) if callable(describe) else {}


def _unit_row(st: SuiteTask, phase: str, outcome: str, verdicts: dict[str, str], d: TaskDelivery,
              ctx: MemoryContext, repairs: int, corrected: bool) -> dict[str, Any]:
    return {"unit": st.id, "phase": phase, "outcome": outcome,
            "violated_prefs": sorted(p for p, v in verdicts.items() if v == "violated"),
            "unknown_prefs": sorted(p for p, v in verdicts.items() if v == "unknown"),
            "solved": native_score(st.native_check, d.reply, d.files), "context": len(ctx),
            "repairs": repairs, "corrected": corrected, "status": d.status,
            "habits": list(d.notes.get("habits", []))}  # type: ignore[arg-type]
