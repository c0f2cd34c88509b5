"""The public TellOnce rule format: byte-stable round trips, clear errors, library export/import."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from toolkit.errors import InputError
from toolkit.rules.library import Change, LibraryRule, RuleLibrary
from toolkit.rules.tellonce_format import (
    dumps,
    export_library,
    from_library_rule,
    import_library,
    loads,
    read_rule,
)

SAMPLES = [
    """---
name: prefer-pathlib
description: Use pathlib for file paths
type: preference
domain: python
scope: global
condition: null
confidence: 0.9
atomic_id: r-0001
supersedes: null
created: 2026-11-01
updated: 2026-11-02
---

Use pathlib for file paths.
""",
    """---
# written by hand: odd spacing, quotes and comments are kept
name:   no-force-push
description: 'Never force-push: shared branches'
type: constraint
domain: git   # the git domain
scope: project:billing-api
condition: "when the branch is shared"
confidence: 1.0
atomic_id: a7
supersedes: r-0003
created: '2026-10-30'
updated: 2026-11-29T10:00:00Z
---
## Exceptions

- my own feature branches
""",
    "---\r\nname: crlf\r\ndescription: Windows line endings\r\nscope: global\r\n---\r\nbody\r\n",
    "---\nname: tiny\ndescription: No body and few fields\n---\n",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_round_trip_is_byte_stable(text: str) -> None:
    assert dumps(loads(text)) == text
    assert dumps(loads(dumps(loads(text)))) == text


def test_an_edit_changes_only_its_own_line() -> None:
    doc = loads(SAMPLES[1])
    out = dumps(replace(doc, confidence=0.5))
    diff = [
        (a, b) for a, b in zip(SAMPLES[1].splitlines(), out.splitlines(), strict=True) if a != b
    ]
    assert diff == [("confidence: 1.0", "confidence: 0.5")]
    assert loads(out) == replace(doc, confidence=0.5)


def test_generated_files_round_trip_and_keep_awkward_text() -> None:
    rule = LibraryRule(
        id="x1",
        behavior="Use 'single' quotes: always # not a comment",
        scope="project:web-ui",
        conditions=("when writing Python",),
        exceptions=("JSON fixtures",),
        quotes=("use single quotes",),
    )
    text = dumps(from_library_rule(rule))
    back = loads(text)
    assert dumps(back) == text
    assert back.description == rule.behavior and back.scope == "project:web-ui"


@pytest.mark.parametrize(
    "text,where",
    [
        ("name: x\n", "<rule>:1 <front matter>"),
        ("---\nname: x\ndescription: y\nscope: team\n---\n", "<rule>:4 scope"),
        ("---\nname: x\ndescription: y\nconfidence: 2\n---\n", "<rule>:4 confidence"),
        ("---\nname: x\ndescription: y\ncolour: red\n---\n", "<rule>:4 colour"),
        ("---\nname: x\n---\n", "description: required"),
    ],
)
def test_bad_files_fail_with_file_line_field(text: str, where: str) -> None:
    with pytest.raises(InputError) as exc:
        loads(text)
    assert where in str(exc.value)


def test_library_export_import_round_trip(tmp_path: Path) -> None:
    lib = RuleLibrary([LibraryRule(id="R1", behavior="Keep answers concise")])
    lib.apply(
        [
            Change("revise", "R1", exceptions=("design reviews",), quotes=("not for reviews",)),
            Change("add", behavior="Use pnpm", scope="project:web", quotes=("use pnpm",)),
        ]
    )
    paths = export_library(lib.latest, tmp_path / "rules")
    assert len(paths) == 2
    first = {p.name: p.read_bytes() for p in paths}
    again = import_library(tmp_path / "rules")
    rules = {r.id: r for r in again.latest.current()}
    assert rules["R1"].exceptions == ("design reviews",) and rules["R1"].quotes == (
        "not for reviews",
    )
    export_library(again.latest, tmp_path / "rules2")
    assert {p.name: p.read_bytes() for p in (tmp_path / "rules2").glob("*.md")} == first
    for p in paths:
        assert dumps(read_rule(p)).encode() == p.read_bytes()
