"""A notebook widget that steps a rule through compilation (TellOnce B.2): proposal, validation
cases, the reviewer's blind labels, the executed check, and each round's rejection."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

from toolkit.rules.checks._compiler import Compilation

_OK, _BAD = "#e3f4e1", "#fbe3e3"


def _evidence_text(ev) -> str:
    if ev.action is not None:
        return "action: " + json.dumps(ev.action, ensure_ascii=False)
    parts = [f"{a.path}: {a.content}" for a in ev.artifacts or []]
    if ev.reply is not None:
        parts.append(f"reply: {ev.reply}")
    return "\n".join(parts)


def step_html(comp: Compilation, step: int) -> str:
    """HTML for one step: step 0 is the rule and the compiler's first reading; step k >= 1 is round k."""
    r = comp.rule
    head = (f"<h4>{html.escape(r.id)}: {html.escape(r.behavior)}</h4>"
            f"<p>scope {html.escape(r.scope)}; conditions {html.escape('; '.join(r.conditions) or '-')}; "
            f"exceptions {html.escape('; '.join(r.exceptions) or '-')}</p>")
    final = (f"<p><b>outcome: {comp.outcome or 'unknown'}</b> (first proposal: {comp.proposed or 'none'}; "
             f"{html.escape(comp.reason)})</p>")
    if step <= 0 or not comp.rounds:
        return head + final + f"<p>{len(comp.rounds)} validation round(s).</p>"
    rnd = comp.rounds[min(step, len(comp.rounds)) - 1]
    prop = rnd.proposal
    check = html.escape(json.dumps(prop.check.to_dict(), ensure_ascii=False, indent=1)) if prop.check else "-"
    rows = []
    for i, c in enumerate(prop.cases):
        rv = (rnd.review.labels[i] if rnd.review else None) or "cannot tell"
        ex = rnd.executed[i].label if i < len(rnd.executed) else "-"
        bg = _OK if rv == c.expected and ex == c.expected else _BAD
        rows.append(f"<tr style='background:{bg}'><td>{i + 1}</td><td>{c.evidence.stage}</td>"
                    f"<td>{html.escape(c.evidence.task)}</td><td><pre>{html.escape(_evidence_text(c.evidence))}</pre>"
                    f"</td><td>{c.expected}</td><td>{rv}</td><td>{ex}</td></tr>")
    table = ("<table><tr><th>#</th><th>stage</th><th>task</th><th>evidence</th><th>expected</th>"
             "<th>reviewer (blind)</th><th>checker</th></tr>" + "".join(rows) + "</table>")
    verdict = "accepted" if rnd.accepted else f"rejected: {html.escape(rnd.rejection)}"
    return (head + f"<p>round {rnd.number} of {len(comp.rounds)}: {prop.outcome} proposal, {verdict}</p>"
            f"<pre>{check}</pre>{table}" + final)


def compilation_stepper(compilations: Sequence[Compilation]):
    """A dropdown over rules and a slider over their validation rounds."""
    import ipywidgets as w

    names = [f"{c.rule.id}: {c.rule.behavior[:60]}" for c in compilations]
    pick = w.Dropdown(options=list(range(len(names))), value=0, description="rule")
    pick.options = [(n, i) for i, n in enumerate(names)]
    step = w.IntSlider(value=0, min=0, max=max(1, len(compilations[0].rounds)), description="step")
    out = w.HTML(step_html(compilations[0], 0))

    def redraw(_=None) -> None:
        comp = compilations[pick.value]
        step.max = max(1, len(comp.rounds))
        out.value = step_html(comp, step.value)

    pick.observe(redraw, names="value")
    step.observe(redraw, names="value")
    return w.VBox([w.HBox([pick, step]), out])
