"""The kind catalogue as data: one validated file per kind under ``toolkit/resources/compliance/kinds/``.

Each file names the kind, the compiled check classes it stands for, what it is about, and examples
the catalogue stage must flag (``violated``), must pass (``satisfied``) and must abstain on
(``unknown``). tests/test_compliance_catalogue.py runs every example, so a kind without examples
fails CI.

A kind may also say how it is recognised in a rule's text (``recognise``): alternatives, each a
set of patterns that must all match the lower-cased rule (``all``), patterns that must not
(``none``), the check it compiles to with literal parameters (``params``) or parameters read from
the rule (``flags``: a parameter is true when its pattern matches), and the generic checks it
supersedes (``drop``). ``{NEG}``, ``{MONTHS}`` and ``{NUM}`` in a pattern stand for shared cues. The
first alternative that matches fires, once. :func:`recognise_data` runs them.

A kind may also carry ``rules``: cue rules that run inside one named stage of the text compiler
(``_interpreter._RULES``: length, items, brevity, tone, suggestions, format, parts, cleanup, code,
actions, substitution; plus forbid_verbs, the fallback domain stage and ``kinds``, which reads the
kinds of ``_kinds`` from the whole rule before the other stages), in a fixed order across all kind
files. A cue's places and their polarity come from the shared clause-negation stage; checks are
built from the file (check class by name, lexicons by ``$NAME``, parameters captured from the cue's
match) or, where a parameter needs normalising, by a named reader or builder registered in
``_param_readers`` (the ``kinds`` stage's builders live in ``_kind_builders``). :func:`read_kinds`
runs ``recognise`` and the ``kinds`` stage.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator


class KindExample(BaseModel):
    """One example: a rule, the task, the reply and (optionally) workspace files."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    rule: str = Field(min_length=1)
    task: str
    reply: str
    artifacts: dict[str, str] | None = None


class KindExamples(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    must_flag: list[KindExample] = Field(default_factory=list)
    must_pass: list[KindExample] = Field(default_factory=list)
    must_abstain: list[KindExample] = Field(default_factory=list)


#: the shared negation cue that ``{NEG}`` stands for in a trigger pattern
NEG = r"(?:never|don't|do not|no|avoid|stop|without|not)"
#: month names (English, Spanish, French, German) that ``{MONTHS}`` stands for
MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
          "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|"
          "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|"
          "janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|"
          "januar|februar|märz|juni|juli|oktober|dezember")


#: a count in digits or words that ``{NUM}`` stands for (one group; ``toolkit.text.parse_number`` reads it)
NUM = ('(\\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|'
       'forty|fifty|sixty|eighty|a hundred|hundred|single|a couple of|a few)')


def expand(rx: str) -> str:
    """A trigger pattern with its shared cues (``{NEG}``, ``{MONTHS}``, ``{NUM}``, ``{LANGUAGES}``) written out."""
    rx = rx.replace("{NEG}", NEG).replace("{MONTHS}", MONTHS).replace("{NUM}", NUM)
    if "{LANGUAGE" in rx:
        from toolkit.compliance._kinds import language_names

        names, aliases = language_names()
        rx = rx.replace("{LANGUAGES}", "|".join(names + aliases)).replace("{LANGUAGE_NAMES}", "|".join(names))
    return rx


class Capture(BaseModel):
    """A parameter read from a group of a pattern's match (the first of ``group`` that took part when it is a
    list): text (through ``map``), every group that took part (``texts``, a tuple) or a number (digits with
    optional thousands commas, or a word through ``map``; the trigger does not fire when it is neither). A
    number is multiplied by ``scale``'s value for the text of group ``unit`` (e.g. hours -> 60 minutes) and
    ``add`` is added when every ``add_if`` pattern matches the lower-cased rule ("under 50" allows 49)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    group: int | list[int]
    type: str = Field(pattern="^(text|texts|number)$")
    map: dict[str, bool | str | int] = Field(default_factory=dict)
    unit: int | None = None
    scale: dict[str, int] = Field(default_factory=dict)
    add: int = 0
    add_if: list[str] = Field(default_factory=list)

    def value(self, m: re.Match, low: str = "") -> str | int | bool | tuple[str, ...] | None:
        groups = self.group if isinstance(self.group, list) else [self.group]
        if self.type == "texts":
            return tuple(m.group(g) for g in groups if m.group(g))
        raw = next((m.group(g) for g in groups if m.group(g) is not None), None)
        if raw is None:
            return None
        if self.type == "text":
            return self.map.get(raw, raw)
        n = int(raw.replace(",", "")) if raw.replace(",", "").isdigit() else self.map.get(raw)
        if n is None or isinstance(n, bool) or not isinstance(n, int):
            return n
        n *= self.scale.get(m.group(self.unit), 1) if self.unit is not None else 1
        return n + (self.add if self.add_if and all(re.search(rx, low) for rx in self.add_if) else 0)


class Trigger(BaseModel):
    """One way a kind is recognised in a rule's text."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    check: str = Field(min_length=1)
    all: list[str] = Field(min_length=1)
    none: list[str] = Field(default_factory=list)
    params: dict[str, str | int | float | bool] = Field(default_factory=dict)
    flags: dict[str, str] = Field(default_factory=dict)
    capture: dict[str, Capture] = Field(default_factory=dict)
    drop: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _compiles(self) -> Trigger:
        for rx in (*self.all, *self.none, *self.flags.values()):
            re.compile(expand(rx))
        return self

    def matches(self, low: str) -> bool:
        return all(re.search(expand(rx), low) for rx in self.all) and \
            not any(re.search(expand(rx), low) for rx in self.none)


def _lexicon(name: str) -> tuple[str, ...]:
    """A named word or pattern list: ``$NAME`` from ``_lexicons``, ``$text.NAME`` from the text layer."""
    from toolkit import text as tx
    from toolkit.compliance import _lexicons as lx

    mod, _, attr = name[1:].rpartition(".")
    val = getattr(tx if mod == "text" else lx, attr)
    if hasattr(val, "pattern"):
        return (val.pattern,)
    return tuple(val) if isinstance(val, (tuple, list, frozenset, set)) else (val,)


def _items(entries: list[str]) -> tuple[str, ...]:
    return tuple(x for e in entries for x in (_lexicon(e) if e.startswith("$") else (e,)))


class MatchSpec(BaseModel):
    """What a compiled check looks for: phrases (stemmed) and regexes; ``$NAME`` entries name a lexicon."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    phrases: list[str] = Field(default_factory=list)
    regexes: list[str] = Field(default_factory=list)

    def build(self):
        from toolkit.compliance._checks import matcher

        return matcher(_items(self.phrases), _items(self.regexes))


class Emit(BaseModel):
    """A check a cue rule compiles to: the check class by name and its arguments (matchers as :class:`MatchSpec`).

    ``flags`` are true when their pattern matches the rule; ``if_negated``/``if_affirmed`` add arguments
    by the cue's polarity; ``read`` takes arguments from named parameter readers
    (:data:`toolkit.compliance._param_readers.READERS`) given the rule's text and the cue's place;
    ``capture`` reads arguments from groups of the cue's match (a rule read with ``places: plain``).
    A list argument is passed as a tuple.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    check: str = Field(min_length=1)
    args: dict[str, str | int | float | bool | MatchSpec | list[str]] = Field(default_factory=dict)
    flags: dict[str, str] = Field(default_factory=dict)
    if_negated: dict[str, str | int | float | bool] = Field(default_factory=dict)
    if_affirmed: dict[str, str | int | float | bool] = Field(default_factory=dict)
    read: dict[str, str] = Field(default_factory=dict)
    capture: dict[str, Capture] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known(self) -> Emit:
        from toolkit.compliance._param_readers import READERS

        check_class(self.check)
        for name in self.read.values():
            if name not in READERS:
                raise ValueError(f"no parameter reader {name!r}")
        return self

    def build(self, body: str, neg: bool | None = None, pos: int | None = None, m: re.Match | None = None):
        """The check, or None when a captured parameter cannot be read from the cue's match ``m``."""
        from toolkit.compliance._param_readers import READERS

        low = body.lower()
        args = {k: v.build() if isinstance(v, MatchSpec) else tuple(v) if isinstance(v, list) else v
                for k, v in self.args.items()}
        if self.capture:
            got = {k: c.value(m, low) for k, c in self.capture.items()} if m is not None else {}
            if not got or any(v is None for v in got.values()):
                return None
            args.update(got)
        args.update({k: bool(re.search(expand(rx), low)) for k, rx in self.flags.items()})
        if neg is not None:
            args.update(self.if_negated if neg else self.if_affirmed)
        args.update({k: READERS[name](body, pos) for k, name in self.read.items()})
        return check_class(self.check)(**args)


def check_class(name: str) -> type:
    """A check class by name (the generic checks of ``_checks`` and the kinds of ``_kinds``)."""
    from toolkit.compliance import _checks, _kinds

    cls = getattr(_kinds, name, None) or getattr(_checks, name, None)
    if not isinstance(cls, type):
        raise ValueError(f"no check class {name!r}")
    return cls


class Near(BaseModel):
    """A pattern near a place of the cue: searched in the window from ``before`` characters before it to
    ``after`` characters from it, or matched at the place itself (``at``); in the rule as written
    (``(?i)`` for case-blind). ``also`` patterns must hit as well."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    rx: str
    before: int = Field(0, ge=0)
    after: int = Field(0, ge=0)
    at: bool = False
    also: list[Near] = Field(default_factory=list)

    def hit(self, body: str, pos: int) -> bool:
        if self.at:
            ok = bool(re.match(self.rx, body[pos:]))
        else:
            ok = bool(re.search(self.rx, body[max(0, pos - self.before): pos + self.after]))
        return ok and all(n.hit(body, pos) for n in self.also)

    def patterns(self) -> list[str]:
        return [self.rx, *(x for n in self.also for x in n.patterns())]


class CueRule(BaseModel):
    """One way a kind is read inside one stage of the text compiler, in a fixed order among the stage's rules.

    With a ``cue``, each place the cue occurs is looked at (only the first with ``occurrence: first``;
    places matching a ``skip`` are passed over). Places come from the shared clause-negation stage
    (``places: clause``: negated before or after the cue in its clause, "don't mind X" not a place)
    or from every match (``places: plain``); ``negation_window`` reads the polarity instead from
    negation cues at most that many words before. The rule fires at the first place where ``when``
    holds (``negated``/``affirmed``/``any``) or any ``or_if`` pattern matches the rule, and all
    ``if`` patterns match and no ``unless`` pattern does; ``else_emit`` fires instead when a place
    does not qualify. Without a cue the rule fires when its patterns say so. A rule does not fire
    when a check with a label or class in ``unless_emitted`` is already compiled; ``final`` ends
    the stage once the rule has looked at a place. Patterns are searched in the lower-cased rule;
    ``{NAME}`` stands for a cue of the kind file's ``cues``. ``or_near`` patterns qualify a place like
    ``or_if`` but only near it. ``final: seen`` ends the stage once the rule has looked at a place,
    ``final: fired`` once it has fired. ``near`` patterns must all hit near the place; the rule does not
    fire when a reader named in ``unless_read`` finds something in the rule. A ``build`` rule hands
    every match of its cue (``places: plain``) to a named check builder
    (:data:`toolkit.compliance._param_readers.BUILDERS`), which reads the match's groups (only the
    first with ``occurrence: first``); once a build rule of a ``group`` has matched, later rules of
    that group in the stage are skipped; ``final: seen`` ends the stage when its patterns held,
    ``final: fired`` when a builder says so (returns true), ``final: emitted`` when any check is compiled.
    An emit rule of a ``group`` is skipped once a rule of that group has fired (alternatives: the first
    that fires wins). ``search`` says where the cue is looked for: the rule as written ignoring case
    (``text``), the lower-cased rule (``lower``, like the other patterns) or the rule as written with its
    case (``exact``). ``drop`` names the generic checks a fired rule supersedes (the ``kinds`` stage);
    ``supersedes`` names checks already compiled (by class or label) that a fired rule removes.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    stage: str = Field(pattern=r"^[a-z_]+$")
    order: int
    cue: str | None = None
    places: str = Field("clause", pattern="^(clause|plain)$")
    negation_window: int | None = None
    skip: list[Near] = Field(default_factory=list)
    occurrence: str = Field("any", pattern="^(first|any)$")
    when: str = Field("any", pattern="^(negated|affirmed|any)$")
    or_if: list[str] = Field(default_factory=list)
    or_near: list[Near] = Field(default_factory=list)
    near: list[Near] = Field(default_factory=list)
    unless_read: list[str] = Field(default_factory=list)
    if_: list[str] = Field(default_factory=list, alias="if")
    unless: list[str] = Field(default_factory=list)
    unless_emitted: list[str] = Field(default_factory=list)
    final: str = Field("", pattern="^(|seen|fired|emitted)$")
    build: str | None = None
    group: str | None = None
    search: str = Field("text", pattern="^(text|lower|exact)$")
    drop: list[str] = Field(default_factory=list)
    supersedes: list[str] = Field(default_factory=list)
    emit: Emit | None = None
    else_emit: Emit | None = None

    @model_validator(mode="after")
    def _emits(self) -> CueRule:
        if (self.emit is None) == (self.build is None):
            raise ValueError("a cue rule has either emit or build")
        if self.build is not None and (self.cue is None or self.places != "plain"):
            raise ValueError("a build rule needs a cue read with places: plain")
        return self


class Kind(BaseModel):
    """One kind of the catalogue."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    checks: list[str] = Field(min_length=1)
    about: str = Field(min_length=1)
    examples: KindExamples
    recognise: list[Trigger] = Field(default_factory=list)
    cues: dict[str, str] = Field(default_factory=dict)
    rules: list[CueRule] = Field(default_factory=list)

    @model_validator(mode="after")
    def _has_examples(self) -> Kind:
        e = self.examples
        if self.checks == ["Unknown"]:
            if not e.must_abstain:
                raise ValueError(f"kind {self.kind}: needs must_abstain examples")
        elif not (e.must_flag and e.must_pass):
            raise ValueError(f"kind {self.kind}: needs at least one must_flag and one must_pass example")
        for t in self.recognise:
            if t.check not in self.checks:
                raise ValueError(f"kind {self.kind}: recognise names {t.check}, not one of its checks {self.checks}")
        for r in self.rules:
            for e in (r.emit, r.else_emit):
                if e is not None and e.check not in self.checks:
                    raise ValueError(f"kind {self.kind}: a rule emits {e.check}, not one of its checks {self.checks}")
            for rx in (r.cue or "", *r.or_if, *r.if_, *r.unless,
                       *(v for e in (r.emit, r.else_emit) if e for v in e.flags.values())):
                re.compile(self.fill(rx))
            for n in (*r.skip, *r.or_near, *r.near):
                for rx in n.patterns():
                    re.compile(rx)
            from toolkit.compliance._param_readers import READERS

            for name in r.unless_read:
                if name not in READERS:
                    raise ValueError(f"kind {self.kind}: no parameter reader {name!r}")
            if r.build is not None:
                import toolkit.compliance._interpreter  # noqa: F401  (registers the builders)
                from toolkit.compliance._param_readers import BUILDERS

                if r.build not in BUILDERS:
                    raise ValueError(f"kind {self.kind}: no check builder {r.build!r}")
        return self

    def fill(self, rx: str) -> str:
        """A pattern with the kind's own cues and the shared cues written out."""
        for name, val in self.cues.items():
            rx = rx.replace("{" + name + "}", val)
        return expand(rx)


@lru_cache(maxsize=1)
def catalogue() -> tuple[Kind, ...]:
    """Every kind file, validated (a bad file raises naming it)."""
    out = []
    folder = resources.files("toolkit.resources.compliance").joinpath("kinds")
    for f in sorted(folder.iterdir(), key=lambda p: p.name):
        if not f.name.endswith(".yaml"):
            continue
        try:
            out.append(Kind.model_validate(yaml.safe_load(f.read_text("utf-8"))))
        except Exception as exc:
            raise ValueError(f"toolkit/resources/compliance/kinds/{f.name}: {exc}") from None
    return tuple(out)


def recognise_data(text: str) -> tuple[list, set[str]]:
    """Checks for the kinds whose recognition is data (``recognise`` in their files), and what they supersede."""
    from toolkit.compliance import _kinds

    low = text.lower().replace("\u2019", "'")
    out, drop = [], set()
    for kind in catalogue():
        for trig in kind.recognise:
            if not trig.matches(low):
                continue
            params = {**trig.params, **{k: bool(re.search(expand(rx), low)) for k, rx in trig.flags.items()}}
            if trig.capture:
                m = re.search(expand(trig.all[0]), low)
                got = {k: c.value(m) for k, c in trig.capture.items()}
                if any(v is None for v in got.values()):
                    continue
                params.update(got)
            out.append(getattr(_kinds, trig.check)(**params))
            drop.update(trig.drop)
            break
    return out, drop


@cache
def stage_rules(stage: str) -> tuple[tuple[Kind, CueRule], ...]:
    """The cue rules of one compiler stage, across all kind files, in their order."""
    rules = [(k, r) for k in catalogue() for r in k.rules if r.stage == stage]
    orders = [r.order for _, r in rules]
    if len(set(orders)) != len(orders):
        raise ValueError(f"stage {stage}: two cue rules share an order")
    return tuple(sorted(rules, key=lambda kr: kr[1].order))


def _places(kind: Kind, r: CueRule, body: str) -> list[tuple[int, bool]]:
    from toolkit import text as tx
    from toolkit.compliance._interpreter import cue_places

    rx = kind.fill(r.cue or "")
    if r.places == "clause":
        places = cue_places(body, rx)
    else:
        places = [(m.start(), False) for m in _cue_matches(rx, body, r.search)]
    places = [p for p in places if not any(s.hit(body, p[0]) for s in r.skip)]
    if r.negation_window is not None:
        places = [(pos, tx.negated_at(body, pos, window=r.negation_window)) for pos, _ in places]
    return places[:1] if r.occurrence == "first" else places


def _match_at(kind: Kind, r: CueRule, body: str, pos: int) -> re.Match | None:
    """The cue's match at a place (for an emit rule that captures parameters)."""
    src = body.lower() if r.search == "lower" else body
    return re.compile(kind.fill(r.cue or ""), 0 if r.search != "text" else re.I).match(src, pos)


def _cue_matches(rx: str, body: str, search: str) -> list[re.Match]:
    """Every match of a cue: in the rule ignoring case, in the lower-cased rule, or with its case."""
    if search == "lower":
        return list(re.finditer(rx, body.lower()))
    return list(re.finditer(rx, body, flags=0 if search == "exact" else re.I))


def run_stage(stage: str, body: str, out: list, state: dict | None = None) -> dict:
    """Append to ``out`` the checks one stage's cue rules read in ``body`` (a rule's text after its conditions);
    returns what the stage's builders noted (e.g. ``gated``: requirements read as judgement only; ``drop``:
    labels of generic checks superseded). ``state`` may carry what the builders read besides ``body``."""
    from toolkit.compliance._param_readers import READERS

    low = body.lower()
    state = {} if state is None else state  # what a stage's builders share (e.g. the places an action rule read)
    groups = state.setdefault("groups", set())
    for kind, r in stage_rules(stage):
        if r.emit is not None and r.group is not None and r.group in groups:
            continue
        if r.unless_emitted and any(getattr(c, "label", None) in r.unless_emitted or type(c).__name__ in r.unless_emitted
                                    for c in out):
            continue
        gate = all(re.search(kind.fill(rx), low) for rx in r.if_) and \
            not any(re.search(kind.fill(rx), low) for rx in r.unless) and \
            not any(READERS[name](body, None) for name in r.unless_read)
        if r.build is not None:
            from toolkit.compliance._param_readers import BUILDERS

            if gate and r.group not in groups:
                found = _cue_matches(kind.fill(r.cue or ""), body, r.search)
                said = [BUILDERS[r.build](body, m, out, state) for m in (found[:1] if r.occurrence == "first" else found)]
                if found and r.group is not None:
                    groups.add(r.group)
                if r.final == "fired" and any(said):
                    return state
            if gate and r.final == "seen" or r.final == "emitted" and out:
                return state
            continue
        if r.cue is None:
            if gate and r.emit is not None:
                _fired(r, state, out, r.emit.build(body))
                if r.final:
                    return state
            continue
        places = _places(kind, r, body)
        extra = any(re.search(kind.fill(rx), low) for rx in r.or_if)
        fired = False
        for pos, neg in places:
            ok = ({"negated": neg, "affirmed": not neg, "any": True}[r.when] or extra or
                  any(n.hit(body, pos) for n in r.or_near)) and all(n.hit(body, pos) for n in r.near)
            if ok and gate and r.emit is not None:
                check = r.emit.build(body, neg, pos, _match_at(kind, r, body, pos) if r.emit.capture else None)
                if check is None:
                    continue
                _fired(r, state, out, check)
                fired = True
                break
            if r.else_emit is not None and gate:
                out.append(r.else_emit.build(body, neg, pos))
                break
        if r.final == "seen" and places or r.final == "fired" and fired or r.final == "emitted" and out:
            return state
    return state


def _fired(r: CueRule, state: dict, out: list, check) -> None:
    """An emit rule fired: the checks it supersedes leave ``out``, its check joins, its group is decided
    and the generic checks it names are dropped."""
    if r.supersedes:
        out[:] = [c for c in out if type(c).__name__ not in r.supersedes and getattr(c, "label", None) not in r.supersedes]
    out.append(check)
    if r.group is not None:
        state["groups"].add(r.group)
    if r.drop:
        state.setdefault("drop", set()).update(r.drop)


def read_kinds(text: str) -> tuple[list, set[str]]:
    """Checks for the kinds a preference text names, and the labels of generic checks they supersede.

    The kinds whose recognition is one trigger (``recognise`` in their files) come first, then the cue
    rules of stage ``kinds`` in their order, whose builders read parameters
    (:mod:`toolkit.compliance._kind_builders`)."""
    import toolkit.compliance._kind_builders  # noqa: F401  (registers the builders)

    out, drop = recognise_data(text)
    state = run_stage("kinds", text.replace("\u2019", "'"), out, {"text": text})
    return out, drop | state.get("drop", set())
