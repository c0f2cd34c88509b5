"""Prose that compares with a paper, printed from computed numbers.

A :class:`Claim` is one sentence with the check that licenses it; :func:`render` prints a
sentence only when its check holds, so a notebook or report never says "as in the paper" over
numbers that do not show it. Diagnostics put their claims in ``Result.meta["claims"]`` (one
list per section, JSON-safe); notebooks show them with :func:`reading`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Claim", "render", "reading", "claims_meta"]


@dataclass(frozen=True)
class Claim:
    """One sentence and whether the numbers behind it hold (``evidence``: those numbers)."""

    text: str
    holds: bool
    evidence: str = ""


def render(claims: Iterable[Claim | Mapping[str, Any]]) -> str:
    """The sentences whose checks hold, space-joined (claims may be dicts from ``meta``)."""
    out = []
    for c in claims:
        c = Claim(**c) if isinstance(c, Mapping) else c
        if c.holds:
            out.append(c.text)
    return " ".join(out)


def claims_meta(sections: Mapping[str, Sequence[Claim]]) -> dict[str, list[dict[str, Any]]]:
    """JSON-safe form for ``Result.meta["claims"]`` (``holds`` as a plain bool)."""
    return {k: [{**asdict(c), "holds": bool(c.holds)} for c in v] for k, v in sections.items()}


def reading(result: Any, section: str) -> Any:
    """The generated reading of one section of a diagnostic's result, as Markdown.

    Only the sentences whose computed checks hold are shown; returns an IPython ``Markdown``
    object when IPython is available, else the text.
    """
    claims = (getattr(result, "meta", {}) or {}).get("claims", {}).get(section)
    if claims is None:
        raise KeyError(f"no generated reading for section {section!r}")
    text = "**Reading it (generated from the numbers above).** " + (
        render(claims) or "No comparison with the paper holds on these numbers.")
    try:
        from IPython.display import Markdown
    except ImportError:  # pragma: no cover - IPython ships with the notebook stack
        return text
    return Markdown(text)
