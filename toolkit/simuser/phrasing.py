"""Turn violated findings into one correction, phrased with seeded variation.

The message is built from what the checks observed in the delivery (evidence) and what the user
wants instead (``ask``), through templates written for this module; it never quotes the hidden
preference text.
"""

from __future__ import annotations

import re

import numpy as np

from toolkit.compliance import Verdict

OPENERS_ONE = ("", "", "Hmm. ", "One thing: ", "Quick note: ", "Not quite. ", "Close, but ", "Wait, ")
OPENERS_MANY = ("A couple of things.", "Two things before I look closer.", "Some fixes needed:",
                "Not there yet:", "Before we move on:", "A few problems here.")
CLOSERS = ("", "", "", " Thanks.", " Then it's fine.", " Otherwise looks ok.", " Please redo it.",
           " Same goes for next time.")
SINGLE = (
    "{Ask}. {Evid}.",
    "{Evid}. {Ask}, please.",
    "{Evid} \u2014 could you {ask}?",
    "Please {ask}; {evid}.",
    "{Evid}, and I'd like you to {ask}.",
    "Can you {ask}? {Evid}.",
    "I'd rather you {ask} \u2014 {evid}.",
)
JOINERS = ("Also, ", "And ", "Plus, ", "On top of that, ", "Second, ")


ORDINALS = ("", "Second, ", "Third, ", "Fourth, ", "Fifth, ", "Sixth, ", "Seventh, ", "Eighth, ")


def _joiner(i: int, pick: int, used: list[str]) -> str:
    """Connective for the i-th sentence: ordinals advance, other connectives never repeat."""
    if used and used[0] == "Second, ":  # ordinal run started at the second sentence: keep counting
        word = ORDINALS[min(i, len(ORDINALS) - 1)] if i < len(ORDINALS) else "Finally, "
    else:
        free = [j for j in JOINERS if j not in used and (j != "Second, " or i == 1)]
        word = JOINERS[pick] if JOINERS[pick] in free else (free[pick % len(free)] if free else "Finally, ")
    used.append(word)
    return word


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def _clean(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    return s.rstrip(".")


def _lower_first(s: str) -> str:
    if re.match(r"(I\b|I'|`|\u201c)", s):
        return s
    return s[:1].lower() + s[1:]


def _sentence(f: Verdict, rng: np.random.Generator) -> str:
    ask = _clean(f.ask or "fix that")
    evid = _clean(f.reason or "that is not how I want it")
    tpl = SINGLE[int(rng.integers(len(SINGLE)))]
    out = tpl.format(Ask=_cap(ask), ask=ask, Evid=_cap(evid), evid=evid)
    return re.sub(r"\?\.", "?", out)


def phrase(findings: list[Verdict], rng: np.random.Generator) -> str:
    """One correction covering every violated finding (ordered as given)."""
    if not findings:
        raise ValueError("nothing to phrase")
    if len(findings) == 1:
        opener = OPENERS_ONE[int(rng.integers(len(OPENERS_ONE)))]
        sent = _sentence(findings[0], rng)
        body = opener + (_lower_first(sent) if opener and not opener.rstrip().endswith((".", ":")) else sent)
    else:
        parts = [OPENERS_MANY[int(rng.integers(len(OPENERS_MANY)))]]
        use_list = bool(rng.integers(2))
        used: list[str] = []
        for i, f in enumerate(findings):
            s = _sentence(f, rng)
            if use_list:
                parts.append(f"\n- {s}")
            else:
                parts.append(" " + (_joiner(i, int(rng.integers(len(JOINERS))), used) + _lower_first(s) if i else s))
        body = "".join(parts)
    return (body + CLOSERS[int(rng.integers(len(CLOSERS)))]).strip()
