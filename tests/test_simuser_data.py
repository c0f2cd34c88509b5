"""The simulator over third-party profiles (MultiSessionCollab, PrefEval) and the interpreter's reach."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.compliance import Rule, describe
from toolkit.profiles import profiles_from_multisessioncollab, profiles_from_prefeval
from toolkit.simuser import SimulatedUser
from toolkit.simuser.delivery import load_deliveries

ROOT = Path(__file__).resolve().parent.parent
DELIVERIES = load_deliveries(ROOT / "fixtures" / "simuser" / "deliveries.jsonl")


def _run_all(profiles, seed):
    out = []
    for pid in sorted(profiles):
        user = SimulatedUser(profiles[pid], seed=seed)
        st = user.init_state()
        for d in DELIVERIES:
            fb, st = user.respond(d, st)
            out.append((pid, d.id, None if fb is None else str(fb), st.traces[-1].named))
    return out


def _check_users(profs, ids) -> None:
    """Every user in ``ids`` answers every delivery, twice with one seed, the same way; some send."""
    sub = {pid: profs[pid] for pid in ids}
    a = _run_all(sub, seed=7)
    b = _run_all(sub, seed=7)
    assert a == b
    assert len(a) == len(ids) * len(DELIVERIES)
    sent = [x for x in a if x[2] is not None]
    assert 0 < len(sent) < len(a)


def test_multisessioncollab_users_run_deterministically(shared_data):
    """A quarter of the 100 users (every 4th id, so all of the corpus's range is met) in CI;
    the whole corpus is the slow sweep below (about a minute more)."""
    profs = profiles_from_multisessioncollab(shared_data)
    assert len(profs) == 100
    _check_users(profs, sorted(profs)[::4])
    judgeable = sum((describe(Rule.from_preference(p))['source'] != 'judgement only') for prof in profs.values() for p in prof.preferences)
    assert judgeable / 300 >= 0.75


@pytest.mark.slow
def test_all_100_multisessioncollab_users_run_deterministically(shared_data):
    profs = profiles_from_multisessioncollab(shared_data)
    _check_users(profs, sorted(profs))


def test_prefeval_profiles_are_mostly_judgeable(shared_data):
    profs = profiles_from_prefeval(shared_data)
    ok = sum((describe(Rule.from_preference(p.preferences[0]))['source'] != 'judgement only') for p in profs.values())
    assert ok / len(profs) >= 0.6
