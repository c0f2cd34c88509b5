"""Evaluation files are frozen: every file in fixtures/SPLITS.json still has its recorded bytes."""

from __future__ import annotations

import json
import subprocess

import pytest

from toolkit import splits

ENTRIES = splits.load_splits()


@pytest.mark.parametrize("rel", sorted(ENTRIES))
def test_listed_file_unchanged(rel: str) -> None:
    entry = ENTRIES[rel]
    path = splits.REPO_ROOT / rel
    assert path.exists(), f"{rel} is listed in fixtures/SPLITS.json but missing"
    assert splits.sha256_file(path) == entry.sha256, (
        f"{rel} ({entry.role}) changed after it was recorded: evaluation data is never edited; "
        "add new data as a new file")


def test_every_evaluation_file_is_listed() -> None:
    tracked = subprocess.run(["git", "ls-files", "fixtures"], cwd=splits.REPO_ROOT,
                             capture_output=True, text=True).stdout.split()
    data = [t for t in tracked if t.endswith((".jsonl", ".json", ".yaml"))
            and not t.endswith(("SPLITS.json", "FIRST_CONTACT.json"))]
    if not data:
        pytest.skip("not a git checkout")
    missing = sorted(set(data) - set(ENTRIES))
    assert not missing, f"evaluation files without a role in fixtures/SPLITS.json: {missing}"


def test_roles_known_and_frozen_roles_refuse_fitting(tmp_path) -> None:
    held = next(rel for rel, e in ENTRIES.items() if e.role == "held-out")
    with pytest.raises(splits.HeldOutError):
        splits.require_role(splits.REPO_ROOT / held, "fit")
    assert splits.require_role(splits.REPO_ROOT / held, "evaluate") == "held-out"
    dev = next(rel for rel, e in ENTRIES.items() if e.role == "development")
    assert splits.require_role(splits.REPO_ROOT / dev, "fit") == "development"
    assert splits.require_role(tmp_path / "own.jsonl", "fit") is None


def test_first_contact_is_recorded_once(tmp_path) -> None:
    path = splits.record_first_contact(tmp_path, "demo", {"f1": 0.5}, n=3, today="2026-12-01")
    record = json.loads(path.read_text())
    assert record["scores"] == {"f1": 0.5} and record["n"] == 3 and record["date"] == "2026-12-01"
    assert record["commit"]
    with pytest.raises(FileExistsError):
        splits.record_first_contact(tmp_path, "demo", {"f1": 0.9}, n=3)
    assert splits.first_contact_of(tmp_path)["scores"] == {"f1": 0.5}
