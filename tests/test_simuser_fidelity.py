"""Fidelity report (Table 10): contract shape, metrics, CIs, the CLI verb and the shipped set."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from toolkit.cli import main
from toolkit.datasets.jsonl import read_jsonl
from toolkit.llm import Gateway
from toolkit.profiles import Profile, load_profiles
from toolkit.records import AnnotatedPoint
from toolkit.simuser.fidelity import fidelity_report, format_fidelity, report_from_traces
from toolkit.simuser.trace import Trace

ROOT = Path(__file__).resolve().parent.parent
POINTS = ROOT / "fixtures" / "fidelity" / "points.jsonl"
ANNOTATORS = ROOT / "fixtures" / "fidelity" / "annotators"


def _tr(pid: str, correct: bool, named: tuple[str, ...] = ()) -> Trace:
    return Trace("a", pid, 0, "offline", "", (), "correct" if correct else "silent", "", named,
                 "fb" if correct else None)


def test_metrics_by_hand():
    pts = [AnnotatedPoint(id=f"p{i}", annotator=a, task="t", response="r", corrected=c,
                          preference_ids=p) for i, (a, c, p) in enumerate([
                              ("x", True, ["u", "v"]), ("x", True, ["u"]), ("x", False, []), ("x", False, []),
                              ("y", True, ["w"]), ("y", False, [])])]
    trs = [_tr("p0", True, ("u",)), _tr("p1", False), _tr("p2", True, ("u",)), _tr("p3", False),
           _tr("p4", True, ("w",)), _tr("p5", False)]
    rep = report_from_traces(pts, trs)
    x = next(r for r in rep["annotators"] if r["annotator"] == "x")
    assert (x["n_pos"], x["n_neg"]) == (2, 2)
    assert x["precision"] == 0.5 and x["recall"] == 0.5 and x["specificity"] == 0.5
    assert x["rule_recall"] == pytest.approx((1 / 2 + 0) / 2)  # per positive example (C.3.3), then the mean
    y = next(r for r in rep["annotators"] if r["annotator"] == "y")
    assert y["f1"] == 1.0 and y["rule_recall"] == 1.0
    assert rep["macro"]["f1"] == pytest.approx((0.5 + 1.0) / 2)
    assert rep["points"][0] == {"id": "p0", "corrected": True, "preference_ids": ["u"], "feedback": "fb",
                                "decision": "correct", "status": "ok"}


def test_unknown_and_abstain_count_as_no_correction_sent_with_their_own_columns():
    pts = [AnnotatedPoint(id="p0", annotator="x", task="t", response="r", corrected=True, preference_ids=["u"]),
           AnnotatedPoint(id="p1", annotator="x", task="t", response="r", corrected=False),
           AnnotatedPoint(id="p2", annotator="x", task="t", response="r", corrected=False),
           AnnotatedPoint(id="p3", annotator="x", task="t", response="r", corrected=False)]
    unk = Trace("x", "p0", 0, "llm", "", (), "unknown", "bad json")
    abst = Trace("x", "p1", 0, "offline", "", (), "abstain", "could not judge")
    rep = report_from_traces(pts, [unk, abst, _tr("p2", False), _tr("p3", True, ("u",))])
    r = rep["annotators"][0]
    assert (r["n_pos"], r["n_neg"], r["n_abstain"]) == (1, 3, 2)  # fixed denominators: every point counts
    assert r["recall"] == 0.0 and r["specificity"] == pytest.approx(2 / 3)
    assert r["coverage"] == pytest.approx(2 / 4)
    assert r["tn_abstain_share"] == pytest.approx(1 / 2)  # of the two true negatives, one is an abstention
    assert rep["n_unknown"] == 1 and rep["n_abstain"] == 1
    assert rep["points"][0]["status"] == "unknown" and rep["points"][1]["decision"] == "abstain"


def test_shipped_set_meets_the_bars_offline():
    points = read_jsonl(POINTS, AnnotatedPoint)
    profiles = load_profiles(ANNOTATORS)
    assert len(points) >= 300
    assert len({p.annotator for p in points}) >= 5
    assert all(all(pref.check is None for pref in prof.preferences) for prof in profiles.values())
    assert sum(len(p.preference_ids) > 1 for p in points) >= 20
    rep = fidelity_report(points, profiles, Gateway().model("offline"), seed=0)
    assert set(rep) >= {"annotators", "macro", "points", "ci"}
    m = rep["macro"]
    assert m["f1"] >= 0.75 and m["specificity"] >= 0.85 and m["rule_recall"] >= 0.60  # development data
    for k, (lo, hi) in rep["ci"]["macro"].items():
        assert lo <= m[k] + 1e-9 and m[k] <= hi + 1e-9, k
    text = format_fidelity(rep)
    assert "0.906" in text and "0.940" in text and "0.668" in text and "95% CI" in text


def test_cli_fidelity_writes_contract_json(tmp_path, capsys):
    out = tmp_path / "fid.json"
    assert main(["fidelity", str(POINTS), "--profiles", str(ANNOTATORS), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "paper (Table 10)" in printed
    rep = json.loads(out.read_text())
    assert {"annotator", "n_pos", "n_neg", "precision", "recall", "f1", "specificity",
            "rule_recall"} <= set(rep["annotators"][0])
    assert set(rep["macro"]) >= {"precision", "recall", "f1", "specificity", "rule_recall", "coverage"}
    assert {"id", "corrected", "preference_ids", "feedback"} <= set(rep["points"][0])
    assert not any(isinstance(v, float) and math.isnan(v) for v in rep["macro"].values())


def test_cli_fidelity_is_deterministic(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for out in (a, b):
        assert main(["fidelity", str(POINTS), "--profiles", str(ANNOTATORS), "--json", str(out), "--seed", "3"]) == 0
    assert a.read_bytes() == b.read_bytes()


def test_cli_fidelity_missing_annotator_profile(tmp_path, capsys):
    pts = tmp_path / "p.jsonl"
    pts.write_text(json.dumps({"id": "z1", "annotator": "nobody", "task": "t", "response": "r",
                               "corrected": False, "preference_ids": []}) + "\n")
    assert main(["fidelity", str(pts), "--profiles", str(ANNOTATORS)]) == 1
    assert "nobody" in capsys.readouterr().err


def test_cli_fidelity_bad_point_names_line_and_field(tmp_path, capsys):
    pts = tmp_path / "p.jsonl"
    pts.write_text(json.dumps({"id": "z1", "annotator": "ann-rhea", "task": "t", "response": "r",
                               "corrected": True, "preference_ids": []}) + "\n")
    assert main(["fidelity", str(pts), "--profiles", str(ANNOTATORS)]) == 1
    assert f"{pts}:1 " in capsys.readouterr().err


def test_natural_language_profile_generalises():
    """Points written in other words than the shipped set, for a text-only profile."""
    prof = Profile(id="z", preferences=[
        {"id": "z-len", "text": "Answers should stay below 50 words."},
        {"id": "z-git", "text": "Please don't push anything to the remote without my OK."},
        {"id": "z-food", "text": "I can't eat nuts."},
    ])
    rows = [
        ("Status?", " ".join(["fine"] * 70) + ".", True, ["z-len"]),
        ("Status?", "All good, the build is green.", False, []),
        ("Ship it", "Merged and pushed to origin/main.", True, ["z-git"]),
        ("Ship it", "Merged locally. Shall I push it to origin?", False, []),
        ("Snack ideas?", "Try almond butter on toast, or a handful of cashews.", True, ["z-food"]),
        ("Snack ideas?", "Hummus with carrots, or a nut-free granola bar.", False, []),
    ]
    pts = [AnnotatedPoint(id=f"z{i}", annotator="z", task=t, response=r, corrected=c, preference_ids=p)
           for i, (t, r, c, p) in enumerate(rows)]
    rep = fidelity_report(pts, {"z": prof}, Gateway().model("offline"))
    assert rep["macro"]["f1"] == 1.0 and rep["macro"]["specificity"] == 1.0 and rep["macro"]["rule_recall"] == 1.0


def _recompute(points: list[AnnotatedPoint], rows: list[dict]) -> dict[str, float]:
    """Table 10's macro figures recomputed from the per-point decisions, written apart from the tool."""
    per: dict[str, list[tuple[bool, bool, float, bool]]] = {}
    for p, r in zip(points, rows, strict=True):
        lab = set(p.preference_ids) if p.corrected else set()
        rr = len(lab & set(r["preference_ids"])) / len(lab) if lab else 0.0
        per.setdefault(p.annotator, []).append((p.corrected, r["corrected"], rr, r["decision"] in ("correct", "silent")))
    out: dict[str, list[float]] = {k: [] for k in ("precision", "recall", "f1", "specificity", "rule_recall",
                                                  "coverage", "tn_abstain_share")}
    for rows_ in per.values():
        tp = sum(t and q for t, q, _, _ in rows_)
        fp = sum(q and not t for t, q, _, _ in rows_)
        fn = sum(t and not q for t, q, _, _ in rows_)
        tn = sum(not t and not q for t, q, _, _ in rows_)
        prec = tp / (tp + fp) if tp + fp else math.nan
        rec = tp / (tp + fn) if tp + fn else math.nan
        f1 = 2 * prec * rec / (prec + rec) if tp else (0.0 if tp + fp + fn else math.nan)
        pos = [rr for t, _, rr, _ in rows_ if t]
        vals = {"precision": prec, "recall": rec, "f1": f1, "specificity": tn / (tn + fp) if tn + fp else math.nan,
                "rule_recall": sum(pos) / len(pos) if pos else math.nan,
                "coverage": sum(j for *_, j in rows_) / len(rows_),
                "tn_abstain_share": (sum(not t and not q and not j for t, q, _, j in rows_) / tn) if tn else math.nan}
        for k, v in vals.items():
            out[k].append(v)
    return {k: sum(x for x in v if not math.isnan(x)) / len([x for x in v if not math.isnan(x)]) for k, v in out.items()}


def test_macro_figures_equal_a_recomputation_from_per_point_decisions():
    points = read_jsonl(POINTS, AnnotatedPoint)[:120]
    rep = fidelity_report(points, load_profiles(ANNOTATORS), Gateway().model("offline"), seed=0)
    again = _recompute(points, rep["points"])
    for k, v in again.items():
        assert rep["macro"][k] == pytest.approx(v), k
    # Table 10's row (what the diagnostic prints) carries the same figures
    from toolkit.diagnostics.fidelity import table_row

    row = table_row("dev", "development", rep)
    for k in ("precision", "recall", "f1", "specificity", "rule_recall", "coverage"):
        assert row[k] == pytest.approx(again[k]), k
    assert row["tn_owed_to_abstention"] == pytest.approx(again["tn_abstain_share"])
    assert row["n"] == len(points) and row["n_pos"] + row["n_neg"] == len(points)
