"""The simulated user: a hidden profile, explicit state, one correction at most per scored unit."""

from __future__ import annotations

from dataclasses import replace

from toolkit import text as tx
from toolkit._seeding import item_rng
from toolkit.compliance import Evidence, Rule, Verdict, read_many, view_of
from toolkit.llm import ChatModel
from toolkit.profiles import Profile
from toolkit.simuser.delivery import Delivery, Feedback, UserState
from toolkit.simuser.llm import judge_llm
from toolkit.simuser.phrasing import phrase
from toolkit.simuser.trace import Judgement, Trace

#: the compliance reader's labels in the simulator's trace vocabulary
_VERDICT = {"violation": "violated", "pass": "satisfied", "not_applicable": "not_applicable", "abstain": "unknown"}


def evidence_of(delivery: Delivery) -> Evidence:
    """A delivery as the compliance reader's evidence (stage ``delivery``)."""
    return Evidence("delivery", delivery.task, delivery.reply,
                    artifacts=None if delivery.artifacts is None else dict(delivery.artifacts),
                    history=tuple(delivery.history))


def interpret(evidence: Evidence) -> tuple[str, bool]:
    """Step 1 (C.3.2): a one-line reading of the delivery, and whether there is anything to judge."""
    view = view_of(evidence)
    parts = [f"reply of {len(tx.words(view.prose))} words in {len(view.sentences)} sentences"]
    if tx.bullet_lines(view.reply):
        parts.append(f"{len(tx.bullet_lines(view.reply))} list items")
    if tx.code_blocks(view.reply):
        parts.append(f"{len(tx.code_blocks(view.reply))} code blocks")
    if view.artifacts is not None:
        parts.append(f"{len(view.artifacts)} workspace files")
    if view.history:
        parts.append(f"{len(view.history)} earlier turns")
    return "; ".join(parts), bool(view.reply.strip()) or bool(view.artifacts)


def _judgement(pid: str, v: Verdict) -> Judgement:
    applicable = {"not_applicable": False, "abstain": None}.get(v.label, True)
    return Judgement(pid, applicable, v.decided_by, _VERDICT[v.label], v.reason, (), 2, v.decided_by)


def judge_offline(profile: Profile, delivery: Delivery, *, seed: int = 0, turn: int = 0) -> Trace:
    """Steps 1-4 through the compliance reader, then the phrased correction when a preference is violated.

    When no preference is violated but the reader abstained on some applicable preference, the
    decision is ``abstain``: no correction is sent, and the trace says the user could not judge
    (it is never recorded as a judged silence).
    """
    return judge_offline_many(profile, [delivery], seed=seed, turn=turn)[0]


def judge_offline_many(profile: Profile, deliveries: list[Delivery], *, seed: int = 0,
                       turn: int = 0) -> list[Trace]:
    """:func:`judge_offline` for many deliveries, the reader called once for all of them.

    Each trace is the one :func:`judge_offline` gives for its delivery alone (the reader's features
    are per (rule, delivery) pair); one call lets the semantic layer embed every text of the batch
    in a few large, length-sorted batches instead of two small ones per delivery.
    """
    return judge_offline_groups([(profile, deliveries)], seed=seed, turn=turn)[0]


def judge_offline_groups(groups: list[tuple[Profile, list[Delivery]]], *, seed: int = 0,
                         turn: int = 0) -> list[list[Trace]]:
    """:func:`judge_offline_many` for several users at once: one reader call for every (rule,
    delivery) pair of all of them, the traces returned per user.

    Each trace is still the one :func:`judge_offline` gives alone (a pair's features never read
    another delivery's, and a vector never depends on its batch); a fidelity set of 145 annotators
    embeds its texts in a few batches of up to 64 equal-length texts instead of 145 small calls
    (measured on the development set's texts: 1.4x less CPU for the same vectors).
    """
    plans, items = [], []
    for profile, deliveries in groups:
        rules = [Rule.from_preference(p) for p in profile.preferences]
        others = [[o for o in rules if o is not r] for r in rules]
        evs = [evidence_of(d) for d in deliveries]
        readings = [interpret(ev) for ev in evs]
        items += [(r, ev, o) for ev, (_, has) in zip(evs, readings, strict=True) if has
                  for r, o in zip(rules, others, strict=True)]
        plans.append((profile, deliveries, rules, readings))
    verdicts = iter(read_many(items)) if items else iter(())
    out: list[list[Trace]] = []
    for profile, deliveries, rules, readings in plans:
        traces = []
        for delivery, (reading, has_content) in zip(deliveries, readings, strict=True):
            key = delivery.key()
            if not has_content:
                traces.append(Trace(profile.id, key, turn, "offline", reading, (), "silent",
                                    "nothing was delivered"))
                continue
            vs = [next(verdicts) for _ in rules]
            traces.append(_trace(profile, rules, vs, key, reading, seed=seed, turn=turn))
        out.append(traces)
    return out


def judge_groups(groups: list[tuple[Profile, list[Delivery]]], model: ChatModel | None, *,
                 seed: int = 0, turn: int = 0) -> list[list[Trace]]:
    """Traces for several users' deliveries, per user: offline (``model`` None or offline) through
    :func:`judge_offline_groups`, else the LLM judge, in one batched call for all of them."""
    if model is None or model.is_offline:
        return judge_offline_groups(groups, seed=seed, turn=turn)
    flat = judge_llm(model, [(p, d) for p, ds in groups for d in ds], turn=turn)
    out, at = [], 0
    for _, ds in groups:
        out.append(flat[at:at + len(ds)])
        at += len(ds)
    return out


def _trace(profile: Profile, rules: list[Rule], verdicts: list[Verdict], key: str, reading: str, *,
           seed: int, turn: int) -> Trace:
    """The decision from the reader's verdicts on every preference (the phrased correction if any)."""
    judgements = tuple(_judgement(r.id, v) for r, v in zip(rules, verdicts, strict=True))
    violated = {r.id: v for r, v in zip(rules, verdicts, strict=True) if v.label == "violation"}
    if not violated:
        unknown = [r.id for r, v in zip(rules, verdicts, strict=True) if v.label == "abstain"]
        if unknown:
            return Trace(profile.id, key, turn, "offline", reading, judgements, "abstain",
                         f"no preference found violated; could not judge {', '.join(unknown)} offline")
        return Trace(profile.id, key, turn, "offline", reading, judgements, "silent",
                     "no applicable preference is violated")
    named = tuple(p.id for p in profile.preferences if p.id in violated)
    rng = item_rng(seed, profile.id, key, turn)
    text = phrase([violated[p] for p in named], rng)
    return Trace(profile.id, key, turn, "offline", reading, judgements, "correct",
                 f"violated: {', '.join(named)}", named, text)


class SimulatedUser:
    """A user with a hidden preference profile who reviews deliveries and sometimes corrects.

    ``respond(delivery, state) -> (Feedback | None, state)``: the agent gets only the Feedback
    (a plain string); the trace of the decision goes into the new state, which the harness keeps.
    With an offline model (or none) the offline judge runs; otherwise the LLM judge.
    """

    def __init__(self, profile: Profile, model: ChatModel | None = None, *, seed: int = 0):
        self._profile = profile
        self._model = model
        self._seed = seed

    def __repr__(self) -> str:  # never show the profile's contents
        return f"SimulatedUser(id={self._profile.id!r})"

    @property
    def user_id(self) -> str:
        return self._profile.id

    @property
    def method(self) -> str:
        return "offline" if self._model is None or self._model.is_offline else f"llm:{self._model.name}"

    def init_state(self) -> UserState:
        """A fresh state: no turns, nothing corrected yet."""
        return UserState()

    def judge(self, delivery: Delivery, *, turn: int = 0) -> Trace:
        """Decide about one delivery without touching any state (used by fidelity and scoring)."""
        return self.judge_many([delivery], turn=turn)[0]

    def judge_many(self, deliveries: list[Delivery], *, turn: int = 0) -> list[Trace]:
        """Decisions for many deliveries (the LLM method batches its calls)."""
        return judge_groups([(self._profile, deliveries)], self._model, seed=self._seed, turn=turn)[0]

    def respond(self, delivery: Delivery, state: UserState) -> tuple[Feedback | None, UserState]:
        """React to one delivery: at most one correction per scored unit."""
        turn = state.turn + 1
        if delivery.unit is not None and delivery.unit in state.corrected_units:
            tr = Trace(self._profile.id, delivery.key(), turn, self.method, "", (), "silent",
                       f"unit {delivery.unit!r} was already corrected once")
            return None, replace(state, turn=turn, traces=state.traces + (tr,))
        tr = self.judge(delivery, turn=turn)
        if tr.decision != "correct" or not tr.feedback:
            return None, replace(state, turn=turn, traces=state.traces + (tr,))
        units = state.corrected_units | ({delivery.unit} if delivery.unit is not None else set())
        fb = Feedback(tr.feedback)
        return fb, replace(state, turn=turn, corrected_units=frozenset(units), sent=state.sent + (str(fb),),
                           traces=state.traces + (tr,))
