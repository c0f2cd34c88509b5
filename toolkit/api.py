"""Notebook entry points that mirror ``prefmem reproduce`` without writing to disk by default."""

from __future__ import annotations

import tempfile
from pathlib import Path

from toolkit.diagnostics import get
from toolkit.diagnostics.result import Result
from toolkit.llm.gateway import Gateway
from toolkit.runs import RunContext, default_data_dir


def reproduce(
    name: str,
    *,
    model: str | list[str] = "offline",
    seed: int = 0,
    quick: bool = True,
    out: str | Path | None = None,
    gateway: Gateway | None = None,
    **options,
) -> Result:
    """Run one diagnostic and return its Result (written to ``out`` when given).

    ``quick`` (the default here) keeps notebook runs to about a minute; the CLI runs full scale.
    """
    models = [model] if isinstance(model, str) else list(model)
    tmp = None
    if out is None:
        tmp = tempfile.TemporaryDirectory(prefix="prefmem-")
        out_dir = Path(tmp.name) / name
    else:
        out_dir = Path(out) / name
    ctx = RunContext(out_dir=out_dir, models=models, seed=seed, gateway=gateway or Gateway(),
                     data_dir=default_data_dir(), quick=quick, options=options)
    try:
        with ctx.running():
            result = get(name)(ctx)
            if out is not None:
                result.write(out_dir)
            ctx.complete(extra={"result": result.meta})
    finally:
        if tmp is not None:
            tmp.cleanup()
    return result
