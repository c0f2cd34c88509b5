"""The end-to-end protocol: `prefmem reproduce protocol --quick` offline (both tables, five methods,
five conditions, byte-identical reruns, resume), with an LLM agent through a local server, and
with a researcher's own method loaded by module path."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from llm_server import Reply

from toolkit.cli import main
from toolkit.protocol import ACCESS_COLUMNS, VIOLATION_COLUMNS

FIVE = ["no_memory", "all_rules", "retrieval_memory", "relevant_rules", "tellonce"]
CONDITIONS = ["no_rules", "all_rules", "retrieval_memory", "relevant_rules", "compiled_rules"]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("protocol")
    outs = []
    for i in range(2):
        out = base / f"run{i}"
        assert main(["reproduce", "protocol", "--quick", "--out", str(out), "--cache-mode", "off"]) == 0
        outs.append(out / "protocol")
    return outs


def test_quick_run_writes_both_tables_with_five_methods_and_conditions(quick_runs):
    d = quick_runs[0]
    viol = _rows(d / "violations.csv")
    assert list(viol[0]) == VIOLATION_COLUMNS
    assert sorted({r["method"] for r in viol}) == sorted(FIVE)
    assert {r["phase"] for r in viol} == {"learn", "test"}
    for r in viol:
        assert int(r["violated"]) + int(r["unknown"]) <= int(r["units"])
        assert float(r["rate"]) == pytest.approx(int(r["violated"]) / int(r["units"]), abs=1e-6)
    acc = _rows(d / "access_gap.csv")
    assert list(acc[0]) == ACCESS_COLUMNS
    assert [r["condition"] for r in acc] == CONDITIONS
    assert len({r["checks"] for r in acc}) == 1  # every condition on the same checks
    report = (d / "report.md").read_text(encoding="utf-8")
    assert "harness checks" in report.splitlines()[2]
    assert {"violations.png", "access_gap.png", "learning.png", "manifest.json"} <= {p.name for p in d.iterdir()}
    assert json.loads((d / "manifest.json").read_text())["status"] == "complete"


def test_two_runs_with_the_same_seed_give_identical_tables(quick_runs):
    a, b = quick_runs
    for name in ("violations.csv", "access_gap.csv", "violations_summary.csv", "task_scores.csv", "report.md"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_resume_skips_finished_groups_and_gives_the_same_tables(quick_runs, tmp_path):
    src = quick_runs[0]
    out = tmp_path / "resumed"
    (out / "protocol" / "items").mkdir(parents=True)
    lines = (src / "items" / "groups.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (out / "protocol" / "items" / "groups.jsonl").write_text("".join(lines[:-3]) + lines[-3][:40], encoding="utf-8")
    (out / "protocol" / "manifest.json").write_bytes((src / "manifest.json").read_bytes())
    assert main(["reproduce", "protocol", "--quick", "--out", str(out), "--cache-mode", "off", "--resume"]) == 0
    for name in ("violations.csv", "access_gap.csv"):
        assert (out / "protocol" / name).read_bytes() == (src / name).read_bytes()


def _two_steps(req: dict) -> Reply:
    """A scripted agent: write one file, then finish (the tool loop's shortest full path)."""
    if not any(m["role"] == "assistant" for m in req["messages"]):
        return Reply(json.dumps({"tool": "write_file", "path": "notes.md", "content": "done"}))
    return Reply(json.dumps({"tool": "finish", "reply": "Done. Ran the test suite: 1 passed."}))


def test_llm_agent_path_completes_a_quick_run(llm_env, tmp_path):
    llm_env.handler = _two_steps
    out = tmp_path / "llm"
    assert main(["reproduce", "protocol", "--quick", "--out", str(out), "--agent", "openai-api/local/test"]) == 0
    viol = _rows(out / "protocol" / "violations.csv")
    assert {r["agent"] for r in viol} == {"openai-api/local/test"}
    assert sorted({r["method"] for r in viol}) == sorted(FIVE)
    assert len(_rows(out / "protocol" / "access_gap.csv")) == 5
    report = (out / "protocol" / "report.md").read_text(encoding="utf-8")
    assert "harness checks" not in report
    assert "SENTINEL" not in report + (out / "protocol" / "manifest.json").read_text()
    assert llm_env.requests


def test_method_from_a_test_file_runs_through_the_cli(tmp_path):
    out = tmp_path / "own"
    assert main(["reproduce", "protocol", "--quick", "--out", str(out), "--method", "no_memory",
                 "--method", "test_memory:KeepLast", "--cache-mode", "off"]) == 0
    viol = _rows(out / "protocol" / "violations.csv")
    assert {r["method"] for r in viol} == {"no_memory", "test_memory:KeepLast"}
    assert [r["condition"] for r in _rows(out / "protocol" / "access_gap.csv")] == ["no_rules", "test_memory:KeepLast"]


def test_unloadable_method_is_a_usage_error(tmp_path, capsys):
    assert main(["reproduce", "protocol", "--quick", "--out", str(tmp_path), "--method", "nope.nowhere:X"]) == 2
    assert "nope.nowhere:X" in capsys.readouterr().err
