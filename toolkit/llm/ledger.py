"""Usage ledger: calls, tokens, cache hits vs live calls, unknowns and cost, per model and role."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass


@dataclass
class UsageRow:
    calls: int = 0
    live_calls: int = 0
    cache_hits: int = 0
    requests: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    unknown: int = 0
    cost_usd: float | None = None


class UsageLedger:
    """Thread-safe counters keyed by (model, role). ``prices``: model -> (in, out) USD per 1M tokens."""

    def __init__(self, prices: dict[str, tuple[float, float]] | None = None):
        self.prices = dict(prices or {})
        self._rows: dict[tuple[str, str], UsageRow] = {}
        self._lock = threading.Lock()

    def _row(self, model: str, role: str) -> UsageRow:
        return self._rows.setdefault((model, role), UsageRow())

    def record(
        self,
        model: str,
        role: str,
        *,
        cached: bool,
        requests: int = 0,
        tokens_in: int = 0,
        tokens_out: int = 0,
        unknown: bool = False,
        n: int = 1,
    ) -> None:
        """Count ``n`` calls (an embedding call is one text) served from the cache or live."""
        with self._lock:
            r = self._row(model, role)
            r.calls += n
            r.requests += requests
            if cached:
                r.cache_hits += n
            else:
                r.live_calls += n
                r.tokens_in += tokens_in
                r.tokens_out += tokens_out
            if unknown:
                r.unknown += 1
            if model in self.prices:
                pin, pout = self.prices[model]
                r.cost_usd = (r.tokens_in * pin + r.tokens_out * pout) / 1e6

    def rows(self) -> list[dict]:
        with self._lock:
            return [
                {"model": m, "role": role, **asdict(r)}
                for (m, role), r in sorted(self._rows.items())
            ]

    def summary(self) -> str:
        """A small fixed-width table for the end of a run."""
        rows = self.rows()
        if not rows:
            return "LLM usage: no model calls"
        head = f"{'model':<32} {'role':<18} {'calls':>6} {'live':>6} {'cached':>6} {'tok_in':>8} {'tok_out':>8} {'unknown':>7} {'cost$':>8}"
        lines = ["LLM usage:", head]
        for r in rows:
            cost = f"{r['cost_usd']:.4f}" if r["cost_usd"] is not None else "-"
            lines.append(
                f"{r['model'][:32]:<32} {r['role'][:18]:<18} {r['calls']:>6} {r['live_calls']:>6} "
                f"{r['cache_hits']:>6} {r['tokens_in']:>8} {r['tokens_out']:>8} {r['unknown']:>7} {cost:>8}"
            )
        return "\n".join(lines)
