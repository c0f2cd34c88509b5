"""PAMU drift tracking (seed 001): detection per schedule, the Tables 5-7 case study, Table 4
ablations as tracking error and prompt agreement, and lambda/beta/W/delta sensitivity."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from toolkit.datasets.jsonl import read_jsonl
from toolkit.diagnostics.result import Result, compare_rows
from toolkit.drift.describe import argmax_label
from toolkit.drift.evaluate import (
    ABLATIONS,
    detection_summary,
    flags_of,
    prompt_agreement,
    score_ablation,
    score_detection,
)
from toolkit.drift.extract import SCALARS, extract_turns
from toolkit.drift.tracker import COMMUNITY_DEFAULTS, TrackerConfig, track_observations
from toolkit.drift.users import DriftingUser, gold_record, standard_users
from toolkit.metrics import bootstrap_ci, wilson_ci
from toolkit.paper import fixtures_dir, paper_figures
from toolkit.records import DriftInput
from toolkit.runs import RunContext

KINDS = ("abrupt", "gradual", "oscillation", "stationary")
CASE_STUDY_ID = "case-study-humorous-to-formal"


def _observe(ctx: RunContext, stage: str, dialogues: Sequence, model) -> tuple[list[list], int]:
    """Per-turn observations of each dialogue's user turns (LLM work logged for --resume)."""
    items = [(d.id, i, t.user) for d in dialogues for i, t in enumerate(d.turns)]
    if model.is_offline:
        flat = extract_turns([x[2] for x in items], model)
    else:
        ctx.record_prompt("drift_extract")
        flat = ctx.map_items(
            stage, items,
            lambda batch: extract_turns([x[2] for x in batch], model, ids=[f"{x[0]}#{x[1]}" for x in batch]),
            key=lambda x: f"{x[0]}#{x[1]}",
        )
    unknown = sum(1 for o in flat if o is None)
    out, pos = [], 0
    for d in dialogues:
        out.append(flat[pos:pos + len(d.turns)])
        pos += len(d.turns)
    return out, unknown


def _detection_rows(users: Sequence[DriftingUser], obs: Sequence, cfg: TrackerConfig) -> list[dict]:
    return [score_detection(flags_of(o, cfg), gold_record(u)) for u, o in zip(users, obs, strict=True)]


def _detection_table(results: list[dict]) -> pd.DataFrame:
    rows = []
    for kind in KINDS:
        sub = [r for r in results if r["kind"] == kind]
        if not sub:
            continue
        s = detection_summary(sub)
        lo, hi = wilson_ci(s["hits"], s["change_points"]) if s["change_points"] else (np.nan, np.nan)
        rows.append({"kind": kind, **{k: s[k] for k in ("sequences", "change_points", "hit_rate")},
                     "ci_low": lo, "ci_high": hi, "mean_latency": s["mean_latency"],
                     "sd_latency": s["sd_latency"], "seqs_with_early_flag": s["seqs_with_early_flag"],
                     "false_alarms_per_30_turns": s["false_alarms_per_30_turns"]})
    return pd.DataFrame(rows)


def _variants(base: TrackerConfig) -> dict[str, TrackerConfig]:
    c = COMMUNITY_DEFAULTS
    return {
        "ours (defaults)": base,
        "EMA_t in the score (literal Eq. 16)": replace(base, reference="current"),
        "no persistence, no corroboration": replace(base, persist=1, min_groups=1, soft=1.0),
        "community W=3 beta=0.7 lambda=0.6 delta=0.9": replace(
            base, window=int(c["window"]), beta=c["beta"], fuse=c["fuse"], threshold=c["threshold"]),
    }


def _variant_table(users, obs, base: TrackerConfig) -> pd.DataFrame:
    rows = []
    for name, cfg in _variants(base).items():
        res = _detection_rows(users, obs, cfg)
        ab = detection_summary([r for r in res if r["kind"] == "abrupt"])
        st = detection_summary([r for r in res if r["kind"] == "stationary"])
        rows.append({"variant": name, "abrupt_hit_rate": ab["hit_rate"], "abrupt_mean_latency": ab["mean_latency"],
                     "abrupt_seqs_with_early_flag": ab["seqs_with_early_flag"],
                     "stationary_false_alarms_per_30_turns": st["false_alarms_per_30_turns"],
                     "n_abrupt": ab["sequences"], "n_stationary": st["sequences"]})
    return pd.DataFrame(rows)


def _case_study(obs: list, cfg: TrackerConfig, paper: dict) -> tuple[pd.DataFrame, list]:
    states = track_observations(obs, cfg)
    lmap = paper["case_study"]["label_map"]
    rows = []
    for s, p in zip(states, paper["table5"], strict=False):
        o = s.observed
        row = {"turn": s.turn}
        for d in ("tone", "emotion"):
            lab = argmax_label(o[d])
            row[f"{d}_ours"] = f"({lab}, {o[d][lab]:.2f})"
            row[f"{d}_paper"] = f"({lmap.get(p[d][0], p[d][0].lower())}, {p[d][1]:.2f})"
        for d in SCALARS:
            row[f"{d}_ours"] = round(float(o[d]), 3)
            row[f"{d}_paper"] = p[d]
        row["flagged"] = ", ".join(s.changed)
        rows.append(row)
    return pd.DataFrame(rows), states


def _post_switch_agreement(users, obs, cfg, static: bool) -> list[float]:
    """Per abrupt user: prompt agreement with the new style over turns k..k+4."""
    vals = []
    for u, o in zip(users, obs, strict=True):
        if u.schedule.kind != "abrupt":
            continue
        k = u.schedule.change_points[0]
        variant = "Static Pref" if static else "Full"
        from toolkit.drift.evaluate import ablation_vectors

        vecs = ablation_vectors(o, variant, cfg)
        window = range(k, min(k + 5, len(o) + 1))
        vals.append(float(np.mean([prompt_agreement(vecs[t - 1], u.schedule.style_at(t)) for t in window])))
    return vals


def _ci(values: Sequence[float], seed: int) -> tuple[float, float]:
    if len(values) < 2:
        return float("nan"), float("nan")
    return bootstrap_ci(np.asarray(values), np.mean, n_resamples=1000, random_state=seed)


def _locomo_speakers(data_dir: Path | None, n_turns: int = 30) -> list:
    """Each LoCoMo speaker's first ``n_turns`` turns as one dialogue (no known style change)."""
    from toolkit.records import DriftInput, Turn

    if data_dir is None or not (Path(data_dir) / "locomo10.json").exists():
        return []
    convs = json.loads((Path(data_dir) / "locomo10.json").read_text(encoding="utf-8"))
    out = []
    for c in convs:
        conv = c["conversation"]
        sessions = sorted((k for k in conv if k.startswith("session_") and not k.endswith("date_time")),
                          key=lambda k: int(k.split("_")[1]))
        for who in (conv["speaker_a"], conv["speaker_b"]):
            texts = [t["text"] for s in sessions for t in conv[s] if t.get("speaker") == who and t.get("text")]
            if len(texts) >= n_turns:
                out.append(DriftInput(id=f"{c['sample_id']}:{who}", turns=[Turn(user=x) for x in texts[:n_turns]]))
    return out


def _locomo_switches(data_dir: Path | None, n_each: int = 15) -> list:
    """Real turns with a known change of author: one LoCoMo speaker's first ``n_each`` turns,
    then the other speaker's (both orders per conversation); the change point is turn
    ``n_each + 1``. No generator is involved, so nothing is shared with the extractor's
    lexicons; whether the two speakers' *styles* differ is not controlled (a lower bound)."""
    from toolkit.records import DriftInput, Turn

    if data_dir is None or not (Path(data_dir) / "locomo10.json").exists():
        return []
    convs = json.loads((Path(data_dir) / "locomo10.json").read_text(encoding="utf-8"))
    out = []
    for c in convs:
        conv = c["conversation"]
        sessions = sorted((k for k in conv if k.startswith("session_") and not k.endswith("date_time")),
                          key=lambda k: int(k.split("_")[1]))
        by = {who: [t["text"] for s in sessions for t in conv[s] if t.get("speaker") == who and t.get("text")]
              for who in (conv["speaker_a"], conv["speaker_b"])}
        a, b = conv["speaker_a"], conv["speaker_b"]
        if min(len(by[a]), len(by[b])) < n_each:
            continue
        for x, y in ((a, b), (b, a)):
            turns = by[x][:n_each] + by[y][:n_each]
            out.append(DriftInput(id=f"{c['sample_id']}:{x}->{y}", turns=[Turn(user=t) for t in turns]))
    return out


def generator_cue_overlap() -> tuple[int, int, list[str]]:
    """Cue words shared by the drift generator's templates and the extractor's cue lexicons.

    Closed-class lists (articles, pronouns, prepositions, ...) are grammar, not cues, and are
    left out. Returns (shared, generator content words, the shared words).
    """
    import re

    from toolkit.drift import lexicons as lx
    from toolkit.drift import users as gen

    closed = set()
    for n in ("ARTICLES", "AUXILIARIES", "CONJUNCTIONS", "DETERMINERS", "PREPOSITIONS",
              "PRONOUNS", "WH_WORDS", "ADVERBS_FILLER", "RELATION_VERBS"):
        closed |= set(getattr(lx, n, ()))
    words: set[str] = set()

    def walk(x: object) -> None:
        if isinstance(x, str):
            words.update(w.lower() for w in re.findall(r"[A-Za-z']+", x))
        elif isinstance(x, tuple | list | set | frozenset):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)

    for n in dir(gen):
        if n.isupper():
            walk(getattr(gen, n))
    cues: set[str] = set()
    for n in dir(lx):
        v = getattr(lx, n)
        if n.isupper() and n not in ("LATINATE_SUFFIXES", "CONTRACTION_ENDINGS"):
            if isinstance(v, frozenset):
                cues |= v
            elif isinstance(v, tuple):
                cues |= {w.lower() for p in v if isinstance(p, str) for w in re.findall(r"[A-Za-z']+", p)}
    content = words - closed
    shared = sorted((content & cues) - closed)
    return len(shared), len(content), shared


def drift_claims(tables: dict[str, pd.DataFrame], overlap: tuple[int, int]) -> dict[str, list]:
    """Generated readings of the drift tables (a sentence only when its check holds)."""
    from toolkit.claims import Claim

    det = tables["detection"].set_index("kind")
    d = []
    if "abrupt" in det.index:
        a = det.loc["abrupt"]
        d.append(Claim(f"On the generated panel, abrupt switches are found within 2 turns at "
                       f"{a.hit_rate:.0%} of {int(a.change_points)} change points; the generator "
                       f"shares {overlap[0]} of its {overlap[1]} content words with the extractor's "
                       "cue lexicons, so this is easier than text written apart.", True))
    if "stationary" in det.index:
        fa = float(det.loc["stationary", "false_alarms_per_30_turns"])
        d.append(Claim(f"Stationary generated users raise {fa:.2f} false alarms per 30 turns.", True))
    sw = tables.get("locomo_speaker_switch")
    if sw is not None and len(sw):
        r = sw.iloc[0]
        d.append(Claim(f"On real LoCoMo turns a change of speaker is flagged within 2 turns in "
                       f"{r.hit_rate:.0%} of {int(r.change_points)} switches (95% CI "
                       f"{r.ci_low:.0%}-{r.ci_high:.0%}).", True))
        if "abrupt" in det.index:
            d.append(Claim("Detection on real speaker switches is lower than on the generated "
                           "panel.", float(r.hit_rate) < float(det.loc["abrupt", "hit_rate"]), ""))
    abl = tables["ablations_table4"].set_index("variant")
    ab = []
    if "Full" in abl.index:
        ab.append(Claim("Full (learned lambda) ranks first in prompt agreement, as in the paper.",
                        int(abl.loc["Full", "rank_ours"]) == 1, str(abl.loc["Full", "rank_ours"])))
        ab.append(Claim(f"Full (learned lambda) ranks {int(abl.loc['Full', 'rank_ours'])} in prompt "
                        "agreement, not first as in the paper.", int(abl.loc["Full", "rank_ours"]) != 1,
                        ""))
        if "Equal Fusion" in abl.index:
            f, e = float(abl.loc["Full", "tracking_error"]), float(abl.loc["Equal Fusion", "tracking_error"])
            ab.append(Claim(f"Learning lambda lowers the tracking error below Equal Fusion's "
                            f"({f:.4f} vs {e:.4f}), as the paper's Full beats Equal Fusion.", f < e,
                            f"{f:.4f} {e:.4f}"))
            ab.append(Claim(f"Learning lambda does not lower the tracking error below Equal "
                            f"Fusion's ({f:.4f} vs {e:.4f}).", f >= e, ""))
    paired = abl.dropna(subset=["rank_paper"]) if "rank_paper" in abl else abl.iloc[:0]
    if len(paired) > 2:
        rho = float(paired["prompt_agreement"].rank().corr(paired["paper_mean_f1_bleu"].rank(),
                                                           method="spearman"))
        ab.append(Claim(f"Our ablation ordering agrees with the paper's (Spearman {rho:.2f} over "
                        f"{len(paired)} variants).", rho >= 0.8, f"{rho:.2f}"))
        ab.append(Claim(f"Our ablation ordering differs from the paper's (Spearman {rho:.2f} over "
                        f"{len(paired)} variants).", rho < 0.8, f"{rho:.2f}"))
    return {"detection": d, "ablations": ab}


def _bars(long: pd.DataFrame, title: str):
    """Grouped bars of each ablation's prompt agreement and tracking error."""
    import seaborn as sns

    from toolkit.viz import new_figure

    fig = new_figure(7.5, 3.8)
    ax = fig.subplots()
    sns.barplot(data=long, x="variant", y="value", hue="measure", ax=ax, palette=["#4C72B0", "#DD8452"])
    ax.set_xlabel("")
    ax.set_title(title)
    ax.tick_params(axis="x", rotation=25)
    return fig


def run(ctx: RunContext) -> Result:
    """Detection, case study, ablations and sensitivity of PAMU tracking on drifting users."""
    from toolkit.viz import heatmap, lines

    paper = paper_figures("drift")["figures"]
    model = ctx.chat_model()
    base = TrackerConfig()
    seeds = [ctx.seed] if ctx.quick else [ctx.seed + i for i in range(5)]
    n_per_kind = int(ctx.options.get("n_per_kind", 4 if ctx.quick else 12))
    users = [u for s in seeds for u in standard_users(s, n_per_kind)]
    dialogues = [u.dialogue() for u in users]
    obs, unknown = _observe(ctx, "extract-panel", dialogues, model)

    shipped_path = ctx.record_input(fixtures_dir() / "drift" / "schedules.jsonl")
    gold = json.loads(ctx.record_input(fixtures_dir() / "drift" / "gold.json").read_text(encoding="utf-8"))
    ship_dialogues = read_jsonl(shipped_path, DriftInput)
    ship_obs, unknown_ship = _observe(ctx, "extract-shipped", ship_dialogues, model)

    # 1. detection per schedule kind, and design variants
    results = _detection_rows(users, obs, base)
    detection = _detection_table(results)
    variants = _variant_table(users, obs, base)
    ship_rows = []
    for d, o in zip(ship_dialogues, ship_obs, strict=True):
        r = score_detection(flags_of(o, base), gold[d.id])
        ship_rows.append({"id": d.id, "kind": r["kind"], "change_points": " ".join(map(str, gold[d.id]["change_points"])),
                          "flagged_turns": " ".join(map(str, r["flags"])), "hits": r["hits"], "n_cp": r["n_cp"],
                          "early": r["early"], "false_alarms": r["false_alarms"]})
    shipped_table = pd.DataFrame(ship_rows)

    # 2. case study (Tables 5-7)
    case_i = next(i for i, d in enumerate(ship_dialogues) if d.id == CASE_STUDY_ID)
    case_table, case_states = _case_study(ship_obs[case_i], base, paper)
    case_flag = next((s.turn for s in case_states if s.changed), None)
    abrupt_users = [u for u in users if u.schedule.kind == "abrupt"]
    abrupt_obs = [o for u, o in zip(users, obs, strict=True) if u.schedule.kind == "abrupt"]
    with_p = _post_switch_agreement(abrupt_users, abrupt_obs, base, static=False)
    without_p = _post_switch_agreement(abrupt_users, abrupt_obs, base, static=True)
    full = score_ablation(abrupt_users, abrupt_obs, "Full", base)["prompt_agreement"]
    static = score_ablation(abrupt_users, abrupt_obs, "Static Pref", base)["prompt_agreement"]
    ab = detection_summary([r for r in results if r["kind"] == "abrupt"])
    t7 = paper["table7"]
    n_ab = len(abrupt_users)
    case_summary = compare_rows([
        {"metric": "case study: first flagged turn (switch at 3)", "ours": case_flag,
         "paper": paper["case_study"]["detected_turn"], "n": 1},
        {"metric": "switches detected within 2 turns, with PAMU (%)", "ours": 100 * ab["hit_rate"],
         "paper": t7["preference_detection"]["with PAMU"][0], "n": ab["change_points"],
         "ci_low": 100 * wilson_ci(ab["hits"], ab["change_points"])[0],
         "ci_high": 100 * wilson_ci(ab["hits"], ab["change_points"])[1]},
        {"metric": "prompt agrees with new style, turns k..k+4, with PAMU (%)", "ours": 100 * np.mean(with_p),
         "paper": None, "n": n_ab, **dict(zip(("ci_low", "ci_high"), (100 * x for x in _ci(with_p, ctx.seed)), strict=True))},
        {"metric": "prompt agrees with new style, turns k..k+4, static (%)", "ours": 100 * np.mean(without_p),
         "paper": None, "n": n_ab, **dict(zip(("ci_low", "ci_high"), (100 * x for x in _ci(without_p, ctx.seed)), strict=True))},
        {"metric": "style consistency, all turns, with PAMU (%)", "ours": 100 * np.mean(full),
         "paper": t7["style_consistency"]["with PAMU"][0], "n": n_ab,
         **dict(zip(("ci_low", "ci_high"), (100 * x for x in _ci(full, ctx.seed)), strict=True))},
        {"metric": "style consistency, all turns, w/o PAMU (%)", "ours": 100 * np.mean(static),
         "paper": t7["style_consistency"]["w/o PAMU"][0], "n": n_ab,
         **dict(zip(("ci_low", "ci_high"), (100 * x for x in _ci(static, ctx.seed)), strict=True))},
    ])

    # 3. Table 4 ablations: tracking error and prompt agreement over the whole panel
    t4 = paper["table4"]["rows"]
    abl_rows = []
    for v in ABLATIONS:
        sc = score_ablation(users, obs, v, base)
        te, pa = sc["tracking_error"], sc["prompt_agreement"]
        abl_rows.append({"variant": v, "tracking_error": float(np.mean(te)),
                         "te_ci_low": _ci(te, ctx.seed)[0], "te_ci_high": _ci(te, ctx.seed)[1],
                         "prompt_agreement": float(np.mean(pa)),
                         "pa_ci_low": _ci(pa, ctx.seed)[0], "pa_ci_high": _ci(pa, ctx.seed)[1],
                         "n": len(te),
                         "paper_mean_f1_bleu": float(np.mean(t4[v])) if v in t4 else float("nan")})
    ablations = pd.DataFrame(abl_rows)
    ablations["rank_ours"] = ablations["prompt_agreement"].rank(ascending=False, method="min").astype(int)
    ablations["rank_paper"] = ablations["paper_mean_f1_bleu"].rank(ascending=False, method="min").astype("Int64")

    # 4. sensitivity: lambda x beta on tracking error; W x delta on detection
    keep = [i for i, u in enumerate(users) if ctx.quick or u.seed in seeds[:2]]
    sens_users, sens_obs = [users[i] for i in keep], [obs[i] for i in keep]
    lam_beta = []
    lams = (0.0, 0.3, 0.6, 1.0) if ctx.quick else (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
    betas = (0.5, 0.7, 0.9) if ctx.quick else (0.5, 0.6, 0.7, 0.8, 0.9)
    for lam in lams:
        for beta in betas:
            sc = score_ablation(sens_users, sens_obs, "Fixed λ (ours)", replace(base, fuse=lam, beta=beta))
            lam_beta.append({"lambda": lam, "beta": beta, "tracking_error": float(np.mean(sc["tracking_error"])),
                             "prompt_agreement": float(np.mean(sc["prompt_agreement"]))})
    lam_beta = pd.DataFrame(lam_beta)
    w_delta = []
    for w in ((2, 3, 4) if ctx.quick else (2, 3, 4, 5)):
        for delta in (2.0, 3.0, 4.0, 5.0, 6.0):
            res = _detection_rows(sens_users, sens_obs, replace(base, window=w, threshold=delta))
            a = detection_summary([r for r in res if r["kind"] == "abrupt"])
            s = detection_summary([r for r in res if r["kind"] == "stationary"])
            w_delta.append({"W": w, "delta": delta, "abrupt_hit_rate": a["hit_rate"],
                            "abrupt_mean_latency": a["mean_latency"],
                            "stationary_false_alarms_per_30_turns": s["false_alarms_per_30_turns"]})
    w_delta = pd.DataFrame(w_delta)

    tables = {"detection": detection, "detection_variants": variants, "shipped_schedules": shipped_table,
              "case_study_table5": case_table, "case_study_tables6_7": case_summary,
              "ablations_table4": ablations, "sensitivity_lambda_beta": lam_beta,
              "sensitivity_window_delta": w_delta}

    # 5. real speakers with no known change (LoCoMo), when the data is present
    locomo = _locomo_speakers(ctx.data_dir) if model.is_offline else []
    if locomo:
        ctx.record_input(Path(ctx.data_dir) / "locomo10.json")
        lobs, _ = _observe(ctx, "extract-locomo", locomo, model)
        fl = [len(flags_of(o, base)) for o in lobs]
        k = sum(1 for f in fl if f)
        lo, hi = wilson_ci(k, len(fl))
        tables["locomo_speakers"] = pd.DataFrame([{
            "speakers": len(fl), "turns_each": 30, "speakers_with_any_flag": k,
            "share_with_flag": k / len(fl), "ci_low": lo, "ci_high": hi,
            "flags_per_30_turns": float(np.mean(fl)), "data": "real (LoCoMo), no known change"}])
    switches = _locomo_switches(ctx.data_dir) if model.is_offline else []
    if switches:
        sobs, _ = _observe(ctx, "extract-locomo-switch", switches, model)
        sres = [score_detection(flags_of(o, base), {"kind": "abrupt", "change_points": [16],
                                                    "n_turns": len(d.turns)})
                for d, o in zip(switches, sobs, strict=True)]
        ss = detection_summary(sres)
        lo, hi = wilson_ci(ss["hits"], ss["change_points"])
        tables["locomo_speaker_switch"] = pd.DataFrame([{
            "dialogues": len(sres), "change_points": ss["change_points"], "hits": ss["hits"],
            "hit_rate": ss["hit_rate"], "ci_low": lo, "ci_high": hi,
            "mean_latency": ss["mean_latency"],
            "false_alarms_per_30_turns": ss["false_alarms_per_30_turns"],
            "data": "real (LoCoMo): speaker A's 15 turns, then speaker B's"}])

    gen_role = "generated (toolkit.drift.users)"
    for name in ("detection", "detection_variants", "ablations_table4", "case_study_tables6_7"):
        tables[name]["data"] = gen_role
    tables["detection"]["unknown_turns"] = [
        sum(1 for u, o in zip(users, obs, strict=True) if u.schedule.kind == kind
            for x in o if x is None) for kind in tables["detection"]["kind"]]
    n_shared, n_content, shared = generator_cue_overlap()

    # figures
    figures = {}
    trace = []
    for s in case_states:
        for d in SCALARS:
            trace.append({"turn": s.turn, "dimension": d, "value": s.vector[d]})
    fig = lines(pd.DataFrame(trace), x="turn", y="value", hue="dimension", errorbar=None,
                title="case study: tracked (fused) scalars; red dotted = true switch, grey dashed = flag")
    if case_flag is not None:
        fig.axes[0].axvline(case_flag, ls="--", color="grey")
    fig.axes[0].axvline(3, ls=":", color="red")
    figures["case_study"] = fig
    figures["sensitivity_lambda_beta"] = heatmap(
        lam_beta.pivot(index="lambda", columns="beta", values="tracking_error"), fmt=".3f",
        title="tracking error (lower is better)")
    figures["sensitivity_window_delta_hits"] = heatmap(
        w_delta.pivot(index="W", columns="delta", values="abrupt_hit_rate"), fmt=".2f",
        title="abrupt switches found within 2 turns")
    figures["sensitivity_window_delta_false_alarms"] = heatmap(
        w_delta.pivot(index="W", columns="delta", values="stationary_false_alarms_per_30_turns"),
        fmt=".2f", cmap="Reds", title="false alarms per 30 stationary turns")
    long = ablations.melt(id_vars="variant", value_vars=["prompt_agreement", "tracking_error"],
                          var_name="measure", value_name="value")
    figures["ablations"] = _bars(long, title="Table 4 ablations on simulated drifting users")

    text = [
        "Observations are extracted from the USER turns (offline: lexicons and statistics; "
        f"LLM: prompt `drift_extract`). Panel: {len(users)} simulated users over seeds {seeds} "
        f"({n_per_kind} per schedule kind); shipped schedules: {shipped_path.name}.",
        "Detection: a change point counts as found when a flag falls within 2 turns of it "
        "(gradual: by the drift's end + 2); false alarms are flags outside every change window "
        "(for switches this includes late extra flags after the window, never early ones).",
        "Table 4 in the paper is LoCoMo QA F1/BLEU with real LLMs; ours measures the same ablations "
        "as tracking error against the hidden style and prompt-label agreement, so compare rankings only. "
        "Full learns lambda per dimension and turn (PAMU's Bayesian weight, Eq. 13); 'Fixed λ (ours)' "
        f"is our default tracker's fixed lambda {base.fuse}.",
        f"The drift generator is not written apart from the extractor: its templates share {n_shared} "
        f"of their {n_content} content words with the extractor's cue lexicons (e.g. "
        f"{', '.join(shared[:12])}), so detection on the generated panel is easier than on text "
        "written apart; the LoCoMo rows (real turns, no generator) are the check on real text.",
    ]
    from toolkit.claims import claims_meta, render

    sections = drift_claims(tables, (n_shared, n_content))
    text.extend(render(c) for c in sections.values() if render(c))
    meta = {"claims": claims_meta(sections),
            "n_users": len(users), "seeds": seeds, "unknown_extractions": unknown + unknown_ship,
            "config": {k: v for k, v in base.__dict__.items() if k != "prior_sd"} | {"prior_sd": base.prior_sd}}
    return Result(name="drift", tables=tables, figures=figures, text=text, meta=json.loads(json.dumps(meta, default=str)))
