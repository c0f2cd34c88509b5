"""Preference violation rate (TellOnce App. C.5).

Per evaluation unit: violated when at least one applicable preference is confirmed violated;
units judged unknown or not applicable are not violations but stay in the denominator. Rates
are computed per user, then reported as mean +- sample std over users.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolkit.llm import ChatModel
from toolkit.metrics import mean_std, violation_rate
from toolkit.profiles import Profile
from toolkit.simuser.delivery import Delivery
from toolkit.simuser.simulator import SimulatedUser


@dataclass(frozen=True)
class UnitScore:
    """One evaluation unit for one user: the verdict per preference and the unit's outcome."""

    user: str
    unit: str
    verdicts: dict[str, str] = field(default_factory=dict)
    status: str = "ok"  # "ok" | "unknown" (the judge gave no usable answer)

    @property
    def violated(self) -> bool:
        return any(v == "violated" for v in self.verdicts.values())


def score_units(profile: Profile, deliveries: list[Delivery], model: ChatModel | None = None,
                *, seed: int = 0) -> list[UnitScore]:
    """Judge each delivery against ``profile`` (the simulator's steps 1-4, no message sent)."""
    user = SimulatedUser(profile, model, seed=seed)
    out = []
    for d, tr in zip(deliveries, user.judge_many(deliveries), strict=True):
        verdicts = {p.id: "not_applicable" for p in profile.preferences}
        for j in tr.judgements:
            verdicts[j.preference_id] = j.verdict
        out.append(UnitScore(profile.id, d.unit or d.key(), verdicts,
                             "unknown" if tr.decision == "unknown" else "ok"))
    return out


def violation_summary(units: list[UnitScore]) -> dict[str, Any]:
    """Per-user violation rates and their mean +- sample std over users (all units counted)."""
    by_user: dict[str, list[UnitScore]] = {}
    for u in units:
        by_user.setdefault(u.user, []).append(u)
    per_user = {}
    for user, us in sorted(by_user.items()):
        rate = violation_rate([list(u.verdicts.values()) for u in us])
        per_user[user] = {
            "n_units": len(us), "violated": sum(u.violated for u in us), "rate": rate,
            "unknown_units": sum(u.status == "unknown" or (not u.violated and "unknown" in u.verdicts.values())
                                 for u in us),
            "not_applicable_units": sum(all(v == "not_applicable" for v in u.verdicts.values()) for u in us),
        }
    m, s = mean_std([v["rate"] for v in per_user.values()])
    return {"per_user": per_user, "mean": m, "std": s, "n_users": len(per_user), "n_units": len(units)}
