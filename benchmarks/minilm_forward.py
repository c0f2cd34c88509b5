"""The MiniLM embedder's two float64 forward passes side by side: sentence-transformers on torch
(the reference) and the NumPy encoder the ``minilm`` embedder computes with, under OpenBLAS's
AVX2 (Haswell) and, where the CPU has AVX-512, its SkylakeX kernels; one run.

    python benchmarks/minilm_forward.py [--texts 2000] [--json OUT]

Texts: simulated memory facts (toolkit.gating.simulate, not evaluation data) and the rule and
correction texts of ``fixtures/`` (lengths from one word to 256 tokens), grouped by token count
and encoded 64 at a time as the embedder does, one thread, cache off. Each kernel setting runs
in a fresh process (OpenBLAS reads it once, when NumPy loads). Prints texts per CPU-second,
the ratio to torch in the same process, and whether the float32-rounded vectors are bitwise
those of torch. Quote ratios: absolute times move with machine load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _texts(n: int) -> list[str]:
    from toolkit.gating.simulate import simulate_benchmark

    out = [f.text for f in simulate_benchmark("S", seed=12345, n_users=4)]
    for path in sorted((ROOT / "fixtures").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            stack = [obj]
            while stack:
                o = stack.pop()
                if isinstance(o, str) and o.strip():
                    out.append(o[:3000])
                elif isinstance(o, dict):
                    stack.extend(o.values())
                elif isinstance(o, list):
                    stack.extend(o)
    import numpy as np

    uniq = sorted(set(out))
    return [uniq[i] for i in np.random.default_rng(0).permutation(len(uniq))[:n]]


def _measure(n: int) -> dict:
    """In this process: both passes over the same texts; CPU seconds, agreement."""
    import numpy as np
    import torch
    from threadpoolctl import threadpool_info, threadpool_limits

    from toolkit.llm._minilm import load_encoder, load_model, packaged_model_dir
    from toolkit.llm.embeddings import MIN_BATCH_TOKENS, _normalise, _same_length_groups

    texts = _texts(n)
    folder = packaged_model_dir()
    enc, model = load_encoder(folder), load_model(folder)
    ids = enc.token_ids(texts)
    groups = _same_length_groups(ids)
    torch.set_num_threads(1)

    def run(kind: str) -> tuple[np.ndarray, float]:
        out = np.zeros((len(texts), 384))
        t0 = time.process_time()
        with threadpool_limits(limits=1):
            for idx, length in groups:
                for s in range(0, len(idx), 64):
                    part = idx[s:s + 64]
                    rows = part + part[:1] * max(0, -(-MIN_BATCH_TOKENS // length) - len(part))
                    if kind == "torch":
                        v = model.encode([texts[i] for i in rows], batch_size=len(rows),
                                         convert_to_numpy=True, normalize_embeddings=False,
                                         show_progress_bar=False)
                    else:
                        v = enc.encode_ids(np.array([ids[i] for i in rows]))
                    out[part] = v[:len(part)]
        return out, time.process_time() - t0

    run("numpy")  # warm-up of both (first calls load libraries)
    a, ta = run("torch")
    b, tb = run("numpy")
    fa, fb = _normalise(a).astype(np.float32), _normalise(b).astype(np.float32)
    arch = [i.get("architecture") for i in threadpool_info() if i.get("internal_api") == "openblas"]
    return {"texts": len(texts), "tokens": int(sum(len(x) for x in ids)), "openblas": arch[0] if arch else None,
            "torch_cpu_s": ta, "numpy_cpu_s": tb, "max_abs_diff_f64": float(abs(a - b).max()),
            "f32_values_differing": int((fa != fb).sum()), "f32_values": int(fa.size)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=2000)
    ap.add_argument("--json", help="write the results as JSON here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_measure(args.texts)))
        return 0
    from toolkit.llm._bert import openblas_kernels

    kernels = openblas_kernels()
    rows = []
    for k in kernels:
        env = {**os.environ, "OPENBLAS_CORETYPE": k, "HF_HUB_OFFLINE": "1"}
        res = subprocess.run([sys.executable, __file__, "--child", "--texts", str(args.texts)],
                             capture_output=True, text=True, env=env, cwd=ROOT, check=True)
        rows.append({"kernel": k, **json.loads(res.stdout.strip().splitlines()[-1])})
    print(f"{'OpenBLAS kernels':<18}{'torch texts/CPU-s':>19}{'NumPy texts/CPU-s':>19}{'NumPy / torch':>15}"
          f"{'f32 values differing':>22}")
    for r in rows:
        t, n = r["texts"] / r["torch_cpu_s"], r["texts"] / r["numpy_cpu_s"]
        print(f"{r['openblas'] or r['kernel']:<18}{t:>19.1f}{n:>19.1f}{n / t:>14.2f}x"
              f"{r['f32_values_differing']:>12} of {r['f32_values']}")
    print(f"({rows[0]['texts']} texts, {rows[0]['tokens']} tokens; one thread; torch uses MKL whatever OpenBLAS does)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
