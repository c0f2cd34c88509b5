"""Run directories: manifest.json, append-only item logs, resume that refuses changed configs.

Resume rules (issue 18): the configuration hash covers what changes results (models and their
base URLs, seed, options, quick, sampling settings, prompt versions for LLM runs) and not what
does not (timeouts, concurrency, deadline, cache mode); input files are checked by sha256 as a
diagnostic records them. A missing or unreadable manifest refuses to resume and deletes
nothing. A torn last line of an item log is cut back before appending. One run at a time per
output directory (an exclusive lock naming its holder). The manifest ends ``complete``,
``interrupted`` (Ctrl-C, SIGTERM) or ``failed`` (any error, with its message).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from toolkit._progress import progress
from toolkit.datasets.jsonl import atomic_write_text
from toolkit.errors import ConfigChangedError, LockedError, PrefmemError, PrefmemWarning
from toolkit.llm.gateway import ChatModel, Gateway
from toolkit.llm.prompts import load_prompt

PACKAGES = ("numpy", "pandas", "scikit-learn", "scipy", "openai", "pydantic", "matplotlib", "seaborn")


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def toolkit_version() -> str:
    try:
        return metadata.version("prefmem-toolkit")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def git_state() -> dict[str, Any]:
    """Commit and dirty flag of the checkout holding the toolkit (None outside git).

    Notebooks are not inputs of a run (``toolkit/`` is the source of truth, notebooks only call
    it), and JupyterLab autosaves a notebook as soon as it is opened; so changed
    ``notebooks/*.ipynb`` files do not make the tree dirty. They are listed apart, under
    ``notebooks_changed``.
    """
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
        if commit.returncode != 0:
            return {"commit": None, "dirty": None}
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=5,
        )
        changed = [line[3:] for line in dirty.stdout.splitlines() if line.strip()]
        notebooks = [f for f in changed if f.startswith("notebooks/") and f.endswith(".ipynb")]
        return {"commit": commit.stdout.strip(), "dirty": len(changed) > len(notebooks),
                "notebooks_changed": notebooks}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def environment_info() -> dict[str, Any]:
    versions = {}
    for p in PACKAGES:
        try:
            versions[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            versions[p] = None
    return {"python": platform.python_version(), "platform": sys.platform, "packages": versions}


def all_prompt_versions() -> dict[str, str]:
    """Version (hash) of every prompt file shipped in ``toolkit/prompts``."""
    from importlib import resources

    names = sorted(
        p.name[:-3] for p in resources.files("toolkit").joinpath("prompts").iterdir() if p.name.endswith(".md")
    )
    return {n: load_prompt(n).version for n in names}


#: the data directories of the runs in progress in this process, innermost last
#: (:meth:`RunContext.running` pushes its ``data_dir``; ``None`` is a run without data)
_RUN_DATA_DIRS: list[Path | None] = []


def default_data_dir() -> Path | None:
    """The third-party data directory: the running run's ``data_dir`` (so ``prefmem reproduce
    --data-dir X`` reaches code that has no run context, such as the offline models' fits), else
    ``$PREFMEM_DATA_DIR``, else ``../shared/data`` next to the working directory or the checkout,
    when present."""
    if _RUN_DATA_DIRS:
        return _RUN_DATA_DIRS[-1]
    env = os.environ.get("PREFMEM_DATA_DIR")
    if env:
        return Path(env) if Path(env).exists() else None
    for base in (Path.cwd(), Path(__file__).resolve().parent.parent):
        for cand in (base / ".." / "shared" / "data", base.parent / ".." / "shared" / "data"):
            if cand.exists():
                return cand.resolve()
    return None


def data_corpora(data_dir: Path | None) -> list[str]:
    """What a data directory holds (its entries' names, e.g. ``locomo10.json``, ``prefeval``): part
    of a run's result configuration, since the offline admitter's fit reads PrefEval when it is
    there (a resume with other data would mix two fits)."""
    if data_dir is None or not Path(data_dir).is_dir():
        return []
    return sorted(p.name for p in Path(data_dir).iterdir() if not p.name.startswith("."))


@dataclass
class ItemLog:
    """An append-only JSONL log of finished items: ``{"key": ..., "value": ...}`` per line."""

    path: Path

    def load(self, *, repair: bool = True) -> dict[str, Any]:
        """Finished items by key. A torn last line (a crash mid-write) is cut off the file
        (``repair``) so the next append starts on a fresh line; a damaged line in the middle
        is skipped with a warning, and every complete record after it still counts."""
        done: dict[str, Any] = {}
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return done
        pos = good_end = 0
        damaged: list[tuple[int, int]] = []  # (line, byte offset)
        for n, raw in enumerate(data.split(b"\n")):
            end = pos + len(raw) + 1
            if end <= len(data) and raw.strip():  # a complete line (it has its newline)
                try:
                    obj = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                    obj = None
                if isinstance(obj, dict) and "key" in obj and "value" in obj:
                    done[obj["key"]] = obj["value"]
                    good_end = end
                else:
                    damaged.append((n + 1, pos))
            pos = end
        middle = [ln for ln, off in damaged if off < good_end]
        if middle:
            warnings.warn(f"{self.path}: skipped {len(middle)} damaged line(s) (line "
                          f"{', '.join(map(str, middle[:5]))}); those items are redone",
                          PrefmemWarning, stacklevel=2)
        if repair and good_end < len(data):  # a torn tail: cut back to the last complete record
            with self.path.open("r+b") as fh:
                fh.truncate(good_end)
                fh.flush()
                os.fsync(fh.fileno())
        return done

    def append(self, key: str, value: Any) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"key": key, "value": value}, ensure_ascii=False, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())


@dataclass
class RunContext:
    """Everything a diagnostic needs: where to write, which models, seeds, gateway, data.

    ``quick`` asks for notebook-sized work (about a minute); ``prefmem reproduce`` runs full scale.
    """

    out_dir: Path
    models: list[str] = field(default_factory=lambda: ["offline"])
    seed: int = 0
    gateway: Gateway = field(default_factory=Gateway)
    data_dir: Path | None = None
    resume: bool = False
    quick: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.out_dir = Path(self.out_dir)
        self._stored_inputs: dict[str, str] = {}
        self._lock: RunLock | None = None

    @property
    def model(self) -> str:
        return self.models[0]

    def chat_model(self, model: str | None = None) -> ChatModel:
        return self.gateway.model(model or self.model)

    def record_input(self, path: str | os.PathLike) -> Path:
        """Note an input file's sha256 in the manifest; returns the path."""
        p = Path(path)
        if p.is_file():
            self._note_input(str(p), sha256_file(p))
        elif p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file():
                    self._note_input(str(f), sha256_file(f))
        return p

    def _note_input(self, name: str, digest: str) -> None:
        old = self._stored_inputs.get(name)
        if self.resume and old is not None and old != digest:
            raise ConfigChangedError(
                f"{self.out_dir / 'manifest.json'}: --resume refused, input {name} changed since the "
                f"interrupted run (sha256 {old[:12]} -> {digest[:12]}); rerun without --resume"
            )
        self.inputs[name] = digest

    def record_prompt(self, name: str) -> str:
        """Note a prompt's version; returns it."""
        v = load_prompt(name).version
        self.prompts[name] = v
        return v

    def config(self) -> dict[str, Any]:
        """Everything that changes results (hashed for --resume) plus run settings (not hashed)."""
        return {**self.result_config(), "gateway": self.gateway.manifest()}

    def result_config(self) -> dict[str, Any]:
        """What changes results: models with their base URLs, seed, options, sampling, prompts.

        Not here, on purpose: timeouts, concurrency, deadline, cache mode (same answers)."""
        g = self.gateway
        models = []
        llm = False
        for m in self.models:
            try:
                spec = self.gateway.model(m).spec
                models.append({"model": m, "base_url": spec.public_base_url})
                llm = llm or not spec.is_offline
            except Exception:
                models.append({"model": m, "base_url": None})
                llm = True
        return {
            "models": models,
            "seed": self.seed,
            "quick": self.quick,
            "options": self.options,
            "sampling": {"response_format": g.response_format, "temperature": g.temperature,
                         "max_tokens": g.max_tokens, "seed": g.seed},
            "prompts": all_prompt_versions() if llm else {},
            "data": data_corpora(self.data_dir),
        }

    def config_hash(self) -> str:
        blob = json.dumps(self.result_config(), sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def _stored_manifest(self) -> dict[str, Any]:
        """The manifest of the run being resumed; refuse (deleting nothing) when it is unusable."""
        man = self.out_dir / "manifest.json"
        why = None
        try:
            data = json.loads(man.read_text(encoding="utf-8"))
        except FileNotFoundError:
            why = "is missing"
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            why = f"cannot be read ({exc.__class__.__name__}: {exc})"
        else:
            if not isinstance(data, dict) or not isinstance(data.get("config_hash"), str):
                why = "holds no configuration hash"
        if why:
            raise PrefmemError(
                f"{man}: --resume refused, the manifest {why}; nothing was deleted. Rerun without "
                "--resume to start over (this clears the finished items), or use another --out"
            )
        return data

    def prepare(self) -> None:
        """Create the output dir; on resume check the stored config, else start clean.

        Call inside :meth:`running` (which takes the directory's lock first)."""
        items = self.out_dir / "items"
        fresh = not self.out_dir.exists() or not any(
            f.name != ".lock" for f in self.out_dir.iterdir())
        if self.resume and not fresh:
            stored = self._stored_manifest()
            old = stored["config_hash"]
            if old != self.config_hash():
                was = stored.get("config", {})
                now = self.result_config()
                diff = sorted(k for k in now if was.get(k) != now[k]) if isinstance(was, dict) else []
                raise ConfigChangedError(
                    f"{self.out_dir / 'manifest.json'}: --resume refused, the configuration changed "
                    f"({', '.join(diff) or 'settings'}; stored {old}, now {self.config_hash()}); rerun "
                    "without --resume or use another --out"
                )
            inputs = stored.get("inputs")
            self._stored_inputs = dict(inputs) if isinstance(inputs, dict) else {}
        elif items.exists():
            shutil.rmtree(items)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.write_manifest(status="running")

    @contextlib.contextmanager
    def running(self) -> Iterator[RunContext]:
        """Lock the output directory, prepare it, and leave the manifest ``complete`` (via
        :meth:`complete`), ``interrupted`` (KeyboardInterrupt/SIGTERM) or ``failed``."""
        self._lock = RunLock.acquire(self.out_dir)
        _RUN_DATA_DIRS.append(Path(self.data_dir) if self.data_dir is not None else None)
        try:
            self.prepare()
            try:
                yield self
            except KeyboardInterrupt:
                self._final_manifest("interrupted", None)
                raise
            except BaseException as exc:
                self._final_manifest("failed", exc)
                raise
        finally:
            _RUN_DATA_DIRS.pop()
            self._lock.release()
            self._lock = None

    def complete(self, extra: dict[str, Any] | None = None) -> None:
        """Mark the run complete."""
        self.write_manifest(status="complete", extra=extra)

    def _final_manifest(self, status: str, exc: BaseException | None) -> None:
        from toolkit._redact import redact

        extra = {"error": redact(f"{exc.__class__.__name__}: {exc}")[:1000]} if exc is not None else None
        try:
            self.write_manifest(status=status, extra=extra)
        except (OSError, PrefmemError):  # e.g. the disk is full: patch the status in place
            self._patch_status_in_place()

    def _patch_status_in_place(self) -> None:
        """Overwrite ``"running"`` by ``"failed" `` (same length: no new disk blocks needed)."""
        man = self.out_dir / "manifest.json"
        try:
            with open(man, "r+b") as fh:
                data = fh.read()
                i = data.find(b'"status": "running"')
                if i >= 0:
                    fh.seek(i)
                    fh.write(b'"status": "failed" ')
                    fh.flush()
                    os.fsync(fh.fileno())
        except OSError:
            pass  # nothing more can be done; the original error is re-raised by the caller

    def map_items(
        self,
        stage: str,
        items: Sequence[Any],
        fn: Callable[[Sequence[Any]], Iterable[Any]],
        key: Callable[[Any], str],
        *,
        batch_size: int = 32,
        report: bool = True,
    ) -> list[Any]:
        """Apply ``fn`` to items in batches, logging each finished result; resume skips done ones.

        ``fn`` takes a batch and returns one JSON-serialisable result per item, in order.
        ``report=False`` leaves progress to ``fn`` (it reports finer steps itself).
        """
        log = ItemLog(self.out_dir / "items" / f"{stage}.jsonl")
        done = log.load() if self.resume else {}
        todo = [it for it in items if key(it) not in done]
        batches = [todo[i : i + batch_size] for i in range(0, len(todo), batch_size)]
        for batch in (progress(batches, total=len(batches), desc=stage) if report else batches):
            for it, res in zip(batch, fn(batch), strict=True):
                log.append(key(it), res)
                done[key(it)] = res
        return [done[key(it)] for it in items]

    def write_manifest(self, status: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        specs = self.result_config()["models"]
        man = {
            "toolkit_version": toolkit_version(),
            "git": git_state(),
            "environment": environment_info(),
            "models": specs,
            "seed": self.seed,
            "config": self.config(),
            "config_hash": self.config_hash(),
            "inputs": dict(sorted(self.inputs.items())),
            "prompts": {**all_prompt_versions(), **dict(sorted(self.prompts.items()))},
            "usage": self.gateway.ledger.rows(),
            "status": status,
        }
        if extra:
            man.update(extra)
        atomic_write_text(self.out_dir / "manifest.json", json.dumps(man, indent=2, sort_keys=True, default=str) + "\n")
        return man


@dataclass
class RunLock:
    """An exclusive ``flock`` on ``DIR/.lock`` that names its holder (pid, host, start, command)."""

    path: Path
    fd: int

    @classmethod
    def acquire(cls, out_dir: Path) -> RunLock:
        import fcntl

        out_dir = Path(out_dir)
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(out_dir / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise PrefmemError(f"{out_dir}: cannot use as output folder ({exc.strerror or exc})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                holder = os.pread(fd, 4096, 0).decode("utf-8", "replace")
                info = json.loads(holder)
                who = (f"pid {info.get('pid')} on {info.get('host')} since {info.get('started')} "
                       f"({info.get('command')})")
            except (OSError, ValueError):
                who = "another process"
            os.close(fd)
            raise LockedError(
                f"{out_dir}: in use by {who}; wait for it to finish or use another --out"
            ) from None
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "command": " ".join(["prefmem", *sys.argv[1:]])[:300]}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        return cls(out_dir / ".lock", fd)

    def release(self) -> None:
        import fcntl

        try:
            os.ftruncate(self.fd, 0)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)
