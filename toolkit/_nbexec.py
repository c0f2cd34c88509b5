"""Execute notebooks in place with clean, diff-friendly outputs (a developer tool).

``python -m toolkit._nbexec notebooks/NN_x.ipynb ...`` runs each notebook with progress bars
off, drops timing metadata and widget state (nbclient's ``store_widget_state=False`` crashes on
Output widgets, so the state is recorded and then removed).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def execute(path: str | Path, timeout: int = 900) -> None:
    import nbformat
    from nbclient import NotebookClient

    os.environ["PREFMEM_PROGRESS"] = "0"
    p = Path(path)
    nb = nbformat.read(p, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            store_widget_state=True, resources={"metadata": {"path": str(p.parent)}})
    client.execute()
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                out["text"] = ""
        cell["outputs"] = [o for o in cell.get("outputs", [])
                           if not (o.get("output_type") == "stream" and not o.get("text"))]
    nbformat.write(nb, p)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        execute(arg)
        print(f"executed {arg}")
