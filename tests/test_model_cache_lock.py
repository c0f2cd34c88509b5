"""Two processes that need the same cold fit at once (two test workers, two `reproduce --jobs`
workers) pay for it once: the second waits on the entry's lock and reads what the first wrote."""

from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path


def _fit_once(cache: str, log: str, out: str) -> None:
    import os

    os.environ["PREFMEM_CACHE_DIR"] = cache
    from toolkit.rules._model_cache import cached_fit

    def build() -> dict:
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(1.0)  # a slow fit: the other process arrives while it runs
        return {"fitted_by": os.getpid()}

    value = cached_fit("toy-lock", [], {"seed": 0}, build, code=("rules/_model_cache.py",))
    Path(out).write_text(str(value["fitted_by"]))


def test_concurrent_cold_fits_of_one_key_build_once(tmp_path):
    ctx = mp.get_context("spawn")
    log = tmp_path / "builds.log"
    procs = [ctx.Process(target=_fit_once, args=(str(tmp_path / "cache"), str(log), str(tmp_path / f"o{i}")))
             for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    builds = log.read_text().split()
    assert len(builds) == 1  # one fit, not two
    assert {(tmp_path / f"o{i}").read_text() for i in range(2)} == set(builds)  # both got it
