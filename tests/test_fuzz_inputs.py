"""Fuzzing every verb's input parser (hypothesis, bounded: a few seconds per test).

Whatever bytes arrive, a loader either returns validated records or raises InputError whose
every problem is one line ``file[:line] field: message`` naming the file; nothing else
escapes (no traceback), nothing hangs. Record kinds are taken from ``RECORD_KINDS``, so a kind
added by another branch (compile, judge, select) is fuzzed without touching this file.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.cli import main
from toolkit.datasets.jsonl import MAX_PROBLEMS, read_jsonl
from toolkit.errors import InputError
from toolkit.profiles import load_profile
from toolkit.records import RECORD_KINDS

# no deadline: what is fuzzed is the answer to bad input, not its speed (a loaded 2-core CI
# machine made a 2 s deadline fail once); speed lives in benchmarks/
FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FEW = settings(FUZZ, max_examples=10)

EXAMPLES = {
    "admission": {"id": "a", "text": "Always run the linter.", "context": [{"role": "user", "content": "hi"}]},
    "resolution": {"id": "r", "correction": "Keep it short.", "library": [
        {"id": "x", "behavior": "Be brief", "scope": "global", "conditions": [], "exceptions": []}]},
    "point": {"id": "p", "annotator": "ann", "task": "t", "response": "r", "corrected": True,
              "preference_ids": ["q"], "artifacts": {"a.py": "x"}},
    "fact": {"user": "u", "fact_id": "f", "session": 1, "text": "likes tea", "hits": [2, 3]},
    "drift": {"id": "d", "turns": [{"user": "hi", "assistant": "ok"}]},
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
nasty_text = st.sampled_from([
    "\x00", "\ud800", "é", "\u202e", "\n", "NaN", "Infinity", "1e999", "9" * 5000, "[" * 5000, "{\"a\":" * 3000,
    "\"", "\\", "\ufeff", "\r\n", "null", "true", "-0", "0x10", "1_000",
])


def _mutated(kind: str):
    base = EXAMPLES.get(kind)
    if base is None:
        return st.dictionaries(st.text(max_size=8), json_values, max_size=5)
    keys = sorted(base)
    return st.one_of(
        st.builds(lambda k, v: {**base, k: v}, st.sampled_from(keys), json_values),
        st.builds(lambda k: {x: y for x, y in base.items() if x != k}, st.sampled_from(keys)),
        st.builds(lambda k, v: {**base, k: v}, st.text(max_size=8), json_values),
    )


def _line_ok(line: str, path: Path) -> bool:
    return "\n" not in line and line.startswith(str(path)) and re.match(
        rf"^{re.escape(str(path))}(:\d+)? \S+: .+$|^{re.escape(str(path))}: .+$", line) is not None


def _check(path: Path, model) -> None:
    try:
        read_jsonl(path, model)
    except InputError as exc:
        assert exc.problems and len(exc.problems) <= MAX_PROBLEMS + 1
        for line in exc.problems:
            assert _line_ok(line, path), line


_ROOT: list[Path] = []  # one folder per module run, holding every example's own folder


@pytest.fixture(autouse=True, scope="module")
def _fuzz_root():
    """Give the examples one parent folder and remove it after the module: hypothesis runs each test hundreds of
    times, and a folder left per example filled /tmp with thousands of them per suite run."""
    _ROOT.append(Path(tempfile.mkdtemp(prefix="prefmem-fuzz-")))
    yield
    shutil.rmtree(_ROOT.pop(), ignore_errors=True)


def _write(data: bytes) -> Path:
    d = Path(tempfile.mkdtemp(dir=_ROOT[-1]))
    p = d / "in.jsonl"
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("kind", sorted(k for k in RECORD_KINDS))
@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes(kind, data):
    _check(_write(data), RECORD_KINDS[kind])


@pytest.mark.parametrize("kind", sorted(k for k in RECORD_KINDS))
@FUZZ
@given(data=st.data())
def test_mutated_records(kind, data):
    objs = data.draw(st.lists(_mutated(kind), min_size=1, max_size=4))
    junk = data.draw(st.lists(nasty_text, max_size=2))
    lines = [json.dumps(o) for o in objs]
    for j, bit in enumerate(junk):  # splice nasty text into a line or add it as its own
        lines.insert(j % (len(lines) + 1), bit if j % 2 else lines[0][:-1] + ", \"z\": " + bit + "}")
    _check(_write("\n".join(lines).encode("utf-8", "surrogatepass")), RECORD_KINDS[kind])


yaml_bits = st.sampled_from([
    "id: u\n", "id:\n", "preferences:\n", "  - id: p\n", "    text: t\n", "    text:\n", "? [a]\n: 1\n",
    "&a [x, *a]\n", "a: &a [1,2]\nb: [*a,*a,*a]\n", "    check: {type: max_words, value: 3}\n",
    "    check: {type: forbid_pattern, pattern: '(a+)+$'}\n", "!!python/object:os.system x\n", "\t- x\n",
    "---\n", "id: " + "9" * 5000 + "\n", "[" * 200 + "\n", "{a: 1}: x\n", "<<: *a\n", "id: 2024-01-01\n",
])


@FUZZ
@given(parts=st.lists(yaml_bits, max_size=8), raw=st.binary(max_size=60))
def test_profile_yaml(parts, raw):
    p = _write(("".join(parts)).encode() + raw)
    y = p.with_suffix(".yaml")
    p.rename(y)
    try:
        load_profile(y)
    except InputError as exc:
        for line in exc.problems:
            assert _line_ok(line, y), line


def _cli(args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(args)
    return rc, err.getvalue()


VERB_INPUTS = {"admit": "admission", "resolve": "resolution", "drift": "drift", "meta-analysis": "fact",
               "validate": "admission"}


@pytest.mark.parametrize("verb", sorted(VERB_INPUTS))
@FEW
@given(data=st.data())
def test_cli_verbs_exit_cleanly(verb, data):
    kind = VERB_INPUTS[verb]
    objs = data.draw(st.lists(_mutated(kind), min_size=1, max_size=3))
    p = _write("".join(json.dumps(o) + "\n" for o in objs).encode())
    rc, err = _cli([verb, str(p)])
    assert rc in (0, 1), err
    if rc == 1:
        assert err.strip() and all(_line_ok(ln, p) or ln.startswith(f"prefmem {verb}:")
                                   for ln in err.strip().splitlines()), err


@FEW
@given(out=st.sampled_from(["", "/", "/proc/version/x", "{tmp}/new/sub/x.jsonl", "{tmp}", "-", "{tmp}/in.jsonl/x"]),
       window=st.sampled_from(["0", "-1", "x", "1e9", "3", "99999999999999999999"]))
def test_cli_arguments(out, window):
    p = _write(json.dumps(EXAMPLES["drift"]).encode() + b"\n")
    out = out.replace("{tmp}", str(p.parent))
    try:
        rc, err = _cli(["drift", str(p), "-o", out, "--window", window])
    except SystemExit as exc:  # argparse usage errors
        rc, err = exc.code, ""
    assert rc in (0, 1, 2), err
