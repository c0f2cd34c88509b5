"""API keys never reach run directories, caches, notebooks or the terminal (forced 401)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from llm_server import Reply

ROOT = Path(__file__).resolve().parent.parent
SENTINEL = "SENTINEL"


def _grep(folder: Path) -> list[str]:
    hits = []
    for p in folder.rglob("*"):
        if p.is_file() and SENTINEL.encode() in p.read_bytes():
            hits.append(str(p))
    return hits


def test_forced_401_leaks_no_key(llm_server, tmp_path):
    llm_server.handler = lambda req: Reply(
        status=401, body={"error": {"message": "Incorrect API key provided: sk-test-SENTINEL"}})
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-SENTINEL", "OPENAI_BASE_URL": llm_server.base_url,
           "PREFMEM_CACHE_DIR": str(tmp_path / "cache"), "PREFMEM_PROGRESS": "0"}
    run_dir = tmp_path / "run"
    out = subprocess.run(
        [sys.executable, "-m", "toolkit.cli", "reproduce", "admission", "--model", "openai/test-model",
         "--out", str(run_dir)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
    )
    assert out.returncode == 1
    assert "HTTP 401" in out.stderr and "OPENAI_API_KEY" in out.stderr
    assert SENTINEL not in out.stdout + out.stderr
    assert len(llm_server.requests) >= 1  # the call really reached the server
    assert (run_dir / "admission" / "manifest.json").exists()
    if (tmp_path / "cache").exists():
        assert _grep(tmp_path / "cache") == []
    assert _grep(run_dir) == []
    assert _grep(ROOT / "notebooks") == []
