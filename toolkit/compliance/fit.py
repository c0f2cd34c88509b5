"""Fit the learned reader on development data and write it as package data.

    python -m toolkit.compliance.fit            # writes toolkit/resources/compliance/learned_reader.json

Training pairs are (annotated point, preference of its annotator): label 1 when the annotator
corrected the point naming that preference, else 0. Only files whose role in ``fixtures/SPLITS.json``
is ``development`` are read (:func:`toolkit.splits.require_role` with purpose ``fit`` raises on a
held-out or first-contact file). Groups for cross-validation are annotators.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from toolkit.compliance._catalogue import holding_reply
from toolkit.compliance._embed import DEFAULT_MODEL, embedder
from toolkit.compliance._features import PairInput, pair_matrix
from toolkit.compliance._learned import RESOURCE, LearnedReader
from toolkit.compliance._parts import read_in_scope
from toolkit.compliance._reader import view_of
from toolkit.compliance._types import Evidence, Rule
from toolkit.splits import REPO_ROOT, load_splits, require_role, sha256_file

OUT = REPO_ROOT / "toolkit" / "resources" / "compliance" / RESOURCE


def development_batches() -> list[tuple[Path, Path]]:
    """(points file, profiles folder) of every development fidelity batch listed in SPLITS.json."""
    out = []
    for key, entry in sorted(load_splits().items()):
        if key.startswith("fixtures/fidelity/") and key.endswith("points.jsonl") and entry.role == "development":
            pts = REPO_ROOT / key
            prof = pts.parent / ("annotators" if pts.parent.name == "fidelity" else "profiles")
            out.append((pts, prof))
    return out


def point_pairs(points: Iterable, profiles: dict, batch: str = "") -> tuple[list[PairInput], list[int], list[str],
                                                                            list[str]]:
    """Pair inputs, labels, groups and point ids for annotated points. Groups and point ids are qualified
    by ``batch`` (``<batch>/<annotator>``, ``<batch>/<point id>``): writers working apart may reuse an
    annotator's or a point's id, and two batches' annotators must never share a fold group."""
    pairs, ys, groups, ids = [], [], [], []
    for p in points:
        ev = Evidence("delivery", p.task, p.response, artifacts=p.artifacts)
        view = view_of(ev)
        hold = holding_reply(view)
        for pref in profiles[p.annotator].preferences:
            rule = Rule.from_preference(pref)
            reading, sc = read_in_scope(rule, view, holding=hold)
            pairs.append(PairInput(rule, ev, reading, view, hold, sc))
            ys.append(int(p.corrected and pref.id in p.preference_ids))
            groups.append(f"{batch}/{p.annotator}" if batch else p.annotator)
            ids.append(f"{batch}/{p.id}" if batch else p.id)
    return pairs, ys, groups, ids


def load_training(batches: list[tuple[Path, Path]] | None = None):
    """Pairs, labels, groups, point ids and the sha256 of every file read (development only)."""
    from toolkit.datasets.jsonl import read_jsonl
    from toolkit.profiles import load_profiles
    from toolkit.records import AnnotatedPoint

    pairs, ys, groups, ids, files = [], [], [], [], {}
    for pts, prof in batches or development_batches():
        require_role(pts, "fit")
        for f in sorted(prof.glob("*.yaml")):
            require_role(f, "fit")
        files[pts.relative_to(REPO_ROOT).as_posix()] = sha256_file(pts)
        a, b, c, d = point_pairs(read_jsonl(pts, AnnotatedPoint), load_profiles(prof), batch=pts.parent.name)
        pairs += a
        ys += b
        groups += c
        ids += d
    return pairs, np.asarray(ys), np.asarray(groups), ids, files


def fit(model: str = DEFAULT_MODEL, **params) -> tuple[LearnedReader, dict]:
    """Fit the reader on all development pairs; returns it and the metadata written beside it."""
    pairs, y, groups, ids, files = load_training()
    emb = embedder(model)
    X = pair_matrix(pairs, emb)
    kinds = [(next((k for k in p.reading.kinds if k != "Unknown"), "Unknown"), p.reading.finding.verdict)
             for p in pairs]
    reader = LearnedReader(**params).fit(X, y, groups, kinds, np.asarray(ids))
    reader.embedder_ = model
    meta = {"n_pairs": len(y), "n_positive": int(y.sum()), "n_annotators": len(set(groups)),
            "n_points": len(set(ids)), "files": files}
    return reader, meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m toolkit.compliance.fit", description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=DEFAULT_MODEL, help="embedder model string (default minilm)")
    ap.add_argument("-o", "--out", default=str(OUT))
    args = ap.parse_args(argv)
    reader, meta = fit(args.model)
    Path(args.out).write_text(reader.to_json(meta) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {meta['n_pairs']} pairs ({meta['n_positive']} violations), trees of "
          f"{reader.max_leaf_nodes_} leaves / {reader.min_samples_leaf_} pairs a leaf (grid {reader.cv_grid_}), thresholds "
          f"violation {reader.threshold_violation_:.3f} (precision {reader.precision_}) / pass {reader.threshold_pass_:.3f}; "
          f"out-of-fold {reader.cv_points_}; trusted kinds "
          f"{reader.trusted_kinds_}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
