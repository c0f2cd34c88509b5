"""Retrieval-based utility labels (memory-gating paper §3.1) and the retrieval hit rate (RHR).

For every later user turn ``x`` in session ``t'`` the pipeline

1. **trigger**: decides whether answering ``x`` needs the user's memory and, if so, writes a
   short search query;
2. **retrieve**: searches the memory bank as it stood before the session (all of the user's
   facts from sessions ``< t'``, i.e. ``M_{t'-1}``) and keeps the top ``k`` hits;
3. **verify**: a judge checks each hit: would knowing this fact change a good reply?

A fact's ``hits`` are the sessions in which it was retrieved and verified. Trigger and judge
are model roles with an offline method (cue grammar, lexical overlap) and an LLM method
(prompts ``labels_trigger`` / ``labels_verify`` through the gateway), chosen by
``model.is_offline``. Malformed LLM answers become ``unknown``: counted, never scored, and
never read as "not needed" or "not helpful": a fact with an unknown verdict on one of its
retrieved pairs is written with ``status: "unknown"`` (its hits are a lower bound).

RHR, as the paper's §3.1 defines it: "H' := {(f_{t,i}, x_{t',i'}) in H : f_{t,i} is still in
the memory bank at t'}, RHR := |H'|/|H|", where H is the set of (fact, user turn) pairs
"(f_{t,i}, x_{t',i'}): f_{t,i} hit by the retriever for x_{t',i'} and verified by the LLM
judge". A pair is a fact and a *user turn*, so two turns of one session that both verify a
fact are two pairs (``Fact.hit_turns``); micro pools pairs over users, macro averages the
per-user rates.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from toolkit.gating.retrieval import Retriever, make_retriever
from toolkit.records import Fact

__all__ = ["UserTurn", "TriggerDecision", "Verdict", "LabelRun", "offline_trigger",
           "offline_verify", "label_facts", "compare_labels", "rhr", "rhr_counts"]


@dataclass(frozen=True)
class UserTurn:
    """A later user message: who, in which session, and what it says (nothing hidden)."""

    user: str
    session: int
    text: str


class TriggerDecision(BaseModel):
    """Does answering the message need memory, and what to search for."""

    model_config = ConfigDict(extra="forbid")
    query_needed: bool
    query: str = ""


class Verdict(BaseModel):
    """Would a good reply to the message use this retrieved fact."""

    model_config = ConfigDict(extra="forbid")
    helpful: bool
    reasoning: str = ""


_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOP = frozenset("""a an the and or but if of to in on at for from with by about as into over
after before is are was were be been being am do does did have has had it its it's this that
these those there here what which who whom whose when where why how can could would should
will shall may might must i me my mine we our ours us you your yours he him his she her hers
they them their theirs not no yes so too very just also than then some any all each more most
such only own same other again please thanks thank tell give get got let make any one well
also""".split())
# cues that a message leans on the user's own past (possessives, explicit recall)
_PERSONAL = frozenset({"my", "mine", "our", "ours"})
_RECALL = re.compile(r"\b(remember|again|as i (?:said|mentioned|told)|i (?:told|mentioned) you|"
                     r"last time|you know (?:that )?i|like i said|based on (?:what|my)|"
                     r"given what i)\b")
_ADVICE = re.compile(r"\b(suggest|recommend|ideas?|advice|plan|should i|for me|help me|"
                     r"what would you)\b")
_FIRST = frozenset({"i", "i'm", "i've", "i'd", "me", "we", "we're"})
_REQUEST = frozenset({"can", "help", "remember", "given", "told", "based", "need", "advice",
                      "could", "plan", "something", "around", "suggest", "ideas", "idea",
                      "would", "recommend", "know", "said", "mentioned", "last", "time",
                      "user", "it's", "think", "want"})


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _stem(w: str) -> str:
    """A light stemmer: drop -s/-es/-ed/-ing, keep 6 letters ('allergies' ~ 'allergic')."""
    for suf in ("ing", "ed", "es", "s"):
        if len(w) > len(suf) + 3 and w.endswith(suf):
            w = w[: -len(suf)]
            break
    return w[:6]


def _content(text: str) -> set[str]:
    return {_stem(w) for w in _tokens(text) if w not in _STOP and len(w) > 2}


def offline_trigger(text: str) -> TriggerDecision:
    """Cue grammar: possessive or explicit-recall cues (or a personal advice request) need memory."""
    toks = _tokens(text)
    low = " ".join(toks)
    personal = any(t in _PERSONAL for t in toks) or bool(_RECALL.search(low))
    advice = bool(_ADVICE.search(low)) and any(t in _FIRST or t in _PERSONAL for t in toks)
    if not (personal or advice):
        return TriggerDecision(query_needed=False, query="")
    words = [w for w in toks if w not in _STOP and w not in _REQUEST and len(w) > 2]
    query = " ".join(dict.fromkeys(words))
    return TriggerDecision(query_needed=bool(query), query=query)


def offline_verify(message: str, fact: str, *, min_overlap: int = 2, min_share: float = 0.5
                   ) -> Verdict:
    """Lexical judge: the fact is used if the message repeats enough of its specific content."""
    f = _content(fact) - {"user"}
    m = _content(message)
    shared = sorted(f & m)
    share = len(shared) / len(f) if f else 0.0
    ok = len(shared) >= min_overlap and share >= min_share
    why = f"shares {len(shared)}/{len(f)} content words" + (f" ({', '.join(shared)})" if shared
                                                           else "")
    return Verdict(helpful=ok, reasoning=why)


@dataclass
class LabelRun:
    """Labelled facts plus what each stage did (for reports and the label-validity check)."""

    facts: list[Fact]
    n_turns: int = 0
    n_triggered: int = 0
    n_retrieved: int = 0
    n_verified: int = 0
    unknown_trigger: int = 0
    unknown_verify: int = 0
    pairs: list[tuple[str, int]] = field(default_factory=list)  # (fact_id, session) verified
    n_pairs: int = 0  # verified (fact, user turn) pairs: |H|

    def summary(self) -> dict[str, Any]:
        """Counts of each stage, JSON-able."""
        return {"turns": self.n_turns, "triggered": self.n_triggered,
                "retrieved_pairs": self.n_retrieved, "verified_pairs": self.n_verified,
                "unknown_trigger": self.unknown_trigger, "unknown_verify": self.unknown_verify,
                "facts": len(self.facts), "used_facts": sum(1 for f in self.facts if f.hits),
                "unknown_facts": sum(1 for f in self.facts if f.status == "unknown"),
                "hit_pairs": self.n_pairs}


def _llm_trigger(model, turns: Sequence[UserTurn]) -> list[TriggerDecision | None]:
    from toolkit.llm import StructuredRequest, load_prompt

    prompt = load_prompt("labels_trigger")
    reqs = [StructuredRequest(
        messages=({"role": "system", "content": prompt.system},
                  {"role": "user", "content": prompt.render_user(message=t.text)}),
        schema=TriggerDecision, role="labels_trigger", prompt_version=prompt.version,
        id=f"{t.user}:{t.session}:{i}") for i, t in enumerate(turns)]
    return [o.value if o.ok else None for o in model.run(reqs, desc="trigger")]


def _llm_verify(model, pairs: Sequence[tuple[str, str, str]]) -> list[Verdict | None]:
    from toolkit.llm import StructuredRequest, load_prompt

    prompt = load_prompt("labels_verify")
    reqs = [StructuredRequest(
        messages=({"role": "system", "content": prompt.system},
                  {"role": "user", "content": prompt.render_user(message=msg, fact=fact)}),
        schema=Verdict, role="labels_verify", prompt_version=prompt.version, id=pid)
        for pid, msg, fact in pairs]
    return [o.value if o.ok else None for o in model.run(reqs, desc="verify")]


def label_facts(facts: Sequence[Fact], turns: Iterable[Any], *, model: Any = None,
                retriever: str | Retriever = "tfidf", k: int = 5) -> LabelRun:
    """Re-derive every fact's hits from later user turns: trigger -> top-k retrieval -> judge.

    ``turns`` are objects with ``user``, ``session`` and ``text`` (only those are read);
    ``model`` is a gateway ``ChatModel`` (``None`` or an offline model: offline methods).
    """
    offline = model is None or getattr(model, "is_offline", True)
    ret = make_retriever(retriever)
    ut = sorted((UserTurn(str(t.user), int(t.session), str(t.text)) for t in turns),
                key=lambda t: (t.user, t.session))
    if offline:
        decisions: list[TriggerDecision | None] = [offline_trigger(t.text) for t in ut]
    else:
        decisions = _llm_trigger(model, ut)
    by_user: dict[str, list[Fact]] = {}
    for f in facts:
        by_user.setdefault(f.user, []).append(f)
    for fs in by_user.values():
        fs.sort(key=lambda f: (f.session, f.fact_id))
    run = LabelRun(facts=[], n_turns=len(ut))
    candidates: list[tuple[str, str, str, Fact, int]] = []  # id, message, fact text, fact, session
    for i, (t, d) in enumerate(zip(ut, decisions, strict=True)):
        if d is None:
            run.unknown_trigger += 1
            continue
        if not d.query_needed or not d.query.strip():
            continue
        run.n_triggered += 1
        bank = [f for f in by_user.get(t.user, []) if f.session < t.session]
        for j, _score in ret.search([f.text for f in bank], d.query, k):
            f = bank[j]
            candidates.append((f"{t.user}:{t.session}:{i}:{f.fact_id}", t.text, f.text, f,
                               t.session))
    run.n_retrieved = len(candidates)
    if offline:
        verdicts: list[Verdict | None] = [offline_verify(m, ft) for _, m, ft, _, _ in candidates]
    else:
        verdicts = _llm_verify(model, [(c[0], c[1], c[2]) for c in candidates])
    turns_per: dict[str, dict[int, int]] = {}  # fact -> hit session -> verified user turns
    unknown: set[str] = set()
    for (_, _, _, f, s), v in zip(candidates, verdicts, strict=True):
        if v is None:
            run.unknown_verify += 1
            unknown.add(f.fact_id)
        elif v.helpful:
            run.n_verified += 1
            per = turns_per.setdefault(f.fact_id, {})
            per[s] = per.get(s, 0) + 1
    run.pairs = sorted((fid, s) for fid, ss in turns_per.items() for s in ss)
    run.n_pairs = sum(c for ss in turns_per.values() for c in ss.values())
    run.facts = []
    for f in facts:
        per = turns_per.get(f.fact_id, {})
        hs = sorted(per)
        run.facts.append(f.model_copy(update={
            "hits": hs, "hit_turns": [per[h] for h in hs] if hs else None,
            "status": "unknown" if f.fact_id in unknown else "ok"}))
    return run


def compare_labels(derived: Sequence[Fact], reference: Sequence[Fact]) -> dict[str, Any]:
    """Agreement of derived labels with reference ones: fact-level used/unused and hit pairs."""
    from toolkit.metrics import confusion

    ref = {f.fact_id: f for f in reference}
    common = [f for f in derived if f.fact_id in ref]
    y_true = [bool(ref[f.fact_id].hits) for f in common]
    y_pred = [bool(f.hits) for f in common]
    b = confusion(y_true, y_pred)
    rp = {(f.fact_id, h) for f in common for h in ref[f.fact_id].hits}
    dp = {(f.fact_id, h) for f in common for h in f.hits}
    both = len(rp & dp)
    # all facts stay in the denominators; facts the pipeline could not fully judge are their
    # own column (their derived hits are a lower bound, counted as found where found)
    return {"n_facts": len(common), "fact_precision": b.precision, "fact_recall": b.recall,
            "fact_f1": b.f1, "pair_precision": both / len(dp) if dp else float("nan"),
            "pair_recall": both / len(rp) if rp else float("nan"),
            "n_pairs_reference": len(rp), "n_pairs_derived": len(dp),
            "n_unknown_facts": sum(1 for f in common if f.status == "unknown")}


def rhr_counts(facts: Iterable[Fact], in_bank: Callable[[Fact, int], bool] | set[str]
               ) -> dict[str, tuple[int, int]]:
    """Per user: (|H'|, |H|) over (fact, user turn) pairs (§3.1; see the module docstring).

    ``in_bank`` is a set of stored fact ids (stored for good) or a function
    ``(fact, session) -> bool`` telling whether the fact was in the bank at that session.
    Each hit session counts as many pairs as it has verified user turns (``Fact.hit_turns``).
    """
    test = (lambda f, _s: f.fact_id in in_bank) if isinstance(in_bank, set) else in_bank
    out: dict[str, list[int]] = {}
    for f in facts:
        c = out.setdefault(f.user, [0, 0])
        for h, n_turns in zip(f.hits, f.pair_counts(), strict=True):
            c[1] += n_turns
            c[0] += n_turns * int(bool(test(f, h)))
    return {u: (v[0], v[1]) for u, v in sorted(out.items())}


def rhr(facts: Iterable[Fact], in_bank: Callable[[Fact, int], bool] | set[str]
        ) -> tuple[float, float]:
    """RHR = |H'|/|H| over (fact, user turn) pairs: micro pools pairs, macro averages users
    with at least one pair (§3.1: "RHR := |H'|/|H|")."""
    from toolkit.metrics import micro_macro

    counts = rhr_counts(facts, in_bank)
    return micro_macro([c[0] for c in counts.values()], [c[1] for c in counts.values()])
