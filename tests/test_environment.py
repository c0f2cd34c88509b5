"""environment.yml and pyproject.toml list the same dependencies with the same lower bounds."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
# conda-forge names that differ from PyPI's
CONDA_NAMES = {"dask[distributed]": ["dask", "distributed"], "llama-cpp-python[server]": ["llama-cpp-python"],
               "torch": ["pytorch-cpu"]}


def _split(req: str) -> tuple[str, str]:
    m = re.match(r"^([A-Za-z0-9_.\-]+(?:\[[^\]]+\])?)\s*(.*)$", req.strip())
    assert m, req
    return m.group(1).lower(), m.group(2).replace(" ", "")


def test_environment_matches_pyproject():
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip_side: dict[str, str] = {}
    for req in py["dependencies"] + [r for extra in py["optional-dependencies"].values() for r in extra]:
        name, spec = _split(req)
        for n in CONDA_NAMES.get(name, [name]):
            pip_side[n] = spec
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["channels"] == ["conda-forge"]
    conda_side = {}
    deps = [d for d in env["dependencies"] if isinstance(d, str)]
    pip_sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    deps += [req for section in pip_sections for req in section if req != "-e ."]
    for dep in deps:
        if dep.startswith(("python", "pip")):
            continue
        name, spec = _split(dep)
        conda_side[name] = spec
    assert conda_side == pip_side
    pyver = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert pyver.replace(" ", "") == "python" + py["requires-python"]
