"""Notebook helpers: profile cards, who-corrects-what tables and an ipywidgets delivery browser."""

from __future__ import annotations

import html

import pandas as pd

from toolkit.compliance import Rule, describe
from toolkit.llm import ChatModel
from toolkit.profiles import Profile
from toolkit.simuser.delivery import Delivery
from toolkit.simuser.simulator import SimulatedUser
from toolkit.simuser.trace import Trace


def profiles_table(profiles: dict[str, Profile]) -> pd.DataFrame:
    """One row per preference: its text, conditions and how the offline simulator compiled it."""
    rows = []
    for uid in sorted(profiles):
        for p in profiles[uid].preferences:
            cp = describe(Rule.from_preference(p))
            rows.append({"user": uid, "preference": p.id, "category": p.category or "",
                         "applies_when": p.applies_when or "", "except_when": p.except_when or "",
                         "source": cp["source"], "offline check": "; ".join(cp["checks"])})
    return pd.DataFrame(rows)


def decisions(profiles: dict[str, Profile], deliveries: list[Delivery], model: ChatModel | None = None,
              *, seed: int = 0) -> tuple[pd.DataFrame, dict[tuple[str, str], Trace]]:
    """Every user's decision on every delivery (a table) and the traces behind it."""
    rows, traces = [], {}
    for uid in sorted(profiles):
        user = SimulatedUser(profiles[uid], model, seed=seed)
        for d, tr in zip(deliveries, user.judge_many(deliveries), strict=True):
            traces[(uid, d.key())] = tr
            rows.append({"user": uid, "delivery": d.key(), "corrects": tr.decision == "correct",
                         "preferences": ", ".join(tr.named), "feedback": tr.feedback or ""})
    return pd.DataFrame(rows), traces


def _trace_html(d: Delivery, tr: Trace) -> str:
    arts = "".join(f"<li><code>{html.escape(p)}</code></li>" for p in sorted(d.artifacts or {})) or "<li>(none)</li>"
    fb = html.escape(tr.feedback) if tr.feedback else "<i>(silent)</i>"
    rows = "".join(
        f"<tr><td>{html.escape(j.preference_id)}</td><td>{html.escape(j.verdict)}</td>"
        f"<td>{html.escape(j.applicability[:90])}</td><td>{html.escape(j.evidence[:120])}</td><td>{j.step}</td></tr>"
        for j in tr.judgements)
    return (f"<b>Task</b>: {html.escape(d.task)}<br><b>Reply</b>:<pre style='white-space:pre-wrap'>"
            f"{html.escape(d.reply)}</pre><b>Workspace</b><ul>{arts}</ul><b>Correction sent</b>: {fb}<br>"
            f"<b>Reading</b>: {html.escape(tr.interpretation)} &mdash; <b>decision</b>: {tr.decision} "
            f"({html.escape(tr.reason)})<table><tr><th>preference</th><th>verdict</th><th>applicability</th>"
            f"<th>evidence</th><th>step</th></tr>{rows}</table>")


def delivery_browser(profiles: dict[str, Profile], deliveries: list[Delivery], model: ChatModel | None = None,
                     *, seed: int = 0):
    """An ipywidgets browser: pick a user and a delivery, see the correction it draws and the trace."""
    import ipywidgets as w

    _, traces = decisions(profiles, deliveries, model, seed=seed)
    by_key = {d.key(): d for d in deliveries}
    user = w.Dropdown(options=sorted(profiles), description="user")
    deliv = w.Dropdown(options=[d.key() for d in deliveries], description="delivery")
    out = w.HTML()

    def show(*_):
        out.value = _trace_html(by_key[deliv.value], traces[(user.value, deliv.value)])

    user.observe(show, names="value")
    deliv.observe(show, names="value")
    show()
    return w.VBox([w.HBox([user, deliv]), out])
