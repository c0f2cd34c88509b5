"""The end-to-end protocol: learn -> freeze -> evaluate (TellOnce C.1, C.5) and the
access-compliance diagnostic (§3).

``run_protocol(ProtocolConfig(...))`` returns the tables; ``prefmem reproduce protocol`` writes
them with figures, report and manifest (see :mod:`toolkit.diagnostics.protocol`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from toolkit.llm import Gateway
from toolkit.protocol._loop import GroupResult, deliver, run_group, to_user_delivery, unit_outcome
from toolkit.protocol._run import (
    ACCESS_COLUMNS,
    CONDITIONS,
    VIOLATION_COLUMNS,
    ProtocolConfig,
    access_table,
    access_vs_paper,
    context_table,
    group_key,
    learning_curve,
    plan,
    prose,
    runner,
    sessions_table,
    summary_table,
    task_score_table,
    teach,
    violations_table,
)
from toolkit.protocol._tasks import SuiteTask, TaskRecord, load_suite, native_score, protocol_dir


def tables(cfg: ProtocolConfig, groups: list[dict[str, str]], results: list[dict[str, Any]]) -> dict[str, pd.DataFrame]:
    """All tables from finished groups (pure: results can be re-scored without re-running)."""
    viol = violations_table(groups, results, cfg.agent)
    access = access_table(groups, results)
    return {"violations": viol, "violations_summary": summary_table(viol), "access_gap": access,
            "access_vs_paper": access_vs_paper(access), "task_scores": task_score_table(groups, results),
            "context": context_table(groups, results)}


def run_protocol(cfg: ProtocolConfig | None = None, gateway: Gateway | None = None) -> dict[str, pd.DataFrame]:
    """Run every group in memory (notebooks); the CLI goes through the resumable diagnostic."""
    cfg = cfg or ProtocolConfig()
    groups = plan(cfg)
    run = runner(cfg, gateway)
    return tables(cfg, groups, [run(g) for g in groups])


__all__ = [
    "ACCESS_COLUMNS", "CONDITIONS", "GroupResult", "ProtocolConfig", "SuiteTask", "TaskRecord", "VIOLATION_COLUMNS",
    "context_table", "deliver", "group_key", "learning_curve", "load_suite", "native_score", "plan", "prose", "protocol_dir", "run_group",
    "run_protocol", "runner", "sessions_table", "tables", "teach", "to_user_delivery", "unit_outcome",
]
