"""Simulated users with hidden profiles (TellOnce App. C.3), the violation scorer (C.5), fidelity.

Public surface: :class:`SimulatedUser` (``init_state``, ``respond``), :class:`Delivery` (what the
user reviews), :class:`Feedback` (the only thing an agent receives), :class:`Trace` (why),
:class:`UserState`, the violation scorer and the offline preference interpreter.
"""

from toolkit.simuser.delivery import Delivery, Feedback, UserState
from toolkit.simuser.simulator import SimulatedUser, judge_offline
from toolkit.simuser.trace import Judgement, Trace
from toolkit.simuser.violations import UnitScore, score_units, violation_summary

__all__ = [
    "Delivery", "Feedback", "Judgement", "SimulatedUser", "Trace", "UnitScore",
    "UserState", "judge_offline", "score_units", "violation_summary",
]
