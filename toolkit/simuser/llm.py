"""The LLM simulated-user judge: the same four steps through the gateway as one structured call."""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from toolkit.llm import ChatModel, StructuredRequest, load_prompt
from toolkit.profiles import Profile
from toolkit.simuser.delivery import Delivery
from toolkit.simuser.trace import Judgement, Trace

PROMPT = "simuser_respond"
MAX_FILE_CHARS = 4000


class PreferenceCall(BaseModel):
    """The model's reading of one preference on this delivery (steps b and c)."""

    model_config = ConfigDict(extra="forbid")
    preference_id: str
    relevant: bool
    verdict: Literal["violated", "satisfied", "unknown", "not_applicable"]
    evidence: str = ""


class UserDecision(BaseModel):
    """Structured output of the simulated-user prompt (steps a-d plus the message)."""

    model_config = ConfigDict(extra="forbid")
    interpretation: str
    preferences: list[PreferenceCall] = Field(default_factory=list)
    overlooked: list[str] = Field(default_factory=list)
    correct: bool
    feedback: str | None = None


def _render_prefs(profile: Profile) -> str:
    lines = []
    for p in profile.preferences:
        s = f"- [{p.id}] {p.text}"
        if p.applies_when:
            s += f" (applies when: {p.applies_when})"
        if p.except_when:
            s += f" (except when: {p.except_when})"
        lines.append(s)
    return "\n".join(lines)


def _render_artifacts(arts) -> str:
    if arts is None:
        return "(no workspace listing)"
    if not arts:
        return "(empty)"
    out = []
    for path, body in sorted(arts.items()):
        body = body if len(body) <= MAX_FILE_CHARS else body[:MAX_FILE_CHARS] + "\n[...truncated]"
        out.append(f"--- {path} ---\n{body}")
    return "\n".join(out)


def build_request(profile: Profile, delivery: Delivery) -> StructuredRequest:
    """The structured request for one delivery (our own prompt, versioned by hash)."""
    prompt = load_prompt(PROMPT)
    hist = "\n".join(f"{h.get('role', 'user')}: {h.get('content', '')}" for h in delivery.history) or "(none)"
    user = prompt.render_user(preferences=_render_prefs(profile), history=hist, task=delivery.task,
                              reply=delivery.reply or "(empty)", artifacts=_render_artifacts(delivery.artifacts))
    return StructuredRequest(messages=({"role": "system", "content": prompt.system},
                                       {"role": "user", "content": user}),
                             schema=UserDecision, role="simuser", prompt_version=prompt.version,
                             id=f"{profile.id}:{delivery.key()}")


def scrub(text: str, profile: Profile) -> str:
    """Remove preference ids (and bracketed ids) a model may have leaked into its message."""
    for p in sorted(profile.preferences, key=lambda p: -len(p.id)):
        text = re.sub(r"\[?\b" + re.escape(p.id) + r"\b\]?", "", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def judge_llm(model: ChatModel, items: list[tuple[Profile, Delivery]], turn: int = 0) -> list[Trace]:
    """One trace per (profile, delivery); malformed answers become 'unknown' decisions (silent)."""
    outs = model.run([build_request(p, d) for p, d in items], desc="simulated users")
    traces = []
    for (profile, delivery), out in zip(items, outs, strict=True):
        valid = {p.id for p in profile.preferences}
        if not out.ok:
            traces.append(Trace(profile.id, delivery.key(), turn, f"llm:{model.name}", "", (), "unknown",
                                f"model answer unusable: {out.error}", extra={"status": "unknown"}))
            continue
        v: UserDecision = out.value
        js = []
        for c in v.preferences:
            if c.preference_id in valid:
                js.append(Judgement(c.preference_id, c.relevant, "model", c.verdict, c.evidence[:300], (), 2))
        seen = {j.preference_id for j in js if j.verdict == "violated"}
        for pid in v.overlooked:
            if pid in valid and pid not in seen:
                js.append(Judgement(pid, True, "model, second look", "violated", "", (), 4))
                seen.add(pid)
        named = tuple(p.id for p in profile.preferences if p.id in seen)
        fb = scrub(v.feedback, profile) if (v.correct and v.feedback) else None
        decision = "correct" if fb and named else "silent"
        if decision == "silent":
            named, fb = (), None
        traces.append(Trace(profile.id, delivery.key(), turn, f"llm:{model.name}", v.interpretation[:500],
                            tuple(js), decision, "model decision", named, fb,
                            extra={"raw": json.loads(v.model_dump_json())}))
    return traces
