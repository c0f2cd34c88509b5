"""One progress bar per diagnostic: nested stages feed it, and it ends at 100%."""

from __future__ import annotations


def test_nested_work_feeds_one_bar(capsys, monkeypatch):
    from toolkit._progress import _BARS, advance, diagnostic_bar, progress, stage

    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)  # pytest sets it for each phase
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("PREFMEM_PROGRESS", "1")

    seen = []
    with diagnostic_bar("demo", expected_s=0):
        with stage(10, 2):
            with stage(1, 3):  # first unit of the outer stage, split in three
                for _ in range(3):
                    advance()
                    seen.append(round(_BARS[-1].tq.n, 6))
            for _ in progress(range(4), total=4):  # second unit, split in four
                pass
            seen.append(round(_BARS[-1].tq.n, 6))
        assert _BARS[-1].tq.total == 10
    out = capsys.readouterr().err.replace("\r", "\n")
    assert seen == [round(10 / 6, 6), round(20 / 6, 6), 5.0, 10.0]
    assert {line.split(":")[0] for line in out.splitlines() if line.strip()} == {"demo"}
    assert "100%" in out


def test_silent_when_off(monkeypatch):
    from toolkit._progress import _BARS, diagnostic_bar

    monkeypatch.setenv("PREFMEM_PROGRESS", "0")
    with diagnostic_bar("demo"):
        assert _BARS == []
