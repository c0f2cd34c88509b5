"""Every example of every catalogue kind (toolkit/resources/compliance/kinds/*.yaml) runs here."""

from __future__ import annotations

import pytest

from toolkit.compliance import Rule
from toolkit.compliance._catalogue import read_catalogue
from toolkit.compliance._catalogue_data import catalogue
from toolkit.compliance._checks import View
from toolkit.compliance._interpreter import compile_text

_EXPECT = {"must_flag": "violated", "must_pass": "satisfied", "must_abstain": "unknown"}
_CASES = [(k.kind, tuple(k.checks), group, ex) for k in catalogue() for group in _EXPECT
          for ex in getattr(k.examples, group)]


def test_catalogue_has_kinds_and_every_kind_has_examples() -> None:
    kinds = catalogue()
    assert len(kinds) >= 20
    assert len({k.kind for k in kinds}) == len(kinds)


@pytest.mark.parametrize(("kind", "checks", "group", "ex"), _CASES,
                         ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(_CASES)])
def test_kind_example(kind: str, checks: tuple[str, ...], group: str, ex) -> None:
    compiled = {type(c).__name__ for c in compile_text(ex.rule)[0]}
    if checks != ("Unknown",):
        assert compiled & set(checks), f"{kind}: {ex.rule!r} compiled to {compiled}"
    else:
        assert compiled == {"Unknown"}
    verdict = read_catalogue(Rule("r", ex.rule), View(ex.task, ex.reply, ex.artifacts)).finding.verdict
    assert verdict == _EXPECT[group], (kind, ex.rule, ex.reply)


def test_kinds_recognised_from_data_compile_their_must_flag_examples() -> None:
    """A kind whose recognition is data (``recognise`` triggers or cue rules of stage ``kinds`` in its file) finds
    one of its own checks in every one of its must_flag rules, through :func:`read_kinds` alone."""
    from toolkit.compliance._catalogue_data import catalogue, read_kinds

    data_kinds = [k for k in catalogue() if k.recognise or any(r.stage == "kinds" for r in k.rules)]
    assert len(data_kinds) >= 30
    for k in data_kinds:
        found = [bool({type(c).__name__ for c in read_kinds(ex.rule)[0]} & set(k.checks)) for ex in k.examples.must_flag]
        assert all(found), (k.kind, found)


def test_kind_recognition_is_not_code() -> None:
    """``kinds.recognise`` is gone: no recogniser function in the compliance modules, the kinds stage is data."""
    import inspect

    from toolkit.compliance import _interpreter, _kinds
    from toolkit.compliance._catalogue_data import stage_rules

    assert not hasattr(_kinds, "recognise")
    assert "def recognise" not in inspect.getsource(_kinds) and "def _rule_" not in inspect.getsource(_interpreter)
    assert len(stage_rules("kinds")) >= 40


@pytest.mark.parametrize(("text", "label"), [("I am vegetarian.", "meat items"),
                                             ("I'm vegan, so keep that in mind for restaurants.", "animal-product items")])
def test_a_diet_check_names_what_the_diet_bans(text: str, label: str) -> None:
    """A vegetarian bans meat: the check is labelled by the banned things, not by the diet's name."""
    labels = [getattr(c, "label", None) for c in compile_text(text)[0]]
    assert labels == [label]


def test_the_text_compiler_has_no_rule_recognisers_in_code() -> None:
    """The ``_rule_*`` recognisers moved into kind files: the compiler's stages are data, run by name."""
    import inspect

    from toolkit.compliance import _interpreter
    from toolkit.compliance._catalogue_data import stage_rules

    src = inspect.getsource(_interpreter)
    assert "def _rule_" not in src
    stages = [s for s in _interpreter._RULES if isinstance(s, str)]
    assert stages == list(_interpreter._RULES)  # every stage is data
    for stage in (*stages, "forbid_verbs", "domain"):
        assert stage_rules(stage), f"stage {stage} has no cue rules in any kind file"


def test_cue_rule_files_validate_their_names() -> None:
    """A kind file naming an unknown check class, lexicon reader or builder fails to load."""
    from pydantic import ValidationError

    from toolkit.compliance._catalogue_data import CueRule, Emit

    with pytest.raises(ValidationError):
        Emit(check="NoSuchCheck")
    with pytest.raises(ValidationError):
        Emit(check="Forbid", read={"x": "no_such_reader"})
    with pytest.raises(ValidationError):
        CueRule(stage="tone", order=1, emit=Emit(check="NoMarkdown"), build="substitute", cue="x", places="plain")
