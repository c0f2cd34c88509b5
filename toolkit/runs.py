"""Run directories: manifest.json, append-only item logs, resume that refuses changed configs."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from toolkit._progress import progress
from toolkit.datasets.jsonl import atomic_write_text
from toolkit.errors import ConfigChangedError
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


def default_data_dir() -> Path | None:
    """``$PREFMEM_DATA_DIR`` or ``../shared/data`` next to the checkout, when present."""
    env = os.environ.get("PREFMEM_DATA_DIR")
    if env:
        return Path(env) if Path(env).exists() else None
    for base in (Path.cwd(), Path(__file__).resolve().parent.parent):
        for cand in (base / ".." / "shared" / "data", base.parent / ".." / "shared" / "data"):
            if cand.exists():
                return cand.resolve()
    return None


@dataclass
class ItemLog:
    """An append-only JSONL log of finished items: ``{"key": ..., "value": ...}`` per line."""

    path: Path

    def load(self) -> dict[str, Any]:
        done: dict[str, Any] = {}
        if not self.path.exists():
            return done
        with self.path.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    break  # a torn last line from a crash: everything before it counts
                done[obj["key"]] = obj["value"]
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

    @property
    def model(self) -> str:
        return self.models[0]

    def chat_model(self, model: str | None = None) -> ChatModel:
        return self.gateway.model(model or self.model)

    def record_input(self, path: str | os.PathLike) -> Path:
        """Note an input file's sha256 in the manifest; returns the path."""
        p = Path(path)
        if p.is_file():
            self.inputs[str(p)] = sha256_file(p)
        elif p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file():
                    self.inputs[str(f)] = sha256_file(f)
        return p

    def record_prompt(self, name: str) -> str:
        """Note a prompt's version; returns it."""
        v = load_prompt(name).version
        self.prompts[name] = v
        return v

    def config(self) -> dict[str, Any]:
        return {
            "models": list(self.models),
            "seed": self.seed,
            "quick": self.quick,
            "options": self.options,
            "gateway": self.gateway.manifest(),
        }

    def config_hash(self) -> str:
        blob = json.dumps(self.config(), sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def prepare(self) -> None:
        """Create the output dir; on resume check the stored config, else start clean."""
        man = self.out_dir / "manifest.json"
        items = self.out_dir / "items"
        if self.resume and man.exists():
            old = json.loads(man.read_text(encoding="utf-8")).get("config_hash")
            if old != self.config_hash():
                raise ConfigChangedError(
                    f"{man}: --resume refused, the configuration changed (stored {old}, now "
                    f"{self.config_hash()}); rerun without --resume or use another --out"
                )
        elif items.exists():
            shutil.rmtree(items)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.write_manifest(status="running")

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
        specs = []
        for m in self.models:
            try:
                s = self.gateway.model(m).spec
                specs.append({"model": m, "base_url": s.public_base_url})
            except Exception:
                specs.append({"model": m, "base_url": None})
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
