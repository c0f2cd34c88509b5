"""LLM-Greedy and LLM-Context-Aware gates: offline cue grammar or a model through the gateway.

Both return a decision per fact for every capacity level the prompt can state (one row when
the gate ignores capacity, three for ``vacant``/``filling``/``full``); the bank simulation then
picks the row that matches the bank's fill at the start of each session. This keeps model calls
independent of the budget, so one set of calls serves every budget.

An unknown model answer (malformed twice) is a third outcome: its decision is null
(:attr:`GateDecisions.answered` is False there) and never scored as a decision. What the bank
does with such a fact is the *policy's* explicit, reported setting (``fallback="store"`` or
``"skip"``, see :meth:`GateDecisions.resolved`), not a silent default of the gate. An unknown
session summary stays unknown too: the summary buffer shows it as ``(unknown)``, never the
offline note in its place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict

from toolkit.gating.env import UserStream
from toolkit.gating.rubric import (
    LEVELS,
    content_words,
    overlap_count,
    rubric_decision,
    rubric_score,
    summarize_session,
)
from toolkit.llm import ChatModel, StructuredRequest, load_prompt

__all__ = ["GateAnswer", "SummaryAnswer", "GateDecisions", "gate_decisions", "gates_decisions",
           "offline_gate_decisions", "capacity_text", "FALLBACKS", "UNKNOWN_SUMMARY"]

#: what a bank may do with a fact whose gate answer is unknown (a policy setting, reported)
FALLBACKS = ("store", "skip")
#: how an unknown session summary appears in the context gate's summary buffer
UNKNOWN_SUMMARY = "(unknown: this session's summary could not be obtained)"


class GateAnswer(BaseModel):
    """A model's admission decision for one fact."""

    model_config = ConfigDict(extra="ignore")
    category: str = ""
    store: bool


class SummaryAnswer(BaseModel):
    """A model's note on one session."""

    model_config = ConfigDict(extra="ignore")
    summary: str


@dataclass
class GateDecisions:
    """Decisions (levels, N), the level names, unknown answers and model calls made.

    ``by_level`` holds the answered decisions; where ``answered`` is False the decision is
    unknown (null in :meth:`records`) and ``by_level`` is meaningless there. ``unknown``
    counts unknown gate answers; ``unknown_summaries`` the session summaries that stayed
    unknown.
    """

    by_level: np.ndarray
    levels: tuple[str, ...]
    unknown: int = 0
    calls: int = 0
    answered: np.ndarray | None = None  # (levels, N) bool; None: every decision answered
    unknown_summaries: int = 0

    def answered_mask(self) -> np.ndarray:
        """(levels, N) bool: True where the gate gave a decision."""
        if self.answered is None:
            return np.ones(self.by_level.shape, dtype=bool)
        return self.answered

    def resolved(self, fallback: str) -> np.ndarray:
        """Decisions with each unknown replaced by the policy's explicit ``fallback``."""
        if fallback not in FALLBACKS:
            raise ValueError(f"fallback must be one of {FALLBACKS}, got {fallback!r}")
        return np.where(self.answered_mask(), self.by_level, fallback == "store")

    def records(self, fact_ids: Sequence[str]) -> list[dict[str, object]]:
        """One record per (fact, level): ``status`` and ``store`` (null when unknown)."""
        ans = self.answered_mask()
        return [{"fact_id": fid, "level": lev, "status": "ok" if ans[j, i] else "unknown",
                 "store": bool(self.by_level[j, i]) if ans[j, i] else None}
                for j, lev in enumerate(self.levels) for i, fid in enumerate(fact_ids)]


def capacity_text(level: str) -> str:
    """The room-check paragraph for a capacity level (from ``gating_capacity_levels.md``)."""
    for line in load_prompt("gating_capacity_levels").text.splitlines():
        name, _, text = line.partition(":")
        if name.strip() == level:
            return text.strip()
    raise KeyError(level)


def _session_summaries(stream: UserStream, model: ChatModel) -> tuple[list[str], int, int]:
    """A model's note on each session (offline, :func:`offline_gate_decisions` summarises)."""
    slices = stream.session_slices()
    texts = [list(stream.texts[a:b]) for _, a, b in slices]
    prompt = load_prompt("gating_summary")
    reqs = [StructuredRequest(
        messages=({"role": "system", "content": prompt.system},
                  {"role": "user", "content": prompt.render_user(facts="\n".join(f"- {x}" for x in t))}),
        schema=SummaryAnswer, role="gating-summary", prompt_version=prompt.version,
        id=f"{stream.user}/s{ses}") for (ses, _, _), t in zip(slices, texts, strict=True)]
    outs = model.run(reqs, desc="session summaries")
    unknown = sum(not o.ok for o in outs)
    # an unknown summary stays unknown (marked in the buffer), never the offline note instead
    return [o.value.summary if o.ok else UNKNOWN_SUMMARY for o in outs], unknown, len(reqs)


def gate_decisions(stream: UserStream, *, context: bool, capacity_aware: bool,
                   model: ChatModel | None = None, n_summaries: int = 3) -> GateDecisions:
    """Decisions of the greedy (``context=False``) or context-aware gate for one user."""
    return gates_decisions(stream, [(context, capacity_aware)], model, n_summaries)[0]


def gates_decisions(stream: UserStream, gates: Sequence[tuple[bool, bool]],
                    model: ChatModel | None = None, n_summaries: int = 3) -> list[GateDecisions]:
    """Decisions of several gates, each a (context, capacity-aware) pair, for one user: offline
    the rubric's scores are shared by the gates (:func:`offline_gate_decisions`), else each gate
    asks ``model``."""
    if model is None or model.is_offline:
        return offline_gate_decisions(stream, gates, n_summaries)
    return [_model_gate_decisions(stream, context, cap, model, n_summaries) for context, cap in gates]


def _model_gate_decisions(stream: UserStream, context: bool, capacity_aware: bool,
                          model: ChatModel, n_summaries: int) -> GateDecisions:
    """One gate's decisions through ``model`` (see :func:`gate_decisions`)."""
    levels: tuple[str, ...] = LEVELS if capacity_aware else ("any",)
    n = stream.n
    slices = stream.session_slices()
    summaries: list[str] = []
    unknown_summaries = calls = 0
    if context:
        summaries, unknown_summaries, calls = _session_summaries(stream, model)
    history: list[str] = []  # per fact: recent summaries before its session
    dialogue: list[str] = []
    for k, (_, a, b) in enumerate(slices):
        recent = summaries[max(0, k - n_summaries):k] if context else []
        cur = "\n".join(f"- {x}" for x in stream.texts[a:b])
        history.extend(["\n".join(f"- {s}" for s in recent) or "(none yet)"] * (b - a))
        dialogue.extend([cur] * (b - a))
    out = np.zeros((len(levels), n), dtype=bool)
    name = ("gating_context" if context else "gating_greedy") + ("_capacity" if capacity_aware else "")
    prompt = load_prompt(name)
    reqs = []
    for lev in levels:
        for i, text in enumerate(stream.texts):
            values = {"fact": text}
            if capacity_aware:
                values["capacity"] = capacity_text(lev)
            if context:
                values.update(summaries=history[i], dialogue=dialogue[i])
            reqs.append(StructuredRequest(
                messages=({"role": "system", "content": prompt.system},
                          {"role": "user", "content": prompt.render_user(**values)}),
                schema=GateAnswer, role=name, prompt_version=prompt.version,
                id=f"{stream.user}/{stream.fact_ids[i]}/{lev}"))
    outs = model.run(reqs, desc=name)
    answered = np.ones((len(levels), n), dtype=bool)
    for r, o in enumerate(outs):
        j, i = divmod(r, n)
        answered[j, i] = o.ok
        out[j, i] = bool(o.value.store) if o.ok else False  # meaningless where not answered
    return GateDecisions(out, levels, int((~answered).sum()), calls + len(reqs), answered,
                         unknown_summaries)


def offline_gate_decisions(stream: UserStream, gates: Sequence[tuple[bool, bool]],
                           n_summaries: int = 3) -> list[GateDecisions]:
    """The offline rubric's decisions for several gates of one user, each as a (context,
    capacity-aware) pair, in order.

    Each fact's rubric score, each session's summary and each fact's context support are
    computed once and shared by the gates (the four text gates of a sweep computed them once
    each); the decisions are those of :func:`rubric_decision` on them.
    """
    scores = [rubric_score(t) for t in stream.texts]
    bonus = np.zeros(stream.n, dtype=np.int64)
    if any(context for context, _ in gates):
        slices = stream.session_slices()
        summaries = [summarize_session(stream.texts[a:b]) for _, a, b in slices]
        words = [set(content_words(t)) for t in summaries]
        for k, (_, a, b) in enumerate(slices):
            recent = words[max(0, k - n_summaries):k]
            for i in range(a, b):
                bonus[i] = 1 if overlap_count(stream.texts[i], recent) >= 2 else 0
    out = []
    for context, capacity_aware in gates:
        levels: tuple[str, ...] = LEVELS if capacity_aware else ("any",)
        dec = np.zeros((len(levels), stream.n), dtype=bool)
        for i, score in enumerate(scores):
            b = int(bonus[i]) if context else 0
            for j, lev in enumerate(levels):
                dec[j, i] = rubric_decision(score, None if lev == "any" else lev, b)
        out.append(GateDecisions(dec, levels, 0, 0))
    return out


def decisions_from_texts(texts: Sequence[str], level: str | None = None) -> np.ndarray:
    """Offline greedy decisions for loose texts (handy for checks on new wording)."""
    return np.array([rubric_decision(rubric_score(t), level) for t in texts], dtype=bool)
