"""The development stage table: where each (point, preference) pair ended in the reader's cascade."""

from toolkit.diagnostics.fidelity import stage_breakdown, stage_sentence
from toolkit.records import AnnotatedPoint
from toolkit.simuser.trace import Judgement, Trace


def _pt(pid: str, corrected: bool, prefs: list[str]) -> AnnotatedPoint:
    return AnnotatedPoint(id=pid, annotator="a", task="t", response="r", corrected=corrected, preference_ids=prefs)


def _tr(*js: tuple[str, str, str]) -> Trace:
    return Trace("a", "k", 0, "offline", "", tuple(Judgement(p, None, "", v, decided_by=d) for p, v, d in js),
                 "silent", "")


def test_stage_breakdown_counts_labelled_and_other_pairs_by_stage_and_verdict():
    points = [_pt("p1", True, ["x"]), _pt("p2", True, ["x", "y"]), _pt("p3", False, [])]
    traces = [_tr(("x", "violated", "learned"), ("y", "satisfied", "kind:Forbid")),
              _tr(("x", "not_applicable", "scope"), ("y", "unknown", "learned")),
              _tr(("x", "not_applicable", "scope"), ("y", "satisfied", "learned"))]
    t = stage_breakdown(points, traces)
    got = {(r.pair, r.stage, r.verdict): (r.pairs, round(r.share, 3)) for r in t.itertuples()}
    assert got == {("labelled violation", "learned", "violated"): (1, 0.333),
                   ("labelled violation", "scope", "not_applicable"): (1, 0.333),
                   ("labelled violation", "learned", "unknown"): (1, 0.333),
                   ("not labelled", "kind", "satisfied"): (1, 0.333),
                   ("not labelled", "scope", "not_applicable"): (1, 0.333),
                   ("not labelled", "learned", "satisfied"): (1, 0.333)}
    assert stage_sentence(t) == ("Development, labelled violations (point, preference): 1 of 3 found; of the rest 1 "
                                 "ruled out by the scope stage (a condition or exception read as not holding), 0 "
                                 "passed and 1 left undecided (abstain).")


def test_stage_sentence_is_silent_without_labelled_violations():
    t = stage_breakdown([_pt("p", False, [])], [_tr(("x", "satisfied", "learned"))])
    assert stage_sentence(t) is None
