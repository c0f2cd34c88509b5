"""`prefmem reproduce fidelity --first-contact DIR`: scores a batch once, records it inside, refuses twice."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from toolkit.cli import main

ROOT = Path(__file__).resolve().parent.parent
DEV_BATCH = ROOT / "fixtures" / "fidelity" / "independent" / "fc3a"


def test_first_contact_records_commit_date_and_scores_once(tmp_path, capsys):
    batch = tmp_path / "batch"
    shutil.copytree(DEV_BATCH, batch)  # a development batch stands in for a new one
    out = tmp_path / "out"
    assert main(["reproduce", "fidelity", "--first-contact", str(batch), "--out", str(out)]) == 0
    rec = json.loads((batch / "FIRST_CONTACT.json").read_text())
    assert rec["diagnostic"] == "fidelity" and rec["n"] == 36
    assert rec["commit"] and rec["date"]
    assert {"f1", "specificity", "rule_recall", "coverage"} <= set(rec["scores"]["macro"])
    printed = capsys.readouterr().out
    assert f"{rec['scores']['macro']['f1']:.3f}" in printed
    assert main(["reproduce", "fidelity", "--first-contact", str(batch), "--out", str(out)]) == 1
    assert "already scored" in capsys.readouterr().err
    assert json.loads((batch / "FIRST_CONTACT.json").read_text()) == rec  # unchanged


def test_first_contact_needs_a_batch_for_the_diagnostic(tmp_path, capsys):
    (tmp_path / "points.jsonl").write_text("")  # a fidelity batch is not an admission batch
    assert main(["reproduce", "admission", "--first-contact", str(tmp_path)]) == 2
    assert "holds no batch" in capsys.readouterr().err


def test_a_bad_input_in_any_batch_stops_the_run_before_any_batch_is_scored(tmp_path, capsys):
    """Two resolution batches, the second with a scope the contract refuses: exit 1 with that file,
    line and field, and neither batch has a first-contact record (the good one is not scored
    half way through a run that then fails)."""
    src = ROOT / "fixtures" / "resolution" / "firstcontact" / "w87"
    good, bad = tmp_path / "good", tmp_path / "bad"
    for b in (good, bad):
        b.mkdir()
        for f in ("resolution.jsonl", "resolution.gold.jsonl"):
            shutil.copyfile(src / f, b / f)
    lines = (bad / "resolution.jsonl").read_text().splitlines()
    obj = json.loads(lines[1])
    obj["library"][0]["scope"] = "team"
    lines[1] = json.dumps(obj)
    (bad / "resolution.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    assert main(["reproduce", "resolution", "--first-contact", str(good), "--first-contact", str(bad),
                 "--out", str(out)]) == 1
    assert f"{bad / 'resolution.jsonl'}:2 library.0.scope:" in capsys.readouterr().err
    assert not (good / "FIRST_CONTACT.json").exists() and not (bad / "FIRST_CONTACT.json").exists()
    assert not out.exists()


def test_batches_used_for_development_since_keep_their_first_contact_rows():
    from toolkit.diagnostics.fidelity import recorded_first_contacts
    from toolkit.splits import first_contact_of, load_splits

    rows = {r["set"].split()[1]: r for r in recorded_first_contacts()}
    for name in ("w1", "w2", "w12", "w13"):
        folder = ROOT / "fixtures" / "fidelity" / "firstcontact" / name
        assert load_splits()[f"fixtures/fidelity/firstcontact/{name}/points.jsonl"].role == "development"
        rec = first_contact_of(folder)
        row = rows[name]
        assert row["role"] == "first-contact (recorded)" and rec["commit"][:8] in row["set"]
        for k in ("f1", "specificity", "rule_recall", "coverage"):
            assert row[k] == rec["scores"]["macro"][k]
