"""The whole protocol run: groups of (benchmark, agent, method, user), tables, figures, prose."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from toolkit.agents import OFFLINE_NOTE, Agent, make_agent
from toolkit.llm import Gateway
from toolkit.memory import METHODS, make_method
from toolkit.metrics import mean_std
from toolkit.paper import fixtures_dir, paper_figures
from toolkit.profiles import Profile, load_profiles
from toolkit.protocol._loop import run_group
from toolkit.protocol._tasks import SuiteTask, load_suite, protocol_dir, test_runner

#: memory method -> access-diagnostic condition (§3)
CONDITIONS: dict[str, str] = {"no_memory": "no_rules", "all_rules": "all_rules", "retrieval_memory": "retrieval_memory",
                              "relevant_rules": "relevant_rules", "tellonce": "compiled_rules"}
BENCHMARKS: dict[str, str] = {"coding": "coding.jsonl", "travel": "travel.jsonl"}
DOMAIN_OF = {"coding": "coding", "travel": "travel"}
VIOLATION_COLUMNS = ["benchmark", "agent", "method", "user", "phase", "units", "violated", "unknown", "rate"]
ACCESS_COLUMNS = ["condition", "checks", "satisfied", "unknown", "compliance"]


@dataclass
class ProtocolConfig:
    """What one run covers. ``quick`` keeps two coding users, one travel user, six + six tasks each."""

    agent: str = "offline"
    methods: Sequence[str] = METHODS
    seed: int = 0
    quick: bool = False
    user_model: str = "offline"
    benchmarks: Sequence[str] = ("coding", "travel")
    agent_options: dict[str, Any] = field(default_factory=dict)
    method_options: dict[str, Any] = field(default_factory=dict)

    def users(self, profiles: dict[str, Profile], benchmark: str) -> list[Profile]:
        mine = [p for pid, p in sorted(profiles.items()) if p.domain == DOMAIN_OF[benchmark]]
        return mine[:: 2] if self.quick else mine

    def tasks(self, suite: list[SuiteTask]) -> list[SuiteTask]:
        if not self.quick:
            return suite
        learn = [t for t in suite if t.phase == "learn"][:6]
        test = [t for t in suite if t.phase == "test"][:6]
        return learn + test


def plan(cfg: ProtocolConfig, root=None) -> list[dict[str, str]]:
    """The groups to run, in a fixed order."""
    profiles = load_profiles((root or fixtures_dir().parent) / "profiles")
    groups = []
    for b in cfg.benchmarks:
        for p in cfg.users(profiles, b):
            for m in cfg.methods:
                groups.append({"benchmark": b, "user": p.id, "method": m})
    return groups


def group_key(g: dict[str, str]) -> str:
    return f"{g['benchmark']}/{g['user']}/{g['method']}"


def runner(cfg: ProtocolConfig, gateway: Gateway | None = None) -> Callable[[dict[str, str]], dict[str, Any]]:
    """A function running one group (fresh method, fresh user state; the agent is stateless)."""
    gw = gateway or Gateway()
    profiles = load_profiles(fixtures_dir().parent / "profiles")
    suites = {b: cfg.tasks(load_suite(protocol_dir() / f)) for b, f in BENCHMARKS.items() if b in cfg.benchmarks}
    access = load_suite(protocol_dir() / "access.jsonl")
    checks = {st.id: st.native_check for s in [*suites.values(), access] for st in s}
    user_model = None if cfg.user_model == "offline" else gw.model(cfg.user_model)
    learner_model = gw.model(cfg.user_model) if cfg.user_model != "offline" else None

    def agent_for() -> Agent:
        opts = dict(cfg.agent_options)
        if cfg.agent != "offline":
            opts.setdefault("tests", test_runner(checks))
        return make_agent(cfg.agent, gw, seed=cfg.seed, **opts)

    def run(g: dict[str, str], *, keep: list | None = None) -> dict[str, Any]:
        method = make_method(g["method"], learner_model, seed=cfg.seed, **cfg.method_options)
        res = run_group(agent_for(), method, profiles[g["user"]], suites[g["benchmark"]],
                        access if g["benchmark"] == "coding" else (), seed=cfg.seed, user_model=user_model)
        if keep is not None:
            keep.append(method)  # the frozen method, for notebooks that look inside it
        return res.to_dict()

    return run


# -- tables -------------------------------------------------------------------------------------
def violations_table(groups: list[dict[str, str]], results: list[dict[str, Any]], agent: str) -> pd.DataFrame:
    """C.5 per user and phase: units, violated, unknown (own column), rate = violated / units."""
    rows = []
    for g, r in zip(groups, results, strict=True):
        for phase in ("learn", "test"):
            us = [u for u in r["units"] if u["phase"] == phase]
            if not us:
                continue
            v = sum(u["outcome"] == "violated" for u in us)
            rows.append({"benchmark": g["benchmark"], "agent": agent, "method": g["method"], "user": g["user"],
                         "phase": phase, "units": len(us), "violated": v,
                         "unknown": sum(u["outcome"] == "unknown" for u in us), "rate": v / len(us)})
    return pd.DataFrame(rows, columns=VIOLATION_COLUMNS)


def summary_table(viol: pd.DataFrame) -> pd.DataFrame:
    """Mean +- sample std of the per-user rate, per benchmark, method and phase."""
    rows = []
    for (b, m, ph), df in viol.groupby(["benchmark", "method", "phase"], sort=False):
        mu, sd = mean_std(df["rate"].tolist())
        rows.append({"benchmark": b, "method": m, "phase": ph, "users": len(df), "units": int(df["units"].sum()),
                     "violated": int(df["violated"].sum()), "unknown": int(df["unknown"].sum()),
                     "rate_mean": mu, "rate_std": sd})
    return pd.DataFrame(rows)


def task_score_table(groups: list[dict[str, str]], results: list[dict[str, Any]]) -> pd.DataFrame:
    """Native task score (share of units whose task check passes), test phase, per method."""
    rows = []
    for g, r in zip(groups, results, strict=True):
        us = [u for u in r["units"] if u["phase"] == "test" and u["solved"] is not None]
        if us:
            rows.append({"benchmark": g["benchmark"], "method": g["method"], "user": g["user"], "units": len(us),
                         "solved": sum(bool(u["solved"]) for u in us)})
    df = pd.DataFrame(rows, columns=["benchmark", "method", "user", "units", "solved"])
    if df.empty:
        return df
    out = df.groupby(["benchmark", "method"], sort=False).agg(units=("units", "sum"), solved=("solved", "sum")).reset_index()
    out["task_score"] = out["solved"] / out["units"]
    return out


def context_table(groups: list[dict[str, str]], results: list[dict[str, Any]]) -> pd.DataFrame:
    """Mean items in the agent's context and repair rounds per unit, test phase, per method."""
    rows = []
    for (b, m) in dict.fromkeys((g["benchmark"], g["method"]) for g in groups):
        us = [u for g, r in zip(groups, results, strict=True) if g["benchmark"] == b and g["method"] == m
              for u in r["units"] if u["phase"] == "test"]
        if us:
            rows.append({"benchmark": b, "method": m, "units": len(us),
                         "context_mean": sum(u["context"] for u in us) / len(us),
                         "repairs_mean": sum(u["repairs"] for u in us) / len(us)})
    return pd.DataFrame(rows, columns=["benchmark", "method", "units", "context_mean", "repairs_mean"])


def access_table(groups: list[dict[str, str]], results: list[dict[str, Any]]) -> pd.DataFrame:
    """§3 compliance per condition: satisfied / checks; unknown is its own column and stays in checks."""
    rows = []
    for m in dict.fromkeys(g["method"] for g in groups):
        items = [a for g, r in zip(groups, results, strict=True) if g["method"] == m for a in r["access"]]
        if not items:
            continue
        n = len(items)
        sat = sum(a["outcome"] == "satisfied" for a in items)
        rows.append({"condition": CONDITIONS.get(m, m), "checks": n, "satisfied": sat,
                     "unknown": sum(a["outcome"] == "unknown" for a in items), "compliance": sat / n})
    return pd.DataFrame(rows, columns=ACCESS_COLUMNS)


def access_vs_paper(access: pd.DataFrame) -> pd.DataFrame:
    """Our compliance beside Figure 2's (percent), with n and the data role."""
    paper = paper_figures("protocol")["figures"]["access_gap"]
    rows = [{"condition": r.condition, "ours": 100 * r.compliance, "paper": paper.get(r.condition, math.nan),
             "n": r.checks, "data_role": "held-out (fixtures/protocol/access.jsonl)"} for r in access.itertuples()]
    return pd.DataFrame(rows, columns=["condition", "ours", "paper", "n", "data_role"])


def prose(summary: pd.DataFrame, access: pd.DataFrame, agent: str, context: pd.DataFrame | None = None) -> list[str]:
    """Sentences printed only when the computed check behind them holds."""
    out = []
    if agent == "offline":
        out.append(OFFLINE_NOTE)
    if context is not None and not context.empty:
        for b, df in context.groupby("benchmark", sort=False):
            c = dict(zip(df["method"], df["context_mean"], strict=True))
            if "all_rules" in c and "relevant_rules" in c and c["relevant_rules"] < 0.5 * c["all_rules"]:
                out.append(f"{b}: rule selection keeps few of the learned rules ({c['relevant_rules']:.1f} per test "
                           f"task on average vs {c['all_rules']:.1f} for all rules), so relevant and compiled "
                           "rules have little to act on.")
    a = {r.condition: r.compliance for r in access.itertuples()}
    if {"compiled_rules", "relevant_rules", "all_rules"} <= set(a):
        best = max(a, key=lambda k: (a[k], k))
        if best == "compiled_rules":
            out.append(f"As in the paper's Figure 2, compiled rules with checking reach the highest compliance "
                       f"({100 * a['compiled_rules']:.1f}% vs {100 * a['relevant_rules']:.1f}% for relevant rules as text).")
        else:
            out.append(f"Unlike the paper's Figure 2, compiled rules are not the most compliant condition here "
                       f"(best: {best}, {100 * a[best]:.1f}%).")
        if abs(a["relevant_rules"] - a["all_rules"]) <= 0.05:
            out.append("Relevant rules and all rules as text are within 5 points of each other, as in the paper "
                       f"({100 * a['relevant_rules']:.1f}% vs {100 * a['all_rules']:.1f}%).")
    if "no_rules" in a and "retrieval_memory" in a and a["retrieval_memory"] > a["no_rules"]:
        out.append(f"Retrieval memory raises compliance over no rules ({100 * a['no_rules']:.1f}% -> "
                   f"{100 * a['retrieval_memory']:.1f}%).")
    test = summary[summary["phase"] == "test"]
    for b, df in test.groupby("benchmark", sort=False):
        rates = dict(zip(df["method"], df["rate_mean"], strict=True))
        if "no_memory" in rates and "tellonce" in rates and rates["tellonce"] < rates["no_memory"]:
            out.append(f"{b}: TellOnce's test violation rate ({100 * rates['tellonce']:.1f}%) is below No Memory's "
                       f"({100 * rates['no_memory']:.1f}%), mean over users.")
        lowest = min(rates, key=lambda k: (rates[k], k))
        out.append(f"{b}: lowest mean test violation rate: {lowest} ({100 * rates[lowest]:.1f}%).")
    return out


def learning_curve(groups: list[dict[str, str]], results: list[dict[str, Any]]) -> pd.DataFrame:
    """Per learning task: corrections so far and the size of what the method stores."""
    rows = []
    for g, r in zip(groups, results, strict=True):
        corr = 0
        for i, step in enumerate(r["learning"], start=1):
            corr += bool(step["corrected"])
            stored = step.get("rules", step.get("memories", 0))
            rows.append({"benchmark": g["benchmark"], "method": g["method"], "user": g["user"], "task": i,
                         "corrections": corr, "stored": stored, "context": step["context"]})
    return pd.DataFrame(rows, columns=["benchmark", "method", "user", "task", "corrections", "stored", "context"])


def teach(user: str, methods: Sequence[str] = METHODS, *, benchmark: str = "coding", agent: str = "offline",
          seed: int = 0, quick: bool = False, gateway: Gateway | None = None) -> tuple[list[dict[str, str]], list[dict[str, Any]], list[Any]]:
    """One user teaching one agent, once per method: groups, results and the frozen methods."""
    cfg = ProtocolConfig(agent=agent, methods=tuple(methods), seed=seed, quick=quick, benchmarks=(benchmark,))
    run = runner(cfg, gateway)
    groups = [{"benchmark": benchmark, "user": user, "method": m} for m in methods]
    kept: list[Any] = []
    return groups, [run(g, keep=kept) for g in groups], kept


def sessions_table(result: dict[str, Any]) -> pd.DataFrame:
    """The learning phase of one group, one row per session (task): corrected, feedback, what is stored."""
    rows = []
    for i, step in enumerate(result["learning"], start=1):
        unit = next(u for u in result["units"] if u["unit"] == step["task"] and u["phase"] == "learn")
        rows.append({"session": i, "task": step["task"], "violated": ", ".join(unit["violated_prefs"]),
                     "feedback": step["feedback"].replace("\n", " ")[:90], "in context": step["context"],
                     "stored": step.get("rules", step.get("memories", 0))})
    return pd.DataFrame(rows)
