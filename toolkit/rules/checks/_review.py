"""Reviewers and the LLM compiler (TellOnce B.2).

The reviewer gets the rule, the proposed check and the cases' evidence, never the compiler's
expected labels or rationale, and labels every case itself. It must be a different method from the
compiler: offline the compiler reads resource patterns, while the reviewer is the compliance reader
(``toolkit.compliance.read``) on the rule's own words and the full evidence. With a model, compiler
and reviewer are separate gateway calls with separate prompts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolkit import text as tx
from toolkit.llm import ChatModel, StructuredRequest, load_prompt
from toolkit.records import EvidenceRecord, Rule
from toolkit.rules.checks._compiler import Case, Proposal, Review, Round
from toolkit.rules.checks._judge import (
    _evidence_block,
    _rule_block,
    scope_stage,
    to_reader_evidence,
    to_reader_rule,
)
from toolkit.rules.checks._resources import semantic
from toolkit.rules.checks._types import Check, FieldEquals, FileLacks, SemanticSpec, check_from_dict

_MAP = {"violation": "violation", "pass": "pass", "not_applicable": "not_applicable", "abstain": None}


class ReaderReviewer:
    """Offline reviewer: the compliance reader labels each case on the rule's own words."""

    name = "compliance-reader"

    def review(self, rule: Rule, check: Check, evidence: Sequence[EvidenceRecord]) -> Review:
        from toolkit.compliance import read_many

        crule = to_reader_rule(rule)
        verdicts = read_many([(crule, to_reader_evidence(ev), ()) for ev in evidence])
        # the proposal says at which stages it checks; a case at any other stage is one the rule
        # does not reach (the stage checks were validated against the evidence available there)
        needs = check.needs()
        labels = tuple("not_applicable" if ev.stage not in needs or scope_stage(rule, ev.task) is False
                       else _MAP[v.label] for ev, v in zip(evidence, verdicts, strict=True))
        if isinstance(check, SemanticSpec):  # where the reader cannot tell or sees nothing: own token reading
            labels = tuple(tl if lab in ("pass", None) and (tl := token_label(rule, ev)) is not None
                           and _applies_to(rule, ev) else lab for lab, ev in zip(labels, evidence, strict=True))
        if isinstance(check, SemanticSpec) and _ban_opening(rule.behavior):  # a random literal the rule bans
            labels = tuple("violation" if lab in ("pass", None) and ev.stage in needs and _applies_to(rule, ev)
                           and random_literal(rule, ev) else lab for lab, ev in zip(labels, evidence, strict=True))
        if isinstance(check, SemanticSpec) and not _ban_opening(rule.behavior):  # "give the command you ran"
            labels = tuple(cl if lab is None and ev.stage in needs and (cl := command_given(rule, ev)) is not None
                           else lab for lab, ev in zip(labels, evidence, strict=True))
        if check.programmatic and not isinstance(check, FieldEquals):  # counts and JSON keys: own reading
            labels = tuple(sl if lab in ("pass", None) and (sl := structured_label(rule, ev)) is not None else lab
                           for lab, ev in zip(labels, evidence, strict=True))
        if isinstance(check, FieldEquals):  # literal rules: own token reading, at the stages checked
            labels = tuple(lit if ev.stage in needs and (lit := literal_label(rule, ev)) is not None else lab
                           for lab, ev in zip(labels, evidence, strict=True))
        if isinstance(check, FileLacks):  # a literal banned from files of a type: own reading of the files
            labels = tuple(fl if ev.stage in needs and (fl := file_literal_label(rule, ev)) is not None else lab
                           for lab, ev in zip(labels, evidence, strict=True))
        if isinstance(check, SemanticSpec):  # evidence that only restates the rule shows nothing
            labels = tuple(None if restates_rule(rule, check, ev) else lab
                           for lab, ev in zip(labels, evidence, strict=True))
        faithful, why = True, ""
        if isinstance(check, SemanticSpec):
            extra = set(tx.stems_of(check.subject)) - set(tx.stems_of(" ".join([rule.behavior, *rule.conditions,
                                                                                  *rule.exceptions])))
            extra = {w for w in extra if not w.isdigit()}  # "2.1" and "2" tokenise apart; numbers are the rule's
            if extra:
                faithful, why = False, f"the specification adds words the rule does not have: {sorted(extra)}"
        return Review(faithful, labels, why)  # type: ignore[arg-type]


def restates_rule(rule: Rule, check: SemanticSpec, ev: EvidenceRecord) -> bool:
    """Whether the evidence carries the specification's subject word for word (a reply or file
    saying "I made sure to <the rule>") and the rule names no code-like token the reviewer could
    find in it (:func:`_rule_tokens`): such text shows no behaviour, so the reviewer cannot tell."""
    if _rule_tokens(rule.behavior):
        return False
    subject = " ".join(tx.words(check.subject.lower()))
    if len(subject.split()) < 3:
        return False
    texts = [ev.reply or "", *(a.content for a in ev.artifacts or []),
             json.dumps(ev.action, ensure_ascii=False) if ev.action is not None else ""]
    return any(subject in " ".join(tx.words(t.lower())) for t in texts if t)


def _ban_opening(text: str) -> bool:
    """Whether ``text`` opens by banning something (``semantic.yaml``'s ``ban_opening`` kind)."""
    return semantic().ban_opening.search(text) is not None


_COMMENTLINE = re.compile(r"^\s*(?://|#|%|--\s|/\*|\*|<!--|\{%-?\s*comment)")


def _rule_tokens(part: str) -> list[str]:
    """Tokens of a rule as written that look like code: backticked text, or words carrying
    punctuation (``.``, ``()``, a backslash) or inner capitals."""
    out = [m.strip() for m in re.findall(r"`([^`]+)`", part)]
    for raw in re.sub(r"`[^`]*`", " ", part).split():
        w = raw.strip("\"',.;:()[]")
        if re.fullmatch(r"[a-z_]\w*(?:/[a-z_]\w*){2,}", w):  # a bare list of code names: "malloc/calloc/realloc"
            out += [x for x in w.split("/") if len(x) >= 3]
            continue
        if re.fullmatch(r"[a-z]\w*(?::[a-z]\w*)+", w):  # a task name: "db:schema:load"
            out.append(w)
            continue
        if len(w) >= 3 and (re.search(r"[._\\]", w) or "()" in raw
                            or re.search(r"[a-z][A-Z]", w)) and not re.fullmatch(r"e\.g|i\.e|etc", w):
            out.append(w)
    return [t.removesuffix("()") for t in dict.fromkeys(out)]


def token_label(rule: Rule, ev: EvidenceRecord) -> str | None:
    """The reviewer's token reading of a rule on evidence (a different method from the compiler's
    element tables): a banned token used in a command, a code line (not a comment) or affirmed in
    the reply is a violation; a required token absent everywhere is a violation."""
    lim = re.search(r"\b(?:under|at most|no more than|fewer than|within|to)\s+(\d+)\s+words\b", rule.behavior, re.I)
    if lim:  # a word limit: count the words of the files written, else of the reply
        texts = [a.content for a in ev.artifacts or [] if not a.deleted] or ([ev.reply] if ev.reply else [])
        if texts:
            return "violation" if max(len(t.split()) for t in texts) > int(lim.group(1)) else "pass"
    banned, required = [], []
    for part in re.split(r";", rule.behavior):
        if _ban_opening(part.strip()):
            banned.extend(_rule_tokens(part))
            continue
        for tok in _rule_tokens(part):  # a token inside the part's negation scope is banned there
            i = part.find(tok)
            (banned if i >= 0 and tx.negated_at(part, i) else required).append(tok)
    if not banned and not required:
        return None
    places: list[str] = []
    if ev.action is not None:
        places.append(json.dumps(ev.action, ensure_ascii=False))
    for a in ev.artifacts or []:
        if not a.deleted:
            places += [ln for ln in a.content.splitlines() if not _COMMENTLINE.search(ln)]

    def used(tok: str) -> bool:
        if any(tok.lower() in p.lower() for p in places):
            return True
        r = ev.reply or ""
        i = r.lower().find(tok.lower())
        return i >= 0 and not tx.negated_at(r, i)

    if banned:
        return "violation" if any(used(t) for t in banned) else "pass"
    return "pass" if any(used(t) for t in required) else "violation"


_COUNT = re.compile(r"(?P<n>\d[\d,]*)\s*[- ]?(?P<unit>words?|lines?)\b", re.IGNORECASE)
_JSON_NAME = re.compile(r"`([A-Za-z_][\w\-]*)`|\"([A-Za-z_][\w\-]*)\"|'([A-Za-z_][\w\-]*)'")


def _reply_object(reply: str) -> dict | None:
    """The reply as one JSON object (a fenced block's body, else the whole reply), or None."""
    body = reply.strip()
    m = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", body, re.DOTALL)
    if m:
        body = m.group(1)
    try:
        obj = json.loads(body)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


_ASSIGNED = re.compile(r"""(?P<name>[A-Za-z_][\w\-]*)["']?\s*[:=]\s*["'](?P<value>[^"'\s]{10,})["']""")


def _looks_random(value: str) -> bool:
    """A literal that reads as generated, not written: no template or environment reference, three
    or more character classes, and at least 3 bits of Shannon entropy per character."""
    import math
    from collections import Counter

    if re.match(r"(?:\{\{|\$|<|%|/|os\.|env|process\.|vault)", value, re.IGNORECASE) or "://" in value:
        return False
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z0-9]"))
    n = len(value)
    entropy = -sum(c / n * math.log2(c / n) for c in Counter(value).values())
    return classes >= 3 and entropy >= 3.0


def random_literal(rule: Rule, ev: EvidenceRecord) -> bool:
    """The reviewer's own reading of a rule that bans writing some kind of value: a generated-looking
    literal (:func:`_looks_random`) assigned, in a written file or a reply, to a name that shares a
    word stem with the rule in its last part, the thing it names ("service_password" and "passwords")."""
    rule_stems = {tx.stem(w) for w in tx.words(rule.behavior.lower())}
    texts = [a.content for a in ev.artifacts or [] if not a.deleted] + ([ev.reply] if ev.reply else [])
    for t in texts:
        for ln in t.splitlines():
            if _COMMENTLINE.search(ln):
                continue
            for m in _ASSIGNED.finditer(ln):
                parts = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", m.group("name")).lower())
                if parts and tx.stem(parts[-1]) in rule_stems and _looks_random(m.group("value")):
                    return True
    return False


_SPAN = re.compile(r"`([^`\n]+)`|^\s*\$\s+(.+)$", re.MULTILINE)


def command_given(rule: Rule, ev: EvidenceRecord) -> str | None:
    """The reviewer's reading of a rule that asks for the command(s) run to be given in the reply: a
    command line in the reply (an inline code span or a ``$`` line of at least two words whose
    first is a lowercase program name) is a pass, none is a violation. None: the rule asks for no
    command, or there is no reply."""
    if ev.reply is None or "command" not in {tx.stem(w) for w in tx.words(rule.behavior.lower())}:
        return None
    for m in _SPAN.finditer(ev.reply):
        words = (m.group(1) or m.group(2) or "").split()
        if len(words) >= 2 and re.fullmatch(r"[a-z][\w.\-]*", words[0]):
            return "pass"
    return "violation"


def structured_label(rule: Rule, ev: EvidenceRecord) -> str | None:
    """The reviewer's own reading of a count or JSON-key rule on a reply (a different method from
    the compiler's phrase table): a number with a unit of words or lines that is not a floor ("at
    least") is a cap on the reply's count; a rule naming JSON and quoting key names (or listing two
    or more bare, ``semantic.json_key_list``) wants a reply that parses as one JSON object carrying
    every key. None when the rule states neither or there is no reply to read."""
    if ev.reply is None:
        return None
    text = rule.behavior
    if re.search(r"\bjson\b", text, re.IGNORECASE):
        names = [next(g for g in m.groups() if g) for m in _JSON_NAME.finditer(text)]
        if not names and (listed := semantic().json_key_list.search(text)):  # bare names: "fields a, b and c"
            names = [n for n in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", listed.group("names")) if n]
        if names:
            obj = _reply_object(ev.reply)
            return "pass" if obj is not None and all(n in obj for n in names) else "violation"
    caps = [m for m in _COUNT.finditer(text) if not semantic().count_floor.search(text[: m.start()])]
    if len(caps) == 1:
        n = int(caps[0].group("n").replace(",", ""))
        unit = caps[0].group("unit").lower()
        got = len(tx.nonempty_lines(ev.reply)) if unit.startswith("line") else len(ev.reply.split())
        return "violation" if got > n else "pass"
    return None


def _applies_to(rule: Rule, ev: EvidenceRecord) -> bool:
    from toolkit.compliance import applies

    return applies(to_reader_rule(rule), ev.task, None) is not False


_KEY = re.compile(r'"([\w.\-]+)"\s*:|^\s*([\w.\-]+)\s*[:=]', re.MULTILINE)
#: a quoted literal (an apostrophe inside a word, "the tool's", opens none)
_LITERAL = re.compile(r"(?:[`\"]|(?<!\w)')([^`\"']+)(?:[`\"]|'(?!\w))")


#: an unquoted literal value the rule writes out: an address (``noreply@x.example``), a path-like
#: token (``agent/work``) or a joined token carrying a digit (``eu-central-1``)
_BARE = re.compile(r"(?<![\w@/.\-])(\w[\w.+\-]*@[\w\-]+(?:\.[\w\-]+)+|\w[\w\-]*(?:/[\w.\-]+)+"
                   r"|[A-Za-z]\w*(?:[.\-]\w+)*[.\-]\w*\d\w*)(?![\w@/\-])")
_NAMED = re.compile(r"\b(?:named|called)\s+[`\"']?([\w./\-]+?)[`\"']?\s*\.?$", re.IGNORECASE)
_OPENING = re.compile(r"\b(?:start|begin|open|prefix)\w*\b", re.IGNORECASE)


def command_label(rule: Rule, command: str) -> str | None:
    """The reviewer's token reading of a literal rule on a shell command (a different method from
    the compiler's parse): the rule's verbs (words it shares with the command's leading words)
    decide applicability; then a quoted string of the command (for an opening) or any bare token
    (``+`` and ``src:`` stripped) is compared with the rule's literals."""
    lits = [x for x in _LITERAL.findall(rule.behavior) if x.strip()] + _NAMED.findall(rule.behavior)
    lits += re.findall(r"\b(?:true|false)\b", _LITERAL.sub(" ", rule.behavior), re.IGNORECASE)  # a bare boolean
    if not lits:
        return None
    head = re.findall(r"[a-z]+", " ".join(command.split()[:3]).lower())
    rule_words = {tx.stem(w) for w in tx.words(rule.behavior.lower())}
    if not any(tx.stem(w) in rule_words for w in head if w not in ("git", "gh", "sudo")):
        return "not_applicable"
    if _OPENING.search(rule.behavior):
        quoted = re.findall(r"\"([^\"]*)\"|'([^']*)'", command)
        texts = [a or b for a, b in quoted]
        if not texts:
            return None
        return "pass" if any(t.startswith(lit) for t in texts for lit in lits) else "violation"
    toks = [t.lstrip("+").split(":")[-1] for t in command.split()[2:] if not t.startswith("-")]
    return "pass" if any(t.lower() == lit.lower() for t in toks for lit in lits) else "violation"


def file_literal_label(rule: Rule, ev: EvidenceRecord) -> str | None:
    """The reviewer's own reading of a rule that keeps a quoted literal out of files of a type: the
    file types are the rule's words that name one (``programmatic.yaml``'s ``file_types``, or a
    ``.ext`` token); no written file of those types: not applicable; one containing a literal of
    the rule: violation; else pass. None: the rule names no file type or no literal."""
    from toolkit.rules.checks._resources import programmatic

    table = programmatic()
    endings = {e for w in re.findall(r"[\w.+#\-]+", rule.behavior) for e in table.endings(w)}
    lits = [x for x in _LITERAL.findall(rule.behavior) if x.strip() and not table.endings(x)]
    if not endings or not lits or ev.artifacts is None:
        return None
    files = [a for a in ev.artifacts if not a.deleted
             and any(a.path.lower().endswith(e) if e.startswith(".") else a.path.rsplit("/", 1)[-1] == e
                     for e in endings)]
    if not files:
        return "not_applicable"
    return "violation" if any(lit in a.content for a in files for lit in lits) else "pass"


def _banned_literal(rule: Rule) -> bool:
    """Whether the rule's literal value is negated: in the text layer's negation scope, or after a
    negation word of its sentence (``negation_word`` in ``semantic.yaml``) ("never call X with `env` set to `prod`" bans the value it names)."""
    lits = list(_LITERAL.finditer(rule.behavior))
    if not lits:
        return False
    i = lits[-1].start()
    head = re.split(r"[.;!?]\s", rule.behavior[:i])[-1]  # the sentence before the value
    return tx.negated_at(rule.behavior, i) or semantic().negation_word.search(head) is not None


def literal_label(rule: Rule, ev: EvidenceRecord) -> str | None:
    """The reviewer's own reading of a literal rule: does the evidence set a key the rule names (a
    word of the rule), and is one of the rule's literals (quoted, or a bare true / false) its value?
    A literal in a negation's scope is banned, so the labels swap."""
    got = _literal_label(rule, ev)
    if got in ("pass", "violation") and _banned_literal(rule):
        return "violation" if got == "pass" else "pass"
    return got


def _literal_label(rule: Rule, ev: EvidenceRecord) -> str | None:
    from toolkit.rules.checks._types import evidence_text

    words = {w.lower().strip(".") for w in re.findall(r"[\w.\-]+", rule.behavior)}
    if ev.action is not None and isinstance(ev.action.get("args"), dict):
        lits = [x.strip().lower() for x in _LITERAL.findall(rule.behavior)] + [x.lower() for x in _NAMED.findall(rule.behavior)]
        lits += [x.lower() for x in _BARE.findall(_LITERAL.sub(" ", rule.behavior))]
        lits += [x.lower() for x in re.findall(r"\b(?:true|false)\b", _LITERAL.sub(" ", rule.behavior), re.I)]
        for k, v in ev.action["args"].items():
            if k.lower() in words and lits:
                return "pass" if str(v).strip().lower() in lits else "violation"
    if ev.action is not None and isinstance(ev.action.get("command"), str):
        return command_label(rule, ev.action["command"])
    text = (ev.reply or "") if ev.stage == "delivery" else evidence_text(ev)
    if ev.action is not None:
        text = json.dumps(ev.action)
    lits = [x.strip().lower() for x in _LITERAL.findall(rule.behavior)]
    words = {w.lower() for w in re.findall(r"[\w.\-]+", rule.behavior)}
    keys = [k for m in _KEY.finditer(text) for k in m.groups() if k and k.lower() in words]
    if not keys:
        return "not_applicable"
    vals = re.findall(rf'"?{re.escape(keys[0])}"?\s*[:=]\s*"?([^",}}\n]*)"?', text)
    if not vals or not lits:
        return None
    return "pass" if vals[0].strip().lower() in lits else "violation"


# -- LLM roles ----------------------------------------------------------------------------------
class LLMCase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stage: Literal["pre_action", "artifact", "delivery"]
    task: str
    reply: str | None = None
    action: dict | None = None
    artifacts: dict[str, str] | None = None
    expected: Literal["pass", "violation", "not_applicable"]


class LLMProposal(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcome: Literal["programmatic", "semantic", "guidance", "inactive"]
    check: dict | None = None
    cases: list[LLMCase] = Field(default_factory=list)
    reason: str = ""


class LLMReview(BaseModel):
    model_config = ConfigDict(extra="forbid")

    faithful: bool
    clear: bool = True
    labels: list[Literal["pass", "violation", "not_applicable", "unknown"]]
    reason: str = ""


def _feedback(rounds: Sequence[Round]) -> str:
    return "\n".join(f"round {r.number}: {r.rejection}" for r in rounds if r.rejection) or "(first proposal)"


class LLMCompiler:
    """Compiler through the gateway: outcome, check and validation cases in one structured answer."""

    name = "llm-compiler"

    def __init__(self, model: ChatModel):
        self.model = model

    def propose(self, rule: Rule, feedback: Sequence[Round]) -> Proposal:
        prompt = load_prompt("checks_compile")
        user = prompt.render_user(rule=_rule_block(rule), feedback=_feedback(feedback))
        oc = self.model.call(StructuredRequest(
            messages=({"role": "system", "content": prompt.system}, {"role": "user", "content": user}),
            schema=LLMProposal, role="checks_compile", prompt_version=prompt.version, id=rule.id))
        if not oc.ok or oc.value is None:
            return Proposal("inactive", None, reason=f"no valid answer ({oc.error or 'malformed'})", status="unknown")
        ans: LLMProposal = oc.value
        if ans.outcome in ("guidance", "inactive") or ans.check is None:
            out = ans.outcome if ans.outcome in ("guidance", "inactive") else "guidance"
            return Proposal(out, None, reason=ans.reason, clear=out == "guidance")  # type: ignore[arg-type]
        try:
            chk = check_from_dict(ans.check)
        except (TypeError, ValueError) as exc:
            return Proposal("guidance", None, reason=f"unusable check ({exc})")
        cases = []
        for c in ans.cases:
            arts = None if c.artifacts is None else [{"path": p, "content": t, "deleted": False}
                                                      for p, t in c.artifacts.items()]
            ev = EvidenceRecord(stage=c.stage, task=c.task, reply=c.reply, action=c.action, artifacts=arts)
            cases.append(Case(ev, c.expected, f"{c.stage}: {c.expected}"))
        return Proposal(ans.outcome, chk, tuple(cases), reason=ans.reason)


class LLMReviewer:
    """Reviewer through the gateway (its own prompt): faithful? clear? and a blind label per case."""

    name = "llm-reviewer"

    def __init__(self, model: ChatModel):
        self.model = model

    def review(self, rule: Rule, check: Check, evidence: Sequence[EvidenceRecord]) -> Review:
        prompt = load_prompt("checks_review")
        cases = "\n".join(f"case {i + 1}: {_evidence_block(ev)}" for i, ev in enumerate(evidence))
        user = prompt.render_user(rule=_rule_block(rule), check=json.dumps(check.to_dict(), ensure_ascii=False),
                                  cases=cases, n=len(evidence))
        oc = self.model.call(StructuredRequest(
            messages=({"role": "system", "content": prompt.system}, {"role": "user", "content": user}),
            schema=LLMReview, role="checks_review", prompt_version=prompt.version, id=rule.id))
        if not oc.ok or oc.value is None or len(oc.value.labels) != len(evidence):
            return Review(False, tuple(None for _ in evidence), "no valid review")
        labels: Any = tuple(None if x == "unknown" else x for x in oc.value.labels)
        return Review(oc.value.faithful and oc.value.clear, labels, oc.value.reason)
