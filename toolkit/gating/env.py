"""The memory-gating environment: a budgeted memory bank fed session by session.

Protocol (memory-gating paper §3.1, §4.1):

* Facts arrive in sessions. After session ``t`` ends, the gate decides *add* or *skip* for
  every fact extracted from it; an added fact enters the bank at once.
* The bank holds at most ``budget`` facts. Adding to a full bank evicts one stored fact
  chosen by the eviction rule: ``"fifo"`` (default: the oldest stored fact leaves),
  ``"lru"`` (the fact whose last observed hit, or admission when never hit, is oldest)
  or ``"random"`` (seeded). Register more with :func:`register_eviction`.
* A fact's later *hits* (sessions in which it was retrieved and used) count only if the fact
  is in the bank during that session: the bank during session ``h`` is its state after all
  sessions before ``h`` were decided.
* Apple tasting: the gate hears about a fact's hits only if it added the fact and the fact is
  still stored when the hit happens; a skipped fact never reveals its label.
* RHR = |H'| / |H| (§3.1: "RHR := |H'|/|H|"): H is every (fact, user turn) pair of a user
  whose turn retrieved and verified the fact, H' those whose fact was stored at that turn's
  session. A session in which k turns verified a fact gives k pairs (``Fact.hit_turns``; one
  when absent). Micro pools H over users; macro averages the per-user ratios. The gate hears
  of each (fact, session) hit once, however many turns it had.

The delay window ``m`` (censoring) belongs to the learner, not to the bank: see
:mod:`toolkit.gating.reference` and :mod:`toolkit.gating.fast`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np

from toolkit.errors import InputError
from toolkit.records import Fact

__all__ = [
    "UserStream", "build_streams", "SessionObs", "GatingEnv", "MemoryBank", "Eviction",
    "register_eviction", "EVICTIONS", "rhr", "fifo_kept", "micro_macro_rhr",
]


@dataclass(frozen=True)
class UserStream:
    """One user's facts in arrival order, with hits as arrays (the labels stay inside)."""

    user: str
    fact_ids: tuple[str, ...]
    texts: tuple[str, ...]
    sessions: np.ndarray  # (N,) int, non-decreasing
    hits: tuple[np.ndarray, ...]  # per fact, sorted later sessions
    hit_turns: tuple[np.ndarray, ...] | None = None  # per fact, pairs per hit session (None: 1)

    @property
    def n(self) -> int:
        return len(self.fact_ids)

    @cached_property
    def first_hit(self) -> np.ndarray:
        """First hit session per fact, -1 when never used."""
        return np.array([h[0] if len(h) else -1 for h in self.hits], dtype=np.int64)

    @cached_property
    def labels(self) -> np.ndarray:
        """y: the fact is used at least once later (the bandit's label)."""
        return self.first_hit >= 0

    @cached_property
    def delays(self) -> np.ndarray:
        """Sessions from extraction to first hit (-1 when never used)."""
        fh = self.first_hit
        return np.where(fh >= 0, fh - self.sessions, -1)

    @property
    def n_hits(self) -> int:
        """|H|: (fact, user turn) pairs."""
        if self.hit_turns is None:
            return int(sum(len(h) for h in self.hits))
        return int(sum(int(np.sum(c)) for c in self.hit_turns))

    def session_slices(self) -> list[tuple[int, int, int]]:
        """(session, start, stop) for each session that has facts, in order."""
        s = self.sessions
        if len(s) == 0:
            return []
        cuts = np.flatnonzero(np.diff(s)) + 1
        starts = np.concatenate([[0], cuts])
        stops = np.concatenate([cuts, [len(s)]])
        return [(int(s[a]), int(a), int(b)) for a, b in zip(starts, stops, strict=True)]

    def __reduce__(self) -> tuple:
        """Pickle the per-fact arrays (``hits``, ``hit_turns``) as one array and their lengths.

        A stream goes to a joblib worker with every sweep task that reads it: a tuple of
        thousands of small arrays pickled one by one cost more CPU than the task's own transfer
        of the features (an L-scale Warm-Start task ships 20 streams). The arrays come back equal,
        with their dtype; cached properties are recomputed where they are read.
        """
        return (_unpack_stream, (self.user, self.fact_ids, self.texts, self.sessions,
                                 _pack_arrays(self.hits),
                                 None if self.hit_turns is None else _pack_arrays(self.hit_turns)))

    def hit_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(fact index, hit session) for every pair in H (a session repeats once per turn).

        Built once per stream (read-only arrays): a sweep asks for them in every FIFO count,
        thousands of times per user, and rebuilt them each time."""
        return self._hit_pairs

    @cached_property
    def _hit_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        hits = self.hits
        if self.hit_turns is not None:
            hits = tuple(np.repeat(np.asarray(h, dtype=np.int64), np.asarray(c, dtype=np.int64))
                         for h, c in zip(self.hits, self.hit_turns, strict=True))
        idx = np.concatenate([np.full(len(h), i, dtype=np.int64) for i, h in enumerate(hits)]
                             or [np.zeros(0, np.int64)])
        ses = np.concatenate([np.asarray(h, dtype=np.int64) for h in hits] or [np.zeros(0, np.int64)])
        idx.setflags(write=False)
        ses.setflags(write=False)
        return idx, ses

    @cached_property
    def hit_prev(self) -> np.ndarray:
        """Per pair of :meth:`hit_pairs`: the index of the last fact extracted before the hit's
        session (-1 when none), where a FIFO count reads the bank's add count (read-only)."""
        pos = np.searchsorted(self.sessions, self._hit_pairs[1], side="left") - 1
        pos.setflags(write=False)
        return pos


def _pack_arrays(arrays: tuple[np.ndarray, ...]) -> tuple:
    """One-dimensional arrays of one dtype as (flat array, lengths); anything else as given."""
    if arrays and all(a.ndim == 1 and a.dtype == arrays[0].dtype for a in arrays):
        return ("flat", np.concatenate(arrays), np.array([len(a) for a in arrays], dtype=np.int64))
    return ("tuple", arrays)


def _unpack_arrays(packed: tuple) -> tuple[np.ndarray, ...]:
    if packed[0] == "tuple":
        return tuple(packed[1])
    flat, lengths = packed[1], packed[2]
    return tuple(np.split(flat, np.cumsum(lengths)[:-1]))


def _unpack_stream(user: str, fact_ids: tuple[str, ...], texts: tuple[str, ...], sessions: np.ndarray,
                   hits: tuple, hit_turns: tuple | None) -> UserStream:
    """A :class:`UserStream` from its pickled form (see ``UserStream.__reduce__``)."""
    return UserStream(user, fact_ids, texts, sessions, _unpack_arrays(hits),
                      None if hit_turns is None else _unpack_arrays(hit_turns))


def build_streams(facts: Iterable[Fact]) -> list[UserStream]:
    """Group facts by user (users in order of first appearance), ordered by session, stable."""
    by_user: dict[str, list[Fact]] = {}
    for f in facts:
        by_user.setdefault(f.user, []).append(f)
    out = []
    for user, fs in by_user.items():
        seen: set[str] = set()
        for f in fs:
            if f.fact_id in seen:
                raise InputError(f"user {user!r} fact_id {f.fact_id!r}: duplicate fact id")
            seen.add(f.fact_id)
        fs = sorted(fs, key=lambda f: f.session)  # stable: keeps file order within a session
        out.append(UserStream(
            user=user,
            fact_ids=tuple(f.fact_id for f in fs),
            texts=tuple(f.text for f in fs),
            sessions=np.array([f.session for f in fs], dtype=np.int64),
            hits=tuple(np.array(f.hits, dtype=np.int64) for f in fs),
            hit_turns=(tuple(np.array(f.pair_counts(), dtype=np.int64) for f in fs)
                       if any(f.hit_turns is not None for f in fs) else None),
        ))
    return out


# -- eviction rules ---------------------------------------------------------------------------
class Eviction(Protocol):
    """Picks the stored fact to evict from a full bank."""

    def victim(self, bank: MemoryBank) -> int: ...


class FIFOEviction:
    """Evict the fact that entered the bank first."""

    def victim(self, bank: MemoryBank) -> int:
        return min(bank.stored, key=lambda i: bank.added_at[i])


class LRUEviction:
    """Evict the fact whose last observed hit (or admission) is oldest; ties by admission order."""

    def victim(self, bank: MemoryBank) -> int:
        return min(bank.stored, key=lambda i: (bank.last_used[i], bank.added_at[i]))


class RandomEviction:
    """Evict a uniformly random stored fact (seeded by ``random_state``)."""

    def __init__(self, random_state: int | None = 0) -> None:
        self.rng = np.random.default_rng(random_state)

    def victim(self, bank: MemoryBank) -> int:
        order = sorted(bank.stored, key=lambda i: bank.added_at[i])
        return order[int(self.rng.integers(len(order)))]


EVICTIONS: dict[str, Callable[..., Eviction]] = {
    "fifo": FIFOEviction, "lru": LRUEviction, "random": RandomEviction,
}


def register_eviction(name: str, factory: Callable[..., Eviction]) -> None:
    """Make an eviction rule available by name (``factory(random_state=...)`` or no args)."""
    EVICTIONS[name] = factory


def make_eviction(rule: str | Eviction, random_state: int | None = 0) -> Eviction:
    if not isinstance(rule, str):
        return rule
    if rule not in EVICTIONS:
        raise InputError(f"eviction {rule!r}: use one of {', '.join(sorted(EVICTIONS))}")
    factory = EVICTIONS[rule]
    try:
        return factory(random_state=random_state)  # type: ignore[call-arg]
    except TypeError:
        return factory()


@dataclass
class MemoryBank:
    """A bank of at most ``budget`` fact indices with an eviction rule."""

    budget: int
    eviction: Eviction = field(default_factory=FIFOEviction)
    stored: set[int] = field(default_factory=set)
    added_at: dict[int, int] = field(default_factory=dict)  # fact -> admission counter
    last_used: dict[int, int] = field(default_factory=dict)  # fact -> clock of last hit/admission
    clock: int = 0

    def add(self, i: int) -> int | None:
        """Store fact ``i``; return the evicted fact, if any."""
        if self.budget <= 0:
            return i  # nothing fits: the fact is dropped at once
        out = None
        if len(self.stored) >= self.budget:
            out = self.eviction.victim(self)
            self.stored.discard(out)
        self.clock += 1
        self.stored.add(i)
        self.added_at[i] = self.clock
        self.last_used[i] = self.clock
        return out

    def touch(self, i: int) -> None:
        """Note a hit on a stored fact (LRU uses it)."""
        self.clock += 1
        self.last_used[i] = self.clock

    def __contains__(self, i: int) -> bool:
        return i in self.stored

    def __len__(self) -> int:
        return len(self.stored)


@dataclass(frozen=True)
class SessionObs:
    """What the gate sees before deciding a session: its facts and the bank's fill."""

    session: int
    index: np.ndarray  # positions of this session's facts in the stream
    texts: tuple[str, ...]
    fill: int
    budget: int


class GatingEnv:
    """Step-by-step environment: the gate sees texts and revealed hits, never labels.

    ``reset()`` returns the first :class:`SessionObs`; ``step(add)`` applies the decisions for
    that session and returns ``(revealed, next_obs)`` where ``revealed`` lists
    ``(fact index, hit session)`` for hits on stored facts up to the next decision (``next_obs``
    is None after the last session; then every remaining hit has been scored).
    """

    def __init__(self, stream: UserStream, budget: int, eviction: str | Eviction = "fifo",
                 random_state: int | None = 0) -> None:
        self.stream = stream
        self.budget = int(budget)
        self.eviction = eviction
        self.random_state = random_state

    def reset(self) -> SessionObs | None:
        s = self.stream
        self.bank = MemoryBank(self.budget, make_eviction(self.eviction, self.random_state))
        self._slices = s.session_slices()
        self._k = 0
        fi, hs = s.hit_pairs()
        order = np.lexsort((fi, hs))
        self._hit_fact, self._hit_session = fi[order], hs[order]
        self._hp = 0  # next hit pair to score
        self.kept = np.zeros(len(fi), dtype=bool)  # aligned with (self._hit_fact, self._hit_session)
        self.added = np.zeros(s.n, dtype=bool)
        return self._obs()

    def _obs(self) -> SessionObs | None:
        if self._k >= len(self._slices):
            return None
        ses, a, b = self._slices[self._k]
        return SessionObs(ses, np.arange(a, b), self.stream.texts[a:b], len(self.bank), self.budget)

    def _score_hits_until(self, last_session: float) -> list[tuple[int, int]]:
        revealed = []
        while self._hp < len(self._hit_session) and self._hit_session[self._hp] <= last_session:
            i = int(self._hit_fact[self._hp])
            if i in self.bank:
                self.kept[self._hp] = True
                revealed.append((i, int(self._hit_session[self._hp])))
            self._hp += 1
        revealed = list(dict.fromkeys(revealed))  # one reveal per (fact, session), any turns
        for i, _ in revealed:
            self.bank.touch(i)
        return revealed

    def step(self, add: Sequence[bool] | np.ndarray) -> tuple[list[tuple[int, int]], SessionObs | None]:
        _, a, b = self._slices[self._k]
        add = np.asarray(add, dtype=bool)
        if add.shape != (b - a,):
            raise ValueError(f"expected {b - a} decisions, got {add.shape}")
        for j in np.flatnonzero(add):
            self.bank.add(a + int(j))
        self.added[a:b] = add
        self._k += 1
        nxt = self._slices[self._k][0] if self._k < len(self._slices) else np.inf
        return self._score_hits_until(nxt), self._obs()

    def result(self) -> tuple[int, int]:
        """(|H'|, |H|) for this user once the episode ended."""
        return int(self.kept.sum()), len(self.kept)


def run_static(stream: UserStream, add: np.ndarray, budget: int, eviction: str | Eviction = "fifo",
               random_state: int | None = 0) -> tuple[int, int]:
    """(|H'|, |H|) when the decisions are fixed in advance (Oracle, Universal, a frozen scorer)."""
    env = GatingEnv(stream, budget, eviction, random_state)
    obs = env.reset()
    while obs is not None:
        _, obs = env.step(add[obs.index])
    return env.result()


def fifo_kept(stream: UserStream, added: np.ndarray, budgets: np.ndarray | Sequence[int]) -> np.ndarray:
    """|H'| for many decision vectors at once under FIFO, in closed form.

    ``added`` is (C, N) bool, ``budgets`` (C,). A FIFO bank holds the last ``B`` added facts,
    so the fact with add-rank ``r`` is stored during session ``h`` iff ``A(h) - r < B`` where
    ``A(h)`` counts adds among facts from sessions before ``h``.
    """
    added = np.atleast_2d(np.asarray(added, dtype=bool))
    budgets = np.asarray(budgets, dtype=np.int64).reshape(-1)
    fi, hs = stream.hit_pairs()
    if len(fi) == 0:
        return np.zeros(added.shape[0], dtype=np.int64)
    cum = np.cumsum(added, axis=1, dtype=np.int64)  # rank of fact i if added
    pos = stream.hit_prev  # last fact before the hit session
    a_h = cum[:, pos]
    ok = added[:, fi] & (a_h - cum[:, fi] < budgets[:, None])
    return ok.sum(axis=1)


def rhr(kept: Sequence[int], total: Sequence[int]) -> tuple[float, float]:
    """Micro and macro RHR (as fractions); users without hits are left out of the macro mean."""
    from toolkit.metrics import micro_macro

    return micro_macro(kept, total)


micro_macro_rhr = rhr
