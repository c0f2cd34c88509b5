"""Notebook cells and the third-party data (``../shared/data`` or ``$PREFMEM_DATA_DIR``).

- Cells tagged ``needs-data`` read the data; on a clone without it pytest skips them with a
  reason. Put such cells in a notebook's last section: later cells must not depend on them.
- Cells tagged ``output-needs-data`` run everywhere, but their stored output was made with the
  data present and differs without it (the offline admitter's fit reads PrefEval's explicit
  preferences when they are there, and what it learns flows into the tour, the learning loop
  and drift's detection table). Without the data they still run, so later cells keep their
  variables, and their output is not compared; with it (as in CI) it is.
"""

from __future__ import annotations

import pytest

NEEDS_DATA = "needs-data"
OUTPUT_NEEDS_DATA = "output-needs-data"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from toolkit.runs import default_data_dir

    data = default_data_dir()
    if data is not None:
        return
    skip = pytest.mark.skip(reason="needs-data cell: third-party data not found "
                                   "(../shared/data or $PREFMEM_DATA_DIR; see README: Data)")
    for item in items:
        cell = getattr(item, "cell", None)
        tags = cell.get("metadata", {}).get("tags", []) if cell is not None else []
        if NEEDS_DATA in tags:
            item.add_marker(skip)
        elif OUTPUT_NEEDS_DATA in tags:
            item.options["check"] = False  # type: ignore[attr-defined]  # nbval's cell item
