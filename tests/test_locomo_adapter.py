"""LoCoMo adapter: observations -> facts, every quirk repaired or dropped and counted."""

from __future__ import annotations

import json

import pytest

from toolkit.datasets.locomo import load_locomo_facts, parse_evidence
from toolkit.errors import InputError


def _conv(qa: list[dict], obs: dict | None = None, extra_dates: int = 0) -> dict:
    dialog = {"speaker_a": "Ann", "speaker_b": "Bo"}
    for s in (1, 2):
        dialog[f"session_{s}"] = [{"speaker": "Ann", "dia_id": f"D{s}:{i}", "text": "hi"}
                                  for i in range(1, 6)]
        dialog[f"session_{s}_date_time"] = "1 May 2023"
    for s in range(3, 3 + extra_dates):
        dialog[f"session_{s}_date_time"] = "2 May 2023"
    obs = obs or {
        "session_1_observation": {"Ann": [["Ann adopted a dog named Rex.", "D1:1"],
                                          ["Ann likes rainy days.", "D1:2"]],
                                  "Bo": [["Bo is training for a marathon.", "D1:3"]]},
        "session_2_observation": {"Ann": [["Ann moved to Oslo.", ["D2:1", "D2:2"]]],
                                  "Bo": [["Bo bought running shoes.", "D2:4, D2:5"]]},
    }
    return {"sample_id": "conv-x", "conversation": dialog, "observation": obs, "qa": qa,
            "event_summary": {}, "session_summary": {}}


def test_each_quirk_is_handled_and_counted(tmp_path):
    qa = [
        {"question": "pet?", "answer": "Rex", "evidence": ["D:1:1"], "category": 4},
        {"question": "where?", "answer": 2023, "evidence": ["D2:2; D1:3"], "category": 1},
        {"question": "shoes?", "answer": "yes", "evidence": ["D2:05"], "category": 2},
        {"question": "nothing", "answer": "x", "evidence": [], "category": 3},
        {"question": "trick", "adversarial_answer": "rainy", "evidence": ["D1:2"], "category": 5},
        {"question": "odd", "answer": "x", "evidence": ["D1:2"], "category": 9},
        {"question": "bad", "answer": "x", "evidence": ["D", "D9:9"], "category": 4},
    ]
    p = tmp_path / "lc.json"
    p.write_text(json.dumps([_conv(qa, extra_dates=2)]))
    facts, rep = load_locomo_facts(p)
    used = {f.text for f in facts if f.hits}
    assert used == {"Ann adopted a dog named Rex.", "Bo is training for a marathon.",
                    "Ann moved to Oslo.", "Bo bought running shoes."}
    assert all(f.hits == [3] for f in facts if f.hits)  # asked after the last session (2)
    q = rep.counts
    assert q["evidence: 'D:N:M' form (repaired)"] == 1
    assert q["evidence: several ids in one string (split)"] == 1
    assert q["evidence: zero-padded turn (normalised)"] == 1
    assert q["evidence: no dia_id in string (dropped)"] == 1
    assert q["evidence: id names no turn of the conversation (dropped)"] == 1
    assert q["qa: empty evidence (marks nothing)"] == 1
    assert q["qa: numeric answer (kept as is; answers unused)"] == 1
    assert q["qa: adversarial_answer instead of answer"] == 1
    assert q["qa: adversarial (ignored for labels)"] == 1
    assert q["qa: unknown category (ignored)"] == 1
    assert q["date_time keys without a session (ignored)"] == 2
    assert q["observation: dia_id given as a list (split)"] == 1
    assert q["observation: several dia_ids in one string (split)"] == 1
    assert rep.qa_by_category["unknown 9"] == 1 and rep.users == 2
    assert "date_time keys" in rep.text()
    # adversarial evidence marks its fact only when asked to
    facts5, _ = load_locomo_facts(p, include_adversarial=True)
    assert "Ann likes rainy days." in {f.text for f in facts5 if f.hits}


def test_parse_evidence_forms():
    from collections import Counter

    c: Counter = Counter()
    assert parse_evidence("D3:4", c) == ["D3:4"] and not c
    assert parse_evidence("D9:1 D4:4 D4:6", c) == ["D9:1", "D4:4", "D4:6"]
    assert parse_evidence(7, c) == [] and c["evidence: not a string (dropped)"] == 1


def test_unreadable_file_is_one_clear_error(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    with pytest.raises(InputError, match="x.json"):
        load_locomo_facts(p)
    p.write_text(json.dumps([{"sample_id": "a"}]))
    with pytest.raises(InputError, match="missing field"):
        load_locomo_facts(p)


def test_real_locomo_counts(shared_data):
    facts, rep = load_locomo_facts(shared_data / "locomo10.json")
    assert rep.conversations == 10 and rep.users == 20 and rep.sessions == 272
    assert rep.qa_items == 1986 and len({f.user for f in facts}) == 20
    assert rep.qa_by_category == {"adversarial": 446, "multi-hop": 282, "open-domain": 96,
                                  "single-hop": 841, "temporal": 321}
    q = rep.counts
    assert q["qa: empty evidence (marks nothing)"] == 4
    assert q["evidence: 'D:N:M' form (repaired)"] == 1
    assert q["evidence: several ids in one string (split)"] >= 1
    assert q["date_time keys without a session (ignored)"] == 16
    assert q["qa: adversarial_answer instead of answer"] == 444
    assert q["qa: numeric answer (kept as is; answers unused)"] == 6
    assert 0.2 < rep.used_facts / rep.facts < 0.7
    assert len({f.fact_id for f in facts}) == len(facts)
