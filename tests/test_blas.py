"""toolkit._blas: OpenBLAS's AVX-512 kernels chosen only where safe, only by the prefmem command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit import _blas

ROOT = Path(__file__).resolve().parent.parent
FLAGS = "flags\t\t: fpu sse2 avx avx2 fma {}\n"


def _cpuinfo(tmp_path, extra: str) -> Path:
    p = tmp_path / "cpuinfo"
    p.write_text("processor\t: 0\n" + FLAGS.format(extra))
    return p


@pytest.fixture
def no_numpy(monkeypatch):
    """As if NumPy were not loaded yet, with OPENBLAS_CORETYPE unset (both restored after)."""
    monkeypatch.delitem(sys.modules, "numpy", raising=False)
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)


def test_set_where_every_avx512_subset_is_present(tmp_path, no_numpy):
    info = _cpuinfo(tmp_path, " ".join(sorted(_blas.AVX512_FLAGS)))
    assert _blas.prefer_avx512_kernels(info) is True
    assert os.environ["OPENBLAS_CORETYPE"] == "SkylakeX"


def test_not_set_when_a_subset_is_missing_or_cpuinfo_unreadable(tmp_path, no_numpy):
    info = _cpuinfo(tmp_path, "avx512f avx512cd avx512dq")  # no bw, vl: SkylakeX code would fault
    assert _blas.prefer_avx512_kernels(info) is False
    assert _blas.prefer_avx512_kernels(tmp_path / "missing") is False
    assert "OPENBLAS_CORETYPE" not in os.environ


def test_the_users_choice_and_a_loaded_numpy_win(tmp_path, monkeypatch):
    info = _cpuinfo(tmp_path, " ".join(sorted(_blas.AVX512_FLAGS)))
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    assert _blas.prefer_avx512_kernels(info) is False and os.environ["OPENBLAS_CORETYPE"] == "Haswell"
    monkeypatch.delenv("OPENBLAS_CORETYPE")
    import numpy  # noqa: F401  (loaded: too late to choose)

    assert _blas.prefer_avx512_kernels(info) is False and "OPENBLAS_CORETYPE" not in os.environ


def test_the_prefmem_command_chooses_before_numpy_loads():
    """``prefmem`` (toolkit.cli.main) runs the choice first; importing toolkit does not."""
    code = ("import os, sys, toolkit, toolkit.cli\n"
            "before = os.environ.get('OPENBLAS_CORETYPE')\n"
            "toolkit.cli.main(['reproduce', '--list'])\n"
            "from threadpoolctl import threadpool_info\n"
            "import numpy\n"
            "arch = [i['architecture'] for i in threadpool_info() if i['internal_api'] == 'openblas']\n"
            "print(before, os.environ.get('OPENBLAS_CORETYPE'), arch[0], file=sys.stderr)")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env=env)
    before, after, arch = res.stderr.split()[-3:]
    assert before == "None"
    if _blas.AVX512_FLAGS <= _blas._cpu_flags():
        assert (after, arch) == ("SkylakeX", "SkylakeX")
    else:
        assert after == "None"
