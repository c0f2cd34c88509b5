"""Feed every file-reading verb malformed inputs and count what goes wrong.

    python benchmarks/malformed.py [--root CHECKOUT] [--timeout 20] [--only SUBSTR] [--json OUT]

Each case runs ``python -m toolkit.cli ...`` in a fresh process (PYTHONPATH=ROOT, so an old
checkout can be measured against the current one) and is classed as:

- ``traceback``: stderr shows a Python traceback;
- ``hang``: the process used more than ``--timeout`` CPU seconds, or 6x that in wall time
  (killed; CPU time, because a loaded machine stretches wall time);
- ``accepted``: an input that is invalid exited 0;
- ``unnamed``: a failing exit whose message does not name the input file;
- ``clobbered``: an existing output was changed by a failed run, or a FIFO/device/symlink
  given as ``-o`` was replaced;
- ``ok``: everything else.

Only the exit status, stderr and the output path are looked at; the cases are deterministic.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ADM = {"id": "a1", "text": "From now on, always run the linter before committing."}
RES = {"id": "r1", "correction": "Keep commit subjects under 72 chars.",
       "library": [{"id": "x1", "behavior": "Keep commit subjects short", "scope": "global",
                    "conditions": [], "exceptions": []}]}
DRIFT = {"id": "d1", "turns": [{"user": "hi there, keep it short please", "assistant": "ok"},
                               {"user": "now give me lots of detail", "assistant": "sure"}]}
FACTS = [{"user": f"u{u}", "fact_id": f"f{u}-{i}", "session": i, "text": f"user {u} likes topic {i} a lot",
          "hits": [i + 1] if (i + u) % 2 else []} for u in range(3) for i in range(8)]
PROFILE = """id: ann-x
preferences:
  - id: p1
    text: Keep replies under 50 words.
    check: {type: max_words, value: 50}
"""
POINT = {"id": "pt1", "annotator": "ann-x", "task": "Say hi", "response": "Hi there.",
         "corrected": False, "preference_ids": []}


def jl(*objs) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


@dataclass
class Case:
    name: str
    verb: str
    files: dict[str, bytes | str]  # name -> content ("<dir>", "<fifo>", "<symlink:TARGET>")
    args: list[str]
    invalid: bool = True  # exit 0 counts as "accepted invalid input"
    output: str | None = None  # name of an output path to check for clobbering
    output_kind: str | None = None  # "existing" | "fifo" | "symlink" | "devnull"
    extra: dict = field(default_factory=dict)


def generic_cases(verb: str, good: bytes, mk) -> list[Case]:
    """Malformed-file cases that apply to any JSONL-reading verb."""
    deep = b"[" * 100_000 + b"]" * 100_000
    obj = json.loads(good.splitlines()[0])
    first_str = next(k for k, v in obj.items() if isinstance(v, str))
    def with_(k, v):
        o = dict(obj)
        o[k] = v
        return jl(o)
    cases = [
        ("missing-file", {}, ["nope.jsonl"]),
        ("directory", {"d": "<dir>"}, ["d"]),
        ("binary", {"in.jsonl": bytes(range(256)) * 40}, ["in.jsonl"]),
        ("latin1", {"in.jsonl": good.replace(b'"', b'"', 1)[:-1] + "\xe9t\xe9".encode("latin-1") + b"\n"}, ["in.jsonl"]),
        ("latin1-in-string", {"in.jsonl": json.dumps(obj).replace(obj[first_str], obj[first_str] + "XX").encode().replace(b"XX", b"\xe9\xff") + b"\n"}, ["in.jsonl"]),
        ("utf16", {"in.jsonl": good.decode().encode("utf-16")}, ["in.jsonl"]),
        ("nul-bytes", {"in.jsonl": b"\x00" * 64 + b"\n"}, ["in.jsonl"]),
        ("not-json", {"in.jsonl": b"{id: 1, text: hello}\n"}, ["in.jsonl"]),
        ("json-array", {"in.jsonl": b"[1, 2, 3]\n"}, ["in.jsonl"]),
        ("json-string", {"in.jsonl": b"\"hello\"\n"}, ["in.jsonl"]),
        ("truncated", {"in.jsonl": good[: len(good) // 2 - 3]}, ["in.jsonl"]),  # mid-line
        ("deep-array", {"in.jsonl": deep + b"\n"}, ["in.jsonl"]),
        ("deep-field", {"in.jsonl": with_(first_str, 0).replace(b"0", b"[" * 50_000 + b"]" * 50_000, 1)}, ["in.jsonl"]),
        ("deep-object", {"in.jsonl": b'{"a":' * 50_000 + b"1" + b"}" * 50_000 + b"\n"}, ["in.jsonl"]),
        ("bigint-field", {"in.jsonl": with_(first_str, 0).replace(b": 0", b": " + b"9" * 5000, 1)}, ["in.jsonl"]),
        ("bigint-line", {"in.jsonl": b"9" * 5000 + b"\n"}, ["in.jsonl"]),
        ("nan", {"in.jsonl": with_(first_str, 0).replace(b": 0", b": NaN", 1)}, ["in.jsonl"]),
        ("infinity", {"in.jsonl": with_(first_str, 0).replace(b": 0", b": -Infinity", 1)}, ["in.jsonl"]),
        ("huge-float", {"in.jsonl": with_(first_str, 0).replace(b": 0", b": 1e999", 1)}, ["in.jsonl"]),
        ("lone-surrogate", {"in.jsonl": with_(first_str, "x\ud800y")}, ["in.jsonl"]),
        ("nul-in-string", {"in.jsonl": with_(first_str, "a\u0000b")}, ["in.jsonl"]),
        ("wrong-type", {"in.jsonl": with_(first_str, 12)}, ["in.jsonl"]),
        ("null-field", {"in.jsonl": with_(first_str, None)}, ["in.jsonl"]),
        ("extra-field", {"in.jsonl": with_("zzz_extra", 1)}, ["in.jsonl"]),
        ("missing-field", {"in.jsonl": jl({k: v for k, v in obj.items() if k != first_str})}, ["in.jsonl"]),
        ("trailing-garbage", {"in.jsonl": good.rstrip(b"\n") + b" }}\n"}, ["in.jsonl"]),
        ("two-objects-one-line", {"in.jsonl": good.rstrip(b"\n") + good}, ["in.jsonl"]),
        ("dev-zero", {"<dev>": b""}, ["/dev/zero"]),
    ]
    out = [Case(f"{verb}/{n}", verb, files, args) for n, files, args in cases]
    for c in out:
        if c.name.endswith("/deep-field") or c.name.endswith("/nan") or c.name.endswith("/infinity"):
            pass
    # valid-ish variants: must not traceback; exit status either way
    for n, files in [
        ("empty-file", {"in.jsonl": b""}),
        ("blank-lines", {"in.jsonl": b"\n\n" + good + b"\n   \n"}),
        ("crlf", {"in.jsonl": good.replace(b"\n", b"\r\n")}),
        ("utf8-bom", {"in.jsonl": b"\xef\xbb\xbf" + good}),
        ("no-final-newline", {"in.jsonl": good.rstrip(b"\n")}),
    ]:
        out.append(Case(f"{verb}/{n}", verb, files, ["in.jsonl"], invalid=False))
    return [mk(c) for c in out]


def output_cases(verb: str, good: bytes, flag: str = "-o") -> list[Case]:
    """Where the output goes: bad paths, FIFOs, devices, symlinks, existing files."""
    files = {"in.jsonl": good}
    return [
        Case(f"{verb}/out-missing-dir", verb, files, ["in.jsonl", flag, "no/such/dir/out.jsonl"], invalid=False),
        Case(f"{verb}/out-is-dir", verb, {**files, "od": "<dir>"}, ["in.jsonl", flag, "od"]),
        Case(f"{verb}/out-under-file", verb, {**files, "f": b"x"}, ["in.jsonl", flag, "f/out.jsonl"]),
        Case(f"{verb}/out-proc", verb, files, ["in.jsonl", flag, "/proc/version/x"]),
        Case(f"{verb}/out-empty-name", verb, files, ["in.jsonl", flag, ""]),
        Case(f"{verb}/out-fifo", verb, {**files, "fifo": "<fifo>"}, ["in.jsonl", flag, "fifo"],
             invalid=False, output="fifo", output_kind="fifo"),
        Case(f"{verb}/out-symlink", verb, {**files, "real.out": b"old\n", "link": "<symlink:real.out>"},
             ["in.jsonl", flag, "link"], invalid=False, output="link", output_kind="symlink"),
        # a private copy of /dev/null's device node: never point a test at the real one (the old
        # code replaced device nodes with regular files, and this machine is shared)
        Case(f"{verb}/out-devnull", verb, {**files, "null": "<chardev>"}, ["in.jsonl", flag, "null"],
             invalid=False, output="null", output_kind="devnull"),
        Case(f"{verb}/out-survives-bad-input", verb, {"in.jsonl": good + b"{broken\n", "out": b"precious\n"},
             ["in.jsonl", flag, "out"], output="out", output_kind="existing"),
    ]


def build_cases() -> list[Case]:
    cases: list[Case] = []
    adm = jl(ADM, {**ADM, "id": "a2", "text": "Please use tabs in this file only."})
    res = jl(RES)
    drift = jl(DRIFT)
    facts = jl(*FACTS)

    def same(c: Case) -> Case:
        return c

    # validate / admit / resolve / drift / meta-analysis: every generic JSONL case
    for verb, good, pre in [("validate", adm, []), ("admit", adm, []), ("resolve", res, []),
                            ("drift", drift, []), ("meta-analysis", facts, [])]:
        for c in generic_cases(verb, good, same):
            c.args = pre + c.args
            cases.append(c)
    for verb, good in [("admit", adm), ("resolve", res), ("drift", drift)]:
        cases += output_cases(verb, good)
    cases += [c for c in output_cases("meta-analysis", facts, "--json")
              if not c.name.endswith("survives-bad-input")]

    big = "Please always run the linter. " * 35_000  # ~1 MB
    big2 = "a" * 1_000_000
    big3 = ("x " * 500_000)
    for n, t in [("1mb-sentences", big), ("1mb-one-word", big2), ("1mb-spaces", big3),
                 ("1mb-quotes", '"' * 1_000_000), ("1mb-backticks", "`" * 1_000_000),
                 ("1mb-punct", "!?.,;:" * 170_000), ("1mb-newlines", "x\n" * 500_000),
                 ("1mb-digits", "1" * 1_000_000), ("1mb-dots", "a." * 500_000),
                 ("1mb-mixed", "don't  use \"tabs\" in *.py files, never! " * 25_000)]:
        cases.append(Case(f"admit/{n}", "admit", {"in.jsonl": jl({"id": "b", "text": t})}, ["in.jsonl"], invalid=False))
        cases.append(Case(f"resolve/{n}", "resolve", {"in.jsonl": jl({**RES, "correction": t})}, ["in.jsonl"], invalid=False))
        cases.append(Case(f"drift/{n}", "drift", {"in.jsonl": jl({"id": "d", "turns": [{"user": t, "assistant": ""}]})},
                          ["in.jsonl"], invalid=False))
    # verb-specific invalid input
    dup_fact = jl(*FACTS, {**FACTS[0], "text": "another text"})
    cases += [
        Case("meta-analysis/dup-fact-id", "meta-analysis", {"in.jsonl": dup_fact}, ["in.jsonl"]),
        Case("meta-analysis/one-user", "meta-analysis", {"in.jsonl": jl(*[f for f in FACTS if f["user"] == "u0"])}, ["in.jsonl"], invalid=False),
        Case("meta-analysis/one-fact", "meta-analysis", {"in.jsonl": jl(FACTS[0])}, ["in.jsonl"], invalid=False),
        Case("meta-analysis/no-positives", "meta-analysis", {"in.jsonl": jl(*[{**f, "hits": []} for f in FACTS])}, ["in.jsonl"], invalid=False),
        Case("meta-analysis/folds-0", "meta-analysis", {"in.jsonl": facts}, ["in.jsonl", "--folds", "0"]),
        Case("meta-analysis/folds-huge", "meta-analysis", {"in.jsonl": facts}, ["in.jsonl", "--folds", "1000000"]),
        Case("meta-analysis/seed-negative", "meta-analysis", {"in.jsonl": facts}, ["in.jsonl", "--seed", "-5"]),
        Case("meta-analysis/seed-huge", "meta-analysis", {"in.jsonl": facts}, ["in.jsonl", "--seed", "9" * 50]),
        Case("meta-analysis/session-negative", "meta-analysis", {"in.jsonl": jl({**FACTS[0], "session": -1})}, ["in.jsonl"]),
        Case("meta-analysis/hits-strings", "meta-analysis", {"in.jsonl": jl({**FACTS[0], "hits": ["x"]})}, ["in.jsonl"]),
        Case("meta-analysis/session-float", "meta-analysis", {"in.jsonl": jl({**FACTS[0], "session": 1.5})}, ["in.jsonl"]),
        Case("meta-analysis/session-bool", "meta-analysis", {"in.jsonl": jl({**FACTS[0], "session": True})}, ["in.jsonl"]),
        Case("meta-analysis/session-5000-digits", "meta-analysis",
             {"in.jsonl": json.dumps(FACTS[0]).replace('"session": 0', '"session": ' + "9" * 5000).encode() + b"\n"}, ["in.jsonl"]),
        Case("admit/dup-id", "admit", {"in.jsonl": jl(ADM, ADM)}, ["in.jsonl"]),
        Case("admit/context-not-list", "admit", {"in.jsonl": jl({**ADM, "context": "hi"})}, ["in.jsonl"]),
        Case("admit/context-bad-role", "admit", {"in.jsonl": jl({**ADM, "context": [{"role": "", "content": "x"}]})}, ["in.jsonl"]),
        Case("admit/empty-text", "admit", {"in.jsonl": jl({**ADM, "text": ""})}, ["in.jsonl"]),
        Case("admit/whitespace-text", "admit", {"in.jsonl": jl({**ADM, "text": "   \n\t "})}, ["in.jsonl"]),
        Case("admit/empty-id", "admit", {"in.jsonl": jl({**ADM, "id": ""})}, ["in.jsonl"]),
        Case("resolve/dup-rule-ids", "resolve", {"in.jsonl": jl({**RES, "library": RES["library"] * 2})}, ["in.jsonl"]),
        Case("resolve/bad-scope", "resolve", {"in.jsonl": jl({**RES, "library": [{**RES["library"][0], "scope": "everywhere"}]})}, ["in.jsonl"]),
        Case("resolve/dup-id", "resolve", {"in.jsonl": jl(RES, RES)}, ["in.jsonl"]),
        Case("resolve/rule-not-object", "resolve", {"in.jsonl": jl({**RES, "library": ["x"]})}, ["in.jsonl"]),
        Case("drift/window-0", "drift", {"in.jsonl": drift}, ["in.jsonl", "--window", "0"]),
        Case("drift/window-negative", "drift", {"in.jsonl": drift}, ["in.jsonl", "--window", "-3"]),
        Case("drift/window-huge", "drift", {"in.jsonl": drift}, ["in.jsonl", "--window", "9" * 30]),
        Case("drift/beta-2", "drift", {"in.jsonl": drift}, ["in.jsonl", "--beta", "2"]),
        Case("drift/beta-nan", "drift", {"in.jsonl": drift}, ["in.jsonl", "--beta", "nan"]),
        Case("drift/fuse-negative", "drift", {"in.jsonl": drift}, ["in.jsonl", "--fuse", "-1"]),
        Case("drift/threshold-inf", "drift", {"in.jsonl": drift}, ["in.jsonl", "--threshold", "inf"]),
        Case("drift/no-turns", "drift", {"in.jsonl": jl({"id": "d", "turns": []})}, ["in.jsonl"]),
        Case("drift/dup-id", "drift", {"in.jsonl": jl(DRIFT, DRIFT)}, ["in.jsonl"]),
        Case("drift/turn-not-object", "drift", {"in.jsonl": jl({"id": "d", "turns": ["hello"]})}, ["in.jsonl"]),
        Case("drift/many-turns", "drift", {"in.jsonl": jl({"id": "d", "turns": [{"user": "short please", "assistant": ""}] * 5000})}, ["in.jsonl"], invalid=False),
    ]
    # validate: YAML profiles
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))
    yaml_cases = {
        "alias-bomb": bomb,
        "blank-id": "id:\npreferences:\n  - id: p1\n    text: Be brief.\n",
        "blank-text": "id: u\npreferences:\n  - id: p1\n    text:\n",
        "blank-check": "id: u\npreferences:\n  - id: p1\n    text: hi\n    check:\n",
        "list-key": "id: u\n? [a, b]\n: 1\npreferences:\n  - id: p1\n    text: Be brief.\n",
        "map-key": "id: u\n{a: 1}: x\npreferences:\n  - id: p1\n    text: Be brief.\n",
        "int-key": "id: u\n1: x\npreferences:\n  - id: p1\n    text: Be brief.\n",
        "null-key": "id: u\n~: x\npreferences:\n  - id: p1\n    text: Be brief.\n",
        "dup-key": "id: u\nid: v\npreferences:\n  - id: p1\n    text: Be brief.\n",
        "dup-pref-id": "id: u\npreferences:\n  - id: p1\n    text: a\n  - id: p1\n    text: b\n",
        "python-tag": "id: !!python/object/apply:os.system ['true']\npreferences: []\n",
        "unknown-tag": "id: !foo u\npreferences:\n  - id: p1\n    text: Be brief.\n",
        "bad-yaml": "id: u\npreferences: [\n",
        "tab-indent": "id: u\npreferences:\n\t- id: p1\n",
        "list-top": "- a\n- b\n",
        "scalar-top": "hello\n",
        "empty": "",
        "multi-doc": "id: u\npreferences:\n  - id: p1\n    text: a\n---\nid: v\n",
        "deep-yaml": "a: " + "[" * 20_000 + "]" * 20_000 + "\n",
        "deep-yaml-block": "".join("  " * i + "a:\n" for i in range(3000)) + "  " * 3000 + "b: 1\n",
        "bigint-value": "id: u\npreferences:\n  - id: p1\n    text: a\n    check: {type: max_words, value: " + "9" * 5000 + "}\n",
        "bool-value": "id: u\npreferences:\n  - id: p1\n    text: a\n    check: {type: max_words, value: true}\n",
        "float-id": "id: 1.5\npreferences:\n  - id: p1\n    text: a\n",
        "date-id": "id: 2024-01-01\npreferences:\n  - id: p1\n    text: a\n",
        "bad-regex": "id: u\npreferences:\n  - id: p1\n    text: a\n    check: {type: forbid_pattern, pattern: '(a'}\n",
        "evil-regex": "id: u\npreferences:\n  - id: p1\n    text: a\n    check: {type: forbid_pattern, pattern: '(a+)+$'}\n",
        "evil-regex-2": "id: u\npreferences:\n  - id: p1\n    text: a\n    check: {type: forbid_pattern, pattern: '(x|x)*y'}\n",
        "merge-key": "base: &b {id: p1, text: a}\nid: u\npreferences:\n  - <<: *b\n",
        "binary-yaml": bytes(range(256)).decode("latin-1"),
        "latin1-yaml": "id: caf\xe9\npreferences:\n  - id: p1\n    text: a\n",
        "huge-anchor-chain": "a: &a " + "x" * 100 + "\n" + "".join(f"k{i}: *a\n" for i in range(200)),
    }
    for n, text in yaml_cases.items():
        data = text.encode("latin-1") if n in ("binary-yaml", "latin1-yaml") else text.encode()
        invalid = n not in ("merge-key",)
        cases.append(Case(f"validate/yaml-{n}", "validate", {"p.yaml": data}, ["p.yaml"], invalid=invalid))
    cases.append(Case("validate/yaml-directory", "validate", {"d.yaml": "<dir>"}, ["d.yaml"]))
    cases.append(Case("validate/yaml-missing", "validate", {}, ["nope.yaml"]))
    # fidelity: a hostile profile regex on a long response must not hang
    long_pt = {**POINT, "response": "a" * 30 + "!"}
    evil = PROFILE.replace("check: {type: max_words, value: 50}", "check: {type: forbid_pattern, pattern: '(a+)+$'}")
    cases += [
        Case("fidelity/evil-regex", "fidelity", {"p.jsonl": jl(long_pt), "prof.yaml": evil},
             ["p.jsonl", "--profiles", "prof.yaml"]),
        Case("fidelity/json-unwritable", "fidelity", {"p.jsonl": jl(POINT), "prof.yaml": PROFILE},
             ["p.jsonl", "--profiles", "prof.yaml", "--json", "/proc/version/x.json"]),
        Case("fidelity/profiles-empty-dir", "fidelity", {"p.jsonl": jl(POINT), "pd": "<dir>"},
             ["p.jsonl", "--profiles", "pd"]),
        Case("fidelity/unknown-annotator", "fidelity", {"p.jsonl": jl({**POINT, "annotator": "zz"}), "prof.yaml": PROFILE},
             ["p.jsonl", "--profiles", "prof.yaml"]),
        Case("fidelity/alias-bomb-profile", "fidelity", {"p.jsonl": jl(POINT), "prof.yaml": bomb},
             ["p.jsonl", "--profiles", "prof.yaml"]),
        Case("fidelity/binary-points", "fidelity", {"p.jsonl": bytes(range(256)), "prof.yaml": PROFILE},
             ["p.jsonl", "--profiles", "prof.yaml"]),
    ]
    return cases


def materialise(case: Case, d: Path) -> None:
    for name, content in case.files.items():
        if name == "<dev>":
            continue
        p = d / name
        if content == "<dir>":
            p.mkdir()
        elif content == "<fifo>":
            os.mkfifo(p)
        elif content == "<chardev>":
            os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        elif isinstance(content, str) and content.startswith("<symlink:"):
            os.symlink(content[len("<symlink:"):-1], p)
        else:
            p.write_bytes(content if isinstance(content, bytes) else content.encode())


def _run(cmd: list[str], cwd: Path, env: dict, timeout: float) -> tuple[int | None, str, float]:
    """Run ``cmd``; a hang is more than ``timeout`` CPU seconds, or 6x that in wall time (a
    loaded machine stretches wall time, not CPU time). Returns (rc or None, stderr, cpu s)."""
    with tempfile.TemporaryFile() as errf:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=errf,
                                stdin=subprocess.DEVNULL)
        t0 = time.monotonic()
        rc: int | None = None
        cpu = 0.0
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                rc = os.waitstatus_to_exitcode(status)
                cpu = ru.ru_utime + ru.ru_stime
                proc.returncode = rc
                break
            try:
                with open(f"/proc/{proc.pid}/stat") as fh:
                    f = fh.read().rsplit(")", 1)[1].split()
                cpu = (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, IndexError, ValueError):
                pass
            if cpu > timeout or time.monotonic() - t0 > 6 * timeout:
                proc.kill()
                proc.wait()
                rc = None
                break
            time.sleep(0.05)
        errf.seek(0)
        return rc, errf.read().decode("utf-8", "replace"), cpu


PRELOAD = ("toolkit.cli", "toolkit.datasets.jsonl", "toolkit.profiles", "toolkit.records",
           "toolkit.rules.admission", "toolkit.rules.resolution", "toolkit.drift.tracker",
           "toolkit.gating.meta", "toolkit.simuser.fidelity", "toolkit.llm")


def _forked(args: list[str], cwd: Path, env: dict, timeout: float) -> tuple[int | None, str, float]:
    """Run ``toolkit.cli.main(args)`` in a forked child of this (pre-imported) process: the
    same code path as ``python -m toolkit.cli`` without paying the imports for every case."""
    with tempfile.TemporaryFile() as errf:
        pid = os.fork()
        if pid == 0:  # child
            code = 1
            try:
                os.chdir(cwd)
                os.environ.clear()
                os.environ.update(env)
                fd = os.open(os.devnull, os.O_RDWR)
                os.dup2(fd, 0)
                os.dup2(fd, 1)
                os.dup2(errf.fileno(), 2)
                sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
                sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
                sys.argv = ["prefmem", *args]
                from toolkit.cli import main as cli_main

                try:
                    code = cli_main(args)
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                except BaseException:  # what the interpreter would print
                    import traceback

                    traceback.print_exc()
                    code = 1
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code if isinstance(code, int) else 1)
        t0 = time.monotonic()
        rc: int | None = None
        cpu = 0.0
        while True:
            wpid, status, ru = os.wait4(pid, os.WNOHANG)
            if wpid:
                rc = os.waitstatus_to_exitcode(status)
                cpu = ru.ru_utime + ru.ru_stime
                break
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    f = fh.read().rsplit(")", 1)[1].split()
                cpu = (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, IndexError, ValueError):
                pass
            if cpu > timeout or time.monotonic() - t0 > 6 * timeout:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                rc = None
                break
            time.sleep(0.02)
        errf.seek(0)
        return rc, errf.read().decode("utf-8", "replace"), cpu


def run_case(case: Case, root: Path, timeout: float, fork: bool = True) -> dict:
    d = Path(tempfile.mkdtemp(prefix="malformed-"))
    try:
        materialise(case, d)
        env = {**os.environ, "PYTHONPATH": str(root), "PREFMEM_CACHE_DIR": str(d / ".cache"),
               "PREFMEM_PROGRESS": "0", "HF_HUB_OFFLINE": "1"}
        cmd = [sys.executable, "-m", "toolkit.cli", case.verb, *case.args]
        fifo_reader = None
        fifo_data: list[bytes] = []
        if case.output_kind == "fifo":
            import threading

            def reader() -> None:
                with open(d / "fifo", "rb") as fh:
                    fifo_data.append(fh.read())
            fifo_reader = threading.Thread(target=reader, daemon=True)
            fifo_reader.start()
        t0 = time.monotonic()
        if fork:
            rc, err, cpu = _forked([case.verb, *case.args], d, env, timeout)
        else:
            rc, err, cpu = _run(cmd, d, env, timeout)
        dt = time.monotonic() - t0
        if case.output_kind == "fifo":
            if fifo_reader.is_alive():  # nobody opened the FIFO for writing: unblock our reader
                try:
                    fd = os.open(d / "fifo", os.O_WRONLY | os.O_NONBLOCK)
                    os.close(fd)
                except OSError:
                    pass
                fifo_reader.join(2)
        cls = "ok"
        if rc is None:
            cls = "hang"
        elif "Traceback (most recent call last)" in err:
            cls = "traceback"
        elif rc == 0 and case.invalid:
            cls = "accepted"
        elif rc not in (0, 1, 2):
            cls = "traceback" if rc < 0 else "unnamed"
        elif rc != 0:
            named = [a for a in case.args if not a.startswith("-")]
            if not any(a in err for a in named) or len([ln for ln in err.splitlines() if ln.strip()]) == 0:
                cls = "unnamed"
        if case.output_kind and cls in ("ok", "unnamed"):
            p = d / case.output
            if case.output_kind == "existing" and p.read_bytes() != b"precious\n":
                cls = "clobbered"
            elif case.output_kind == "fifo" and (not stat.S_ISFIFO(os.lstat(p).st_mode)
                                                 or (rc == 0 and not (fifo_data and fifo_data[0]))):
                cls = "clobbered"
            elif case.output_kind == "symlink" and not os.path.islink(p):
                cls = "clobbered"
            elif case.output_kind == "devnull" and not stat.S_ISCHR(os.lstat(p).st_mode):
                cls = "clobbered"
        last = err.strip().splitlines()[-1] if err.strip() else ""
        return {"case": case.name, "class": cls, "rc": rc, "seconds": round(dt, 2), "cpu": round(cpu, 2),
                "last": last[:200]}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent), help="checkout to test")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds before a case counts as a hang")
    ap.add_argument("--only", default=None, help="run cases whose name contains this")
    ap.add_argument("--json", default=None, help="write every case's outcome here")
    ap.add_argument("--no-fork", action="store_true",
                    help="a fresh interpreter per case (slow) instead of forking a pre-imported one")
    args = ap.parse_args(argv)
    if not args.no_fork:
        sys.path.insert(0, str(Path(args.root).resolve()))
        os.environ["PYTHONPATH"] = str(Path(args.root).resolve())
        import importlib

        for mod in PRELOAD:
            importlib.import_module(mod)
        assert Path(sys.modules["toolkit"].__file__).resolve().is_relative_to(Path(args.root).resolve())
    cases = [c for c in build_cases() if not args.only or args.only in c.name]
    results = []
    for c in cases:
        r = run_case(c, Path(args.root), args.timeout, fork=not args.no_fork)
        results.append(r)
        if r["class"] != "ok":
            print(f"{r['class']:10s} {r['case']:45s} rc={r['rc']} {r['seconds']}s  {r['last'][:110]}", flush=True)
    counts: dict[str, int] = {}
    for r in results:
        counts[r["class"]] = counts.get(r["class"], 0) + 1
    print(f"\n{len(results)} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if args.json:
        Path(args.json).write_text(json.dumps({"counts": counts, "cases": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
