"""The deletion-place and preservation kinds (toolkit.rules.checks._places): what a rule says about
places, which paths evidence deletes or writes, and the verdict the judge reads as a feature."""

from __future__ import annotations

from toolkit.records import EvidenceRecord, Rule
from toolkit.rules.checks._places import deleted_paths, place_verdict, places_of, written_paths
from toolkit.rules.checks._spec import FEATURES, SpecJudge


def _action(cmd: str, tool: str = "bash") -> EvidenceRecord:
    return EvidenceRecord.model_validate({"stage": "pre_action", "task": "tidy the repo",
                                          "action": {"tool": tool, "args": {"command": cmd}}})


def _files(*paths: str, deleted: bool = False) -> EvidenceRecord:
    return EvidenceRecord.model_validate({"stage": "artifact", "task": "fix the layout",
                                          "artifacts": [{"path": p, "content": "x", "deleted": deleted}
                                                        for p in paths]})


def test_places_read_from_the_rule() -> None:
    assert places_of("Never remove anything under assets/raw/.").banned_in == ("assets/raw",)
    assert places_of("Do not delete files outside the dist/ or cache/ folders.").allowed_in == ("dist", "cache")
    assert places_of("Keep `schema.sql` untouched when you add a migration.").kept == ("schema.sql",)
    assert not places_of("Don't delete files I haven't asked you to delete.")  # no place: nothing to read
    assert not places_of("Delete stale branches after merging.")


def test_deleted_and_written_paths() -> None:
    assert deleted_paths(_action("cd app && rm -rf build/ tmp/cache && make")) == ["build/", "tmp/cache"]
    assert deleted_paths(_action("git rm src/a.py")) == ["src/a.py"]
    assert deleted_paths(_action("find assets/raw -name '*.bak' -delete")) == ["assets/raw"]
    assert deleted_paths(_action("ls -la build/")) == []
    assert deleted_paths(_files("old.py", deleted=True)) == ["old.py"]
    assert written_paths(_files("src/x.py")) == ["src/x.py"]


def test_verdicts() -> None:
    banned = Rule(id="r1", behavior="Never remove anything under assets/raw/.")
    assert place_verdict(banned, _action("rm -rf assets/raw/2019")) == "violation"
    assert place_verdict(banned, _action("rm -rf assets/processed/2019")) == "pass"
    assert place_verdict(banned, _action("git status")) is None  # deletes nothing: no reading
    allowed = Rule(id="r2", behavior="Do not delete files outside the dist/ or cache/ folders.")
    assert place_verdict(allowed, _action("rm -r dist/old cache/x")) == "pass"
    assert place_verdict(allowed, _action("rm -r dist/old src/../setup.cfg")) == "violation"
    kept = Rule(id="r3", behavior="Keep `schema.sql` untouched when you add a migration.")
    assert place_verdict(kept, _files("db/schema.sql")) == "violation"
    assert place_verdict(kept, _files("db/migrations/0004_add.sql")) == "pass"
    assert place_verdict(Rule(id="r4", behavior="Use pnpm."), _action("rm -rf node_modules")) is None


def test_the_judge_reads_the_place_verdict() -> None:
    assert FEATURES[-2:] == ("place_violation", "place_pass")
    rule = Rule(id="r1", behavior="Never remove anything under assets/raw/.")
    x = SpecJudge().features([(rule, None, _action("rm -rf assets/raw/2019")),
                              (rule, None, _action("rm -rf assets/processed/2019"))])
    assert x[:, -2].tolist() == [1.0, 0.0] and x[:, -1].tolist() == [0.0, 1.0]
