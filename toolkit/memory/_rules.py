"""The rule learner shared by ``all_rules``, ``relevant_rules`` and ``tellonce`` (TellOnce B.1).

Per correction: admission (persist / task_local / defer, with quotes) then resolution against the
library (reuse, revise, replace, add, retract). A correction admission calls task-local is kept as
a *candidate*; when a later correction repeats it (resolution reuses or revises the candidate),
the preference is recurring, and the correction is resolved into the library (App. A.1's
repetition criterion: a lasting preference is a recurring source of friction).
"""

from __future__ import annotations

from collections.abc import Sequence

from toolkit import text as tx
from toolkit.agents import ContextItem
from toolkit.llm import ChatModel, Gateway
from toolkit.memory._protocol import FeedbackEvent
from toolkit.records import AdmissionInput, Message, ResolutionInput
from toolkit.rules.admission import admit_detailed, detect_signal
from toolkit.rules.library import LibraryRule, RuleLibrary
from toolkit.rules.resolution import resolve


def _offline() -> ChatModel:
    return Gateway(cache_mode="off").model("offline")


class RuleLearner:
    """Admission + resolution into a versioned :class:`RuleLibrary`, with a candidate pool."""

    def __init__(self, model: ChatModel | None = None, *, seed: int = 0) -> None:
        self.model = model or _offline()
        self.seed = seed
        self.library = RuleLibrary()
        self.candidates = RuleLibrary(id_prefix="C")
        self.log: list[dict[str, object]] = []
        self.unknown = 0

    @staticmethod
    def segments(feedback: str) -> list[str]:
        """The feedback's preference-bearing segments (C.1: only those reach long-term memory).

        A segment is a sentence or list item; list headers (ending in a colon) and segments whose
        reading yields no behaviour of at least three words are left out.
        """
        out = []
        for line in feedback.split("\n"):
            line = line.strip().lstrip("-*• ").strip()
            for s in tx.sentences(line):
                s = s.strip()
                if not s or s.endswith(":") or not detect_signal(s):
                    continue
                out.append(s)
        return out

    def learn(self, ev: FeedbackEvent) -> None:
        ctx = [Message(role="user", content=ev.task), Message(role="assistant", content=ev.reply)]
        whole = admit_detailed([AdmissionInput(id=ev.task_id, text=ev.feedback, context=ctx)], self.model,
                               seed=self.seed)[0]
        entry: dict[str, object] = {"task": ev.task_id, "admission": whole.decision, "status": whole.status,
                                    "ops": []}
        self.log.append(entry)
        if whole.status == "unknown":
            self.unknown += 1
            return
        segs = self.segments(ev.feedback)
        reads = admit_detailed([AdmissionInput(id=f"{ev.task_id}.{i}", text=s, context=ctx)
                                for i, s in enumerate(segs)], self.model, seed=self.seed) if segs else []
        ops: list[str] = []
        for seg, a in zip(segs, reads, strict=True):
            if a.status == "unknown":
                self.unknown += 1
                continue
            if len(tx.words(a.behavior or "")) < 3:
                continue
            if whole.decision == "persist" or a.decision == "persist":
                ops += self._resolve_into(self.library, ev, ctx, seg)
                continue
            cand = resolve([ResolutionInput(id=ev.task_id, correction=seg, context=ctx,
                                            library=self.candidates.latest.as_records())],
                           self.model, seed=self.seed)[0]
            if any(p.op in ("reuse", "revise", "replace") and p.target for p in cand.proposals):
                ops += self._resolve_into(self.library, ev, ctx, seg)  # repeated: a recurring preference
            elif cand.proposals and cand.status == "ok":
                try:
                    self.candidates.apply([p.change() for p in cand.proposals], source=ev.task_id, note="candidate")
                except (KeyError, ValueError):
                    self.unknown += 1
        entry["ops"] = ops

    def _resolve_into(self, lib: RuleLibrary, ev: FeedbackEvent, ctx: Sequence[Message], text: str) -> list[str]:
        res = resolve([ResolutionInput(id=ev.task_id, correction=text, context=list(ctx),
                                       library=lib.latest.as_records())], self.model, seed=self.seed)[0]
        if res.status != "ok":
            self.unknown += 1
            return []
        changes = [p.change() for p in res.proposals]
        if ev.project:  # a correction made inside a project keeps project rules in that project
            changes = [c if c.scope != "project" else _scoped(c, ev.project) for c in changes]
        if changes:
            try:
                lib.apply(changes, source=ev.task_id, note="correction")
            except (KeyError, ValueError):
                self.unknown += 1
                return []
        return [f"{p.op}:{p.target or ''}" for p in res.proposals]

    def presented(self) -> tuple[LibraryRule, ...]:
        """Rules shown to an agent: current and not inactive."""
        return self.library.latest.presented()

    @staticmethod
    def as_items(rules: Sequence[LibraryRule], *, scoped: bool = False) -> list[ContextItem]:
        """Rules as context items; ``scoped`` adds applicability (when / unless / project)."""
        out = []
        for r in rules:
            text = r.behavior
            if scoped:
                extra = [f"when {c}" for c in r.conditions] + [f"unless {e}" for e in r.exceptions]
                if r.scope != "global":
                    extra.append(f"in {r.scope}")
                if extra:
                    text += f" ({'; '.join(extra)})"
            out.append(ContextItem(text, "rule", r.id))
        return out

    def describe(self) -> dict[str, int]:
        return {"rules": len(self.library.latest.current()), "versions": len(self.library.versions) - 1,
                "candidates": len(self.candidates.latest.current()), "unknown": self.unknown}


def _scoped(change, project: str):
    from dataclasses import replace

    return replace(change, scope=f"project:{project}")
