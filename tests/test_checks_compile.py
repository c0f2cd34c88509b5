"""Check compilation (TellOnce B.2): outcomes, stages, validation cases, blind review, revisions."""

from __future__ import annotations

import pytest

from toolkit.records import Rule
from toolkit.rules.checks import (
    Case,
    FieldEquals,
    OfflineCompiler,
    Proposal,
    ReaderReviewer,
    Review,
    SemanticSpec,
    compile_rule,
    compile_rules,
    judge,
    make_evidence,
    read_rule,
)
from toolkit.rules.checks._compiler import MAX_ROUNDS, faithfulness_problems, validate_cases
from toolkit.rules.checks._resources import all_kinds, example_failures


def test_resource_examples_hold():
    assert example_failures() == []
    assert all(k.must_match for k in all_kinds().values())


@pytest.mark.parametrize("text,outcome", [
    ("Keep every reply under 120 words.", "programmatic"),
    ("Answer in JSON with keys verdict and evidence.", "programmatic"),
    ("Think carefully about edge cases before writing code.", "guidance"),
    ("Be more proactive.", "guidance"),
    ("Do it the usual way.", "inactive"),
    ("Never use emojis in replies.", "semantic"),
    ("Avoid wildcard imports.", "semantic"),
])
def test_offline_outcomes(text, outcome):
    (c,) = compile_rules([Rule(id="r", behavior=text)])
    assert c.status == "ok" and c.outcome == outcome, c.reason
    if outcome in ("programmatic", "semantic"):
        v = c.validation
        assert 3 <= v["cases"] <= 9 and v["agreed"] == v["cases"] and 1 <= v["rounds"] <= MAX_ROUNDS
    else:
        assert c.check is None


def test_programmatic_only_for_plain_global_rules():
    rd = read_rule(Rule(id="r", behavior="Keep replies under 80 words.", conditions=["when answering questions"]))
    assert rd.programmatic is not None
    prop = OfflineCompiler().propose(Rule(id="r", behavior="Keep replies under 80 words.",
                                          conditions=["when answering questions"]), [])
    assert prop.outcome == "semantic" and prop.check.conditions == ("when answering questions",)


def test_no_check_reads_evidence_that_does_not_exist_yet():
    bad = SemanticSpec("always", "x", "", "", "forbid", "x", "artifact", evidence={"pre_action": ["artifacts"]})
    assert any("does not exist yet" in p for p in bad.stage_problems())
    assert faithfulness_problems(Rule(id="r", behavior="x"), bad)
    assert FieldEquals("action", "branch", "main").stage_problems() == []


def test_case_set_rules():
    spec = SemanticSpec("always", "x", "", "", "forbid", "x", "reply", evidence={"delivery": ["reply"]})
    ev = make_evidence("delivery", "t", reply="hi")
    assert validate_cases([Case(ev, "pass"), Case(ev, "violation")], spec)  # too few, no n/a
    na = Case(make_evidence("pre_action", "t", action={"command": "ls"}), "not_applicable")
    assert validate_cases([Case(ev, "pass"), Case(ev, "violation"), na], spec) == []


class SpyReviewer:
    """Records what the reviewer is given and disagrees on every case."""

    name = "spy"

    def __init__(self):
        self.calls = []

    def review(self, rule, check, evidence):
        self.calls.append((rule, check, list(evidence)))
        return Review(True, tuple("pass" for _ in evidence), "")


def test_reviewer_is_blind_and_disagreement_rejects_up_to_three_rounds():
    spy = SpyReviewer()
    c = compile_rule(Rule(id="r", behavior="Never use emojis in replies."), OfflineCompiler(), spy,
                     lambda rule, check, ev: judge(rule, check, ev))
    assert spy.calls and all(not isinstance(e, Case) and not hasattr(e, "expected") for _, _, evs in spy.calls
                             for e in evs)
    assert c.outcome == "guidance" and c.check is None and 1 <= len(c.rounds) <= MAX_ROUNDS
    assert all(r.rejection for r in c.rounds) and c.proposed == "semantic"


def test_checker_disagreement_rejects_even_when_reviewer_agrees():
    class Echo:
        name = "echo"

        def review(self, rule, check, evidence):
            return Review(True, tuple(Echo.labels), "")

    class Fixed:
        name = "fixed"

        def propose(self, rule, feedback):
            ev = make_evidence("delivery", "t", reply="one two three")
            cases = (Case(ev, "violation", slot="a"), Case(ev, "pass", slot="b"),
                     Case(make_evidence("pre_action", "t", action={"c": 1}), "not_applicable", slot="na"))
            Echo.labels = [c.expected for c in cases]
            from toolkit.rules.checks import MaxWords
            return Proposal("programmatic", MaxWords(2), cases)

    c = compile_rule(Rule(id="r", behavior="Replies under 2 words."), Fixed(), Echo(),
                     lambda rule, check, ev: judge(rule, check, ev))
    assert c.outcome == "guidance" and len(c.rounds) == MAX_ROUNDS
    assert "checker disagrees" in c.rounds[-1].rejection


def test_reader_reviewer_labels_each_case():
    spec = SemanticSpec("always", "x", "", "", "forbid", "emojis", "reply", evidence={"delivery": ["reply"]})
    evs = [make_evidence("delivery", "t", reply="Done 🎉"), make_evidence("delivery", "t", reply="Done."),
           make_evidence("pre_action", "t", action={"command": "ls"})]
    rv = ReaderReviewer().review(Rule(id="r", behavior="Never use emojis in replies."), spec, evs)
    assert rv.labels == ("violation", "pass", "not_applicable")


def test_new_programmatic_types_and_action_fields():
    from toolkit.rules.checks._types import (
        JsonFields,
        MaxLines,
        StartsWith,
        command_fields,
        make_evidence,
    )

    assert command_fields("git push origin +release/1.4") == {"force": True, "remote": "origin", "branch": "release/1.4"}
    assert command_fields('git commit -am "feat: x"')["message"] == "feat: x"
    sw = StartsWith(target="action", field="message", value="feat:|fix:")
    ev = lambda c: make_evidence("pre_action", "t", action={"tool": "git", "command": c})  # noqa: E731
    assert sw.run(ev('git commit -m "fix: y"')).label == "pass"
    assert sw.run(ev('git commit -m "Feat: y"')).label == "violation"  # case is kept
    assert sw.run(ev("ls")).label == "not_applicable"
    ml = MaxLines(value=2)
    assert ml.run(make_evidence("delivery", "t", reply="a\nb")).label == "pass"
    assert ml.run(make_evidence("delivery", "t", reply="a\nb\nc")).label == "violation"
    jf = JsonFields(fields=("a",))
    assert jf.run(make_evidence("delivery", "t", reply='```json\n{"a": 1}\n```')).label == "pass"
    assert jf.run(make_evidence("delivery", "t", reply='Here:\n```json\n{"a": 1}\n```')).label == "violation"


@pytest.mark.parametrize("text,kind", [
    ('Commit messages must start with "chore:" or "docs:".', "starts_with"),
    ("Never send a reply longer than 4 lines.", "max_lines"),
    ("Only push to the remote named upstream.", "field_equals"),
    ("Your answer must be a JSON object with the fields a, b and c.", "json_fields"),
])
def test_new_computable_phrasings_compile_to_programmatic_checks(text, kind):
    from toolkit.rules.checks import compile_rules

    c = compile_rules([Rule(id="x", behavior=text)])[0]
    assert c.outcome == "programmatic" and c.check.type == kind, (c.outcome, c.reason)


def test_literal_reviewer_reads_commands_its_own_way():
    from toolkit.rules.checks._review import command_label

    rule = Rule(id="p", behavior="Only push to the branch named develop.")
    assert command_label(rule, "git push origin develop") == "pass"
    assert command_label(rule, "git push origin +main") == "violation"
    assert command_label(rule, "ls -la") == "not_applicable"
    rule = Rule(id="c", behavior='Commit messages must start with "feat:" or "fix:".')
    assert command_label(rule, 'git commit -m "fix: y"') == "pass"
    assert command_label(rule, 'git commit -m "Feat: y"') == "violation"


@pytest.mark.parametrize("text,kind", [
    ("The `region` argument of every deploy call must be eu-central-1.", "field_equals"),
    ("The `sender` field on each notify request must be alerts@ops.example.", "field_equals"),
    ("Every `publish` call must have `channel` set to `beta`.", "field_equals"),
    ("Limit every answer to 45 words", "max_words"),
])
def test_field_and_count_phrasings_compile_and_validate(text, kind):
    """The compile stage's readers (field of an action equal to a literal, word caps) and the
    reviewer's own readings agree, so the check is validated, not only proposed."""
    from toolkit.rules.checks import compile_rules

    c = compile_rules([Rule(id="x", behavior=text)])[0]
    assert c.outcome == "programmatic" and c.check.type == kind, (c.outcome, c.reason)


def test_reviewer_own_readings_of_counts_json_keys_literals_and_commands():
    from toolkit.rules.checks._review import command_given, random_literal, structured_label

    cap = Rule(id="w", behavior="cap every answer at 5 words")
    assert structured_label(cap, make_evidence("delivery", "t", reply="one two three")) == "pass"
    assert structured_label(cap, make_evidence("delivery", "t", reply="one two three four five six")) == "violation"
    floor = Rule(id="f", behavior="Write at least 5 words")
    assert structured_label(floor, make_evidence("delivery", "t", reply="one")) is None
    js = Rule(id="j", behavior="Always answer with a JSON object that has `a` and `b`.")
    assert structured_label(js, make_evidence("delivery", "t", reply='{"a": 1, "b": 2}')) == "pass"
    assert structured_label(js, make_evidence("delivery", "t", reply='{"a": 1}')) == "violation"
    assert structured_label(js, make_evidence("delivery", "t", reply="a and b")) == "violation"
    ban = Rule(id="s", behavior="Never write passwords or tokens into config files.")
    art = lambda c: make_evidence("artifact", "t", artifacts={"app.yml": c})  # noqa: E731
    assert random_literal(ban, art('db_password: "Xr4!pQ9z#Lm2wT"\n'))
    assert not random_literal(ban, art('db_password: "{{ vault_db_password }}"\n'))
    assert not random_literal(ban, art('docs_url: "https://x.example/a1"\n'))
    assert not random_literal(ban, art('# db_password: "Xr4!pQ9z#Lm2wT"\n'))  # a comment line
    cmd = Rule(id="c", behavior="When you say tests pass, give the command you ran.")
    assert command_given(cmd, make_evidence("delivery", "t", reply="Ran `pytest -q tests/`: green.")) == "pass"
    assert command_given(cmd, make_evidence("delivery", "t", reply="All tests pass.")) == "violation"
    assert command_given(Rule(id="n", behavior="Be brief."), make_evidence("delivery", "t", reply="x")) is None


def test_tool_arguments_are_read_where_the_case_builder_puts_them():
    """A tool call's arguments live under ``args``; the call's name (``tool``) is not an argument.
    The old check read the envelope first, so its own compliant case failed (w19, read after its
    first-contact score: a deploy-tool argument rule fell to guidance)."""
    from toolkit.rules.checks import FieldEquals, compile_rules

    chk = FieldEquals(target="action", field="tool", value="ruff")
    ev = lambda a: make_evidence("pre_action", "t", action=a)  # noqa: E731
    assert chk.run(ev({"tool": "lint", "args": {"tool": "ruff"}})).label == "pass"
    assert chk.run(ev({"tool": "lint", "args": {"tool": "flake8"}})).label == "violation"
    assert chk.run(ev({"tool": "shell", "command": "ls"})).label == "not_applicable"
    env = FieldEquals(target="action", field="environment", value="staging")
    assert env.run(ev({"tool": "deploy", "args": {"environment": "staging"}})).label == "pass"
    for text, field in (("The `tool` argument of every lint call must be `ruff`.", "tool"),
                        ("The `timeout` parameter of the fetch tool must be `30s`.", "timeout")):
        c = compile_rules([Rule(id="x", behavior=text)])[0]
        assert c.outcome == "programmatic" and c.check.field == field and c.check.target == "action", (c.reason,)
        assert c.rounds[-1].accepted


def test_names_a_rule_puts_in_json_render_as_the_objects_keys():
    """A conditional JSON rule (not programmatic: it has a scope) gets compliant cases whose JSON
    object carries the rule's names as keys, not calls of functions named like them."""
    from toolkit.rules.checks import compile_rules

    rule = Rule(id="j", behavior="For shipping questions, reply with JSON holding `weight` and `zone`.",
                scope="project:parcel-desk")
    c = compile_rules([rule])[0]
    shown = [cs.evidence.reply or "" for r in c.rounds for cs in r.proposal.cases if cs.expected == "pass"]
    assert any('"weight"' in s and '"zone"' in s for s in shown), shown


@pytest.mark.parametrize("text,kind", [
    ("Never call the `deploy` tool with `environment` set to `production`.", "field_not_equals"),
    ("The `region` argument of the upload tool must never be `us-east-1`.", "field_not_equals"),
    ("No Markdown file you write may contain the string `TODO`.", "file_lacks_literal"),
    ('Never leave "FIXME" in any Python file.', "file_lacks_literal"),
    ("Calls to the `git_push` tool must always have `force` set to false.", "field_equals"),
])
def test_not_equal_file_literal_and_boolean_kinds_compile_and_validate(text, kind):
    """Three kinds of directly computable rule (a tool argument that must never take a value, a
    literal banned from files of a type, a bare true/false): programmatic and validated."""
    from toolkit.rules.checks import compile_rules

    c = compile_rules([Rule(id="x", behavior=text)])[0]
    assert c.outcome == "programmatic" and c.check.type == kind, (c.outcome, c.reason)


def test_not_equal_and_file_literal_checks_run():
    from toolkit.rules.checks._types import FieldNotEquals, FileLacks, check_from_dict

    ne = FieldNotEquals(target="action", field="environment", value="production", tool="deploy")
    act = lambda tool, **a: make_evidence("pre_action", "t", action={"tool": tool, "args": a})  # noqa: E731
    assert ne.run(act("deploy", environment="production")).label == "violation"
    assert ne.run(act("deploy", environment="staging")).label == "pass"
    assert ne.run(act("deploy")).label == "not_applicable"
    assert ne.run(act("rollback", environment="production")).label == "not_applicable"  # another tool
    fl = FileLacks(endings=(".md", ".markdown"), value="TODO")
    art = lambda files: make_evidence("artifact", "t", artifacts=files)  # noqa: E731
    assert fl.run(art({"docs/a.md": "# A\nTODO: x\n"})).label == "violation"
    assert fl.run(art({"docs/a.md": "# A\n"})).label == "pass"
    assert fl.run(art({"src/a.py": "# TODO\n"})).label == "not_applicable"
    assert check_from_dict(fl.to_dict()) == fl and check_from_dict(ne.to_dict()) == ne


def test_reviewer_reads_banned_values_and_file_types_its_own_way():
    from toolkit.rules.checks._review import file_literal_label, literal_label

    ban = Rule(id="b", behavior="Never call the `deploy` tool with `environment` set to `production`.")
    act = lambda v: make_evidence("pre_action", "t", action={"tool": "deploy", "args": {"environment": v}})  # noqa: E731
    assert literal_label(ban, act("production")) == "violation"
    assert literal_label(ban, act("staging")) == "pass"
    flag = Rule(id="f", behavior="Calls to the `git_push` tool must always have `force` set to false.")
    push = lambda v: make_evidence("pre_action", "t", action={"tool": "git_push", "args": {"force": v}})  # noqa: E731
    assert literal_label(flag, push(False)) == "pass" and literal_label(flag, push(True)) == "violation"
    md = Rule(id="m", behavior="No Markdown file you write may contain the string `TODO`.")
    art = lambda files: make_evidence("artifact", "t", artifacts=files)  # noqa: E731
    assert file_literal_label(md, art({"a.md": "TODO"})) == "violation"
    assert file_literal_label(md, art({"a.md": "done"})) == "pass"
    assert file_literal_label(md, art({"a.py": "TODO"})) == "not_applicable"


def test_a_taste_rule_gets_no_echoed_validation_case():
    """A rule with no concrete element is not validated on cases that echo its words back."""
    from toolkit.rules.checks import compile_rules

    c = compile_rules([Rule(id="t", behavior="Respect the spirit of the style guide, not just the letter.")])[0]
    assert c.outcome in ("guidance", "inactive"), (c.outcome, c.reason)
    assert c.proposed == "semantic"  # it gets a specification; its echoed cases are refused, so it never validates
    assert c.rounds and all(r.review is None or None in r.review.labels for r in c.rounds)


def test_the_reviewer_refuses_evidence_that_only_restates_a_rule_without_code():
    from toolkit.rules.checks._review import restates_rule

    spec = SemanticSpec(applies_when="always", required="", compliance="", violation="", polarity="require",
                        subject="name the venue in the first paragraph", target="reply", scope="global",
                        conditions=(), exceptions=(), evidence={"delivery": ["reply"]})
    plain = Rule(id="v", behavior="Name the venue in the first paragraph.")
    echo = make_evidence("delivery", "t", reply="As requested, I made sure to name the venue in the first paragraph.")
    real = make_evidence("delivery", "t", reply="The Lyric Theatre hosts the premiere on 4 May.")
    assert restates_rule(plain, spec, echo) and not restates_rule(plain, spec, real)
    coded = Rule(id="c", behavior="Name the venue in the first paragraph with `venue()`.")
    assert not restates_rule(coded, spec, echo)  # a rule with a code token: the reviewer reads the token


@pytest.mark.parametrize("behavior,kind,field,value", [
    ("The git_push tool must always be called with force set to false.", "field_equals_boolean", "force", "false"),
    ("Every create_pull_request call sets draft to true.", "field_equals_boolean", "draft", "true"),
    ('The deploy tool\'s environment argument must always be "staging".', "field_equals", "environment", "staging"),
])
def test_unquoted_boolean_fields_and_possessive_tools_are_programmatic(behavior, kind, field, value):
    rd = read_rule(Rule(id="b", behavior=behavior))
    assert rd.programmatic is not None and rd.programmatic[0] == kind
    assert rd.programmatic[1]["field"] == field and rd.programmatic[1]["value"] == value
    c = compile_rules([Rule(id="b", behavior=behavior)])[0]
    assert c.outcome == "programmatic" and c.check.to_dict()["field"] == field, c.reason


def test_bare_json_field_names_are_all_kept_and_the_reviewer_reads_them_itself():
    """'fields a, b and c': the compiler keeps the lone 'a' as a name (an article is dropped only
    before a name), and the reviewer's own reading (``semantic.json_key_list``) wants every one."""
    from toolkit.rules.checks import compile_rules
    from toolkit.rules.checks._review import structured_label

    rule = Rule(id="x", behavior="Your answer must be a JSON object with the fields a, b and c.")
    c = compile_rules([rule])[0]
    assert c.outcome == "programmatic" and c.check.fields == ("a", "b", "c")
    assert structured_label(rule, make_evidence("delivery", "t", reply='{"a": 1, "b": 2, "c": 3}')) == "pass"
    assert structured_label(rule, make_evidence("delivery", "t", reply='{"b": 2, "c": 3}')) == "violation"
