"""Notebook cells tagged ``needs-data`` run only where the third-party data is present.

They read ``../shared/data`` (or ``$PREFMEM_DATA_DIR``); on a clone without it pytest skips
them with a reason, so every other cell's stored output holds either way and CI, which has the
data, keeps testing the data path. Put such cells in a notebook's last section: later cells
must not depend on them.
"""

from __future__ import annotations

import pytest

NEEDS_DATA = "needs-data"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from toolkit.runs import default_data_dir

    data = default_data_dir()
    if data is not None:
        return
    skip = pytest.mark.skip(reason="needs-data cell: third-party data not found "
                                   "(../shared/data or $PREFMEM_DATA_DIR; see README: Data)")
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is not None and NEEDS_DATA in cell.get("metadata", {}).get("tags", []):
            item.add_marker(skip)
