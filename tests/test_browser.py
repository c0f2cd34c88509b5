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
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]  # small /dev/shm in containers crashes tabs
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
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def browser(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def _run_all(page, base: str, name: str) -> None:
    page.goto(f"{base}/lab/tree/notebooks/{name}?token={TOKEN}", wait_until="domcontentloaded")
    page.wait_for_function("() => window.jupyterapp && document.querySelector('.jp-Notebook')",
                           timeout=90_000)
    page.wait_for_function(  # the kernel is up
        """() => { const w = window.jupyterapp.shell.currentWidget;
                   return w && w.sessionContext && w.sessionContext.session &&
                          w.sessionContext.session.kernel &&
                          w.sessionContext.session.kernel.status === 'idle'; }""",
        timeout=120_000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(  # every code cell has run, or one failed
        """() => { const ps = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
                   const failed = [...document.querySelectorAll('.jp-OutputArea-output')]
                                  .some(o => o.textContent.includes('Traceback'));
                   return failed || (ps.length > 0 && ps.every(p => /\\[\\d+\\]/.test(p.textContent))); }""",
        timeout=240_000, polling=1000)
    errors = [t for t in page.locator(".jp-OutputArea-output").all_inner_texts()
              if "Traceback" in t]
    assert not errors, errors[0][-1500:]


#: what the widgets show: the HTML panes and the image sources
_SHOWN_JS = """[...document.querySelectorAll('.widget-html-content, .jupyter-widgets img')]
               .map(e => e.tagName === 'IMG' ? e.src + ':' + e.naturalWidth : e.innerHTML)
               .join('|')"""


def _shown(page) -> str:
    return page.evaluate("() => " + _SHOWN_JS)


@pytest.mark.parametrize("name", list(NOTEBOOKS))
def test_notebook_in_jupyterlab(browser, lab, name):
    """Run the notebook through the UI; a second, fresh page only if the first one failed (a UI
    under a loaded 2-core CI machine can miss a timeout once; twice fails the test)."""
    try:
        _check_notebook(browser, lab, name)
    except Exception as first:  # noqa: BLE001 - any failure of the first page
        print(f"first attempt failed, retrying once on a fresh page: {first!r}"[:500])
        _check_notebook(browser, lab, name)


def _check_notebook(browser, lab, name) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        _run_all(page, lab, name)
        figures = page.locator(".jp-OutputArea-output img")
        assert figures.count() >= 1, "no figure <img> in the outputs"
        assert page.evaluate("""() => [...document.querySelectorAll('.jp-OutputArea-output img')]
                                .some(i => i.naturalWidth > 100)"""), "figures did not load"
        if NOTEBOOKS[name] == "select":
            control = page.locator(".jupyter-widgets select").last
            control.wait_for(state="attached", timeout=60_000)
            control.scroll_into_view_if_needed()
            before = _shown(page)
            options = control.locator("option").all_inner_texts()
            assert len(options) > 1
            control.select_option(label=options[-1])
        else:
            handle = page.locator(".jupyter-widgets .noUi-handle, .jupyter-widgets .slider-handle").first
            handle.wait_for(state="attached", timeout=60_000)
            handle.scroll_into_view_if_needed()
            before = _shown(page)
            handle.focus()
            for _ in range(4):
                page.keyboard.press("ArrowRight")
        page.wait_for_function("(b) => " + _SHOWN_JS + " !== b", arg=before, timeout=60_000)
    finally:
        page.close()

