"""The rule library: revisions, immutable versions, and per-turn adoption while learning goes on."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from toolkit.records import ResolutionInput
from toolkit.rules.library import Change, LibraryRule, RuleLibrary
from toolkit.rules.library_widget import version_pair_html
from toolkit.rules.resolution import resolve_offline


def _lib() -> RuleLibrary:
    return RuleLibrary(
        [
            LibraryRule(id="R1", behavior="Keep answers concise"),
            LibraryRule(id="R2", behavior="Use tabs for indentation"),
        ]
    )


def test_operations_keep_history_and_never_lose_rules() -> None:
    lib = _lib()
    v1 = lib.apply([Change("reuse", "R1", quotes=("keep it short",))], source="c1")
    assert v1.get("R1").revision == 1 and v1.get("R1").quotes == ("keep it short",)
    v2 = lib.apply(
        [Change("revise", "R2", exceptions=("Makefiles",), quotes=("not in Makefiles",))],
        source="c2",
    )
    assert v2.get("R2").exceptions == ("Makefiles",) and v2.get("R2").history[-1].source == "c2"
    v3 = lib.apply(
        [Change("replace", "R1", behavior="Give detailed answers", quotes=("be detailed",))],
        source="c3",
    )
    old, new = v3.get("R1"), v3.get(v3.get("R1").superseded_by)
    assert old.state == "superseded" and new.supersedes == "R1" and new.is_current
    assert [r.id for r in v3.current()] == ["R2", new.id]
    v4 = lib.apply([Change("retract", "R2", quotes=("drop the tabs rule",))], source="c4")
    assert v4.get("R2").state == "retracted" and "R2" not in {r.id for r in v4.current()}
    v5 = lib.apply(
        [Change("add", behavior="Never commit secrets", quotes=("never commit secrets",))]
    )
    assert len(v5.rules) == 4 and v5.diff(v5) == {"added": [], "changed": [], "removed": []}
    assert v3.diff(v4)["removed"] == ["R2"]
    with pytest.raises(KeyError):
        lib.apply([Change("reuse", "R2")])  # a retracted rule is no longer a target


def test_versions_are_immutable_snapshots() -> None:
    lib = _lib()
    v0 = lib.latest
    lib.apply([Change("add", behavior="Sort imports")])
    assert len(v0.rules) == 2 and len(lib.latest.rules) == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        v0.rules[0].behavior = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        v0.rules[0].meta["x"] = "y"  # type: ignore[index]


def test_a_turn_keeps_its_version_while_learning_continues() -> None:
    lib = _lib()
    done = threading.Event()

    def learner() -> None:
        lib.apply([Change("add", behavior="Write tests first")], source="bg")
        done.set()

    with lib.turn() as adopted:
        before = adopted.as_records()
        t = threading.Thread(target=learner)
        t.start()
        done.wait(5)
        t.join()
        assert adopted.as_records() == before  # unchanged mid-turn
        assert lib.latest.number == adopted.number + 1
    with lib.turn() as nxt:
        assert len(nxt.as_records()) == 3  # the next turn sees the new version


def test_compilation_status_decides_what_is_shown_and_checked() -> None:
    lib = _lib()
    lib.set_status("R1", "active")
    v = lib.set_status("R2", "inactive")
    assert [r.id for r in v.presented()] == ["R1"] and [r.id for r in v.checked()] == ["R1"]
    with pytest.raises(ValueError):
        LibraryRule(id="x", behavior="y", status="bogus")  # type: ignore[arg-type]
    # a revised rule goes back to guidance until its check is compiled again
    v2 = lib.apply([Change("revise", "R1", conditions=("when asked about APIs",))])
    assert v2.get("R1").status == "guidance"


def test_resolution_proposals_apply_to_the_library() -> None:
    lib = _lib()
    rec = ResolutionInput(
        id="c1",
        correction="From now on, be more detailed. Also, in this repo use spaces instead of tabs.",
        library=lib.latest.as_records(),
    )
    props = resolve_offline(rec).proposals
    v = lib.apply([p.change() for p in props], source="c1")
    assert {r.behavior for r in v.current()} != {"Keep answers concise", "Use tabs for indentation"}
    assert all(r.history[-1].quotes[0] in rec.correction for r in v.current())
    html = version_pair_html(lib, 0)
    assert "version 0" in html and "version 1" in html and "#e3f4e1" in html
