"""Profile schema, file:line errors, the shipped profiles and the public-data adapters."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.cli import main
from toolkit.errors import InputError
from toolkit.profiles import (
    load_profile,
    load_profiles,
    profiles_from_multisessioncollab,
    profiles_from_prefeval,
)

ROOT = Path(__file__).resolve().parent.parent


def test_shipped_profiles_validate(capsys):
    files = sorted(str(p) for p in (ROOT / "profiles").glob("*.yaml"))
    assert len(files) >= 5
    assert main(["validate", *files]) == 0
    assert "ok: " in capsys.readouterr().out


def test_shipped_profiles_cover_domains_and_categories():
    profs = load_profiles(ROOT / "profiles")
    coding = [p for p in profs.values() if p.domain == "coding"]
    travel = [p for p in profs.values() if p.domain == "travel"]
    assert len(coding) >= 3 and len(travel) >= 2
    for p in coding:
        assert 5 <= len(p.preferences) <= 8
        cats = {x.category for x in p.preferences}
        assert {"cleanup", "workflow", "style"} <= cats
        assert any(x.check is not None for x in p.preferences)
        assert any(x.check is None for x in p.preferences)
        assert any(x.applies_when or x.except_when for x in p.preferences)


@pytest.mark.parametrize("body, field", [
    ("id: u\npreferences:\n  - id: a\n    text: hi\n    check: {type: max_wrds, value: 3}\n",
     "preferences.0.check.type"),
    ("id: u\npreferences:\n  - id: a\n    txt: hi\n", "preferences.0.txt"),
    ("id: u\npreferences:\n  - id: a\n    text: hi\n    scope: team\n", "preferences.0.scope"),
    ("id: u\npreferences:\n  - id: a\n    text: hi\n    check: {type: max_words}\n", "preferences.0.check"),
    ("id: u\npreferences: []\n", "preferences"),
])
def test_broken_profile_names_file_line_and_field(tmp_path, capsys, body, field):
    f = tmp_path / "bad.yaml"
    f.write_text(body)
    assert main(["validate", str(f)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err and all(line.startswith(f"{f}:") for line in err)
    assert any(f" {field}: " in line for line in err), err


def test_error_line_points_at_the_bad_key(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("id: u\npreferences:\n  - id: a\n    text: ok\n  - id: b\n    text: ok\n    colour: red\n")
    with pytest.raises(InputError) as exc:
        load_profile(f)
    assert exc.value.problems[0].startswith(f"{f}:7 preferences.1.colour:")


def test_duplicate_preference_ids_rejected(tmp_path):
    f = tmp_path / "dup.yaml"
    f.write_text("id: u\npreferences:\n  - id: a\n    text: x\n  - id: a\n    text: y\n")
    with pytest.raises(InputError, match="duplicate preference id"):
        load_profile(f)


def test_multisessioncollab_adapter(shared_data):
    profs = profiles_from_multisessioncollab(shared_data)
    assert len(profs) == 100
    p = profs["msc-000"]
    assert p.persona and len(p.preferences) == 3
    assert all(len({x.id for x in q.preferences}) == len(q.preferences) for q in profs.values())


def test_prefeval_adapter(shared_data):
    per_item = profiles_from_prefeval(shared_data)
    assert len(per_item) == 1000
    per_topic = profiles_from_prefeval(shared_data, per_topic=True)
    assert len(per_topic) == 20
    assert sum(len(p.preferences) for p in per_topic.values()) == 1000


def test_adapters_report_missing_data(tmp_path):
    with pytest.raises(InputError, match="MultiSessionCollab"):
        profiles_from_multisessioncollab(tmp_path)
    with pytest.raises(InputError):
        profiles_from_prefeval(tmp_path)
