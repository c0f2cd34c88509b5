"""The tour: one pass of the learning loop, end to end, on the shipped profiles.

Each simulated user reviews the shipped deliveries and may send a correction; only that text
reaches the learner, whose admission step decides which corrections become lasting rules.
"""

from __future__ import annotations

import pandas as pd

from toolkit.diagnostics.result import Result
from toolkit.paper import fixtures_dir
from toolkit.profiles import load_profiles
from toolkit.records import AdmissionInput, Message
from toolkit.rules.admission import admit_records
from toolkit.runs import RunContext
from toolkit.simuser import SimulatedUser
from toolkit.simuser.delivery import load_deliveries
from toolkit.simuser.violations import score_units, violation_summary
from toolkit.viz import new_figure


def run(ctx: RunContext) -> Result:
    """Users review deliveries, corrections go to admission; tabulate who corrected what and why."""
    root = fixtures_dir().parent
    profiles = load_profiles(ctx.record_input(root / "profiles"))
    deliveries = load_deliveries(ctx.record_input(fixtures_dir() / "simuser" / "deliveries.jsonl"))
    model = ctx.chat_model()
    units, exchanges = [], []
    for pid, profile in sorted(profiles.items()):
        user = SimulatedUser(profile, model, seed=ctx.seed)
        state = user.init_state()
        for d in deliveries:
            feedback, state = user.respond(d, state)
            if feedback is not None:
                exchanges.append({"user": pid, "delivery": d.id, "task": d.task, "feedback": str(feedback)})
        units += score_units(profile, deliveries, model, seed=ctx.seed)
    inputs = [AdmissionInput(id=f"{e['user']}/{e['delivery']}", text=e["feedback"],
                             context=[Message(role="user", content=e["task"])]) for e in exchanges]
    decisions = admit_records(inputs, model, seed=ctx.seed) if inputs else []
    for e, dec in zip(exchanges, decisions, strict=True):
        e.update(decision=dec.decision, scope=dec.scope, activation=dec.activation)
    loop = pd.DataFrame(exchanges, columns=["user", "delivery", "task", "feedback", "decision", "scope",
                                            "activation"]).drop(columns="task")
    summ = violation_summary(units)
    per_user = pd.DataFrame([
        {"user": u, "deliveries": v["n_units"], "violated": v["violated"], "violation_rate": v["rate"],
         "corrections": int((loop["user"] == u).sum()),
         "persisted": int(((loop["user"] == u) & (loop["decision"] == "persist")).sum())}
        for u, v in summ["per_user"].items()
    ])
    fig = new_figure(6.5, 3.2)
    ax = fig.subplots()
    counts = loop.groupby(["user", "decision"]).size().unstack(fill_value=0)
    if not counts.empty:
        counts.plot.barh(stacked=True, ax=ax, color={"persist": "#4C72B0", "task_local": "#DD8452",
                                                      "defer": "#999999"})
    ax.set_xlabel("corrections sent")
    ax.set_title("What the learner admits from each simulated user")
    text = [f"{len(profiles)} hidden profiles x {len(deliveries)} deliveries; violation rate (App. C.5) "
            f"{summ['mean']:.3f} ± {summ['std']:.3f} over users (mean ± sample std)."]
    return Result(name="tour", tables={"per_user": per_user, "loop": loop}, figures={"loop": fig},
                  text=text, meta={"n_users": len(profiles), "n_deliveries": len(deliveries),
                                   "n_corrections": len(loop), "seed": ctx.seed})
