"""The gateway against a real HTTP server on 127.0.0.1, through the real openai client."""

from __future__ import annotations

import json
import multiprocessing as mp
import time

import pytest
from llm_server import Reply
from pydantic import BaseModel

from toolkit.errors import UsageError
from toolkit.llm import (
    CacheMissError,
    Gateway,
    LLMError,
    ResponseCache,
    StructuredRequest,
    cache_key,
    parse_model,
    strip_credentials,
)

MODEL = "openai-api/local/test"


class Verdict(BaseModel):
    label: str
    score: float


def req(text: str = "hello", **kw) -> StructuredRequest:
    return StructuredRequest(messages=({"role": "user", "content": text},), schema=Verdict,
                             role="test", prompt_version="v1", **kw)


def gw(tmp_path, **kw) -> Gateway:
    kw.setdefault("backoff_base", 0.01)
    return Gateway(cache_dir=str(tmp_path / "cache"), **kw)


GOOD = json.dumps({"label": "yes", "score": 0.5})


def test_model_strings(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    s = parse_model("openai/gpt-4o-mini")
    assert (s.provider, s.name, s.base_url) == ("openai", "gpt-4o-mini", "https://api.openai.com/v1")
    assert "sk-abc" not in repr(s)
    monkeypatch.setenv("MY_SVC_BASE_URL", "http://user:pw@127.0.0.1:8000/v1/?key=x")
    s = parse_model("openai-api/my-svc/llama")
    assert s.name == "llama" and s.key_env == "MY_SVC_API_KEY"
    assert s.public_base_url == "http://127.0.0.1:8000/v1"
    assert parse_model("offline").is_offline
    for bad in ("gpt-4", "openai/", "openai-api/x", "nope/x"):
        with pytest.raises(UsageError):
            parse_model(bad)
    monkeypatch.delenv("NOSVC_BASE_URL", raising=False)
    with pytest.raises(UsageError, match="NOSVC_BASE_URL"):
        parse_model("openai-api/nosvc/m")


def test_valid_answer_is_parsed_and_cached(llm_env, tmp_path):
    llm_env.script([Reply(GOOD)])
    g = gw(tmp_path)
    out = g.model(MODEL).call(req())
    assert out.ok and out.value == Verdict(label="yes", score=0.5) and not out.cached
    assert len(llm_env.requests) == 1
    body = llm_env.requests[0]
    assert body["response_format"]["type"] == "json_schema" and body["temperature"] == 0
    again = g.model(MODEL).call(req())
    assert again.ok and again.cached and len(llm_env.requests) == 1
    rows = g.ledger.rows()
    assert rows[0]["calls"] == 2 and rows[0]["cache_hits"] == 1 and rows[0]["live_calls"] == 1
    assert rows[0]["tokens_in"] == 10 and rows[0]["tokens_out"] == 5


def test_malformed_then_valid_reasks_once_and_caches_only_valid(llm_env, tmp_path):
    llm_env.script([Reply("not json at all"), Reply(GOOD)])
    g = gw(tmp_path)
    out = g.model(MODEL).call(req())
    assert out.ok and out.attempts == 2
    assert len(llm_env.requests) == 2
    second = llm_env.requests[1]["messages"]
    assert second[-2]["content"] == "not json at all" and "could not be used" in second[-1]["content"]
    cache = ResponseCache(tmp_path / "cache")
    assert len(cache) == 1
    (only,) = [cache.get(k) for k in cache.keys()]
    assert json.loads(only["content"]) == {"label": "yes", "score": 0.5}


def test_malformed_twice_is_unknown_and_not_cached(llm_env, tmp_path):
    llm_env.script([Reply('{"label": "yes"}'), Reply("```json\n{\"score\": 1}\n```")])
    g = gw(tmp_path)
    out = g.model(MODEL).call(req())
    assert out.status == "unknown" and not out.ok and out.value is None
    assert "schema" in out.error
    assert len(llm_env.requests) == 2
    assert len(ResponseCache(tmp_path / "cache")) == 0
    assert g.ledger.rows()[0]["unknown"] == 1


def test_empty_choices_counts_as_malformed(llm_env, tmp_path):
    llm_env.script([Reply(body={}), Reply(body={"choices": []})])
    out = gw(tmp_path).model(MODEL).call(req())
    assert out.status == "unknown" and len(llm_env.requests) == 2


def test_429_with_retry_after_then_ok(llm_env, tmp_path):
    llm_env.script([Reply(status=429, body={"error": {"message": "slow down"}}, headers={"retry-after": "0.2"}),
                    Reply(GOOD)])
    t0 = time.monotonic()
    out = gw(tmp_path, backoff_base=5.0).model(MODEL).call(req())
    assert out.ok and len(llm_env.requests) == 2
    assert 0.2 <= time.monotonic() - t0 < 4.0  # honoured Retry-After, not the 5 s backoff


def test_500_retried_then_gives_up(llm_env, tmp_path):
    llm_env.handler = lambda r: Reply(status=503, body={"error": {"message": "down"}})
    with pytest.raises(LLMError, match="gave up after 3 attempts"):
        gw(tmp_path, max_attempts=3).model(MODEL).call(req())
    assert len(llm_env.requests) == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_no_retry_on_client_errors(llm_env, tmp_path, status, capsys):
    llm_env.script([Reply(status=status, body={"error": {"message": "Incorrect API key provided: sk-test-SENTINEL"}})])
    with pytest.raises(LLMError) as exc:
        gw(tmp_path).model(MODEL).call(req())
    assert len(llm_env.requests) == 1
    assert f"HTTP {status}" in str(exc.value)
    assert "SENTINEL" not in str(exc.value)
    if status == 401:
        assert "LOCAL_API_KEY" in str(exc.value)
    assert {k.lower(): v for k, v in llm_env.headers[0].items()}["authorization"] == "Bearer sk-test-SENTINEL"
    assert "SENTINEL" not in "".join(capsys.readouterr())


def test_slow_server_hits_attempt_timeout(llm_env, tmp_path):
    llm_env.handler = lambda r: Reply(GOOD, delay=1.5)
    t0 = time.monotonic()
    with pytest.raises(LLMError, match="timed out"):
        gw(tmp_path, attempt_timeout=0.3, max_attempts=2).model(MODEL).call(req())
    assert time.monotonic() - t0 < 3.0
    assert len(llm_env.requests) == 2


def test_run_deadline(llm_env, tmp_path):
    from toolkit.llm import DeadlineExceeded

    llm_env.handler = lambda r: Reply(status=503, body={"error": {}}, headers={"retry-after": "5"})
    with pytest.raises(DeadlineExceeded):
        gw(tmp_path, run_deadline=1.0).model(MODEL).call(req())


def test_concurrency_bound(llm_env, tmp_path):
    llm_env.handler = lambda r: Reply(GOOD, delay=0.05)
    g = gw(tmp_path, max_concurrency=4)
    outs = g.model(MODEL).run([req(f"q{i}", id=str(i)) for i in range(50)])
    assert all(o.ok for o in outs) and [o.id for o in outs] == [str(i) for i in range(50)]
    assert len(llm_env.requests) == 50
    assert 1 < llm_env.max_active <= 4


def test_cache_key_inputs():
    base = dict(model="m", base_url="http://h/v1", messages=[{"role": "user", "content": "x"}],
                params={"temperature": 0, "seed": 0}, schema={"a": 1}, prompt_version="v1")
    k = cache_key(**base)
    for change in (dict(model="m2"), dict(base_url="http://h2/v1"),
                   dict(messages=[{"role": "user", "content": "y"}]),
                   dict(params={"temperature": 0.1, "seed": 0}), dict(params={"temperature": 0, "seed": 1}),
                   dict(schema={"a": 2}), dict(prompt_version="v2")):
        assert cache_key(**{**base, **change}) != k
    assert strip_credentials("http://u:sk-secret@h/v1") == "http://h/v1"


def test_cache_key_ignores_api_key(llm_env, tmp_path, monkeypatch):
    llm_env.handler = lambda r: Reply(GOOD)
    gw(tmp_path).model(MODEL).call(req())
    monkeypatch.setenv("LOCAL_API_KEY", "sk-other-key")
    out = gw(tmp_path).model(MODEL).call(req())
    assert out.cached and len(llm_env.requests) == 1
    raw = (tmp_path / "cache" / "responses.sqlite").read_bytes()
    assert b"SENTINEL" not in raw and b"sk-other" not in raw


def test_replay_miss_fails_without_request(llm_env, tmp_path):
    with pytest.raises(CacheMissError, match="replay: no cached response for role 'test'"):
        gw(tmp_path, cache_mode="replay").model(MODEL).call(req(id="item-7"))
    assert llm_env.requests == []


def test_refresh_ignores_cached(llm_env, tmp_path):
    llm_env.handler = lambda r: Reply(GOOD)
    gw(tmp_path).model(MODEL).call(req())
    out = gw(tmp_path, cache_mode="refresh").model(MODEL).call(req())
    assert not out.cached and len(llm_env.requests) == 2


def test_corrupt_entry_reads_as_miss(tmp_path):
    import sqlite3

    c = ResponseCache(tmp_path)
    c.put("k", {"content": "x"})
    con = sqlite3.connect(c.path)
    con.execute("UPDATE responses SET value = '{\"content\": \"tampered\"}' WHERE key = 'k'")
    con.commit()
    assert c.get("k") is None
    c.put("k2", {"content": "ok"})
    assert c.get("k2") == {"content": "ok"}


def _writer(directory: str, start: int, n: int) -> None:
    c = ResponseCache(directory)
    for i in range(start, start + n):
        c.put(f"key-{i}", {"content": str(i)})


def test_two_processes_writing_one_cache_lose_nothing(tmp_path):
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), s, 200)) for s in (0, 200)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    c = ResponseCache(tmp_path)
    assert len(c) == 400
    assert all(c.get(f"key-{i}") == {"content": str(i)} for i in range(400))


def test_offline_model_refuses_calls(tmp_path):
    from toolkit.errors import PrefmemError

    m = gw(tmp_path).model("offline")
    assert m.is_offline
    with pytest.raises(PrefmemError, match="offline"):
        m.call(req())


def test_run_inside_running_loop(llm_env, tmp_path):
    import asyncio

    llm_env.handler = lambda r: Reply(GOOD)

    async def inner():
        return gw(tmp_path).model(MODEL).call(req())

    assert asyncio.run(inner()).ok


def test_json_object_mode_sends_schema(llm_env, tmp_path):
    llm_env.handler = lambda r: Reply(GOOD)
    gw(tmp_path, response_format="json_object").model(MODEL).call(req())
    rf = llm_env.requests[0]["response_format"]
    assert rf["type"] == "json_object" and rf["schema"]["title"] == "Verdict"
