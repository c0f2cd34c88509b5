"""Drive one notebook through JupyterLab in headless Chromium; run by ``tests/test_browser.py``.

A separate process so the test can put a hard wall-clock limit on everything a browser can
block on (a page that never settles, a promise that never resolves, a tab that will not close):
the test kills this process group when the limit passes and fails with the last stage printed
here. Every wait below has its own timeout as well; the stage lines (``stage: ...``) say how far
a failed run got.

Usage: ``python tests/browser_drive.py BASE_URL TOKEN NOTEBOOK select|slider``; exit 0 when the
notebook ran without a traceback, shows a figure ``<img>`` and moving its control changes what
the widget shows; exit 1 with the reason otherwise.
"""

from __future__ import annotations

import sys
import time

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
        "--disable-dev-shm-usage"]  # small /dev/shm in containers crashes tabs

#: what the widgets show: the HTML panes and the image sources
SHOWN_JS = """[...document.querySelectorAll('.widget-html-content, .jupyter-widgets img')]
               .map(e => e.tagName === 'IMG' ? e.src + ':' + e.naturalWidth : e.innerHTML)
               .join('|')"""

_T0 = time.monotonic()


def stage(what: str) -> None:
    """One progress line, flushed at once so a killed run still shows how far it got."""
    print(f"stage {time.monotonic() - _T0:6.1f}s: {what}", flush=True)


def run_all(page, base: str, token: str, name: str) -> None:
    """Open the notebook, wait for an idle kernel, run every cell, fail on a traceback."""
    stage("open notebook")
    page.goto(f"{base}/lab/tree/notebooks/{name}?token={token}", wait_until="domcontentloaded",
              timeout=60_000)
    page.wait_for_function("() => window.jupyterapp && document.querySelector('.jp-Notebook')",
                           timeout=90_000)
    stage("wait for an idle kernel")
    page.wait_for_function(
        """() => { const w = window.jupyterapp.shell.currentWidget;
                   return w && w.sessionContext && w.sessionContext.session &&
                          w.sessionContext.session.kernel &&
                          w.sessionContext.session.kernel.status === 'idle'; }""",
        timeout=120_000)
    stage("run all cells")
    # start the command without awaiting its promise: it settles only when every cell has run,
    # and an unresolved promise would block evaluate() with no timeout
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(  # every code cell has run, or one failed
        """() => { const ps = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
                   const failed = [...document.querySelectorAll('.jp-OutputArea-output')]
                                  .some(o => o.textContent.includes('Traceback'));
                   return failed || (ps.length > 0 && ps.every(p => /\\[\\d+\\]/.test(p.textContent))); }""",
        timeout=240_000, polling=1000)
    errors = [t for t in page.locator(".jp-OutputArea-output").all_inner_texts()
              if "Traceback" in t]
    assert not errors, errors[0][-1500:]


def check(browser, base: str, token: str, name: str, kind: str) -> None:
    """One attempt on a fresh page: run the notebook, see a figure, move the control."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    try:
        run_all(page, base, token, name)
        stage("look for a figure")
        figures = page.locator(".jp-OutputArea-output img")
        assert figures.count() >= 1, "no figure <img> in the outputs"
        page.wait_for_function("""() => [...document.querySelectorAll('.jp-OutputArea-output img')]
                                  .some(i => i.naturalWidth > 100)""", timeout=30_000)
        stage(f"move the {kind}")
        if kind == "select":
            control = page.locator(".jupyter-widgets select").last
            control.wait_for(state="attached", timeout=60_000)
            control.scroll_into_view_if_needed(timeout=30_000)
            before = page.evaluate("() => " + SHOWN_JS)
            options = control.locator("option").all_inner_texts()
            assert len(options) > 1, f"the select has {len(options)} option(s)"
            control.select_option(label=options[-1], timeout=30_000)
        else:
            handle = page.locator(".jupyter-widgets .noUi-handle, .jupyter-widgets .slider-handle").first
            handle.wait_for(state="attached", timeout=60_000)
            handle.scroll_into_view_if_needed(timeout=30_000)
            before = page.evaluate("() => " + SHOWN_JS)
            handle.focus(timeout=30_000)
            for _ in range(4):
                page.keyboard.press("ArrowRight")
        stage("wait for the widget to redraw")
        page.wait_for_function("(b) => " + SHOWN_JS + " !== b", arg=before, timeout=60_000)
        stage("done")
    finally:
        try:
            page.close(run_before_unload=False)
        except Exception as exc:  # noqa: BLE001 - a tab that will not close is not the finding
            stage(f"page did not close cleanly: {exc!r}"[:300])


def main(argv: list[str]) -> int:
    base, token, name, kind = argv
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        stage("launch chromium")
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True,
                                    timeout=60_000)
        try:
            try:
                check(browser, base, token, name, kind)
            except Exception as first:  # noqa: BLE001 - any failure of the first page
                # a UI under a loaded 2-core machine can miss a timeout once; twice fails
                stage(f"first attempt failed, one retry on a fresh page: {first!r}"[:500])
                check(browser, base, token, name, kind)
        except Exception as exc:  # noqa: BLE001 - the reason is the output
            print(f"FAILED: {exc!r}"[:3000], flush=True)
            return 1
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
