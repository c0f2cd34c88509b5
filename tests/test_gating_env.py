"""The memory-bank environment: eviction, apple-tasting feedback, RHR."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from toolkit.errors import InputError
from toolkit.gating.env import GatingEnv, SessionObs, build_streams, fifo_kept, rhr, run_static
from toolkit.records import Fact


def _facts():
    # user a: sessions 0..3; user b: two sessions
    return [
        Fact(user="a", fact_id="a1", session=0, text="User prefers tea", hits=[2, 3]),
        Fact(user="a", fact_id="a2", session=0, text="User chatted about rain", hits=[]),
        Fact(user="a", fact_id="a3", session=1, text="User is allergic to nuts", hits=[3]),
        Fact(user="a", fact_id="a4", session=1, text="User looked up a word", hits=[]),
        Fact(user="a", fact_id="a5", session=2, text="User plans a trip", hits=[6]),
        Fact(user="b", fact_id="b1", session=0, text="x", hits=[1]),
        Fact(user="b", fact_id="b2", session=1, text="y", hits=[]),
    ]


def test_build_streams_orders_and_groups():
    facts = _facts()
    shuffled = [facts[i] for i in (4, 0, 6, 2, 1, 5, 3)]
    s = build_streams(shuffled)
    assert [x.user for x in s] == ["a", "b"]
    assert list(s[0].sessions) == [0, 0, 1, 1, 2]
    assert list(s[0].first_hit) == [2, -1, 3, -1, 6]
    assert list(s[0].fact_ids) == ["a1", "a2", "a3", "a4", "a5"]
    assert s[0].n_hits == 4 and s[1].n_hits == 1
    dup = facts + [Fact(user="a", fact_id="a1", session=3, text="again", hits=[])]
    with pytest.raises(InputError, match="duplicate"):
        build_streams(dup)


def test_fifo_budget_two_by_hand():
    a = build_streams(_facts())[0]  # order: a1 a2 | a3 a4 | a5
    # add a1, a3, a5 with budget 2: a5 (after session 2) evicts a1, so a1's hit in session 3
    # is lost but its hit in session 2 counts (a5 enters only after session 2)
    add = np.array([True, False, True, False, True])
    kept, total = run_static(a, add, budget=2)
    assert (kept, total) == (3, 4)  # a1@2, a3@3, a5@6 kept; a1@3 lost
    assert fifo_kept(a, add[None], [2])[0] == 3
    assert run_static(a, add, budget=1)[0] == 1  # only a5@6: a1 and a3 are pushed out in time
    assert run_static(a, np.zeros(5, dtype=bool), budget=10) == (0, 4)


def test_lru_keeps_the_fact_that_was_just_used():
    a = build_streams(_facts())[0]
    add = np.array([True, False, True, False, True])
    # a1 is hit in session 2 (LRU touches it); a5 then evicts a3 instead of a1
    assert run_static(a, add, budget=2, eviction="lru") == (3, 4)  # a1@2, a1@3, a5@6
    env = GatingEnv(a, 2, eviction="lru")
    obs = env.reset()
    while obs is not None:
        _, obs = env.step(add[obs.index])
    assert env.kept.tolist() == [True, True, False, True]  # hits sorted by (session, fact)


def test_apple_tasting_reveals_only_stored_hits_and_no_labels():
    a = build_streams(_facts())[0]
    env = GatingEnv(a, budget=5)
    obs = env.reset()
    assert isinstance(obs, SessionObs)
    assert {f.name for f in dataclasses.fields(obs)} == {"session", "index", "texts", "fill", "budget"}
    seen = []
    decisions = {0: [False, True], 1: [True, True], 2: [True]}  # skip a1 (the used one)
    while obs is not None:
        revealed, obs = env.step(decisions[int(obs.session)] if obs.session in decisions else [])
        seen.extend(revealed)
    # a1 was skipped: its two hits are never revealed; a3's hit in session 3 and a5's in 6 are
    assert seen == [(2, 3), (4, 6)]
    assert env.result() == (2, 4)


def test_rhr_micro_and_macro():
    micro, macro = rhr([3, 1, 0], [4, 1, 0])
    assert micro == pytest.approx(4 / 5)
    assert macro == pytest.approx((0.75 + 1.0) / 2)


def test_step_rejects_wrong_number_of_decisions():
    env = GatingEnv(build_streams(_facts())[0], budget=3)
    env.reset()
    with pytest.raises(ValueError, match="expected 2 decisions"):
        env.step([True])


def test_stream_pickles_its_hit_arrays_flat_and_comes_back_equal():
    """Sweep tasks ship streams to joblib workers: the per-fact arrays travel as one array and
    lengths, and come back equal (values and dtype), with and without per-turn hit counts."""
    import pickle

    streams = build_streams(_facts())
    with_turns = dataclasses.replace(streams[0], hit_turns=tuple(np.ones(len(h), np.int64) * 2
                                                                 for h in streams[0].hits))
    for s in [*streams, with_turns]:
        t = pickle.loads(pickle.dumps(s))
        assert (t.user, t.fact_ids, t.texts) == (s.user, s.fact_ids, s.texts)
        assert np.array_equal(t.sessions, s.sessions)
        for a, b in zip(t.hits, s.hits, strict=True):
            assert np.array_equal(a, b) and a.dtype == b.dtype
        assert (t.hit_turns is None) == (s.hit_turns is None)
        assert t.n_hits == s.n_hits and np.array_equal(t.first_hit, s.first_hit)
        assert np.array_equal(np.concatenate(t.hit_pairs()), np.concatenate(s.hit_pairs()))
