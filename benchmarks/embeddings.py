"""Embedders side by side: preference retrieval quality, throughput per core, the cache's effect.

    python benchmarks/embeddings.py [--embedder tfidf --embedder minilm ...] [--data DIR]
                                    [--texts 1000] [--json OUT] [--first-contact]

1. Retrieval on a set written apart from every method (default
   ``fixtures/semantic/w4_pref_queries``: 60 stored preferences, 100 later messages that refer
   to one of them without sharing its content words, 50 that refer to none): recall@1 with a
   Wilson interval and per kind, pair ROC AUC, detection ROC AUC (see toolkit.embedding_eval).
   Nothing is tuned on it. ``--first-contact`` writes the batch's one first-contact record
   (refused if it exists).
2. Throughput per core: ``--texts`` simulated memory facts (toolkit.gating.simulate; not
   evaluation data) embedded with the cache off and one thread (BLAS and torch), per
   CPU-second (wall time beside it), after a warm-up call that loads the model.
3. Cache effect: the same texts through a fresh cache, embedded twice; the second pass must
   make 0 live calls (checked), and its time is set beside the first.

Quote ratios: absolute times move with machine load (this machine is shared).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT / "fixtures" / "semantic" / "w4_pref_queries"


def _texts(n: int) -> list[str]:
    from toolkit.gating.simulate import simulate_benchmark

    facts = simulate_benchmark("S", seed=12345, n_users=4)
    return list(dict.fromkeys(f.text for f in facts))[:n]


def _one_thread():
    from threadpoolctl import threadpool_limits

    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    return threadpool_limits(limits=1)


def throughput(name: str, texts: list[str]) -> dict[str, float]:
    """Texts per CPU-second on one thread (cache off; CPU time, so other processes on a shared
    machine do not distort it), wall time beside it, and the warm-up call's time."""
    from toolkit.llm import Gateway, get_embedder

    emb = get_embedder(name, Gateway(cache_mode="off"))
    t0 = time.perf_counter()
    if name == "tfidf":
        emb.fit(texts)
    emb.embed(["warm-up: load the model"])
    load = time.perf_counter() - t0
    with _one_thread():
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(1)
        t0, c0 = time.perf_counter(), time.process_time()
        emb.embed(texts)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"warmup_s": load, "wall_s": dt, "cpu_s": cpu,
            "texts_per_s_per_core": len(texts) / max(cpu, 1e-9)}


def cache_effect(name: str, texts: list[str]) -> dict[str, float]:
    """First (live) and second (cached) pass over ``texts`` through a fresh cache."""
    from toolkit.llm import Gateway, get_embedder

    with tempfile.TemporaryDirectory() as d:
        out = {}
        for label in ("first", "second"):
            g = Gateway(cache_dir=d)
            emb = get_embedder(name, g)
            t0 = time.perf_counter()
            emb.embed(texts)
            out[f"{label}_s"] = time.perf_counter() - t0
            (row,) = g.ledger.rows()
            out[f"{label}_live"] = row["live_calls"]
            out[f"{label}_cached"] = row["cache_hits"]
    if out["second_live"] != 0:
        raise SystemExit(f"{name}: the second pass made {out['second_live']} live calls")
    out["speedup"] = out["first_s"] / max(out["second_s"], 1e-9)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", action="append", default=None,
                    help="embedder model string; repeat (default: tfidf and minilm)")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="folder with prefs/queries.jsonl")
    ap.add_argument("--texts", type=int, default=1000, help="texts for throughput and cache")
    ap.add_argument("--json", default=None, help="write every number as JSON here")
    ap.add_argument("--first-contact", action="store_true",
                    help="record this run as the batch's one first-contact score")
    ap.add_argument("--no-speed", action="store_true", help="retrieval scores only")
    args = ap.parse_args(argv)
    names = args.embedder or ["tfidf", "minilm"]

    from toolkit.embedding_eval import load_pref_queries, score_embedder
    from toolkit.llm import Gateway, get_embedder

    prefs, queries = load_pref_queries(args.data)
    scores = {n: score_embedder(get_embedder(n, Gateway()), prefs, queries) for n in names}
    kinds = sorted({k for s in scores.values() for k in s["recall_at_1_by_kind"]})
    print(f"Preference retrieval on {args.data} ({len(prefs)} preferences, "
          f"{scores[names[0]]['n_targeted']} targeted + {scores[names[0]]['n_unrelated']} "
          "unrelated queries; written apart, nothing tuned on it)")
    head = f"{'embedder':<28} {'recall@1':>8} {'95% CI':>15} " + " ".join(
        f"{k[:11]:>11}" for k in kinds) + f" {'pair AUC':>8} {'detect AUC':>10}"
    print(head)
    for n, s in scores.items():
        lo, hi = s["recall_at_1_ci"]
        by = " ".join(f"{s['recall_at_1_by_kind'].get(k, {}).get('recall', float('nan')):>11.3f}"
                      for k in kinds)
        print(f"{n[:28]:<28} {s['recall_at_1']:>8.3f} {f'[{lo:.3f}, {hi:.3f}]':>15} {by} "
              f"{s['pair_auc']:>8.3f} {s['detection_auc']:>10.3f}")
    out = {"data": str(args.data), "retrieval": scores}
    if args.first_contact:
        from toolkit.splits import record_first_contact

        path = record_first_contact(
            args.data, "benchmarks/embeddings.py",
            {n: {k: s[k] for k in ("recall_at_1", "recall_at_1_ci", "recall_at_1_by_kind",
                                   "pair_auc", "detection_auc", "n_targeted", "n_unrelated")}
             for n, s in scores.items()}, n=len(queries))
        print(f"first-contact record written: {path}")
    if not args.no_speed:
        texts = _texts(args.texts)
        out["throughput"] = {n: throughput(n, texts) for n in names}
        out["cache"] = {n: cache_effect(n, texts) for n in names if n != "tfidf"}
        print(f"\nThroughput on {len(texts)} simulated fact texts, one thread, cache off "
              "(per CPU-second):")
        for n, t in out["throughput"].items():
            print(f"{n[:28]:<28} {t['texts_per_s_per_core']:>9.0f} texts/s/core "
                  f"(CPU {t['cpu_s']:.2f}s, wall {t['wall_s']:.2f}s; warm-up {t['warmup_s']:.1f}s)")
        if len(names) > 1:
            base = out["throughput"][names[0]]["texts_per_s_per_core"]
            for n in names[1:]:
                r = base / out["throughput"][n]["texts_per_s_per_core"]
                print(f"{names[0]} is {r:.0f}x faster per core than {n}")
        print("\nCache effect (same texts twice through a fresh cache):")
        for n, c in out["cache"].items():
            print(f"{n[:28]:<28} first {c['first_s']:.2f}s ({c['first_live']} live), second "
                  f"{c['second_s']:.3f}s ({c['second_live']} live, {c['second_cached']} cached): "
                  f"{c['speedup']:.0f}x")
        if "minilm" in out["throughput"]:
            tp = out["throughput"]["minilm"]["texts_per_s_per_core"]
            print(f"\nAt this rate, the full-scale gating run's ~170k distinct fact texts would "
                  f"take {170000 / tp / 60:.0f} core-minutes of MiniLM embedding on a first run.")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=float) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
