"""A Mem0-style retrieval memory (Chhikara et al., 2025; TellOnce §3.1, C.1).

Learning: extract candidate memories from the feedback (its sentences that carry a learning
signal), compare each with the most similar stored memories by embedding, and decide
ADD / UPDATE / DELETE / NOOP. Offline the decision follows similarity thresholds and the
admission grammar's retraction cue; with a model, the gateway decides (our own prompt).
Test time: the top-k memories most similar to the task (k = 10, at most 24,000 characters, as
C.1 configures Mem0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from toolkit import text as tx
from toolkit.agents import ContextItem, MemoryContext, Task
from toolkit.llm import ChatModel, StructuredRequest, load_prompt
from toolkit.memory._embed import embed
from toolkit.memory._protocol import BaseMemory, FeedbackEvent
from toolkit.rules.admission import detect_signal
from toolkit.rules.cues import parse_cues


@dataclass
class Memory:
    id: str
    text: str
    source: str


class MemoryOp(BaseModel):
    """The LLM's update decision for one candidate memory."""

    model_config = ConfigDict(extra="forbid")
    op: Literal["ADD", "UPDATE", "DELETE", "NOOP"]
    target: str | None = None
    text: str | None = None


class RetrievalMemory(BaseMemory):
    """Mem0-style memory: extract, update (ADD/UPDATE/DELETE/NOOP), retrieve top-k by embedding."""

    name = "retrieval_memory"

    def __init__(self, model: ChatModel | None = None, *, seed: int = 0, embedder: str = "minilm",
                 k: int = 10, max_chars: int = 24_000, near: float = 0.9, related: float = 0.7) -> None:
        super().__init__()
        self.model, self.seed, self.embedder = model, seed, embedder
        self.k, self.max_chars, self.near, self.related = k, max_chars, near, related
        self.memories: list[Memory] = []
        self.ops: list[dict[str, str]] = []
        self._next = 1

    # -- learning ---------------------------------------------------------------------------
    @staticmethod
    def extract(feedback: str) -> list[str]:
        """Candidate memories: the feedback's sentences (or list items) that carry a signal."""
        parts = []
        for line in feedback.split("\n"):
            line = line.strip().lstrip("-* ").strip()
            parts += [s.strip() for s in tx.sentences(line) if s.strip()]
        return [p for p in parts if len(tx.words(p)) >= 4 and not p.endswith(":") and detect_signal(p)]

    def learn(self, event: FeedbackEvent) -> None:
        self._guard()
        for cand in self.extract(event.feedback):
            op = self._decide(cand)
            if op is None:  # the model gave no usable decision: nothing stored, counted as unknown
                self.ops.append({"op": "UNKNOWN", "target": "", "text": cand, "source": event.task_id})
                continue
            self._apply(op, cand, event.task_id)

    def _similar(self, text: str, n: int = 5) -> list[tuple[Memory, float]]:
        if not self.memories:
            return []
        vecs = embed([m.text for m in self.memories] + [text], self.embedder)
        sims = vecs[:-1] @ vecs[-1]
        order = sorted(range(len(sims)), key=lambda i: (-round(float(sims[i]), 6), self.memories[i].id))[:n]
        return [(self.memories[i], float(sims[i])) for i in order]

    def _decide(self, cand: str) -> MemoryOp | None:
        similar = self._similar(cand)
        if self.model is not None and not self.model.is_offline:
            return self._decide_llm(cand, similar)
        if not similar:
            return MemoryOp(op="ADD")
        best, sim = similar[0]
        if parse_cues(cand).retraction and sim >= self.related:
            return MemoryOp(op="DELETE", target=best.id)
        if sim >= self.near:
            return MemoryOp(op="NOOP", target=best.id)
        if sim >= self.related:
            return MemoryOp(op="UPDATE", target=best.id, text=cand)
        return MemoryOp(op="ADD")

    def _decide_llm(self, cand: str, similar: list[tuple[Memory, float]]) -> MemoryOp | None:
        prompt = load_prompt("memory_update")
        shown = "\n".join(f"[{m.id}] {m.text}" for m, _ in similar) or "(none)"
        req = StructuredRequest(
            ({"role": "system", "content": prompt.system},
             {"role": "user", "content": prompt.render_user(candidate=cand, memories=shown)}),
            MemoryOp, role="memory_update", prompt_version=prompt.version)
        out = self.model.call(req)  # type: ignore[union-attr]
        if not out.ok or out.value is None:
            return None
        ids = {m.id for m, _ in similar}
        v: MemoryOp = out.value
        if v.op in ("UPDATE", "DELETE") and v.target not in ids:
            return MemoryOp(op="ADD")
        return v

    def _apply(self, op: MemoryOp, cand: str, source: str) -> None:
        self.ops.append({"op": op.op, "target": op.target or "", "text": cand, "source": source})
        if op.op == "ADD":
            self.memories.append(Memory(f"M{self._next}", cand, source))
            self._next += 1
        elif op.op == "UPDATE":
            for m in self.memories:
                if m.id == op.target:
                    m.text, m.source = op.text or cand, source
        elif op.op == "DELETE":
            self.memories = [m for m in self.memories if m.id != op.target]

    # -- test time --------------------------------------------------------------------------
    def context(self, task: Task) -> MemoryContext:
        if not self.memories:
            return MemoryContext()
        vecs = embed([m.text for m in self.memories] + [task.prompt], self.embedder)
        sims = vecs[:-1] @ vecs[-1]
        order = sorted(range(len(sims)), key=lambda i: (-round(float(sims[i]), 6), self.memories[i].id))
        items, used = [], 0
        for i in order[: self.k]:
            m = self.memories[i]
            if used + len(m.text) > self.max_chars:
                break
            used += len(m.text)
            items.append(ContextItem(m.text, "memory", m.id))
        return MemoryContext(tuple(items))

    def describe(self) -> dict[str, int]:
        counts = {f"ops_{k}": sum(o["op"] == k for o in self.ops) for k in ("ADD", "UPDATE", "DELETE", "NOOP", "UNKNOWN")}
        return {"memories": len(self.memories), **counts}


