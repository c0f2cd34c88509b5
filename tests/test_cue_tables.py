"""The cue tables under toolkit/resources: every entry validates and meets its own examples."""

from __future__ import annotations

import pytest

from toolkit.errors import InputError
from toolkit.text import load_table, table_names
from toolkit.text._tables import TableFile

CASES = [
    (name, key, kind, example)
    for name in table_names()
    for key, entry in load_table(name).spec.entries.items()
    for kind, examples in (("match", entry.match), ("not_match", entry.not_match))
    for example in examples
]


def test_tables_are_shipped() -> None:
    names = table_names()
    assert {"admission/cues", "admission/signal", "resolution/cues", "resolution/updates"} <= set(
        names
    )


@pytest.mark.parametrize(("table", "key", "kind", "example"), CASES,
                         ids=[f"{t}:{k}:{kind}:{e[:30]}" for t, k, kind, e in CASES])
def test_entry_examples(table: str, key: str, kind: str, example: str) -> None:
    entry = load_table(table).entry(key)
    assert entry.hits(example) is (kind == "match"), f"{table}.{key} {kind}: {example!r}"


def test_bad_table_names_file_line_field(tmp_path, monkeypatch) -> None:
    with pytest.raises(ValueError):
        TableFile.model_validate({"about": "x y z", "entries": {"a": {
            "type": "patterns", "description": "abc", "pattern": "x", "match": ["x"],
            "not_match": ["y"]}}})
    with pytest.raises(ValueError):
        TableFile.model_validate({"about": "x y z", "entries": {"a": {
            "type": "words", "description": "abc", "words": ["x"], "match": [],
            "not_match": ["y"]}}})
    assert issubclass(InputError, Exception)
