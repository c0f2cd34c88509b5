"""Fault injection: outputs that never clobber, resumes that never mix or re-pay, caches that
degrade instead of aborting, transport errors as one clean line, credentials never echoed.

Each fault named in issue 18 has a test here.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest
from llm_server import Reply
from pydantic import BaseModel

from toolkit.cli import main
from toolkit.errors import ConfigChangedError, InputError, LockedError, PrefmemError, PrefmemWarning
from toolkit.llm import Gateway, ResponseCache, StructuredRequest
from toolkit.runs import ItemLog, RunContext

ROOT = Path(__file__).resolve().parent.parent
MODEL = "openai-api/local/test"
ADM = '{"id": "a1", "text": "From now on, always run the linter before committing."}\n'


class Ans(BaseModel):
    x: int


def _req(i: int) -> StructuredRequest:
    return StructuredRequest(messages=({"role": "user", "content": f"q{i}"},), schema=Ans, id=str(i))


def _cli(*args: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PREFMEM_PROGRESS": "0", **kw.pop("env", {})}
    return subprocess.run([sys.executable, "-m", "toolkit.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, **kw)


# -- outputs -------------------------------------------------------------------------------
def test_fifo_output_stays_a_fifo_and_carries_the_records(tmp_path):
    from toolkit.rules.admission_model import fitted_admitter

    # the offline admitter is fit here first (the disk cache the CLI reads): on a cold cache the
    # fit takes minutes on a loaded 2-core machine, and the CLI's timeout guards against a hang of
    # the output path, not against the fit's length
    fitted_admitter()
    (tmp_path / "in.jsonl").write_text(ADM)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    out = _cli("admit", str(tmp_path / "in.jsonl"), "-o", str(fifo))
    reader.join(30)
    assert out.returncode == 0, out.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert json.loads(got[0].decode().splitlines()[0])["id"] == "a1"


def test_symlink_output_keeps_the_link_and_writes_its_target(tmp_path):
    (tmp_path / "in.jsonl").write_text(ADM)
    (tmp_path / "real.jsonl").write_text("old\n")
    os.symlink("real.jsonl", tmp_path / "link.jsonl")
    assert main(["admit", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "link.jsonl")]) == 0
    assert os.path.islink(tmp_path / "link.jsonl")
    assert json.loads((tmp_path / "real.jsonl").read_text())["id"] == "a1"


def test_character_device_is_written_through_not_replaced(tmp_path):
    from toolkit._io import output_target

    dev = os.devnull
    if os.geteuid() == 0:  # a private device node: a regression must not replace the real one
        dev = str(tmp_path / "null")
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    t = output_target(dev)
    assert t.mode == "through"
    t.write("x\n")
    assert stat.S_ISCHR(os.lstat(dev).st_mode)
    (tmp_path / "in.jsonl").write_text(ADM)
    assert main(["admit", str(tmp_path / "in.jsonl"), "-o", dev]) == 0
    assert stat.S_ISCHR(os.lstat(dev).st_mode)


def test_dash_writes_to_stdout(tmp_path, capsys):
    (tmp_path / "in.jsonl").write_text(ADM)
    assert main(["admit", str(tmp_path / "in.jsonl"), "-o", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == "a1"


def test_regular_file_replaced_atomically_and_survives_a_failed_run(tmp_path):
    (tmp_path / "in.jsonl").write_text(ADM + "{broken\n")
    out = tmp_path / "out.jsonl"
    out.write_text("precious\n")
    os.chmod(out, 0o640)
    assert main(["admit", str(tmp_path / "in.jsonl"), "-o", str(out)]) == 1
    assert out.read_text() == "precious\n"
    (tmp_path / "in.jsonl").write_text(ADM)
    assert main(["admit", str(tmp_path / "in.jsonl"), "-o", str(out)]) == 0
    assert json.loads(out.read_text())["id"] == "a1"
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o640  # permissions kept
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files left


@pytest.mark.parametrize("verb,flag", [("meta-analysis", "--json"), ("admit", "-o"), ("drift", "-o")])
def test_unwritable_destination_found_before_the_work(tmp_path, capsys, monkeypatch, verb, flag):
    f = tmp_path / "afile"
    f.write_text("x")
    (tmp_path / "in.jsonl").write_text(ADM)
    import toolkit.datasets.jsonl as jl

    def boom(*a, **k):  # the input must not even be read
        raise AssertionError("work started before the output was checked")

    monkeypatch.setattr(jl, "read_jsonl", boom)
    for bad in (str(f / "out.json"), str(tmp_path), ""):
        assert main([verb, str(tmp_path / "in.jsonl"), flag, bad]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and flag in err[0], err


def test_fidelity_json_unwritable_before_work(tmp_path, capsys):
    pts = tmp_path / "p.jsonl"
    pts.write_text('{"id": "p", "annotator": "x", "task": "t", "response": "r", "corrected": false}\n')
    assert main(["fidelity", str(pts), "--profiles", str(tmp_path / "none"), "--json",
                 str(pts / "x.json")]) == 1
    assert "--json" in capsys.readouterr().err  # the destination, not the missing profiles


# -- resume ---------------------------------------------------------------------------------
def test_torn_last_line_is_cut_back_before_appending(tmp_path):
    log = ItemLog(tmp_path / "items.jsonl")
    log.append("a", 1)
    log.append("b", 2)
    with log.path.open("ab") as fh:
        fh.write(b'{"key": "c", "val')
    assert log.load() == {"a": 1, "b": 2}
    log.append("c", 3)
    log.append("d", 4)
    assert ItemLog(log.path).load() == {"a": 1, "b": 2, "c": 3, "d": 4}  # nothing after the tear lost


def test_damaged_middle_line_skips_only_itself(tmp_path):
    p = tmp_path / "items.jsonl"
    p.write_bytes(b'{"key": "a", "value": 1}\n\xff\xfe garbage\n{"key": "b", "value": 2}\n')
    with pytest.warns(PrefmemWarning, match="damaged"):
        assert ItemLog(p).load() == {"a": 1, "b": 2}


def test_second_resume_of_a_finished_run_redoes_nothing(tmp_path):
    calls: list[int] = []

    def fn(batch):
        calls.extend(batch)
        return [x + 1 for x in batch]

    ctx = RunContext(out_dir=tmp_path / "d")
    with ctx.running():
        ctx.map_items("s", list(range(50)), fn, key=str, batch_size=7)
        ctx.complete()
    with (tmp_path / "d" / "items" / "s.jsonl").open("ab") as fh:
        fh.write(b'{"key": "zz", "va')  # a tear after the last record
    for _ in range(2):
        calls.clear()
        ctx = RunContext(out_dir=tmp_path / "d", resume=True)
        with ctx.running():
            assert ctx.map_items("s", list(range(50)), fn, key=str, batch_size=7) == list(range(1, 51))
            ctx.complete()
        assert calls == []


def test_missing_or_unreadable_manifest_refuses_and_deletes_nothing(tmp_path):
    d = tmp_path / "d"
    ctx = RunContext(out_dir=d)
    with ctx.running():
        ctx.map_items("s", [1, 2, 3], lambda b: b, key=str)
        ctx.complete()
    items = (d / "items" / "s.jsonl").read_bytes()
    for damage in ("missing", "garbage", "no-hash"):
        man = d / "manifest.json"
        if damage == "missing":
            man.unlink(missing_ok=True)
        elif damage == "garbage":
            man.write_bytes(b"\x00\x01{")
        else:
            man.write_text("{}")
        with pytest.raises(PrefmemError, match="nothing was deleted"):
            with RunContext(out_dir=d, resume=True).running():
                pass
        assert (d / "items" / "s.jsonl").read_bytes() == items


def test_config_hash_covers_results_not_run_settings(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCAL_BASE_URL", "http://127.0.0.1:9/v1")

    def h(**kw):
        g = Gateway(**{k: v for k, v in kw.items() if k in ("max_concurrency", "attempt_timeout",
                                                             "run_deadline", "cache_mode", "temperature")})
        return RunContext(out_dir=tmp_path, models=[MODEL], gateway=g, seed=kw.get("seed", 0)).config_hash()

    base = h()
    assert h(max_concurrency=1) == h(attempt_timeout=5.0) == h(run_deadline=60.0) == h(cache_mode="off") == base
    assert h(seed=1) != base and h(temperature=0.7) != base
    monkeypatch.setenv("LOCAL_BASE_URL", "http://127.0.0.1:10/v1")
    assert h() != base  # another server gives other answers
    import toolkit.runs as runs

    monkeypatch.setattr(runs, "all_prompt_versions", lambda: {"admission": "edited"})
    monkeypatch.setenv("LOCAL_BASE_URL", "http://127.0.0.1:9/v1")
    assert h() != base  # an edited prompt


def test_resume_with_other_third_party_data_is_refused(tmp_path):
    """The offline admitter's fit reads PrefEval when the data directory holds it, so a resume
    whose data directory holds other corpora would mix two fits' items: refused."""
    full, bare = tmp_path / "full", tmp_path / "bare"
    (full / "prefeval").mkdir(parents=True)
    bare.mkdir()
    assert RunContext(out_dir=tmp_path / "x", data_dir=full).config_hash() != \
        RunContext(out_dir=tmp_path / "x", data_dir=bare).config_hash()
    assert RunContext(out_dir=tmp_path / "x", data_dir=bare).config_hash() == \
        RunContext(out_dir=tmp_path / "x", data_dir=None).config_hash()  # nothing either way
    with RunContext(out_dir=tmp_path / "d", data_dir=full).running():
        pass  # interrupted before complete
    with pytest.raises(ConfigChangedError):
        with RunContext(out_dir=tmp_path / "d", data_dir=bare, resume=True).running():
            pass


def test_changed_input_file_refuses_resume(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("a\n")
    ctx = RunContext(out_dir=tmp_path / "d")
    with ctx.running():
        ctx.record_input(data)
        ctx.complete()
    data.write_text("b\n")
    with pytest.raises(ConfigChangedError, match="data.jsonl changed"):
        with (c := RunContext(out_dir=tmp_path / "d", resume=True)).running():
            c.record_input(data)


def test_one_run_per_output_directory_and_the_message_names_the_holder(tmp_path):
    code = ("import sys, time; from toolkit.runs import RunContext\n"
            "with RunContext(out_dir=sys.argv[1]).running():\n"
            "    print('ready', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "d")], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(LockedError, match=f"pid {holder.pid}"):
            with RunContext(out_dir=tmp_path / "d").running():
                pass
        assert (tmp_path / "d" / "manifest.json").exists()  # the holder's run was not touched
    finally:
        holder.kill()
        holder.wait()
    with RunContext(out_dir=tmp_path / "d").running():  # a dead holder's lock is gone
        pass


@pytest.mark.parametrize("exc,status", [(KeyboardInterrupt, "interrupted"), (OSError, "failed")])
def test_manifest_status_after_interrupts_and_errors(tmp_path, exc, status):
    with pytest.raises(exc):
        with RunContext(out_dir=tmp_path / "d").running():
            raise exc("No space left on device") if exc is OSError else exc()
    man = json.loads((tmp_path / "d" / "manifest.json").read_text())
    assert man["status"] == status


def test_full_disk_still_marks_the_manifest_failed(tmp_path, monkeypatch):
    import toolkit.runs as runs

    ctx = RunContext(out_dir=tmp_path / "d")
    with pytest.raises(OSError):
        with ctx.running():
            def full(*a, **k):
                raise OSError(28, "No space left on device")

            monkeypatch.setattr(runs, "atomic_write_text", full)
            raise OSError(28, "No space left on device")
    assert json.loads((tmp_path / "d" / "manifest.json").read_text())["status"] == "failed"


def test_sigterm_leaves_manifest_interrupted(tmp_path):
    code = ("import signal, sys, time\nfrom toolkit.cli import _on_sigterm\nfrom toolkit.runs import RunContext\n"
            "signal.signal(signal.SIGTERM, _on_sigterm)\n"
            "with RunContext(out_dir=sys.argv[1]).running():\n"
            "    print('ready', flush=True); time.sleep(60)\n")
    p = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "d")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.stdout.readline().strip() == "ready"
    p.send_signal(signal.SIGTERM)
    p.wait(30)
    assert json.loads((tmp_path / "d" / "manifest.json").read_text())["status"] == "interrupted"


def test_admit_interrupt_message_does_not_suggest_resume(tmp_path, capsys, monkeypatch):
    import toolkit.rules.admission as adm

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(adm, "admit_records", interrupted)
    (tmp_path / "in.jsonl").write_text(ADM)
    assert main(["admit", str(tmp_path / "in.jsonl")]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "--resume" not in err


# -- cache faults ---------------------------------------------------------------------------
def _run_ok(llm_env, cache_dir, n=4, mode="use"):
    llm_env.handler = lambda r: Reply(content='{"x": 1}')
    g = Gateway(cache_dir=str(cache_dir), cache_mode=mode, backoff_base=0.01)
    return g.model(MODEL).run([_req(i) for i in range(n)])


def test_corrupt_cache_file_degrades_to_no_cache_with_one_warning(llm_env, tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "responses.sqlite").write_bytes(b"this is not a database" * 100)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = _run_ok(llm_env, tmp_path / "c")
    assert [o.status for o in out] == ["ok"] * 4
    assert len([x for x in w if issubclass(x.category, PrefmemWarning)]) == 1


def test_full_disk_keeps_paid_answers_and_warns_once(llm_env, tmp_path, monkeypatch):
    real = sqlite3.Connection.execute

    class Full(sqlite3.Connection):
        def execute(self, sql, *a):
            if sql.startswith("INSERT"):
                raise sqlite3.OperationalError("database or disk is full")
            return real(self, sql, *a)

    import toolkit.llm.cache as cache_mod

    orig = cache_mod.sqlite3.connect
    monkeypatch.setattr(cache_mod.sqlite3, "connect", lambda *a, **k: orig(*a, factory=Full, **k))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = _run_ok(llm_env, tmp_path / "c", n=6)
    assert [o.value.x for o in out] == [1] * 6  # every paid answer is in hand
    msgs = [str(x.message) for x in w if issubclass(x.category, PrefmemWarning)]
    assert len(msgs) == 1 and "disk is full" in msgs[0]


def test_read_only_cache_replays_its_entries(llm_env, tmp_path, monkeypatch):
    _run_ok(llm_env, tmp_path / "c")  # fill the cache
    import toolkit.llm.cache as cache_mod

    orig = cache_mod.sqlite3.connect

    def ro_media(path, *a, uri=False, **k):  # a read-only mount: only read-only opens work
        if not uri or "mode=ro" not in str(path) and "immutable" not in str(path):
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return orig(path, *a, uri=uri, **k)

    monkeypatch.setattr(cache_mod.sqlite3, "connect", ro_media)
    llm_env.handler = lambda r: Reply(status=500, body={"error": "must not be called"})
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = Gateway(cache_dir=str(tmp_path / "c"), cache_mode="replay")
        out = g.model(MODEL).run([_req(i) for i in range(4)])
    assert all(o.cached and o.value.x == 1 for o in out)
    assert len([x for x in w if issubclass(x.category, PrefmemWarning)]) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_empty_read_only_cache_directory_is_no_cache(llm_env, tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    os.chmod(d, 0o555)
    try:
        with pytest.warns(PrefmemWarning):
            out = _run_ok(llm_env, d)
        assert [o.status for o in out] == ["ok"] * 4
    finally:
        os.chmod(d, 0o755)


def test_unopenable_cache_in_replay_is_a_clean_miss(tmp_path, monkeypatch, llm_env):
    import toolkit.llm.cache as cache_mod

    def nope(*a, **k):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(cache_mod.sqlite3, "connect", nope)
    c = ResponseCache(tmp_path / "c")
    with pytest.warns(PrefmemWarning, match="without a cache"):
        assert c.get("k") is None
    c.put("k", {"a": 1})  # no raise


# -- transport -----------------------------------------------------------------------------
@pytest.mark.parametrize("fault", ["401", "429", "reset"])
def test_transport_errors_are_one_clean_line(llm_env, tmp_path, fault):
    key = "sk-test-SENTINEL-0123456789abcdef"
    replies = {
        "401": Reply(status=401, body={"error": {"message": f"Incorrect API key provided: sk-test-****cdef; "
                                                            f"url https://u:{key}@x.example/v1?api_key={key}"}}),
        "429": Reply(status=429, body={"error": "rate limited"}, headers={"retry-after": "0"}),
        "reset": Reply(reset=True),
    }
    llm_env.handler = lambda r: replies[fault]
    lines = "".join(json.dumps({"id": f"a{i}", "text": f"Always run the linter, case {i}."}) + "\n"
                    for i in range(24))
    (tmp_path / "in.jsonl").write_text(lines)
    out = _cli("admit", str(tmp_path / "in.jsonl"), "--model", MODEL, "-o", str(tmp_path / "o.jsonl"),
               env={"LOCAL_API_KEY": key, "LOCAL_BASE_URL": llm_env.base_url,
                    "PREFMEM_CACHE_DIR": str(tmp_path / "c")})
    assert out.returncode == 1
    err = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(err) == 1, out.stderr[-3000:]
    assert "Traceback" not in out.stderr and key not in out.stderr and "SENTINEL" not in out.stderr
    assert not (tmp_path / "o.jsonl").exists()


def test_non_json_200_body_is_unknown_with_its_reason(llm_env, tmp_path):
    llm_env.handler = lambda r: Reply(raw=b"<html><body>502 Bad Gateway</body></html>")
    out = Gateway(cache_dir=str(tmp_path / "c"), backoff_base=0.01).model(MODEL).run([_req(0), _req(1)])
    assert [o.status for o in out] == ["unknown", "unknown"]
    assert "not a chat completion" in out[0].error


# -- credentials -----------------------------------------------------------------------------
def test_redaction_of_echoed_credentials(monkeypatch):
    from toolkit._redact import redact

    key = "sk-proj-ABCDEFGH0123456789wxyz"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    for text in (f"key {key}", "Incorrect API key provided: sk-proj-********************wxyz",
                 "key ABCDEFGH... was refused", "ends with ...6789wxyz", "https://bob:hunter2@h.example/v1",
                 "https://h.example/v1?api_key=s3cr3t&x=1", "Authorization: Bearer abc.def-123",
                 '{"api_key": "zzzz1234"}'):
        red = redact(text)
        for secret in (key, "hunter2", "s3cr3t", "abc.def-123", "zzzz1234", "ABCDEFGH", "6789wxyz",
                       "********************wxyz"):
            assert secret not in red, (text, red)


def test_cli_errors_are_redacted(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-SECRETSECRET1234")
    import toolkit.cli as cli

    def fail(args):
        raise PrefmemError("server said: key sk-live-SECRETSECRET1234 at https://me:pw@host/v1")

    monkeypatch.setitem(cli.VERBS, "validate", fail)
    assert main(["validate", "x"]) == 1
    err = capsys.readouterr().err
    assert "SECRET" not in err and ":pw@" not in err


def test_input_error_lines_are_single_lines(tmp_path, capsys):
    p = tmp_path / "in.jsonl"
    p.write_text('{"id": "a", "text": "x", "we\\nird": 1}\n')
    assert main(["admit", str(p)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{p}:1 ")
    with pytest.raises(InputError):
        from toolkit.datasets.jsonl import read_jsonl
        from toolkit.records import AdmissionInput

        read_jsonl(p, AdmissionInput)
