"""`prefmem resolve` writes valid records; `prefmem reproduce resolution` writes tables, plots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolkit.cli import main
from toolkit.datasets.jsonl import read_jsonl
from toolkit.diagnostics.resolution import run, score_rows
from toolkit.llm import Gateway
from toolkit.records import ResolutionOutput
from toolkit.rules.resolution_eval import load_cases
from toolkit.runs import RunContext

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "fixtures" / "resolution" / "heldout.jsonl"


def test_resolve_writes_valid_records(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert main(["resolve", str(CASES), "-o", str(out)]) == 0
    recs = read_jsonl(out, ResolutionOutput)
    assert len(recs) == len(read_jsonl(CASES, type(load_cases("heldout")[0][0])))
    first = out.read_text()
    assert main(["resolve", str(CASES), "-o", str(out)]) == 0
    assert out.read_text() == first  # deterministic


def test_resolve_bad_input_names_file_line_field(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    good = CASES.read_text().splitlines()[0]
    obj = json.loads(good)
    obj["library"][0]["scope"] = "team"
    bad.write_text(good + "\n" + json.dumps(obj) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["resolve", str(bad), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2 library.0.scope:" in err
    assert not out.exists()


def test_project_names_may_have_spaces_and_any_letters_but_no_colon_or_outer_space() -> None:
    """A user names a project as they say it ("project:Harbour Voices", "project:Café-app"): the scope
    is accepted; a name with a colon, outer white space or nothing after ``project:`` is refused, in
    rule libraries and in profiles alike (one pattern, ``toolkit.records.PROJECT_NAME``)."""
    from pydantic import ValidationError

    from toolkit.profiles import _SCOPE_RE as profile_scope
    from toolkit.records import Rule

    for ok in ("global", "project", "project:tideway-wp", "project:Harbour Voices", "project:Café-app",
               "project:O'Neill & Sons"):
        assert Rule(id="r", behavior="b", scope=ok).scope == ok
    for bad in ("project: lead", "project:trail ", "project:a:b", "project:", "Project:x", "team"):
        with pytest.raises(ValidationError, match="scope must be"):
            Rule(id="r", behavior="b", scope=bad)
    assert profile_scope.match("project:Harbour Voices") and not profile_scope.match("project")
    assert not profile_scope.match("project:a:b")


def test_reproduce_resolution_writes_tables_and_plots(tmp_path: Path) -> None:
    ctx = RunContext(
        out_dir=tmp_path / "resolution",
        gateway=Gateway(cache_dir=str(tmp_path / "c")),
        quick=True,
        options={"sizes": "2,47", "sessions": 50},
    )
    ctx.prepare()
    res = run(ctx)
    head = res.tables["resolution"].set_index("metric")
    assert head.loc["decision accuracy", "paper_correct"] == "15/16"
    assert head.loc["decision + target accuracy", "paper_correct"] == "13/16"
    assert head.loc["decision accuracy", "ours"] >= 13 / 16
    assert (head["ci_low"] <= head["ours"]).all() and (head["ours"] <= head["ci_high"]).all()
    growth = res.tables["resolution_growth_summary"]
    assert list(growth["size"]) == [2, 47] and (growth["affected_recall"] == 1.0).all()
    lr = res.tables["resolution_longrun_summary"].set_index("method")
    assert lr.loc["resolver", "sessions"] == 50
    assert lr.loc["resolver", "final_stale"] < lr.loc["append-only", "final_stale"]
    written = {p.name for p in res.write(ctx.out_dir)}
    assert {
        "resolution.csv",
        "resolution_growth.csv",
        "resolution_growth.png",
        "resolution_longrun.png",
        "resolution_cases.csv",
        "report.md",
    } <= written


def test_first_contact_beside_out_of_fold_counts_written_cases_of_each_batch() -> None:
    """The fit's per-batch tally of written cases adds up to its small and written ~60-rule rows, and
    the diagnostic sets each batch's tally beside its recorded first contact."""
    from toolkit.diagnostics.resolution import first_contact_vs_oof
    from toolkit.paper import fixtures_dir
    from toolkit.rules.resolution_model import fitted_resolver
    from toolkit.splits import first_contact_of

    sel = fitted_resolver(0).selection
    for size, group in (("small", "small"), ("large", "large_written")):
        rows = [r for r in sel.oof_by_batch if r[1] == size]
        want = sel.oof_groups[group]
        assert sum(r[2] for r in rows) == want["n"]
        assert sum(r[3] for r in rows) == want["decision"] and sum(r[4] for r in rows) == want["decision_target"]
    tally = (("dev", "small", 5, 5, 5), ("firstcontact/w2", "small", 12, 7, 6), ("firstcontact/w2", "large", 12, 3, 2),
             ("firstcontact/w1", "small", 12, 11, 10), ("firstcontact/w1", "large", 12, 8, 8))
    df, text = first_contact_vs_oof(tally)
    assert list(df.batch) == ["w1", "w2"]  # dev has no first contact; w2 after w1
    w1 = df.set_index("batch").loc["w1"]
    rec = first_contact_of(fixtures_dir() / "resolution" / "firstcontact" / "w1")["scores"]
    assert (w1.small_n, w1.small_decision_oof, w1.small_target_oof, w1.large_target_oof) == (12, 11, 10, 8)
    assert w1.small_decision_fc == rec["small"]["decision"] and w1.large_target_fc == rec["large"]["decision_target"]
    small, large = text[0].split("~60")
    rec2 = first_contact_of(fixtures_dir() / "resolution" / "firstcontact" / "w2")["scores"]
    assert f"decision {rec['small']['decision'] + rec2['small']['decision']}/24 at first contact, 18/24 out of fold" in small
    assert f"decision+target {rec['large']['decision_target'] + rec2['large']['decision_target']}/24, 10/24" in large


def test_unknowns_are_counted_apart() -> None:
    cases, gold = load_cases("heldout")
    res = [
        {"updates": [], "candidates": [], "status": "unknown", "retried": False, "dropped": []}
        for _ in cases[:2]
    ]
    rows = score_rows(cases[:2], res, gold)
    assert all(r["unknown"] and r["decision_ok"] is None for r in rows)


def test_validate_accepts_gold_files_with_category(capsys) -> None:
    """A gold file's ``category`` is part of the gold schema the scorer reads: the validator and
    the scorer agree (every development gold file written apart carries one)."""
    golds = sorted((ROOT / "fixtures" / "resolution" / "firstcontact").glob(
        "*/resolution.gold.jsonl"))
    assert golds, "no gold files written apart"
    assert main(["validate", *map(str, golds), str(ROOT / "fixtures" / "resolution"
                                                     / "heldout_gold.jsonl")]) == 0
    assert "unknown field" not in capsys.readouterr().err


def test_validate_refuses_a_bad_gold_line(tmp_path: Path, capsys) -> None:
    """The gold kind is still strict: an unknown operation or an extra field is named."""
    bad = tmp_path / "gold.jsonl"
    bad.write_text(json.dumps({"id": "g1", "category": "restatement",
                               "updates": [{"op": "reuse", "target": "r1"}], "note": "x"}) + "\n"
                   + json.dumps({"id": "g2", "category": "new", "updates": [{"op": "merge"}]})
                   + "\n", encoding="utf-8")
    assert main(["validate", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:1 note: unknown field" in err
    assert f"{bad}:2 updates.0.op" in err
