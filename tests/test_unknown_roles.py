"""`unknown` is a third outcome in every role: a server that only answers non-JSON text makes
every record unknown with its answer fields null, never a default answer (issue 12)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from llm_server import Reply

from toolkit.cli import main
from toolkit.paper import fixtures_dir

MODEL = "openai-api/local/test"


@pytest.fixture
def nonjson(llm_env):
    llm_env.handler = lambda req: Reply(content="Sure! Here is what I think, in plain words.")
    return llm_env


def _head(src: Path, dst: Path, n: int) -> Path:
    dst.write_text("".join(src.read_text(encoding="utf-8").splitlines(True)[:n]), encoding="utf-8")
    return dst


def _records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_admit_writes_unknown_with_null_decision(nonjson, tmp_path: Path) -> None:
    inp = _head(fixtures_dir() / "admission" / "dev.jsonl", tmp_path / "in.jsonl", 6)
    out = tmp_path / "out.jsonl"
    assert main(["admit", str(inp), "-o", str(out), "--model", MODEL]) == 0
    recs = _records(out)
    assert len(recs) == 6
    for r in recs:
        assert r["status"] == "unknown"
        assert r["decision"] is None and r["scope"] is None and r["activation"] is None
        assert r["behavior"] is None and r["quotes"] == [] and r["conditional"] is False


def test_resolve_writes_unknown_with_null_updates(nonjson, tmp_path: Path) -> None:
    inp = _head(fixtures_dir() / "resolution" / "dev.jsonl", tmp_path / "in.jsonl", 4)
    out = tmp_path / "out.jsonl"
    assert main(["resolve", str(inp), "-o", str(out), "--model", MODEL]) == 0
    recs = _records(out)
    assert len(recs) == 4
    assert all(r["status"] == "unknown" and r["updates"] is None for r in recs)


def test_drift_turns_unknown_without_vector_or_flag(nonjson, tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "d1", "turns": [{"user": "lol ok shorter pls"},
                                                     {"user": "Please elaborate rigorously."}]})
                   + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["drift", str(inp), "-o", str(out), "--model", MODEL]) == 0
    recs = _records(out)
    assert [r["turn"] for r in recs] == [1, 2]
    for r in recs:
        assert r["status"] == "unknown"
        assert r["vector"] is None and r["score"] is None and r["changed"] is None
        assert r["prompt"] is None


def _stream():
    from toolkit.gating.env import UserStream

    texts = ("User is allergic to peanuts.", "User said hi.", "User prefers tea.")
    return UserStream("u", ("f1", "f2", "f3"), texts, np.array([0, 0, 1]),
                      (np.array([3]), np.zeros(0, np.int64), np.zeros(0, np.int64)))


def test_gates_unknown_are_null_and_the_fallback_is_the_policys(nonjson, tmp_path: Path) -> None:
    from toolkit.gating.policies import LLMGreedy
    from toolkit.llm import Gateway

    model = Gateway(cache_dir=str(tmp_path / "c")).model(MODEL)
    s = _stream()
    for gate in (LLMGreedy(model=model), LLMGreedy(model=model, capacity_aware=True)):
        d = gate.decisions(s)
        assert d.unknown == d.by_level.size and not d.answered_mask().any()
        recs = d.records(s.fact_ids)
        assert all(r["status"] == "unknown" and r["store"] is None for r in recs)
        assert d.resolved("store").all() and not d.resolved("skip").any()
    skip = LLMGreedy(model=model, fallback="skip").gate(s, np.zeros((3, 2)), [5])
    assert not skip.added.any()
    store = LLMGreedy(model=model, fallback="store").gate(s, np.zeros((3, 2)), [5])
    assert store.added.all()
    with pytest.raises(ValueError):
        LLMGreedy(model=model, fallback="maybe").gate(s, np.zeros((3, 2)), [5])


def test_session_summaries_stay_unknown(nonjson, tmp_path: Path) -> None:
    from toolkit.gating.llm_gates import UNKNOWN_SUMMARY, gate_decisions
    from toolkit.gating.rubric import summarize_session
    from toolkit.llm import Gateway

    model = Gateway(cache_dir=str(tmp_path / "c")).model(MODEL)
    s = _stream()
    d = gate_decisions(s, context=True, capacity_aware=False, model=model)
    assert d.unknown_summaries == 2 and d.unknown == 3
    sent = [r["messages"][-1]["content"] for r in nonjson.requests]
    offline_note = summarize_session(list(s.texts[:2]))
    assert any(UNKNOWN_SUMMARY in c for c in sent)
    assert not any(offline_note in c for c in sent)  # never the offline note in its place


def test_label_judges_unknown_mark_facts_unknown(nonjson, tmp_path: Path) -> None:
    from toolkit.gating.labels import UserTurn, label_facts
    from toolkit.llm import Gateway
    from toolkit.records import Fact

    model = Gateway(cache_dir=str(tmp_path / "c")).model(MODEL)
    facts = [Fact(user="u", fact_id="f1", session=0, text="User is allergic to peanuts."),
             Fact(user="u", fact_id="f2", session=2, text="User likes tea.")]
    turns = [UserTurn("u", 1, "Remember my allergy? Plan a dinner for me.")]
    run = label_facts(facts, turns, model=model)
    assert run.unknown_trigger == 1 and run.n_verified == 0
    by = {f.fact_id: f for f in run.facts}
    assert by["f1"].status == "unknown" and by["f1"].hits == []  # not "never used" for sure
    assert by["f2"].status == "ok"  # stored after that turn: untouched by it
    assert run.summary()["unknown_facts"] == 1


def test_rescoring_never_turns_unknown_into_pass_or_fail() -> None:
    from toolkit.records import ResolutionOutput
    from toolkit.rules.admission_eval import load_split, score_rows, summary_counts, unknown_counts
    from toolkit.rules.resolution_eval import ResolutionGold, decision_correct, target_correct

    inputs, gold = load_split("dev")
    rows = [{"id": r.id, "status": "unknown", "decision": None} for r in inputs]
    scored = score_rows(rows, gold)
    c, u = summary_counts(scored), unknown_counts(scored)
    assert c["structural"] == (0, len(inputs)) and u["structural"] == len(inputs)
    n_nonp = sum(1 for g in gold.values() if g.decision != "persist")
    assert c["erroneous_persistence"] == (0, n_nonp) and u["erroneous_persistence"] == n_nonp
    g = ResolutionGold(id="a", updates=[], category="x")
    unk = ResolutionOutput(id="a", status="unknown", updates=None)
    with pytest.raises(ValueError):
        decision_correct(unk, g)
    with pytest.raises(ValueError):
        target_correct(unk, g)


def test_records_reject_answers_on_unknown() -> None:
    from pydantic import ValidationError

    from toolkit.records import AdmissionOutput, DriftOutput, ResolutionOutput

    with pytest.raises(ValidationError):
        AdmissionOutput(id="a", status="unknown", decision="defer")
    with pytest.raises(ValidationError):
        AdmissionOutput(id="a", decision=None)
    with pytest.raises(ValidationError):
        ResolutionOutput(id="a", status="unknown", updates=[])
    with pytest.raises(ValidationError):
        ResolutionOutput(id="a", updates=None)
    with pytest.raises(ValidationError):
        DriftOutput(id="a", turn=1, status="unknown", vector={}, score=None, changed=None, prompt=None)
    # older files without status read as ok
    assert AdmissionOutput.model_validate({"id": "a", "decision": "defer"}).status == "ok"


def test_fixed_rate_keeps_unknowns_in_the_denominator() -> None:
    from toolkit.metrics import fixed_rate

    r = fixed_rate(12, 180, 192)  # a model answering 12 of 192, all right
    assert r["rate"] == 12 / 192 and r["unknown"] == 180 and r["answered_rate"] == 1.0
    with pytest.raises(ValueError):
        fixed_rate(13, 180, 192)
