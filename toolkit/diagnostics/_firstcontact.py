"""Data-role rows for admission and resolution: development, held-out and first-contact.

A first-contact batch is a folder written apart from the method (``fixtures/<kind>/firstcontact/
<batch>/``) holding the inputs and the gold file. :func:`score_first_contact` scores a batch once,
through the diagnostic's own scoring, and writes the score with the commit and date via
:func:`toolkit.splits.record_first_contact` (which refuses a second time). Afterwards the batch's
row in every report is read from that record: the first-contact score is never recomputed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from toolkit.datasets.jsonl import read_jsonl
from toolkit.errors import InputError
from toolkit.metrics import bootstrap_ci, wilson_ci
from toolkit.records import AdmissionInput, ResolutionInput, ResolutionOutput, Update
from toolkit.rules.admission_eval import score_rows, summary_counts
from toolkit.rules.resolution_eval import ResolutionGold, decision_correct, target_correct
from toolkit.splits import first_contact_of, natural_key, record_first_contact

#: libraries with more rules than this count as "large" in the resolution rows
SMALL_LIBRARY = 10


def _read_lenient(path: Path) -> list[dict[str, Any]]:
    """JSON objects, one a line (gold files written apart may carry extra fields)."""
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{i} <json>: {e.msg}") from None
    return out


def admission_gold(path: Path) -> dict[str, Any]:
    """Gold rows keyed by id: decision, scope, conditional (+ behaviour and framing if given)."""
    gold = {}
    for i, g in enumerate(_read_lenient(path), 1):
        for key in ("id", "decision"):
            if key not in g:
                raise InputError(f"{path}:{i} {key}: missing")
        gold[g["id"]] = SimpleNamespace(
            id=g["id"], decision=g["decision"], scope=g.get("scope"),
            conditional=bool(g.get("conditional", False)), framing=g.get("framing"),
            behavior_id=str(g.get("behavior_id") or g.get("behavior") or g["id"]))
    return gold


def admission_scores(scored: pd.DataFrame, seed: int) -> dict[str, Any]:
    """Counts, rates and behaviour-clustered bootstrap intervals for one scored batch."""
    c = summary_counts(scored)
    out: dict[str, Any] = {"n": len(scored), "unknown": int(scored.unknown.sum())}
    for name, (k, n) in c.items():
        lo, hi = wilson_ci(k, n)
        out[name] = {"k": k, "n": n, "rate": k / n if n else None, "wilson": [lo, hi]}
    vals = scored.structural_ok.to_numpy(dtype=float)
    if len(vals):
        lo, hi = bootstrap_ci(vals, np.mean, n_resamples=1000, random_state=seed,
                              groups=scored.behavior_id.to_numpy())
        out["structural"]["cluster_bootstrap"] = [lo, hi]
    return out


def resolution_scores(records: list[ResolutionInput], outputs: list[ResolutionOutput],
                      gold: dict[str, ResolutionGold]) -> dict[str, Any]:
    """Decision and decision+target counts over all cases, split by library size."""
    out: dict[str, Any] = {}
    for group, pick in (("all", lambda r: True),
                        ("small", lambda r: len(r.library) <= SMALL_LIBRARY),
                        ("large", lambda r: len(r.library) > SMALL_LIBRARY)):
        n = dec = both = unk = 0
        for rec, o in zip(records, outputs, strict=True):
            if not pick(rec):
                continue
            n += 1
            if o.status == "unknown":
                unk += 1
                continue
            d = decision_correct(o, gold[rec.id])
            dec += d
            both += d and target_correct(o, gold[rec.id])
        out[group] = {"n": n, "decision": dec, "decision_target": both, "unknown": unk}
    return out


def resolution_gold(path: Path) -> dict[str, ResolutionGold]:
    """Gold updates keyed by id (extra fields allowed; ``category`` kept when given)."""
    gold = {}
    for i, g in enumerate(_read_lenient(path), 1):
        if "id" not in g or "updates" not in g:
            raise InputError(f"{path}:{i} updates: missing")
        try:
            ups = [Update(op=u["op"], target=u.get("target")) for u in g["updates"] or []]
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"{path}:{i} updates: {e}") from None
        gold[g["id"]] = ResolutionGold(id=g["id"], updates=ups,
                                       category=str(g.get("category", "unspecified")))
    return gold


def score_first_contact(batch: Path, diagnostic: str,
                        compute: Callable[[Path], tuple[dict[str, Any], int]]) -> dict[str, Any]:
    """The batch's first-contact record: read it if it exists, else compute and record it once."""
    rec = first_contact_of(batch)
    if rec is not None:
        if not str(rec.get("diagnostic", "")).startswith(diagnostic.split(" ")[0]):
            raise InputError(f"{batch}: its first-contact record belongs to "
                             f"{rec.get('diagnostic')!r}, not {diagnostic!r} (one batch folder "
                             "per diagnostic)")
        return rec
    scores, n = compute(batch)
    record_first_contact(batch, diagnostic, scores, n=n)
    rec = first_contact_of(batch)
    assert rec is not None
    return rec


def admission_batch(batch: Path, admit: Callable[[list[AdmissionInput]], list[dict]],
                    seed: int) -> tuple[dict[str, Any], int]:
    """Score one admission batch (``admission.jsonl`` + ``admission.gold.jsonl``)."""
    recs = read_jsonl(batch / "admission.jsonl", AdmissionInput)
    gold = admission_gold(batch / "admission.gold.jsonl")
    missing = [r.id for r in recs if r.id not in gold]
    if missing:
        raise InputError(f"{batch / 'admission.gold.jsonl'}: no gold for {missing[0]}")
    scored = score_rows(admit(recs), gold)
    return admission_scores(scored, seed), len(recs)


def resolution_batch(batch: Path, resolve: Callable[[list[ResolutionInput]], list[ResolutionOutput]]
                     ) -> tuple[dict[str, Any], int]:
    """Score one resolution batch (``resolution.jsonl`` + ``resolution.gold.jsonl``)."""
    recs = read_jsonl(batch / "resolution.jsonl", ResolutionInput)
    gold = resolution_gold(batch / "resolution.gold.jsonl")
    missing = [r.id for r in recs if r.id not in gold]
    if missing:
        raise InputError(f"{batch / 'resolution.gold.jsonl'}: no gold for {missing[0]}")
    return resolution_scores(recs, resolve(recs), gold), len(recs)


def first_contact_batches(kind: str, root: Path) -> list[Path]:
    """Batch folders under ``fixtures/<kind>/firstcontact/`` (sorted)."""
    d = root / kind / "firstcontact"
    return sorted(p for p in d.iterdir() if p.is_dir()) if d.exists() else []


def admission_role_row(role: str, data: str, s: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """One row of the admission roles table from a scores dict."""
    f = lambda k: f"{s[k]['k']}/{s[k]['n']}"  # noqa: E731
    boot = s["structural"].get("cluster_bootstrap") or [None, None]
    return {"role": role, "data": data, "n": s["n"], "structural": f("structural"),
            "structural_rate": s["structural"]["rate"], "boot_low": boot[0], "boot_high": boot[1],
            "erroneous_persistence": f("erroneous_persistence"),
            "persistent_recall": f("persistent_recall"),
            "task_local_rejected": f("task_local_rejected"),
            "underspecified_deferred": f("underspecified_deferred"),
            "unknown": s["unknown"], **extra}


def resolution_role_rows(role: str, data: str, s: dict[str, Any],
                         groups: tuple[str, ...] = ("small", "large"), **extra: Any) -> list[dict]:
    """Rows of the resolution roles table (one per library-size group with cases; ``groups``
    names them, e.g. the development row's ``large_written``: ~60-rule libraries as written,
    without the small cases grown to 60, the group first contact resembles)."""
    rows = []
    for group in groups:
        g = s.get(group, {"n": 0})
        if not g["n"]:
            continue
        rows.append({"role": role, "data": data, "libraries": group, "n": g["n"],
                     "decision": f"{g['decision']}/{g['n']}",
                     "decision_target": f"{g['decision_target']}/{g['n']}",
                     "unknown": g["unknown"], **extra})
    return rows


def requested_batches(ctx: Any, kind: str, marker: str) -> list[Path]:
    """Batches named with ``--first-contact DIR`` that hold ``marker`` (e.g. admission.jsonl)."""
    dirs = ctx.options.get("first_contact") or []
    if isinstance(dirs, str):
        dirs = [d for d in dirs.split(",") if d]
    return [Path(d).resolve() for d in dirs if (Path(d) / marker).exists()]


def all_batches(ctx: Any, kind: str, marker: str, root: Path) -> list[Path]:
    """Requested batches plus the shipped ones under ``fixtures/<kind>/firstcontact``, in
    natural order (w2 before w10), so the roles tables list them as people count them."""
    seen: dict[str, Path] = {}
    for b in [*first_contact_batches(kind, root), *requested_batches(ctx, kind, marker)]:
        seen.setdefault(str(b.resolve()), b.resolve())
    return sorted(seen.values(), key=natural_key)


def batches_label(splits: Sequence[str], batches: Sequence[str]) -> str:
    """The development data of a role row in a line a table can show: the named splits, then the
    batches written apart as a count and their first and last names (the full list is their
    ``development`` role in ``fixtures/SPLITS.json``; spelt out, 60 names made the table ~1,000
    characters wide)."""
    parts = list(splits)
    if len(batches) > 3:
        names = sorted(batches, key=natural_key)
        parts.append(f"{len(names)} batches written apart ({names[0]} ... {names[-1]}; "
                     "development in fixtures/SPLITS.json)")
    else:
        parts += list(batches)
    return " + ".join(parts)


def batch_label(batch: Path) -> str:
    """A short, path-free name for a batch (its folder under the repository when possible)."""
    from toolkit.splits import REPO_ROOT

    try:
        return batch.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return batch.name


#: why a batch scores higher out of fold now than at its first contact (printed by the
#: admission and resolution diagnostics beside their per-batch tables)
READ_AFTER = ("The gap mixes the method's progress since each first contact with what reading the batch "
              "taught it (its cue tables and label policy were revised with the batch in view, which "
              "cross-validation of the learned weights does not undo), so the development row's out-of-fold "
              "score is optimistic for new writing; the first-contact rows, scored before anyone read them, "
              "are the estimate.")


def gap_figure(df: pd.DataFrame, pairs: Sequence[tuple[str, str, str]], title: str) -> Any:
    """Per batch, a score at first contact (x) against out of fold now (y), one series per
    ``(first-contact column, out-of-fold column, label)``; points above the diagonal gained."""
    from toolkit.viz import new_figure

    fig = new_figure(5.0, 4.2)
    ax = fig.subplots()
    cols = df[[x for x, _, _ in pairs] + [y for _, y, _ in pairs]]
    lo, hi = int(cols.min().min()) - 1, int(cols.max().max()) + 1
    ax.plot([lo, hi], [lo, hi], color="0.6", lw=1, ls="--")
    for x, y, label in pairs:
        ax.scatter(df[x], df[y], s=18, alpha=0.6, label=label)
    ax.set_xlabel("right at first contact")
    ax.set_ylabel("right out of fold now")
    if len(pairs) > 1:
        ax.legend(loc="lower right", fontsize=8)
    ax.set_title(title)
    return fig

