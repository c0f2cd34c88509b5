"""`prefmem drift` on the shipped schedules and bad input; `prefmem reproduce drift` tables."""

from __future__ import annotations

import json
from pathlib import Path

from toolkit.cli import main
from toolkit.records import DriftOutput

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures" / "drift"


def test_drift_cli_on_shipped_schedules_meets_the_bars(tmp_path):
    out = tmp_path / "out.jsonl"
    assert main(["drift", str(FIX / "schedules.jsonl"), "-o", str(out)]) == 0
    recs = [DriftOutput.model_validate_json(line) for line in out.read_text().splitlines()]
    gold = json.loads((FIX / "gold.json").read_text())
    assert len(recs) == sum(g["n_turns"] for g in gold.values())
    for sid, g in gold.items():
        mine = [r for r in recs if r.id == sid]
        assert [r.turn for r in mine] == list(range(1, g["n_turns"] + 1))
        flags = [r.turn for r in mine if r.changed]
        if g["kind"] == "stationary":
            assert flags == [], sid
        elif g["kind"] == "abrupt":
            k = g["change_points"][0]
            assert flags and min(flags) >= k and flags[0] <= k + 2, (sid, flags)


def test_drift_cli_bad_input_names_file_line_field(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "turns": [{"user": "hi"}]}\n{"id": "b", "turns": [{"usr": "hi"}]}\n')
    out = tmp_path / "o.jsonl"
    assert main(["drift", str(bad), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2 turns.0.usr: unknown field (not allowed)" in err
    assert not out.exists()


def test_drift_cli_parameters(tmp_path):
    out1, out2 = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    src = str(FIX / "schedules.jsonl")
    assert main(["drift", src, "-o", str(out1), "--threshold", "1000"]) == 0
    assert not any(json.loads(x)["changed"] for x in out1.read_text().splitlines())
    assert main(["drift", src, "-o", str(out2), "--window", "1", "--fuse", "1.0", "--beta", "0.5"]) == 0
    assert out1.read_text() != out2.read_text()


def test_reproduce_drift_quick_writes_tables(tmp_path):
    from toolkit.api import reproduce

    res = reproduce("drift", quick=True, out=tmp_path, n_per_kind=1)
    for name in ("detection", "case_study_table5", "case_study_tables6_7", "ablations_table4",
                 "sensitivity_lambda_beta", "sensitivity_window_delta", "shipped_schedules"):
        assert name in res.tables and len(res.tables[name]) > 0
        assert (tmp_path / "drift" / f"{name}.csv").exists()
    assert (tmp_path / "drift" / "sensitivity_lambda_beta.png").exists()
    abl = res.tables["ablations_table4"]
    assert set(abl["variant"]) == {"Full", "Fixed λ (ours)", "w/o SW", "w/o EMA", "Equal Fusion", "w/o Detection",
                                   "Single Pref", "Static Pref"}
    # every paper variant has the paper's figure; our extra fixed-lambda row has none
    assert abl.loc[abl.variant != "Fixed λ (ours)", "paper_mean_f1_bleu"].notna().all()
    assert abl.loc[abl.variant == "Fixed λ (ours)", "paper_mean_f1_bleu"].isna().all()
    ship = res.tables["shipped_schedules"]
    assert (ship.loc[ship.kind == "stationary", "false_alarms"] == 0).all()


def test_llm_extraction_in_the_diagnostic_is_logged_for_resume(llm_env, tmp_path):
    from llm_server import Reply

    from toolkit.diagnostics.drift import _observe
    from toolkit.llm import Gateway
    from toolkit.records import DriftInput, Turn
    from toolkit.runs import RunContext

    good = {"tone": {"humorous": 0.7, "gentle": 0.1, "neutral": 0.1, "serious": 0.1},
            "emotion": {"joy": 0.6, "neutral": 0.4, "focused": 0.0, "frustrated": 0.0, "anxious": 0.0},
            "density": 0.2, "formality": 0.1}
    llm_env.handler = lambda req: Reply(json.dumps(good) if "odd" not in json.dumps(req) else "nope")
    ctx = RunContext(out_dir=tmp_path / "run", models=["openai-api/local/test"],
                     gateway=Gateway(cache_dir=str(tmp_path / "c")))
    ctx.prepare()
    dialogues = [DriftInput(id="a", turns=[Turn(user="lol hi"), Turn(user="an odd one")])]
    obs, unknown = _observe(ctx, "extract-test", dialogues, ctx.chat_model())
    assert unknown == 1 and obs[0][1] is None and abs(obs[0][0]["tone"]["humorous"] - 0.7) < 1e-9
    log = (tmp_path / "run" / "items" / "extract-test.jsonl").read_text().splitlines()
    assert len(log) == 2 and "drift_extract" in ctx.prompts


def test_edge_cases_single_and_empty_turns():
    from toolkit.drift.tracker import track_records
    from toolkit.llm import Gateway
    from toolkit.records import DriftInput, Turn

    out = track_records([DriftInput(id="e", turns=[Turn(user="")]),
                         DriftInput(id="f", turns=[Turn(user="hi"), Turn(user="")])], Gateway().model("offline"))
    assert [(o.id, o.turn, o.changed) for o in out] == [("e", 1, []), ("f", 1, []), ("f", 2, [])]
