"""Which of OpenBLAS's matrix kernels NumPy uses, chosen before NumPy loads.

NumPy's OpenBLAS picks its kernels from the CPU model when it is loaded; a model it does not
know gets a generic choice. On this project's reference machine (AMD EPYC, family 26, with
AVX-512) OpenBLAS 0.3.31 falls back to its AVX2 (Haswell) kernels, and float64 matrix products,
most of the MiniLM embedder's time (:mod:`toolkit.llm._bert`), run at about 60 GFLOP/s a core
instead of about 90 with its AVX-512 (SkylakeX) kernels (measured 2026-12-04, CHANGELOG). The kernels change only the last bits of float64 results: the embedder rounds its
vectors to float32, which removes them (``tests/test_embeddings.py`` compares both kernels
bitwise), and the gating sweep's decisions came out identical under both.

Only the ``prefmem`` command calls :func:`prefer_avx512_kernels`, first thing: a library import
must not change how a user's own NumPy computes. It does nothing when NumPy is already loaded,
when ``OPENBLAS_CORETYPE`` is set (the user's choice wins) or when the CPU lacks any of the
AVX-512 subsets those kernels use.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["AVX512_FLAGS", "prefer_avx512_kernels"]

#: the AVX-512 subsets OpenBLAS's SkylakeX kernels need
AVX512_FLAGS = frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})


def _cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def prefer_avx512_kernels(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Set ``OPENBLAS_CORETYPE=SkylakeX`` for this process and its children where it helps and is
    safe; True if it was set. Must run before NumPy is imported to have any effect."""
    if "numpy" in sys.modules or os.environ.get("OPENBLAS_CORETYPE"):
        return False
    if not AVX512_FLAGS <= _cpu_flags(cpuinfo):
        return False
    os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    return True
