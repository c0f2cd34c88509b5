"""The rule library: rules with history, immutable versions, and per-turn adoption (TellOnce B.1).

- :class:`LibraryRule` keeps the requirement, scope, conditions, exceptions, supporting quotes,
  the history of its revisions, its lifecycle state (current / superseded / retracted) and its
  compilation status (active: checked; guidance: shown, never checked; inactive: neither).
- :class:`LibraryVersion` is an immutable snapshot; every change makes a new version.
- :class:`RuleLibrary` is the learner's store. A turn adopts one complete version
  (:meth:`RuleLibrary.adopt` or ``with lib.turn() as version``) and keeps it for the whole turn,
  while learning goes on and publishes later versions.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal

from toolkit.records import Rule

Status = Literal["active", "guidance", "inactive"]
State = Literal["current", "superseded", "retracted"]
STATUSES: tuple[str, ...] = ("active", "guidance", "inactive")


@dataclass(frozen=True)
class Revision:
    """One entry of a rule's history: what the rule said after an update, and why."""

    number: int
    op: str
    behavior: str
    scope: str
    conditions: tuple[str, ...]
    exceptions: tuple[str, ...]
    quotes: tuple[str, ...]
    source: str | None = None
    version: int = 0


@dataclass(frozen=True)
class LibraryRule:
    """A stored rule. Frozen: a change makes a new object (and a new library version)."""

    id: str
    behavior: str
    scope: str = "global"
    conditions: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()
    quotes: tuple[str, ...] = ()
    status: Status = "guidance"
    state: State = "current"
    supersedes: str | None = None
    superseded_by: str | None = None
    history: tuple[Revision, ...] = ()
    meta: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"rule {self.id}: status must be one of {', '.join(STATUSES)}")
        if not isinstance(self.meta, MappingProxyType):
            object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))

    @property
    def is_current(self) -> bool:
        return self.state == "current"

    @property
    def revision(self) -> int:
        """The number of the latest revision (0 before any is recorded)."""
        return self.history[-1].number if self.history else 0

    def to_record(self) -> Rule:
        """The rule as resolution sees it (DESIGN §3)."""
        return Rule(
            id=self.id,
            behavior=self.behavior,
            scope=self.scope,
            conditions=list(self.conditions),
            exceptions=list(self.exceptions),
        )

    def revised(
        self,
        op: str,
        *,
        source: str | None,
        version: int,
        quotes: Sequence[str] = (),
        **changes: object,
    ) -> LibraryRule:
        """A copy with ``changes`` applied and a revision appended to the history."""
        new = replace(self, **changes)  # type: ignore[arg-type]
        allq = tuple(dict.fromkeys([*new.quotes, *quotes]))
        rev = Revision(
            self.revision + 1,
            op,
            new.behavior,
            new.scope,
            new.conditions,
            new.exceptions,
            tuple(quotes),
            source,
            version,
        )
        return replace(new, quotes=allq, history=self.history + (rev,))


@dataclass(frozen=True)
class LibraryVersion:
    """An immutable snapshot of the whole library."""

    number: int
    rules: tuple[LibraryRule, ...] = ()
    parent: int | None = None
    note: str = ""

    def get(self, rule_id: str) -> LibraryRule:
        """The rule with ``rule_id`` (any state)."""
        for r in self.rules:
            if r.id == rule_id:
                return r
        raise KeyError(rule_id)

    def current(self) -> tuple[LibraryRule, ...]:
        """Rules in force (neither superseded nor retracted)."""
        return tuple(r for r in self.rules if r.is_current)

    def presented(self) -> tuple[LibraryRule, ...]:
        """Rules shown to the agent: current and not inactive."""
        return tuple(r for r in self.current() if r.status != "inactive")

    def checked(self) -> tuple[LibraryRule, ...]:
        """Rules whose compiled checks run: current and active."""
        return tuple(r for r in self.current() if r.status == "active")

    def as_records(self) -> list[Rule]:
        """Current rules as resolution input."""
        return [r.to_record() for r in self.current()]

    def diff(self, other: LibraryVersion) -> dict[str, list[str]]:
        """Rule ids added, changed and removed from force going from ``self`` to ``other``."""
        mine = {r.id: r for r in self.rules}
        theirs = {r.id: r for r in other.rules}
        return {
            "added": sorted(i for i in theirs if i not in mine),
            "changed": sorted(
                i for i in theirs if i in mine and theirs[i] != mine[i] and theirs[i].is_current
            ),
            "removed": sorted(
                i for i in theirs if i in mine and mine[i].is_current and not theirs[i].is_current
            ),
        }


@dataclass(frozen=True)
class Change:
    """A requested library change (what resolution proposes, with its content)."""

    op: str
    target: str | None = None
    behavior: str | None = None
    scope: str | None = None
    conditions: tuple[str, ...] | None = None
    exceptions: tuple[str, ...] | None = None
    quotes: tuple[str, ...] = ()


class RuleLibrary:
    """The learner's rule store: applies changes as new immutable versions; turns adopt one."""

    def __init__(self, rules: Sequence[LibraryRule] = (), *, id_prefix: str = "R") -> None:
        self._lock = threading.Lock()
        self._prefix = id_prefix
        self._versions: list[LibraryVersion] = [LibraryVersion(0, tuple(rules), None, "initial")]
        self._next = 1 + sum(1 for _ in rules)

    @property
    def latest(self) -> LibraryVersion:
        """The newest complete version."""
        return self._versions[-1]

    @property
    def versions(self) -> tuple[LibraryVersion, ...]:
        return tuple(self._versions)

    def version(self, number: int) -> LibraryVersion:
        return self._versions[number]

    def adopt(self) -> LibraryVersion:
        """The version a new turn uses; it never changes under the turn."""
        with self._lock:
            return self._versions[-1]

    @contextmanager
    def turn(self) -> Iterator[LibraryVersion]:
        """``with lib.turn() as v:`` pins one version for a whole user turn."""
        yield self.adopt()

    def _new_id(self, taken: set[str]) -> str:
        while f"{self._prefix}{self._next}" in taken:
            self._next += 1
        rid = f"{self._prefix}{self._next}"
        self._next += 1
        return rid

    def apply(
        self, changes: Sequence[Change], *, source: str | None = None, note: str = ""
    ) -> LibraryVersion:
        """Apply ``changes`` (from one correction) and publish the result as a new version.

        ``reuse`` records the supporting quote; ``revise`` updates scope/conditions/exceptions
        in place (same id, new revision); ``replace`` supersedes the target with a new rule;
        ``add`` creates a rule; ``retract`` marks the target retracted (kept, not deleted).
        """
        with self._lock:
            base = self._versions[-1]
            num = base.number + 1
            rules = {r.id: r for r in base.rules}
            order = [r.id for r in base.rules]
            for ch in changes:
                if ch.op != "add" and (ch.target not in rules or not rules[ch.target].is_current):
                    raise KeyError(
                        f"{ch.op}: no current rule {ch.target!r} in version {base.number}"
                    )
                if ch.op == "reuse":
                    rules[ch.target] = rules[ch.target].revised(
                        "reuse", source=source, version=num, quotes=ch.quotes
                    )
                elif ch.op == "revise":
                    old = rules[ch.target]
                    rules[ch.target] = old.revised(
                        "revise",
                        source=source,
                        version=num,
                        quotes=ch.quotes,
                        behavior=ch.behavior or old.behavior,
                        scope=ch.scope or old.scope,
                        conditions=old.conditions if ch.conditions is None else ch.conditions,
                        exceptions=old.exceptions if ch.exceptions is None else ch.exceptions,
                        status="guidance" if old.status == "active" else old.status,
                    )
                elif ch.op == "retract":
                    rules[ch.target] = rules[ch.target].revised(
                        "retract", source=source, version=num, quotes=ch.quotes, state="retracted"
                    )
                elif ch.op in ("replace", "add"):
                    rid = self._new_id(set(rules))
                    old = rules.get(ch.target) if ch.op == "replace" else None
                    new = LibraryRule(
                        id=rid,
                        behavior=ch.behavior or (ch.quotes[0] if ch.quotes else ""),
                        scope=ch.scope or (old.scope if old else "global"),
                        conditions=tuple(ch.conditions or ()),
                        exceptions=tuple(ch.exceptions or ()),
                        supersedes=old.id if old else None,
                    )
                    if not new.behavior:
                        raise ValueError(f"{ch.op}: a new rule needs a behaviour")
                    rules[rid] = new.revised(ch.op, source=source, version=num, quotes=ch.quotes)
                    order.append(rid)
                    if old is not None:
                        rules[old.id] = old.revised(
                            "superseded",
                            source=source,
                            version=num,
                            state="superseded",
                            superseded_by=rid,
                        )
                else:
                    raise ValueError(f"unknown operation {ch.op!r}")
            v = LibraryVersion(num, tuple(rules[i] for i in order), base.number, note)
            self._versions.append(v)
            return v

    def set_status(
        self, rule_id: str, status: Status, *, note: str = "compilation"
    ) -> LibraryVersion:
        """Record a compilation outcome for a rule as a new version."""
        with self._lock:
            base = self._versions[-1]
            rules = tuple(replace(r, status=status) if r.id == rule_id else r for r in base.rules)
            if rules == base.rules and not any(r.id == rule_id for r in base.rules):
                raise KeyError(rule_id)
            v = LibraryVersion(base.number + 1, rules, base.number, note)
            self._versions.append(v)
            return v


def library_from_records(rules: Sequence[Rule]) -> RuleLibrary:
    """A library seeded with resolution-input rules (ids kept)."""
    return RuleLibrary(
        [
            LibraryRule(
                id=r.id,
                behavior=r.behavior,
                scope=r.scope,
                conditions=tuple(r.conditions),
                exceptions=tuple(r.exceptions),
            )
            for r in rules
        ]
    )
