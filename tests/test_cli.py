"""The prefmem command: help, validate, exit codes, reproduce with manifest and resume."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_help_lists_every_verb():
    out = run("--help")
    assert out.returncode == 0
    for verb in ("reproduce", "admit", "resolve", "fidelity", "meta-analysis", "drift", "validate"):
        assert verb in out.stdout


def test_usage_error_exit_2():
    out = run("reproduce", "--model")
    assert out.returncode == 2
    out = run("reproduce", "no-such-diagnostic")
    assert out.returncode == 2 and "unknown diagnostic" in out.stderr


def test_validate_misspelled_profile_field(tmp_path):
    p = tmp_path / "user.yaml"
    p.write_text("id: u1\npreferences:\n  - id: tidy\n    text: Remove temp files.\n    scpoe: global\n")
    out = run("validate", str(p))
    assert out.returncode == 1
    assert out.stderr.strip() == f"{p}:5 preferences.0.scpoe: unknown field (not allowed)"


def test_validate_jsonl_errors_name_file_line_field(tmp_path):
    p = tmp_path / "in.jsonl"
    p.write_text('{"id": "a", "text": "always run tests"}\n{"id": "b", "txt": "x"}\nnot json\n')
    out = run("validate", str(p))
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert f"{p}:2 text: Field required" in lines
    assert f"{p}:2 txt: unknown field (not allowed)" in lines
    assert any(line.startswith(f"{p}:3 <record>: not valid JSON") for line in lines)


def test_validate_ok(tmp_path):
    p = tmp_path / "facts.jsonl"
    p.write_text('{"user": "u", "fact_id": "f1", "session": 1, "text": "likes tea", "hits": [3, 5]}\n')
    out = run("validate", str(p))
    assert out.returncode == 0, out.stderr


def test_reproduce_writes_outputs_and_manifest(tmp_path, capsys):
    assert main(["reproduce", "tour", "--out", str(tmp_path)]) == 0
    d = tmp_path / "tour"
    assert {p.name for p in d.iterdir()} >= {"per_user.csv", "loop.csv", "loop.png", "manifest.json", "report.md"}
    man = json.loads((d / "manifest.json").read_text())
    assert man["status"] == "complete" and man["seed"] == 0
    assert man["models"] == [{"model": "offline", "base_url": None}]
    for key in ("toolkit_version", "git", "environment", "config_hash", "usage", "inputs", "prompts"):
        assert key in man
    first = (d / "loop.csv").read_bytes() + (d / "per_user.csv").read_bytes()
    assert main(["reproduce", "tour", "--out", str(tmp_path)]) == 0
    assert (d / "loop.csv").read_bytes() + (d / "per_user.csv").read_bytes() == first  # deterministic
    assert "violation_rate" in capsys.readouterr().out


def test_resume_refuses_changed_config(tmp_path, capsys):
    assert main(["reproduce", "tour", "--out", str(tmp_path)]) == 0
    assert main(["reproduce", "tour", "--out", str(tmp_path), "--resume", "--seed", "3"]) == 1
    assert "configuration changed" in capsys.readouterr().err
    assert main(["reproduce", "tour", "--out", str(tmp_path), "--resume"]) == 0


def test_map_items_resumes_without_redoing(tmp_path):
    from toolkit.runs import RunContext

    calls: list[int] = []

    def fn(batch):
        calls.extend(batch)
        if 7 in batch and len(calls) < 20:
            raise KeyboardInterrupt
        return [x * x for x in batch]

    ctx = RunContext(out_dir=tmp_path / "d")
    ctx.prepare()
    with pytest.raises(KeyboardInterrupt):
        ctx.map_items("sq", list(range(10)), fn, key=str, batch_size=3)
    assert calls == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    calls.clear()
    ctx2 = RunContext(out_dir=tmp_path / "d", resume=True)
    ctx2.prepare()
    calls.extend([0] * 20)  # let the batch through now
    out = ctx2.map_items("sq", list(range(10)), fn, key=str, batch_size=3)
    assert out == [x * x for x in range(10)]
    assert calls[20:] == [6, 7, 8, 9]  # finished items were not redone


def test_torn_last_line_is_ignored(tmp_path):
    from toolkit.runs import ItemLog

    log = ItemLog(tmp_path / "x.jsonl")
    log.append("a", 1)
    with log.path.open("a") as fh:
        fh.write('{"key": "b", "val')
    assert log.load() == {"a": 1}


def test_import_is_cheap_and_lazy():
    code = "import sys, toolkit; print('sklearn' in sys.modules, 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "False"]
