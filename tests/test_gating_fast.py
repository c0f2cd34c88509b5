"""The vectorised gating engine agrees with the plain per-step reference (to 1e-9)."""

from __future__ import annotations

import numpy as np
import pytest

from toolkit.gating.env import build_streams, run_static
from toolkit.gating.fast import UCBGrid, capacity_levels_run, fast_static, fast_ucb
from toolkit.gating.features import TfidfSVD
from toolkit.gating.reference import reference_ucb
from toolkit.gating.simulate import simulate_benchmark


@pytest.fixture(scope="module")
def small():
    facts = simulate_benchmark("tiny", seed=3)
    streams = build_streams(facts)
    feat = TfidfSVD(dim=8, random_state=0).fit([f.text for f in facts])
    return streams, [feat.transform(s.texts) for s in streams]


def _rows():
    return [dict(budget=b, lam=lam, alpha=al, tau=tau, m=m, kappa=k)
            for b in (8, 25, 400) for lam in (0.5, 5.0) for al in (0.0, 0.3)
            for tau in (0.05, 0.25) for m, k in ((3, 0.6), (6, 0.9))]


@pytest.mark.parametrize("feedback", ["wait", "running"])
def test_fast_matches_reference(small, feedback):
    streams, Xs = small
    rows = _rows()
    rng = np.random.default_rng(0)
    for s, X in zip(streams[:2], Xs[:2], strict=True):
        prior = rng.normal(scale=0.2, size=X.shape[1])
        grid = UCBGrid.from_rows(rows, np.tile(prior, (len(rows), 1)), feedback=feedback)
        fe = fast_ucb(s, X, grid, return_index=True)
        n_add = fe.added.sum(axis=1)
        assert n_add.min() < s.n and n_add.max() > 0  # the grid spans selective and open gates
        for c, r in enumerate(rows):
            ref = reference_ucb(s, X, mu_prior=prior, feedback=feedback, **r)
            np.testing.assert_allclose(fe.index[c], ref.index, rtol=0, atol=1e-9)
            assert np.array_equal(fe.added[c], ref.added)
            assert fe.kept[c] == ref.kept and fe.total == ref.total


def test_fifo_closed_form_matches_bank(small):
    streams, _ = small
    rng = np.random.default_rng(1)
    for s in streams:
        adds = rng.random((6, s.n)) < rng.uniform(0.1, 0.9, size=(6, 1))
        budgets = np.array([1, 3, 10, 30, 60, 1000])
        fe = fast_static(s, adds, budgets)
        for c in range(6):
            kept, total = run_static(s, adds[c], int(budgets[c]))
            assert fe.kept[c] == kept and fe.total == total


def test_capacity_levels_use_the_fill_at_session_start(small):
    streams, _ = small
    s = streams[0]
    by_level = np.zeros((3, s.n), dtype=bool)
    by_level[0] = True  # only the "vacant" prompt admits
    fe = capacity_levels_run(s, by_level, np.array([30]))
    # admissions stop in the first session that starts with the bank a third full
    cum = np.cumsum(fe.added[0])
    assert 10 <= cum[-1] < 10 + max(b - a for _, a, b in s.session_slices())
    assert fe.added[0].sum() < s.n


@pytest.mark.parametrize("feedback", ["wait", "running"])
def test_engine_matches_previous_engine(small, feedback):
    """The Woodbury engine with budget sharing decides exactly as the per-session solve did."""
    from toolkit.gating.fast import solve_ucb

    streams, Xs = small
    rows = _rows()
    for s, X in zip(streams, Xs, strict=True):
        grid = UCBGrid.from_rows(rows, feedback=feedback)
        new, old = fast_ucb(s, X, grid, return_index=True), solve_ucb(s, X, grid, return_index=True)
        assert np.array_equal(new.added, old.added) and np.array_equal(new.kept, old.kept)
        np.testing.assert_allclose(new.index, old.index, rtol=0, atol=1e-9)


@pytest.mark.parametrize("feedback", ["wait", "running"])
def test_forked_budgets_match_rerun_from_the_start(small, feedback):
    """A budget that forks off a larger budget's column mid-stream decides exactly as when it ran
    again from the first session (the previous engine); its index differs at most by the last
    bits that batching different columns together can move."""
    from toolkit.gating.fast import _passes_ucb

    streams, Xs = small
    rows = _rows()
    forked = 0
    for s, X in zip(streams, Xs, strict=True):
        grid = UCBGrid.from_rows(rows, feedback=feedback)
        new, old = fast_ucb(s, X, grid, return_index=True), _passes_ucb(s, X, grid, return_index=True)
        assert np.array_equal(new.added, old.added) and np.array_equal(new.kept, old.kept)
        np.testing.assert_allclose(new.index, old.index, rtol=0, atol=1e-12)
        big = {(r["lam"], r["alpha"], r["tau"], r["m"]): c for c, r in enumerate(rows) if r["budget"] == 400}
        forked += sum(not np.array_equal(new.added[c], new.added[big[(r["lam"], r["alpha"], r["tau"], r["m"])]])
                      for c, r in enumerate(rows) if r["budget"] < 400)
    assert forked > 0  # some budgets did diverge from the largest one's column


@pytest.mark.parametrize("feedback", ["wait", "running"])
def test_members_forked_on_decisions_match_runs_of_their_own(small, feedback):
    """Without an index, configurations that share a ridge system (same lam, m, kappa, prior)
    share one column while their decisions agree, whatever their alpha, tau or budget; a member
    that decides otherwise leaves mid-stream. Each must decide exactly as a run of its own."""
    from toolkit.gating.fast import _passes_ucb

    streams, Xs = small
    rows = _rows()
    late = 0
    for s, X in zip(streams, Xs, strict=True):
        grid = UCBGrid.from_rows(rows, feedback=feedback)
        new, old = fast_ucb(s, X, grid), _passes_ucb(s, X, grid)
        assert np.array_equal(new.added, old.added) and np.array_equal(new.kept, old.kept)
        for c, r in enumerate(rows):
            for c2, r2 in enumerate(rows[c + 1:], start=c + 1):
                if (r["lam"], r["m"], r["budget"]) == (r2["lam"], r2["m"], r2["budget"]):
                    diff = np.flatnonzero(new.added[c] != new.added[c2])
                    late += bool(len(diff)) and diff[0] > 0
    assert late > 0  # some siblings agreed for a while, then forked


def test_shared_inverse_slots_update_like_own_inverses():
    """Columns that share a ridge inverse slot (forked, same facts joined so far) get the same
    inverse, bit for bit, as columns that each keep their own: a slot whose columns add different
    facts is split, one whose columns add the same facts is updated once."""
    from toolkit.gating.fast import _woodbury, _woodbury_shared

    rng = np.random.default_rng(0)
    d, k = 5, 3
    A = rng.normal(size=(2, d, d))
    base = np.linalg.inv(np.eye(d)[None] * 2.0 + A @ A.transpose(0, 2, 1))
    F = rng.normal(size=(k, d))
    mask = np.array([[1, 0, 1], [0, 0, 0], [1, 1, 0], [1, 1, 0], [1, 1, 0]], dtype=bool)
    pid = np.array([0, 0, 0, 1, 1, 5, 6], dtype=np.int64)  # columns 0-2 share slot 0, 3-4 slot 1
    P = np.zeros((7, d, d))
    P[:2] = base
    own = base[[0, 0, 0, 1, 1]].copy()
    _woodbury(own, slice(0, 5), F, mask)
    _woodbury_shared(P, pid, 5, F, mask)
    for c in range(5):
        assert np.array_equal(P[pid[c]], own[c])
    assert len({int(pid[c]) for c in range(5)}) == 4  # slot 0 split in three, slot 1 updated once


def test_span_reads_consecutive_slots_as_a_slice():
    """Index arrays of consecutive slots become a step-1 slice (updated through a view of P);
    anything else stays an index array (gathered and scattered)."""
    from toolkit.gating.fast import _span

    assert _span(np.array([3, 4, 5])) == slice(3, 6)
    assert _span(np.array([7])) == slice(7, 8)
    assert _span(slice(2, 9)) == slice(2, 9)
    assert _span(np.array([3, 5, 6])) is None
    assert _span(np.array([5, 4, 3])) is None
    assert _span(np.array([3, 3, 4])) is None
    assert _span(np.array([], dtype=np.int64)) is None
    assert _span(slice(0, 6, 2)) is None


@pytest.mark.parametrize("rows,dst", [([2, 3, 4], [2, 3, 4]),   # in place on a slice
                                      ([2, 3, 4], [5, 6, 7]),   # a view read, written elsewhere
                                      ([1, 3, 4], [1, 3, 4]),   # gathered and scattered
                                      ([1, 3, 4], [5, 6, 7])])
def test_woodbury_through_views_is_bitwise_the_gathered_update(rows, dst):
    """The Woodbury update of consecutive slots through a view of ``P`` gives, bit for bit, the
    update of the same inverses gathered into a fresh array; with ``dst``, the source slots are
    left as they were and the updated inverses land in ``dst``."""
    from toolkit.gating.fast import _woodbury

    rng = np.random.default_rng(1)
    d, k = 6, 4
    A = rng.normal(size=(8, d, d))
    P = np.linalg.inv(np.eye(d)[None] * 3.0 + A @ A.transpose(0, 2, 1))
    F = rng.normal(size=(k, d))
    mask = np.array([[1, 1, 0, 1], [1, 1, 1, 1], [0, 1, 1, 0]], dtype=bool)
    rows_a, dst_a = np.array(rows), np.array(dst)
    expect = P[rows_a].copy()  # a fresh, separate copy: the gathered path of the engine
    _woodbury(expect, slice(0, 3), F, mask)
    before = P.copy()
    _woodbury(P, rows_a, F, mask, dst=dst_a)
    assert np.array_equal(P[dst_a], expect)
    untouched = np.setdiff1d(np.arange(8), dst_a)
    assert np.array_equal(P[untouched], before[untouched])
    assert not np.array_equal(expect, before[rows_a])  # the update did something
