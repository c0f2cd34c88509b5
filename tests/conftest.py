"""Shared fixtures: a local OpenAI-compatible server, a private LLM cache, data paths."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("PREFMEM_PROGRESS", "0")

from llm_server import FakeLLMServer, Reply  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = (ROOT / ".." / "shared" / "data").resolve()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runapi", action="store_true", default=False, help="run tests that call a live LLM API")
    parser.addoption("--runslow", action="store_true", default=False, help="run long sweeps marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_api = pytest.mark.skip(reason="live API test: pass --runapi to run it")
    skip_slow = pytest.mark.skip(reason="long sweep: pass --runslow to run it")
    for item in items:
        if "api" in item.keywords and not config.getoption("--runapi"):
            item.add_marker(skip_api)
        if "slow" in item.keywords and not config.getoption("--runslow"):
            item.add_marker(skip_slow)


@pytest.fixture
def llm_server():
    """A real HTTP server on 127.0.0.1 speaking the OpenAI chat API (see tests/llm_server.py)."""
    server = FakeLLMServer()
    yield server
    server.close()


@pytest.fixture
def llm_env(llm_server, tmp_path, monkeypatch):
    """Environment for ``openai-api/local/test`` pointing at the fake server, with a private cache."""
    monkeypatch.setenv("LOCAL_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("LOCAL_API_KEY", "sk-test-SENTINEL")
    monkeypatch.setenv("PREFMEM_CACHE_DIR", str(tmp_path / "cache"))
    return llm_server


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data``; the test skips with a reason when it is absent."""
    if not SHARED_DATA.exists():
        pytest.skip(f"third-party data not found at {SHARED_DATA} (see README: Data)")
    return SHARED_DATA


__all__ = ["Reply"]
