"""The simulated user: explicit state, one correction per unit, determinism, hidden profiles."""

from __future__ import annotations

import gc
import pickle
import re
from pathlib import Path

import pytest

from toolkit.compliance import Rule, applies
from toolkit.profiles import Profile, load_profiles
from toolkit.simuser import Delivery, Feedback, SimulatedUser, UserState
from toolkit.simuser.delivery import load_deliveries

ROOT = Path(__file__).resolve().parent.parent
DELIVERIES = ROOT / "fixtures" / "simuser" / "deliveries.jsonl"


def _maya() -> Profile:
    return load_profiles(ROOT / "profiles")["coder-maya"]


def _messy() -> Delivery:
    return next(d for d in load_deliveries(DELIVERIES) if d.id == "code-fix-messy")


def _clean() -> Delivery:
    return next(d for d in load_deliveries(DELIVERIES) if d.id == "code-fix-clean")


def test_respond_corrects_violations_and_stays_silent_on_clean_work():
    user = SimulatedUser(_maya(), seed=0)
    state = user.init_state()
    assert state == UserState()
    fb, state = user.respond(_messy(), state)
    assert isinstance(fb, Feedback) and fb.strip()
    tr = state.traces[-1]
    assert tr.decision == "correct"
    assert {"ask-before-deps", "no-emoji", "tidy-workspace"} <= set(tr.named)
    fb2, state = user.respond(_clean(), state)
    assert fb2 is None
    assert state.traces[-1].decision == "silent" and state.turn == 2


def test_at_most_one_correction_per_scored_unit():
    user = SimulatedUser(_maya())
    d = Delivery(task=_messy().task, reply=_messy().reply, artifacts=_messy().artifacts, unit="q1")
    fb, st = user.respond(d, user.init_state())
    assert fb is not None
    fb_again, st = user.respond(d, st)
    assert fb_again is None
    assert "already corrected" in st.traces[-1].reason
    other = Delivery(task=d.task, reply=d.reply, artifacts=d.artifacts, unit="q2")
    assert user.respond(other, st)[0] is not None


def test_state_is_not_mutated():
    user = SimulatedUser(_maya())
    s0 = user.init_state()
    _, s1 = user.respond(_messy(), s0)
    assert s0.turn == 0 and s0.traces == () and s1.turn == 1


def test_same_seed_same_text_other_seed_varies():
    prof = _maya()
    texts = {}
    for seed in range(6):
        texts[seed] = SimulatedUser(prof, seed=seed).judge(_messy()).feedback
    assert SimulatedUser(prof, seed=3).judge(_messy()).feedback == texts[3]
    assert len(set(texts.values())) >= 3


def test_nothing_delivered_means_silence():
    tr = SimulatedUser(_maya()).judge(Delivery(task="Fix the bug.", reply=""))
    assert tr.decision == "silent" and tr.reason == "nothing was delivered"


def test_judgement_only_preference_abstains_with_reason_and_sends_nothing(monkeypatch):
    import toolkit.compliance._learned as learned

    monkeypatch.setattr(learned, "default_reader", lambda: None)  # the catalogue alone cannot read it
    prof = Profile(id="u", preferences=[{"id": "p", "text": "Be thoughtful about naming."}])
    user = SimulatedUser(prof)
    tr = user.judge(Delivery(task="t", reply="Done."))
    assert tr.decision == "abstain"  # recorded as 'could not judge', never as a judged silence
    fb, state = user.respond(Delivery(task="t", reply="Done."), user.init_state())
    assert fb is None and state.traces[-1].decision == "abstain"
    assert tr.judgements[0].verdict == "unknown"
    assert "could not judge p" in tr.reason


def _ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    w = re.findall(r"[a-z0-9']+", text.lower())
    return {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}


def test_hidden_boundary_no_profile_field_crosses():
    """What the agent receives is a plain string; no profile id, text, condition or persona is in it."""
    profiles = load_profiles(ROOT / "profiles")
    deliveries = load_deliveries(DELIVERIES)
    sent = 0
    for prof in profiles.values():
        user = SimulatedUser(prof, seed=1)
        st = user.init_state()
        for d in deliveries:
            fb, st = user.respond(d, st)
            if fb is None:
                continue
            sent += 1
            assert type(fb) is Feedback and isinstance(fb, str)
            assert not hasattr(fb, "__dict__") and Feedback.__slots__ == ()
            assert pickle.loads(pickle.dumps(fb)) == str(fb)
            # nothing reachable from the object except the characters themselves
            assert all(isinstance(r, type) for r in gc.get_referents(fb))
            low = fb.lower()
            assert prof.id.lower() not in low
            for p in prof.preferences:
                if re.search(r"[-_\d]", p.id):  # identifier-like ids never appear (plain words may)
                    assert not re.search(r"\b" + re.escape(p.id.lower()) + r"\b", low), (p.id, fb)
                for field in (p.text, p.applies_when, p.except_when):
                    if field:
                        assert not (_ngrams(field, 6) & _ngrams(fb, 6)), (field, fb)
            if prof.persona:
                assert not (_ngrams(prof.persona, 5) & _ngrams(fb, 5))
    assert sent >= 8
    assert "persona" not in repr(SimulatedUser(next(iter(profiles.values()))))


_EXCEPTION_PROFILE = [
    {"id": "short", "text": "Keep replies under 40 words.", "except_when": "I ask for a detailed explanation"},
    {"id": "hints", "text": "Add type hints to functions.", "applies_when": "writing Python"},
]


@pytest.mark.xfail(strict=True, reason="regression at c9e3689 (re-fit on 41 development batches, w34/w35 added): "
                   "the learned gate abstains instead of passing this probe (p 0.123 just above the pass threshold "
                   "0.105; applicability 0.069 just above the not_applicable threshold 0.061); both operating "
                   "points are chosen on development folds, not on this probe (n15b report)")
def test_holding_exception_keeps_the_user_silent():
    user = SimulatedUser(Profile(id="u", preferences=_EXCEPTION_PROFILE))
    tr = user.judge(Delivery(task="Give me a detailed explanation of the cache.", reply=" ".join(["word"] * 60) + "."))
    assert tr.decision == "silent"


def test_exceptions_and_conditions_are_honoured():
    prof = Profile(id="u", preferences=_EXCEPTION_PROFILE)
    long_reply = " ".join(["word"] * 60) + "."
    user = SimulatedUser(prof)
    tr = user.judge(Delivery(task="Give me a detailed explanation of the cache.", reply=long_reply))
    assert tr.decision != "correct"  # a holding exception is never a correction (silence: the xfail above)
    tr = user.judge(Delivery(task="Summarise the cache.", reply=long_reply))
    # the exception does not hold, so the rule stays in force: the scope stage does not rule it out and
    # the reader never passes it; since n15's scope cues the learned gate abstains on this all-"word"
    # reply (p 0.618 against its 0.622 threshold) where it confirmed the word limit before
    short = next(j for j in tr.judgements if j.preference_id == "short")
    assert short.decided_by != "scope" and short.verdict in ("violated", "unknown") and tr.decision != "silent"
    assert applies(Rule.from_preference(prof.preferences[0]), "Summarise the cache.") is True
    assert applies(Rule.from_preference(prof.preferences[0]), "Give me a detailed explanation of the cache.") is False
    js = "function add(a, b) { return a + b; }\n"
    tr = user.judge(Delivery(task="Add an add helper in utils.js", reply="Added it.", artifacts={"utils.js": js}))
    assert "hints" not in tr.named
    py = "def add(a, b):\n    return a + b\n"
    tr = user.judge(Delivery(task="Add an add helper", reply="Added it.", artifacts={"utils.py": py}))
    assert tr.named == ("hints",)


@pytest.mark.xfail(strict=True, reason="regression at 0d92d8c: the blended learned reader (trees + logistic regression) reads this probe as a violation (p=0.59 >= 0.57); found after first contact with w34/w35, so the method was not changed (reported in the n15 report)")
def test_task_internal_wish_is_not_a_violation():
    prof = Profile(id="u", preferences=[{"id": "veg", "text": "I avoid steakhouses."}])
    user = SimulatedUser(prof)
    d = Delivery(task="My client insists on a steakhouse for the team dinner; book one.",
                 reply="Booked Hawksmoor, the steakhouse on Air Street, for 8 at 19:30.")
    tr = user.judge(d)  # no correction: a judged pass or an abstention (the reader cannot tell), never a violation
    assert tr.decision in ("silent", "abstain") and tr.named == ()
    d2 = Delivery(task="Book a team dinner.", reply="Booked Hawksmoor, the steakhouse on Air Street.")
    assert user.judge(d2).named == ("veg",)


def test_judging_a_batch_gives_each_delivery_its_own_trace():
    """judge_many reads all deliveries in one reader call; every trace is the one judge gives alone."""
    deliveries = load_deliveries(DELIVERIES)[:6]
    user = SimulatedUser(_maya(), seed=0)
    batch = user.judge_many(deliveries)
    alone = [user.judge(d) for d in deliveries]
    assert [(t.decision, t.named, t.feedback) for t in batch] == [(t.decision, t.named, t.feedback) for t in alone]
    assert [[(j.preference_id, j.verdict) for j in t.judgements] for t in batch] == \
        [[(j.preference_id, j.verdict) for j in t.judgements] for t in alone]


def test_judging_several_users_at_once_gives_each_the_traces_it_gets_alone():
    """judge_offline_groups reads every user's pairs in one reader call (a fidelity set's 145
    annotators embed their texts together); each user's traces are the ones judge_many gives it."""
    from toolkit.simuser.simulator import judge_offline_groups

    profiles = load_profiles(ROOT / "profiles")
    users = sorted(profiles)[:3]
    deliveries = load_deliveries(DELIVERIES)[:5]
    groups = [(profiles[u], deliveries[i:]) for i, u in enumerate(users)]  # each its own slice
    together = judge_offline_groups(groups, seed=3)
    alone = [SimulatedUser(p, seed=3).judge_many(ds) for p, ds in groups]
    assert [len(t) for t in together] == [5, 4, 3]
    assert [[(t.user, t.decision, t.named, t.feedback, t.judgements) for t in ts] for ts in together] == \
        [[(t.user, t.decision, t.named, t.feedback, t.judgements) for t in ts] for ts in alone]
    assert any(t.decision == "correct" for ts in together for t in ts)  # the comparison sees corrections
