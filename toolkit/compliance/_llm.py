"""The LLM stage of the compliance reader: one structured call per (rule, evidence) through the gateway.

A malformed answer (after the gateway's one re-ask) becomes ``abstain``; it is never scored as a
pass or a violation. Quotes the model gives that are not verbatim substrings of the evidence are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from toolkit.compliance._types import Evidence, Rule, Verdict
from toolkit.llm import ChatModel, StructuredRequest, load_prompt

PROMPT = "compliance_read"
MAX_FILE_CHARS = 4000


class ReadAnswer(BaseModel):
    """Structured output of the compliance prompt."""

    model_config = ConfigDict(extra="forbid")
    label: Literal["violation", "pass", "not_applicable", "abstain"]
    reason: str = ""
    quotes: list[str] = Field(default_factory=list)


def _render_rule(rule: Rule) -> str:
    s = f"[{rule.id}] {rule.text}"
    for c in rule.conditions:
        s += f"\n  applies when: {c}"
    for e in rule.exceptions:
        s += f"\n  except when: {e}"
    return s


def render_evidence(ev: Evidence) -> str:
    """The evidence as the prompt shows it (reply, action, workspace files, each file clipped)."""
    parts = []
    if ev.reply is not None:
        parts.append(f"Reply:\n{ev.reply or '(empty)'}")
    if ev.action:
        parts.append("Proposed action:\n" + "\n".join(f"{k}: {v}" for k, v in sorted(ev.action.items())))
    if ev.artifacts is None:
        parts.append("Workspace: (not observed)")
    elif ev.artifacts:
        for a in sorted(ev.artifacts, key=lambda a: a.path):
            body = a.content if len(a.content) <= MAX_FILE_CHARS else a.content[:MAX_FILE_CHARS] + "\n[...truncated]"
            parts.append(f"--- {a.path} (deleted) ---" if a.deleted else f"--- {a.path} ---\n{body}")
    return "\n\n".join(parts)


def build_request(rule: Rule, ev: Evidence, others: Sequence[Rule] = ()) -> StructuredRequest:
    """The structured request for one (rule, evidence) pair (our own prompt, versioned by hash)."""
    prompt = load_prompt(PROMPT)
    user = prompt.render_user(rule=_render_rule(rule), others="\n".join(_render_rule(o) for o in others) or "(none)",
                              stage=ev.stage, task=ev.task or "(none)", evidence=render_evidence(ev))
    return StructuredRequest(messages=({"role": "system", "content": prompt.system},
                                       {"role": "user", "content": user}),
                             schema=ReadAnswer, role="compliance", prompt_version=prompt.version, id=rule.id)


def read_llm(model: ChatModel, items: Sequence[tuple[Rule, Evidence, Sequence[Rule]]]) -> list[Verdict]:
    """One verdict per (rule, evidence, others); unusable answers become ``abstain``."""
    outs = model.run([build_request(r, e, o) for r, e, o in items], desc="compliance")
    verdicts = []
    for (_, ev, _), out in zip(items, outs, strict=True):
        if not out.ok:
            verdicts.append(Verdict("abstain", f"model answer unusable: {out.error}", [], f"llm:{model.name}"))
            continue
        a: ReadAnswer = out.value
        hay = render_evidence(ev) + "\n" + (ev.task or "")
        quotes = [q for q in a.quotes if q and q in hay][:3]
        verdicts.append(Verdict(a.label, a.reason[:500], quotes, f"llm:{model.name}"))
    return verdicts
