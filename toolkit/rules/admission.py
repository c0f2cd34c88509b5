"""Correction admission and rule extraction (TellOnce §4.1, App. B.1): persist, task_local, defer.

Pipeline per message: signal detection on the message alone (erring towards a signal; a feature
the learned admitter weighs, never a veto over its P(persist)), the cue grammar (:mod:`toolkit.rules.cues`) for duration, scope, activation and exceptions, an
interpretation step that may consult recent same-session context to resolve references, and
the admission decision. Offline, the decision is the development-set classifier's most probable
label among those the cue grammar allows; with an LLM, our own prompt returns a structured
interpretation that is then checked against the user's words. Either way nothing is persisted
without an exact quote from the message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from toolkit.llm import ChatModel, StructuredRequest, load_prompt
from toolkit.records import AdmissionInput, AdmissionOutput, Message
from toolkit.rules.cues import Cues, parse_cues
from toolkit.text import load_table, sentences

_T = load_table("admission/signal")  # toolkit/resources/admission/signal.yaml

Decision = Literal["persist", "task_local", "defer"]

#: reason codes (used to group real-data results)
REASONS: dict[str, str] = {
    "lasting": "persist: explicit lasting cue",
    "project": "persist: explicit project scope",
    "friction": "persist: recurring friction",
    "preference": "persist: first-person standing preference",
    "retraction": "persist: retraction of an earlier rule",
    "condition": "persist: a generic activating condition (recurring by construction)",
    "classifier": "persist: classifier on a grounded cue",
    "no_signal": "task_local: no learning signal in the message",
    "temporary": "task_local: limited to this task or change",
    "current_task": "task_local: instruction about the current task (no lasting cue)",
    "vague": "defer: activation left vague",
    "no_behavior": "defer: no reusable behaviour could be identified",
    "undetermined": "defer: persistence or scope could not be determined",
    "model": "decided by the learned admitter (sentence vector + cue features)",
    "below_operating_point": "defer: P(persist) below the operating point (at most 1 in 50 "
    "non-lasting instructions persisted on development folds)",
    "llm": "decided by the model",
    "unknown": "unknown: the model's answer was malformed twice",
}

_SIGNAL = _T["signal"]
_NON_SIGNAL = _T["non_signal"]
# a polite request or suggestion voiced as a question still directs the agent
_REQUEST_Q = _T["request_q"]
_QUESTION_SPLIT = _T["question_split"]
# a concrete artefact at hand: a file name, a line number, a named function call
_CONCRETE = _T["concrete"]
_ANAPHORA = _T["anaphora"]
_CONTENT_STOP = _T["content_stop"]
_REJECT = _T["reject"]
# "X is fine": the tail is found first (anchored at the start of a whitespace run), then the
# clause start is looked up backwards. The old one-regex form ``([^,.;:!?]+?)\s+(?:is|are)...``
# retried the lazy group from every position: quadratic (80 KB took 66 s).
_ACCEPT_TAIL = _T["accept"]
_CLAUSE_PUNCT = _T["clause_punct"]
_CONTENT_WORD = _T["content_word"]


def _accept_search(text: str) -> str | None:
    """The clause before the first "is/are fine|ok|acceptable|..." (as the old regex's group 1)."""
    p = scan = 0
    for m in _ACCEPT_TAIL.finditer(text):
        q = m.start()
        for pm in _CLAUSE_PUNCT.finditer(text, scan, q):  # each character looked at once
            p = pm.end()
        scan = q
        if q > p:
            return text[p:q]
        run = len(m.group(0)) - len(m.group(0).lstrip())
        if run >= 2:  # the old regex took one whitespace character as the clause
            return text[q:q + 1]
    return None


@dataclass(frozen=True)
class Admission:
    """The learner's full reading of one message (richer than the AdmissionOutput record)."""

    id: str
    decision: Decision | None  # None exactly when status is "unknown"
    scope: Literal["global", "project"] | None = None
    conditional: bool = False
    activation: str | None = None
    behavior: str | None = None
    quotes: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()
    rejected: str | None = None
    acceptable: str | None = None
    project: str | None = None
    signal: bool = True
    reason: str = "undetermined"
    status: Literal["ok", "unknown"] = "ok"
    method: str = "offline"
    probabilities: dict[str, float] = field(default_factory=dict)

    def to_output(self) -> AdmissionOutput:
        """The DESIGN §3 output record (scope/activation null unless persisted; all null on unknown)."""
        if self.status == "unknown":
            return AdmissionOutput(id=self.id, status="unknown", decision=None)
        persist = self.decision == "persist"
        return AdmissionOutput(
            id=self.id,
            decision=self.decision,
            scope=self.scope if persist else None,
            conditional=bool(self.conditional and persist),
            activation=self.activation if persist else None,
            behavior=self.behavior,
            quotes=list(self.quotes),
        )

    def as_dict(self) -> dict[str, object]:
        """A plain dict (for tables and widgets)."""
        d = asdict(self)
        d["quotes"], d["exceptions"] = list(self.quotes), list(self.exceptions)
        return d


# -- the offline method ---------------------------------------------------------------------
def detect_signal(text: str) -> bool:
    """Whether the message alone may carry a learning signal (errs towards yes when unsure)."""
    if _NON_SIGNAL.match(text):
        return False
    c = parse_cues(text)
    if is_information_question(text) and not (c.friction or c.retraction):
        return False
    if c.lasting or c.temporary or c.vague or c.friction or c.retraction or c.preference or c.scope:
        return True
    return bool(_SIGNAL.search(text))


def is_information_question(text: str) -> bool:
    """Whether every sentence is a question that asks for information, not a request.

    "Why is CI always so slow?" or "Which version are we on in this repo?" carry no
    correction; "Can you always add tests?" (a request) and friction questions ("how many
    times ...?") are left to the grammar.
    """
    parts = [x.strip() for x in _QUESTION_SPLIT.split(text.strip()) if x.strip(" .!?")]
    if not parts or not all(x.endswith("?") for x in parts):
        return False
    return not any(_REQUEST_Q.match(x) for x in parts)


def _content_words(s: str | None) -> list[str]:
    return [w for w in _CONTENT_WORD.findall((s or "").lower()) if w not in _CONTENT_STOP]


def _resolve_reference(behavior: str | None, context: Sequence[Message] | None) -> str | None:
    """Resolve an anaphoric behaviour ("don't do that again") from recent same-session context."""
    if not context:
        return behavior
    if behavior and (len(_content_words(behavior)) >= 2 or not _ANAPHORA.search(behavior)):
        return behavior
    for msg in reversed(context[-6:]):
        if msg.role == "assistant" and msg.content.strip():
            first = (sentences(msg.content) or [msg.content.strip()])[0][:160]
            base = behavior or "Avoid repeating this"
            return f"{base} (refers to: {first})"
    return behavior


def _rejected_acceptable(text: str) -> tuple[str | None, str | None]:
    """What the user rejects and what stays acceptable, as exact substrings when found."""
    r = _REJECT.search(text)
    a = _accept_search(text)
    return (r.group(1).strip() if r else None), (a.strip() if a is not None else None)


def allowed_decisions(cues: Cues, signal: bool, text: str = "") -> tuple[tuple[Decision, ...], str]:
    """The decisions the cue grammar permits, and the reason code that set them."""
    if not signal:
        return ("task_local",), "no_signal"
    if cues.temporary:
        return ("task_local",), "temporary"
    if (
        cues.vague
        and (cues.deictic or _CONCRETE.search(text))
        and not (cues.lasting or cues.friction)
    ):
        return ("task_local",), "current_task"
    if cues.vague and not (cues.hedged and (cues.firm_lasting or cues.friction)):
        return ("defer",), "vague"
    if cues.vague:
        # a politeness hedge around a firm duration ("it'd be great if ... from now on")
        return ("persist",), "friction" if cues.friction else "lasting"
    if cues.friction:
        return ("persist", "defer"), "friction"
    if cues.lasting:
        return ("persist", "defer"), "lasting"
    if cues.scope == "project" and not cues.deictic:
        return ("persist", "defer"), "project"
    if cues.generic_condition:
        return ("persist", "defer"), "condition"
    if cues.retraction:
        return ("persist", "defer"), "retraction"
    if (cues.preference or cues.explicit_global) and not cues.deictic:
        return ("persist", "defer"), "preference"
    return ("task_local", "defer"), "current_task"


def admit_offline(records: Sequence[AdmissionInput], *, seed: int = 0) -> list[Admission]:
    """Offline admission: the learned admitter (:mod:`toolkit.rules.admission_model`) decides
    persist / task_local / defer, the scope and the conditional flag; the cue grammar supplies
    the behaviour, activation and exact quotes."""
    if not records:
        return []
    from toolkit.rules.admission_model import Features, fitted_admitter

    fit = fitted_admitter(seed)
    X = Features.of([r.text for r in records], fit.model.embedder)
    decided = fit.model.decide(X)
    p_project = fit.model.scope_proba(X)
    p_cond = fit.model.conditional_proba(X)
    lasting = _lasting_sentences(records, decided, fit.model)
    return [
        _decide(rec, parse_cues(lasting.get(rec.id, rec.text)), d, float(pp), float(pc),
                whole=parse_cues(rec.text))
        for rec, d, pp, pc in zip(records, decided, p_project, p_cond, strict=True)
    ]


def _self_contained(sentence: str) -> bool:
    """Whether a sentence can stand as a rule text alone: it carries a signal and a behaviour of two
    or more content words, points back at nothing (no anaphora) and is not a statement of what
    stays acceptable."""
    behavior = parse_cues(sentence).behavior
    return (detect_signal(sentence) and len(_content_words(behavior)) >= 2
            and not _ANAPHORA.search(behavior or "") and _accept_search(sentence) is None)


def _lasting_sentences(records: Sequence[AdmissionInput],
                       decided: Sequence[tuple[str, str, dict[str, float]]],
                       model: object) -> dict[str, str]:
    """For each persisted message of several sentences, the sentence the learned admitter reads
    as most lasting (highest P(persist) among the self-contained sentences, :func:`_self_contained`):
    the rule text is taken from it, not from a one-off request or a complaint beside it."""
    from toolkit.rules.admission_model import Features

    cands: list[tuple[str, str]] = []
    for rec, (decision, _reason, _p) in zip(records, decided, strict=True):
        if decision != "persist":
            continue
        sents = [x.strip() for x in sentences(rec.text) if x.strip()]
        if len(sents) < 2:
            continue
        cands += [(rec.id, x) for x in sents if _self_contained(x)]
    if not cands:
        return {}
    proba = model.predict_proba(Features.of([x for _, x in cands], model.embedder))  # type: ignore[attr-defined]
    col = [str(c) for c in model.classes_].index("persist")  # type: ignore[attr-defined]
    best: dict[str, tuple[float, str]] = {}
    for (rid, x), p in zip(cands, proba[:, col], strict=True):
        if rid not in best or float(p) > best[rid][0]:
            best[rid] = (float(p), x)
    return {rid: x for rid, (_p, x) in best.items()}


def _decide(rec: AdmissionInput, cues: Cues, decided: tuple[str, str, dict[str, float]],
            p_project: float, p_conditional: float, whole: Cues | None = None) -> Admission:
    """One reading: the model's decision and heads, the grammar's spans (``cues`` read on the
    lasting sentence, ``whole`` on the whole message when they differ: activation and
    exceptions fall back to it)."""
    decision, reason, probs = decided
    whole = whole or cues
    signal = detect_signal(rec.text)
    behavior = _resolve_reference(cues.behavior, rec.context)
    rejected, acceptable = _rejected_acceptable(rec.text)
    quotes = tuple(dict.fromkeys(q for q in (*cues.quotes, *whole.quotes) if q and q in rec.text))
    if not signal and decision == "task_local":
        reason = "no_signal"  # a label for the model's own answer: the detector is a feature, not a veto
    if decision == "persist" and (not behavior or len(_content_words(behavior)) < 1):
        decision, reason = "defer", "no_behavior"
    persist = decision == "persist"
    conditional = persist and p_conditional >= 0.5
    return Admission(
        id=rec.id,
        decision=decision,  # type: ignore[arg-type]
        scope=("project" if p_project >= 0.5 else "global") if persist else None,
        conditional=conditional,
        activation=(cues.condition or whole.condition) if conditional else None,
        behavior=behavior,
        quotes=quotes,
        exceptions=tuple(e for e in (cues.exception or whole.exception,) if e),
        rejected=rejected,
        acceptable=acceptable,
        project=(cues.project or whole.project) if persist else None,
        signal=signal,
        reason=reason,
        method="offline",
        probabilities={k: round(v, 6) for k, v in sorted(probs.items())}
        | {"project": round(p_project, 6), "conditional": round(p_conditional, 6)},
    )


# -- the LLM method ---------------------------------------------------------------------------
class LLMAdmission(BaseModel):
    """The structured answer the admission prompt asks for."""

    model_config = ConfigDict(extra="ignore")

    signal: bool
    rejected: str | None = None
    acceptable: str | None = None
    behavior: str | None = None
    decision: Literal["persist", "task_local", "defer"]
    scope: Literal["global", "project"] | None = None
    activation: str | None = None
    exceptions: list[str] = Field(default_factory=list)
    quotes: list[str] = Field(default_factory=list)


def _format_context(context: Sequence[Message] | None) -> str:
    if not context:
        return "(none)"
    return "\n".join(f"[{m.role}] {m.content.strip()[:600]}" for m in context[-6:])


def build_request(rec: AdmissionInput) -> StructuredRequest:
    """The structured request for one message (system prompt + message + recent context)."""
    prompt = load_prompt("admission")
    user = prompt.render_user(message=rec.text, context=_format_context(rec.context))
    return StructuredRequest(
        messages=({"role": "system", "content": prompt.system}, {"role": "user", "content": user}),
        schema=LLMAdmission,
        role="admission",
        prompt_version=prompt.version,
        id=rec.id,
    )


def _from_llm(rec: AdmissionInput, ans: LLMAdmission) -> Admission:
    """Check the model's interpretation against the user's words before admitting anything."""
    quotes = tuple(dict.fromkeys(q for q in ans.quotes if q and q.strip() and q in rec.text))
    decision: Decision = ans.decision if ans.signal else "task_local"
    reason = "llm" if ans.signal else "no_signal"
    if decision == "persist" and not quotes:
        decision, reason = "defer", "undetermined"
    if decision == "persist" and not (ans.behavior or "").strip():
        decision, reason = "defer", "no_behavior"
    persist = decision == "persist"
    activation = (ans.activation or "").strip() or None
    return Admission(
        id=rec.id,
        decision=decision,
        scope=(ans.scope or "global") if persist else None,
        conditional=persist and activation is not None,
        activation=activation if persist else None,
        behavior=ans.behavior,
        quotes=quotes,
        exceptions=tuple(e for e in ans.exceptions if e.strip()),
        rejected=ans.rejected,
        acceptable=ans.acceptable,
        signal=ans.signal,
        reason=reason,
        method="llm",
    )


def admit_llm(records: Sequence[AdmissionInput], model: ChatModel) -> list[Admission]:
    """LLM admission through the gateway; malformed answers become ``status="unknown"``."""
    outcomes = model.run([build_request(r) for r in records], desc="admission")
    out: list[Admission] = []
    for rec, oc in zip(records, outcomes, strict=True):
        if oc.ok and oc.value is not None:
            out.append(_from_llm(rec, oc.value))
        else:
            out.append(
                Admission(
                    id=rec.id, decision=None, reason="unknown", status="unknown", method="llm"
                )
            )
    return out


# -- entry points -----------------------------------------------------------------------------
def admit_detailed(
    records: Sequence[AdmissionInput], model: ChatModel, *, seed: int = 0
) -> list[Admission]:
    """Full readings for ``records`` with the model's method (offline or LLM)."""
    records = list(records)
    if model.is_offline:
        return admit_offline(records, seed=seed)
    return admit_llm(records, model)


def admit_records(
    records: list[AdmissionInput], model: ChatModel, *, seed: int = 0
) -> list[AdmissionOutput]:
    """One AdmissionOutput per input, in order (an unknown LLM answer has ``decision: null``)."""
    return [a.to_output() for a in admit_detailed(records, model, seed=seed)]


def admit_text(
    text: str,
    context: Sequence[dict[str, str]] | None = None,
    model: ChatModel | None = None,
    *,
    seed: int = 0,
) -> Admission:
    """Admit a single message typed by a researcher (offline unless a model is given)."""
    rec = AdmissionInput(
        id="typed", text=text, context=[Message(**m) for m in context] if context else None
    )
    if model is None or model.is_offline:
        return admit_offline([rec], seed=seed)[0]
    return admit_llm([rec], model)[0]


def decision_shares(admissions: Sequence[Admission]) -> dict[str, float]:
    """Share of each decision and of ``unknown`` over all items (a fixed denominator)."""
    n = max(len(admissions), 1)
    shares = {
        d: float(np.sum([a.status == "ok" and a.decision == d for a in admissions])) / n
        for d in ("persist", "task_local", "defer")
    }
    shares["unknown"] = float(np.sum([a.status == "unknown" for a in admissions])) / n
    return shares
