"""SQLite response cache: atomic writes, safe across processes, corrupt entries read as misses.

Faults never end a run: a cache that cannot be opened (corrupt file, unwritable folder) turns
into "no cache" with one warning; a cache on read-only media is opened read-only and replays;
a write that fails (disk full) is dropped with one warning, and the answer in hand is still
returned to the caller.

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
import warnings
from pathlib import Path
from typing import Any

from toolkit.errors import PrefmemWarning

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
        self.disabled: str | None = None  # why the cache is off for this run
        self.read_only = False
        self._warned: set[str] = set()

    def _warn(self, what: str, msg: str) -> None:
        if what not in self._warned:
            self._warned.add(what)
            warnings.warn(f"LLM cache {self.path}: {msg}", PrefmemWarning, stacklevel=3)

    def _disable(self, exc: BaseException) -> None:
        self.disabled = f"{exc.__class__.__name__}: {exc}"
        self._warn("off", f"cannot be used ({exc}); continuing without a cache "
                   "(answers are not stored, replay finds nothing)")

    def _open(self) -> sqlite3.Connection:
        try:
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
            return conn
        except (OSError, sqlite3.Error) as exc:
            first = exc
        # read-only folder or media: the entries are there, read them without writing
        if self.path.is_file():
            for uri in (f"file:{self.path}?mode=ro", f"file:{self.path}?immutable=1"):
                try:
                    conn = sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None)
                    conn.execute("SELECT key FROM responses LIMIT 1").fetchall()
                except sqlite3.Error:
                    continue
                self.read_only = True
                self._warn("ro", f"read-only ({first}); replaying stored answers, new ones are not stored")
                return conn
        raise first

    def _conn(self) -> sqlite3.Connection:
        if self.disabled is not None:
            raise sqlite3.OperationalError(f"cache disabled: {self.disabled}")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = self._open()
            except (OSError, sqlite3.Error) as exc:
                self._disable(exc)
                raise sqlite3.OperationalError(str(exc)) from None
            self._local.conn = conn
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored value, or None on a miss, a corrupt entry or a cache that is off."""
        try:
            row = self._conn().execute(
                "SELECT value, checksum FROM responses WHERE key = ?", (key,)
            ).fetchone()
        except sqlite3.DatabaseError as exc:
            if self.disabled is None and "locked" not in str(exc) and "busy" not in str(exc):
                self._disable(exc)  # e.g. "file is not a database": stop asking for every call
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
        """Store ``value`` under ``key`` in one transaction (last writer wins).

        Never raises on a storage fault: the caller holds a paid answer and keeps it."""
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
        checksum = hashlib.sha256(text.encode()).hexdigest()
        if self.read_only or self.disabled is not None or "write" in self._warned:
            return
        try:
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(
                    "INSERT OR REPLACE INTO responses (key, value, checksum) VALUES (?, ?, ?)",
                    (key, text, checksum),
                )
                conn.execute("COMMIT")
            except BaseException:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise
        except (OSError, sqlite3.Error) as exc:
            self._warn("write", f"cannot store answers ({exc}); going on without storing them")

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """Valid stored values for ``keys`` (misses and corrupt entries are left out)."""
        out: dict[str, dict[str, Any]] = {}
        try:
            conn = self._conn()
        except sqlite3.Error:
            return out
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
        if self.read_only or self.disabled is not None or "write" in self._warned:
            return
        try:
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT OR REPLACE INTO responses (key, value, checksum) VALUES (?, ?, ?)", rows
                )
                conn.execute("COMMIT")
            except BaseException:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise
        except (OSError, sqlite3.Error) as exc:
            self._warn("write", f"cannot store answers ({exc}); going on without storing them")

    def __len__(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def keys(self) -> list[str]:
        return [r[0] for r in self._conn().execute("SELECT key FROM responses ORDER BY key")]
