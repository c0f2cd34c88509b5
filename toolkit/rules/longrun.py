"""Beyond the paper: a long run in which a scripted user's preferences change several times.

A scripted user (explicit state, one correction per session) introduces preferences, restates
them, asks for one-off exceptions, and later revises, replaces or retracts some of them. After
every session we compare the library with the user's *current* preferences:

- ``coverage``: share of the user's live preferences held by a current rule at their latest
  version;
- ``stale``: current rules that trace to an outdated or retracted preference, or to a one-off
  request (the conflicts memory systems are criticised for);
- ``duplicates``: current rules beyond one per preference;
- ``exact``: the library holds exactly the live preferences, nothing else.

A rule's provenance is the correction behind its latest non-``reuse`` revision. The resolver
never sees the script's labels; they are used only to score the library afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from toolkit._seeding import item_rng
from toolkit.llm.gateway import ChatModel
from toolkit.records import ResolutionInput
from toolkit.rules.library import Change, LibraryVersion, RuleLibrary
from toolkit.rules.resolution import resolve
from toolkit.rules.resolution_cues import segment_cues


@dataclass(frozen=True)
class Topic:
    """One preference the scripted user holds, with how it may later change."""

    key: str
    words: str
    behavior: str
    replacement: str
    temporary: str
    exception: str
    condition: str
    paraphrase: str = ""
    paraphrase_new: str = ""


TOPICS: tuple[Topic, ...] = (
    Topic(
        "quotes",
        "string quotes",
        "use single quotes for strings",
        "use double quotes for strings",
        "use double quotes in this snippet",
        "JSON fixtures",
        "writing Python",
        "strings go in single quotes",
        "strings take double quotes",
    ),
    Topic(
        "length",
        "answer length",
        "keep answers concise",
        "give detailed answers with examples",
        "give me a long answer",
        "design reviews",
        "the question is about architecture",
        "short answers, please",
        "I want thorough, detailed answers",
    ),
    Topic(
        "tests",
        "unit tests",
        "write a unit test for every new function",
        "write an integration test for every new endpoint",
        "skip the tests",
        "one-off scripts",
        "the function has branching logic",
        "each new function needs its unit test",
        "every new endpoint needs an integration test",
    ),
    Topic(
        "commits",
        "commit subject length",
        "keep commit subjects under 50 characters",
        "keep commit subjects under 72 characters",
        "use a longer commit subject",
        "merge commits",
        "the change touches several modules",
        "commit subjects stay below 50 characters",
        "commit subjects may run to 72 characters",
    ),
    Topic(
        "emoji",
        "emojis",
        "never use emojis in commit messages",
        "put one emoji at the start of each commit message",
        "add a party emoji to this commit",
        "release commits",
        "the commit is a release",
        "no emojis in commit messages",
        "each commit message starts with one emoji",
    ),
    Topic(
        "packages",
        "package manager",
        "use npm to install packages",
        "use pnpm to install packages",
        "use yarn here",
        "the legacy frontend",
        "working in the web client",
        "packages get installed with npm",
        "packages get installed with pnpm",
    ),
    Topic(
        "logging",
        "print statements",
        "use logging instead of print statements",
        "use structured JSON logging instead of print statements",
        "print statements are fine in this script",
        "CLI entry points",
        "the code runs as a service",
        "no print statements, use the logging module",
        "structured JSON logs, not print statements",
    ),
    Topic(
        "docstrings",
        "docstrings",
        "add a docstring to every public function",
        "add a one-line docstring to every module",
        "skip the docstrings in this file",
        "test helpers",
        "the function is exported",
        "public functions need docstrings",
        "every module needs a one-line docstring",
    ),
)

_NEW = (
    "From now on, {b}.",
    "Please {b} going forward.",
    "One rule for all future work: {b}.",
    "In future, {b}.",
)
_RESTATE = ("Again: {b}.", "I already told you: {b}.", "Remember, {b}.", "As I said before, {b}.")
_TEMP = ("Just for this task, {t}.", "For this one only, {t}.", "This time only, {t}.")
_REVISE_EXC = ("{B}, except for {e}.", "Keep the rule to {b}, but not for {e}.")
_REVISE_COND = ("From now on, {b} only when {c}.",)
_REPLACE = (
    "From now on, {n} instead.",
    "I changed my mind: {n} from now on.",
    "Going forward, switch to this instead: {n}.",
)
_RETRACT = (
    "Drop the rule about {w}, I don't need it anymore.",
    "Forget my earlier rule about {w}.",
    "You no longer need to follow the {w} rule.",
)


@dataclass
class UserState:
    """The scripted user's hidden state: live preferences and their versions."""

    version: dict[str, int] = field(default_factory=dict)
    live: dict[str, bool] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Event:
    """One session's correction and what it means (the label, kept from the resolver)."""

    session: int
    kind: str
    topic: str
    text: str


def script(sessions: int = 60, seed: int = 0, topics: Sequence[Topic] = TOPICS) -> list[Event]:
    """A deterministic schedule: introductions early, changes later, restatements and one-off
    requests in between (one correction per session)."""
    rng = item_rng(seed, "longrun-script", sessions)
    n = len(topics)
    intro = sorted(rng.choice(range(1, max(n + 1, sessions // 3)), size=n, replace=False).tolist())
    plan: dict[int, tuple[str, Topic]] = {s: ("new", t) for s, t in zip(intro, topics, strict=True)}
    kinds = ["revise", "replace", "retract", "replace", "revise", "retract"]
    late = [s for s in range(max(intro) + 2, sessions + 1)]
    change_sessions = sorted(rng.choice(late, size=min(len(late), n + 2), replace=False).tolist())
    order = rng.permutation(n).tolist()
    for i, s in enumerate(change_sessions):
        plan[s] = (kinds[i % len(kinds)], topics[order[i % n]])
    events: list[Event] = []
    state = UserState()
    for s in range(1, sessions + 1):
        r = item_rng(seed, "longrun-session", s)
        kind, topic = plan.get(s, ("", None))  # type: ignore[assignment]
        live = [t for t in topics if state.live.get(t.key)]
        if topic is not None and kind != "new" and not state.live.get(topic.key):
            kind, topic = "", None  # a change planned for a preference no longer held
        if topic is None:
            if not live:
                continue
            topic = live[int(r.integers(len(live)))]
            kind = "restate" if r.random() < 0.6 else "temporary"
        text, state = respond(kind, topic, state, r)
        events.append(Event(s, kind, topic.key, text))
    return events


def respond(kind: str, topic: Topic, state: UserState, rng) -> tuple[str, UserState]:
    """The user's message for an event, and the updated hidden state."""

    def pick(options: Sequence[str]) -> str:
        return options[int(rng.integers(len(options)))]

    cur = state.text.get(topic.key, topic.behavior)
    if kind == "new":
        state.version[topic.key], state.live[topic.key] = 1, True
        state.text[topic.key] = topic.behavior
        return pick(_NEW).format(b=topic.behavior), state
    if kind == "restate":
        alt = topic.paraphrase if cur == topic.behavior else topic.paraphrase_new
        return pick(_RESTATE).format(b=alt if alt and rng.random() < 0.5 else cur), state
    if kind == "temporary":
        return pick(_TEMP).format(t=topic.temporary), state
    if kind == "revise":
        state.version[topic.key] += 1
        if rng.random() < 0.5:
            msg = pick(_REVISE_EXC).format(B=cur[:1].upper() + cur[1:], b=cur, e=topic.exception)
        else:
            msg = pick(_REVISE_COND).format(b=cur, c=topic.condition)
        return msg, state
    if kind == "replace":
        state.version[topic.key] += 1
        state.text[topic.key] = topic.replacement
        return pick(_REPLACE).format(n=topic.replacement), state
    if kind == "retract":
        state.live[topic.key] = False
        state.version[topic.key] += 1
        return pick(_RETRACT).format(w=topic.words), state
    raise ValueError(f"unknown event kind {kind!r}")


def _provenance(version: LibraryVersion, origin: dict[str, tuple[str, int | None]]):
    out = {}
    for r in version.current():
        src = next((h.source for h in reversed(r.history) if h.op != "reuse"), None)
        out[r.id] = origin.get(src or "", ("?", None))
    return out


def score_library(
    version: LibraryVersion, state: UserState, origin: dict[str, tuple[str, int | None]]
) -> dict[str, float]:
    """Compare a library version with the user's live preferences."""
    prov = _provenance(version, origin)
    live = {k: v for k, v in state.version.items() if state.live.get(k)}
    fresh = [rid for rid, (t, v) in prov.items() if t in live and v == live[t]]
    held = {prov[rid][0] for rid in fresh}
    per_topic: dict[str, int] = {}
    for t, _ in prov.values():
        per_topic[t] = per_topic.get(t, 0) + 1
    stale = sum(1 for t, v in prov.values() if t not in live or v != live[t])
    dups = sum(max(0, c - 1) for c in per_topic.values())
    return {
        "rules": len(prov),
        "live_prefs": len(live),
        "coverage": len(held) / len(live) if live else 1.0,
        "stale": stale,
        "duplicates": dups,
        "exact": float(len(held) == len(live) and len(prov) == len(live)),
    }


Policy = Callable[[ResolutionInput], list[Change]]


def append_only(record: ResolutionInput) -> list[Change]:
    """Baseline memory: store every non-temporary message as a new rule; never edit or delete."""
    if segment_cues(record.correction).temporary:
        return []
    return [Change("add", None, behavior=record.correction, quotes=(record.correction,))]


def run_longrun(
    model: ChatModel | None, *, sessions: int = 60, seed: int = 0, method: str = "resolver"
) -> pd.DataFrame:
    """Play the script against a library maintained by ``method`` (resolver | append-only)."""
    return simulate_longrun(model, sessions=sessions, seed=seed, method=method)[0]


def simulate_longrun(
    model: ChatModel | None, *, sessions: int = 60, seed: int = 0, method: str = "resolver"
) -> tuple[pd.DataFrame, RuleLibrary]:
    """:func:`run_longrun`, also returning the library with all its versions."""
    events = script(sessions, seed)
    lib = RuleLibrary()
    origin: dict[str, tuple[str, int | None]] = {}
    state = UserState()
    rows = []
    for ev in events:
        cid = f"session-{ev.session:03d}"
        rng = item_rng(seed, "longrun-session", ev.session)
        _, state = respond(ev.kind, next(t for t in TOPICS if t.key == ev.topic), state, rng)
        origin[cid] = (ev.topic, state.version.get(ev.topic) if ev.kind != "temporary" else -1)
        with lib.turn() as adopted:
            record = ResolutionInput(id=cid, correction=ev.text, library=adopted.as_records())
        if method == "append-only":
            changes = append_only(record)
        else:
            if model is None:
                raise ValueError("the resolver method needs a model (use the offline one)")
            res = resolve([record], model, seed=seed)[0]
            changes = [p.change() for p in res.proposals]
        if changes:
            lib.apply(changes, source=cid, note=ev.kind)
        rows.append(
            {
                "method": method,
                "session": ev.session,
                "event": ev.kind,
                "topic": ev.topic,
                "correction": ev.text,
                **score_library(lib.latest, state, origin),
            }
        )
    return pd.DataFrame(rows), lib
