"""`prefmem compile | judge | select`: contracts, bad input, unknown never a default (TellOnce D.3, D.4)."""

from __future__ import annotations

import json
from pathlib import Path

from llm_server import Reply

from toolkit.cli import main
from toolkit.records import CompileOutput, JudgeOutput, SelectOutput

MODEL = "openai-api/local/test"
RULE = {"id": "r1", "behavior": "Never use emojis in replies.", "scope": "global", "conditions": [], "exceptions": []}
WORDS = {"id": "r2", "behavior": "Keep replies under 5 words.", "scope": "global", "conditions": [],
         "exceptions": []}


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _out(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_compile_judge_select_offline(tmp_path: Path) -> None:
    c = _write(tmp_path / "c.jsonl", [{"id": "a", "rule": RULE}, {"id": "b", "rule": WORDS}])
    assert main(["compile", str(c), "-o", str(tmp_path / "co.jsonl")]) == 0
    co = [CompileOutput.model_validate(o) for o in _out(tmp_path / "co.jsonl")]
    assert [o.outcome for o in co] == ["semantic", "programmatic"] and co[1].check == {"type": "max_words", "value": 5}
    j = _write(tmp_path / "j.jsonl", [
        {"id": "x", "rule": RULE, "evidence": {"stage": "delivery", "task": "t", "reply": "Done 🎉"}},
        {"id": "y", "rule": WORDS, "evidence": {"stage": "delivery", "task": "t", "reply": "one two three four five six"}},
        {"id": "z", "rule": WORDS, "evidence": {"stage": "delivery", "task": "t", "reply": "ok",
                                                "other_rules": ["Start with 'ok'."]}},
    ])
    assert main(["judge", str(j), "-o", str(tmp_path / "jo.jsonl")]) == 0
    jo = [JudgeOutput.model_validate(o) for o in _out(tmp_path / "jo.jsonl")]
    assert [o.judgment for o in jo] == ["violation", "violation", "pass"]
    assert jo[0].quotes and all(q in "Done 🎉" for q in jo[0].quotes)
    s = _write(tmp_path / "s.jsonl", [{"id": "t1", "task": "Fix the login bug.", "library": [RULE, WORDS]}])
    assert main(["select", str(s), "-o", str(tmp_path / "so.jsonl")]) == 0
    so = SelectOutput.model_validate(_out(tmp_path / "so.jsonl")[0])
    assert so.status == "ok" and so.selected == ["r1", "r2"]  # rules about every reply apply to any task


def test_bad_input_names_file_line_field(tmp_path: Path, capsys) -> None:
    bad = _write(tmp_path / "bad.jsonl", [{"id": "a", "rule": RULE},
                                          {"id": "b", "rule": {"id": "r", "scope": "global"}}])
    out = tmp_path / "o.jsonl"
    assert main(["judge", str(bad), "-o", str(out)]) == 1
    assert f"{bad}:1" in capsys.readouterr().err and not out.exists()
    assert main(["compile", str(bad), "-o", str(out)]) == 1
    assert f"{bad}:2 rule.behavior" in capsys.readouterr().err and not out.exists()


def test_llm_non_json_gives_unknown_never_a_default(llm_env, tmp_path: Path) -> None:
    llm_env.handler = lambda req: Reply("I think it is fine!")
    c = _write(tmp_path / "c.jsonl", [{"id": "a", "rule": RULE}])
    assert main(["compile", str(c), "-o", str(tmp_path / "co.jsonl"), "--model", MODEL]) == 0
    co = _out(tmp_path / "co.jsonl")[0]
    assert co["status"] == "unknown" and co["outcome"] is None and co["check"] is None
    j = _write(tmp_path / "j.jsonl", [{"id": "x", "rule": RULE,
                                       "evidence": {"stage": "delivery", "task": "t", "reply": "Done 🎉"}}])
    assert main(["judge", str(j), "-o", str(tmp_path / "jo.jsonl"), "--model", MODEL]) == 0
    jo = _out(tmp_path / "jo.jsonl")[0]
    assert jo["status"] == "unknown" and jo["judgment"] == "unknown" and jo["quotes"] is None
    s = _write(tmp_path / "s.jsonl", [{"id": "t1", "task": "Fix it.", "library": [RULE, WORDS]}])
    assert main(["select", str(s), "-o", str(tmp_path / "so.jsonl"), "--model", MODEL]) == 0
    so = _out(tmp_path / "so.jsonl")[0]
    assert so == {"id": "t1", "status": "unknown", "selected": None}


def test_llm_answers_are_checked(llm_env, tmp_path: Path) -> None:
    def answer(req):
        user = req["messages"][1]["content"]
        if "Rules (one JSON object per line)" in user:
            return Reply(json.dumps({"applicable": ["r1", "invented"]}))
        return Reply(json.dumps({"judgment": "violation", "reason": "emoji", "quotes": ["🎉", "not in evidence"]}))

    llm_env.handler = answer
    j = _write(tmp_path / "j.jsonl", [{"id": "x", "rule": RULE,
                                       "evidence": {"stage": "delivery", "task": "t", "reply": "Done 🎉"}}])
    assert main(["judge", str(j), "-o", str(tmp_path / "jo.jsonl"), "--model", MODEL]) == 0
    assert _out(tmp_path / "jo.jsonl")[0]["quotes"] == ["🎉"]  # invented quotes dropped
    s = _write(tmp_path / "s.jsonl", [{"id": "t1", "task": "Fix it.", "library": [RULE, WORDS]}])
    assert main(["select", str(s), "-o", str(tmp_path / "so.jsonl"), "--model", MODEL]) == 0
    assert _out(tmp_path / "so.jsonl")[0]["selected"] == ["r1"]  # ids outside the batch dropped


def test_llm_compiler_reviewer_and_checker_round_trip(llm_env, tmp_path: Path) -> None:
    cases = [{"stage": "delivery", "task": "t", "reply": "Done 🎉", "expected": "violation"},
             {"stage": "delivery", "task": "t", "reply": "Done.", "expected": "pass"},
             {"stage": "pre_action", "task": "t", "action": {"command": "ls"}, "expected": "not_applicable"}]
    spec = {"type": "semantic", "applies_when": "always", "required": "no emojis", "compliance": "no emoji",
            "violation": "an emoji", "polarity": "forbid", "subject": "emojis", "target": "reply",
            "scope": "global", "conditions": [], "exceptions": [], "evidence": {"delivery": ["reply"]}}

    def answer(req):
        system = req["messages"][0]["content"]
        user = req["messages"][1]["content"]
        if "turn a learned rule" in system:
            return Reply(json.dumps({"outcome": "semantic", "check": spec, "cases": cases, "reason": "r"}))
        if "You review a proposed" in system:
            return Reply(json.dumps({"faithful": True, "clear": True, "labels": ["violation", "pass", "not_applicable"],
                                     "reason": "ok"}))
        label = "violation" if "🎉" in user else "pass"
        return Reply(json.dumps({"judgment": label, "reason": "r", "quotes": ["🎉"] if label == "violation" else []}))

    llm_env.handler = answer
    c = _write(tmp_path / "c.jsonl", [{"id": "a", "rule": RULE}])
    assert main(["compile", str(c), "-o", str(tmp_path / "co.jsonl"), "--model", MODEL]) == 0
    co = _out(tmp_path / "co.jsonl")[0]
    assert co["status"] == "ok" and co["outcome"] == "semantic"
    assert co["validation"] == {"cases": 3, "agreed": 3, "rounds": 1}
    review = next(r for r in llm_env.requests if "You review a proposed" in r["messages"][0]["content"])
    assert '"expected"' not in review["messages"][1]["content"]  # the reviewer is blind to expected labels


def test_validate_knows_the_new_record_kinds(tmp_path: Path, capsys) -> None:
    c = _write(tmp_path / "c.jsonl", [{"id": "a", "rule": RULE}])
    j = _write(tmp_path / "j.jsonl", [{"id": "x", "rule": RULE, "evidence": {"stage": "delivery", "task": "t"}}])
    s = _write(tmp_path / "s.jsonl", [{"id": "t1", "task": "Fix it.", "library": [RULE]}])
    assert main(["validate", str(c), str(j), str(s)]) == 0
    bad = _write(tmp_path / "b.jsonl", [{"id": "x", "rule": RULE, "evidence": {"stage": "later", "task": "t"}}])
    assert main(["validate", str(bad)]) == 1
    assert f"{bad}:1 evidence.stage" in capsys.readouterr().err
