"""TellOnce C.1 / C.5 (learn -> freeze -> evaluate, violation rate per user) and §3 (the
access-compliance gap), end to end: agents, memory methods, simulated users.

Options (``--agent``, ``--method``, or ``--set agent=... --set methods=a,b``; ``--set selector=scope``
selects rules for relevant_rules/tellonce by scope and conditions alone instead of the checks
layer's learned selector) are part of the
run's configuration, so ``--resume`` refuses a changed one. Groups (benchmark, user, method) are
logged as they finish; a resumed run skips finished groups.
"""

from __future__ import annotations

from toolkit.diagnostics.result import Result
from toolkit.memory import METHODS
from toolkit.protocol import (
    ProtocolConfig,
    group_key,
    learning_curve,
    plan,
    prose,
    protocol_dir,
    runner,
    tables,
)
from toolkit.protocol._figures import access_bars, learning_lines, violation_bars
from toolkit.runs import RunContext


def config_from(ctx: RunContext) -> ProtocolConfig:
    """The protocol configuration from a run context's options."""
    methods = ctx.options.get("methods") or list(METHODS)
    if isinstance(methods, str):
        methods = [m for m in methods.split(",") if m]
    method_options = {k: ctx.options[k] for k in ("selector",) if k in ctx.options}
    return ProtocolConfig(agent=str(ctx.options.get("agent", "offline")), methods=tuple(methods), seed=ctx.seed,
                          quick=ctx.quick, user_model=ctx.model, method_options=method_options)


def run(ctx: RunContext) -> Result:
    """Run every (benchmark, user, method) group; tabulate violations, access compliance, task scores."""
    cfg = config_from(ctx)
    for f in ("coding.jsonl", "travel.jsonl", "access.jsonl"):
        ctx.record_input(protocol_dir() / f)
    ctx.record_prompt("agent_tools")
    ctx.record_prompt("memory_update")
    groups = plan(cfg)
    fn = runner(cfg, ctx.gateway)
    results = ctx.map_items("groups", groups, lambda batch: [fn(g) for g in batch], key=group_key, batch_size=1)
    t = tables(cfg, groups, results)
    text = prose(t["violations_summary"], t["access_gap"], cfg.agent, t["context"])
    text.append(f"Agent {cfg.agent}; methods {', '.join(cfg.methods)}; simulated users and learner roles: "
                f"{cfg.user_model}; rule selection for relevant_rules/tellonce: "
                f"{cfg.method_options.get('selector', 'checks')}; seed {cfg.seed}; "
                f"{'quick' if cfg.quick else 'full'} scale. Violation rate "
                "(C.5): units with at least one confirmed violation / all units; unknown units stay in the "
                "denominator and have their own column. Access compliance (§3): checks satisfied / all checks.")
    if cfg.agent == "offline":
        from toolkit.agents import OfflineAgent

        text.append(f"Offline agent settings: {OfflineAgent(seed=cfg.seed).settings()}.")
    figures = {"violations": violation_bars(t["violations_summary"])}
    if not t["access_vs_paper"].empty:
        figures["access_gap"] = access_bars(t["access_vs_paper"])
    curve = learning_curve(groups, results)
    if not curve.empty:
        figures["learning"] = learning_lines(curve)
    return Result(name="protocol", tables=t, figures=figures, text=text,
                  meta={"agent": cfg.agent, "methods": list(cfg.methods), "groups": len(groups), "seed": cfg.seed})
