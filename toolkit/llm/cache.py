"""SQLite response cache: atomic writes, safe across processes, corrupt entries read as misses.

The key is a sha256 over everything that changes the output (model, base_url without
credentials, messages, sampling parameters incl. seed, response schema, prompt version,
cache format) and never the API key.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

CACHE_FORMAT = 1
CACHE_MODES = ("use", "refresh", "replay", "off")


def default_cache_dir() -> Path:
    """``$PREFMEM_CACHE_DIR`` or ``~/.cache/prefmem``."""
    env = os.environ.get("PREFMEM_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "prefmem"


def cache_key(
    *,
    model: str,
    base_url: str | None,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    schema: dict[str, Any] | None,
    prompt_version: str | None,
    response_format: str | None = None,
) -> str:
    """sha256 over the canonical JSON of every output-relevant input."""
    payload = {
        "format": CACHE_FORMAT,
        "model": model,
        "base_url": base_url,
        "messages": messages,
        "params": params,
        "schema": schema,
        "prompt_version": prompt_version,
        "response_format": response_format,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """A key -> JSON value store in one SQLite file (WAL, busy timeout, checksummed rows)."""

    def __init__(self, directory: str | os.PathLike | None = None):
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.path = self.directory / "responses.sqlite"
        self._local = threading.local()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA busy_timeout=30000")
            try:
                conn.execute("PRAGMA journal_mode=WAL")
            except sqlite3.OperationalError:
                pass
            conn.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                "key TEXT PRIMARY KEY, value TEXT NOT NULL, checksum TEXT NOT NULL)"
            )
            self._local.conn = conn
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored value, or None on a miss or a corrupt entry."""
        try:
            row = self._conn().execute(
                "SELECT value, checksum FROM responses WHERE key = ?", (key,)
            ).fetchone()
        except sqlite3.DatabaseError:
            return None
        if row is None:
            return None
        value, checksum = row
        if not isinstance(value, str) or hashlib.sha256(value.encode()).hexdigest() != checksum:
            return None
        try:
            obj = json.loads(value)
        except (json.JSONDecodeError, TypeError):
            return None
        return obj if isinstance(obj, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store ``value`` under ``key`` in one transaction (last writer wins)."""
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
        checksum = hashlib.sha256(text.encode()).hexdigest()
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "INSERT OR REPLACE INTO responses (key, value, checksum) VALUES (?, ?, ?)",
                (key, text, checksum),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """Valid stored values for ``keys`` (misses and corrupt entries are left out)."""
        out: dict[str, dict[str, Any]] = {}
        conn = self._conn()
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            try:
                rows = conn.execute(
                    f"SELECT key, value, checksum FROM responses WHERE key IN ({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
            except sqlite3.DatabaseError:
                continue
            for key, value, checksum in rows:
                if not isinstance(value, str) or hashlib.sha256(value.encode()).hexdigest() != checksum:
                    continue
                try:
                    obj = json.loads(value)
                except (json.JSONDecodeError, TypeError):
                    continue
                if isinstance(obj, dict):
                    out[key] = obj
        return out

    def put_many(self, items: dict[str, dict[str, Any]]) -> None:
        """Store many values in one transaction (all or nothing)."""
        if not items:
            return
        rows = []
        for key, value in items.items():
            text = json.dumps(value, sort_keys=True, ensure_ascii=False)
            rows.append((key, text, hashlib.sha256(text.encode()).hexdigest()))
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "INSERT OR REPLACE INTO responses (key, value, checksum) VALUES (?, ?, ?)", rows
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def __len__(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def keys(self) -> list[str]:
        return [r[0] for r in self._conn().execute("SELECT key FROM responses ORDER BY key")]
