"""A real browser: JupyterLab on 127.0.0.1, two notebooks run through the UI in headless Chromium.

Checks what a researcher sees, which stored outputs cannot show: after "Run All Cells" each
notebook shows a figure as an ``<img>``, holds a live widget control, and moving that control
changes what the widget shows. Uses Debian's ``/usr/bin/chromium`` through Playwright (never
``playwright install``); ``.ci/run`` installs it. Skips, saying why, where it is missing.
JupyterLab serves a temporary copy of the notebooks, so nothing in the checkout is touched.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
TOKEN = "prefmem-browser-test"
#: notebook -> (CSS selector of the control to move, how to move it)
NOTEBOOKS = {"00_tour.ipynb": "select", "07_preference_drift.ipynb": "slider"}

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _skip_reason() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"no browser: {CHROMIUM} is missing (.ci/run installs Debian's chromium as root)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("lab")
    (work / "notebooks").mkdir()
    for name in NOTEBOOKS:  # a copy: JupyterLab's autosave never touches the checkout
        shutil.copy(ROOT / "notebooks" / name, work / "notebooks" / name)
    for shared in ("profiles", "fixtures"):  # what the notebooks read by relative path
        (work / shared).symlink_to(ROOT / shared, target_is_directory=True)
    # render every cell (no windowing), so controls far down the notebook exist in the page
    settings = work / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "PREFMEM_PROGRESS": "0", "JUPYTER_CONFIG_DIR": str(work / ".jupyter")}
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}",
           f"--ServerApp.root_dir={work}", "--LabApp.expose_app_in_browser=True",
           "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--ServerApp.port_retries=0"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(work / "lab.log", "wb")
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail("jupyter lab exited:\n" + (work / "lab.log").read_text()[-2000:])
                time.sleep(0.5)
        else:
            pytest.fail("jupyter lab did not start in 120 s")
        yield base, work
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


#: the hard limit on one notebook's check, retry included: past it the driver's process group
#: is killed and the test fails with the last stage it reached (never a hang of the suite)
LIMIT_S = 420


def _lab_log(base_dir: Path) -> str:
    log = base_dir / "lab.log"
    return log.read_text(errors="replace")[-1500:] if log.exists() else ""


@pytest.mark.parametrize("name", list(NOTEBOOKS))
def test_notebook_in_jupyterlab(lab, name):
    """Run the notebook through the UI in a driver process (``tests/browser_drive.py``) with a
    hard limit: a figure ``<img>`` shows, and moving the widget's control changes its output."""
    base, work = lab
    cmd = [sys.executable, str(Path(__file__).with_name("browser_drive.py")), base, TOKEN, name,
           NOTEBOOKS[name]]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # chromium and its helpers go with it
        out, _ = proc.communicate()
        pytest.fail(f"{name}: the browser check passed its {LIMIT_S} s limit; it reached:\n"
                    f"{out[-2000:]}\n--- jupyter lab log ---\n{_lab_log(work)}")
    print(out)
    assert proc.returncode == 0, f"{name}:\n{out[-2500:]}\n--- jupyter lab log ---\n{_lab_log(work)}"
