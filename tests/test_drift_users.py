"""Drifting simulated users: schedules, determinism, varied text, hidden style, shipped fixtures."""

from __future__ import annotations

import json
from pathlib import Path

from toolkit.datasets.jsonl import read_jsonl, write_jsonl
from toolkit.drift.users import (
    STYLES,
    DriftingUser,
    abrupt,
    gold_record,
    gradual,
    oscillation,
    shipped_panel,
    stationary,
)
from toolkit.records import DriftInput

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures" / "drift"


def test_schedules_and_change_points():
    a = abrupt("playful", "formal_dense", 5, n_turns=10)
    assert a.change_points == (5,) and a.style_at(4).name == "playful" and a.style_at(5).name == "formal_dense"
    g = gradual("casual", "formal_dense", 4, 8, n_turns=12)
    f = [g.style_at(t).formality for t in range(1, 13)]
    assert f[:3] == [STYLES["casual"].formality] * 3 and f[-1] == STYLES["formal_dense"].formality
    assert all(x <= y for x, y in zip(f, f[1:], strict=False))
    o = oscillation("casual", "formal_brief", 4, n_turns=16)
    assert o.change_points == (5, 9, 13) and o.style_at(5).name == "formal_brief" and o.style_at(9).name == "casual"
    assert stationary("gentle").change_points == ()


def test_deterministic_per_seed_and_order_free():
    u = DriftingUser("u1", abrupt("casual", "formal_dense", 6, n_turns=12), seed=3)
    d1, d2 = u.dialogue(), DriftingUser("u1", u.schedule, seed=3).dialogue()
    assert d1 == d2
    assert DriftingUser("u1", u.schedule, seed=4).dialogue() != d1
    # a turn depends only on (seed, id, turn, state), not on how many users ran before
    state = {"turn": 5, "topic": d1.turns and 0}
    assert u.respond(None, state)[0] == u.respond(None, state)[0]


def test_turns_are_varied_not_one_template():
    d = DriftingUser("v", stationary("playful", 30), seed=0).dialogue()
    texts = [t.user for t in d.turns]
    assert len(set(texts)) == 30
    assert len({" ".join(t.split()[:3]) for t in texts}) >= 15
    formal = DriftingUser("w", stationary("formal_dense", 30), seed=0).dialogue()
    assert len({t.user.split("?")[0] for t in formal.turns}) >= 20


def test_style_is_hidden_from_the_messages():
    for u in shipped_panel(0):
        d = u.dialogue()
        assert set(d.model_dump()) == {"id", "turns"}
        for t in d.turns:
            assert set(t.model_dump()) == {"user", "assistant"}
            for s in u.schedule.styles:
                assert s.name not in t.user or "_" not in s.name and s.name in ("gentle", "casual")


def test_expected_style_and_reply_rating():
    u = DriftingUser("r", abrupt("playful", "formal_dense", 4, n_turns=8))
    assert u.expected_style(2)["tone"] == "humorous" and u.expected_style(5)["formality"] == "formal"
    formal = ("The principal determinants of bond yields are inflation expectations, the policy rate path "
              "and the term premium; each responds differently to balance-sheet operations.")
    jokey = "lol idk bonds are weird haha 😂"
    assert u.rate_reply(formal, 5) > u.rate_reply(jokey, 5)
    assert u.rate_reply(jokey, 2) > u.rate_reply(formal, 2)


def test_shipped_fixtures_regenerate_byte_identically(tmp_path):
    users = shipped_panel(0)
    write_jsonl([u.dialogue() for u in users], tmp_path / "s.jsonl")
    assert (tmp_path / "s.jsonl").read_bytes() == (FIX / "schedules.jsonl").read_bytes()
    gold = json.loads((FIX / "gold.json").read_text())
    assert gold == {u.id: gold_record(u) for u in users}
    recs = read_jsonl(FIX / "schedules.jsonl", DriftInput)
    kinds = {g["kind"] for g in gold.values()}
    assert kinds == {"abrupt", "gradual", "oscillation", "stationary"} and len(recs) == len(gold)
    assert all(g["n_turns"] == 30 for g in gold.values() if g["kind"] == "stationary")
