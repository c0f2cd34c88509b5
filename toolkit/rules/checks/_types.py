"""Check types (TellOnce B.2), registered by name, and the judgment they produce.

Programmatic types run locally without a model call:

- ``max_words``: an explicit word limit on the reply (delivery stage);
- ``json_fields``: a JSON reply that must carry named fields (delivery stage);
- ``field_equals``: a field of an action, artifact or reply equal to a literal (``starts_with``:
  starting with one; ``field_not_equals``: never equal to one);
- ``file_lacks_literal``: no written file of a named type contains a literal.

``semantic`` is a specification (when the rule applies, what is required, what counts as
compliance and violation, which evidence each stage needs) judged by the compliance reader or an
LLM (:mod:`toolkit.rules.checks._judge`). Every type declares the evidence it needs per stage; a
check never needs evidence that does not exist yet at its stage (:data:`AVAILABLE`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Literal

from toolkit import text as tx
from toolkit.records import ArtifactRecord, EvidenceRecord

Stage = Literal["pre_action", "artifact", "delivery"]
Label = Literal["pass", "violation", "not_applicable", "unknown"]
STAGES: tuple[Stage, ...] = ("pre_action", "artifact", "delivery")
LABELS: tuple[Label, ...] = ("pass", "violation", "not_applicable", "unknown")

#: the evidence that exists at each checking stage (B.3): a pre-action check cannot read an
#: artifact that only exists after the action runs, nor a reply that is not written yet
AVAILABLE: dict[str, frozenset[str]] = {
    "pre_action": frozenset({"task", "action"}),
    "artifact": frozenset({"task", "action", "artifacts"}),
    "delivery": frozenset({"task", "reply", "artifacts"}),
}


@dataclass(frozen=True)
class Judgment:
    """A checker's answer for one rule on one piece of evidence, with verbatim quotes."""

    label: Label
    reason: str
    quotes: tuple[str, ...] = ()
    decided_by: str = ""

    @property
    def blocking(self) -> bool:
        return self.label == "violation"


def evidence_text(ev: EvidenceRecord) -> str:
    """All text in the evidence (task, action, artifacts, reply): where quotes must come from."""
    parts = [ev.task or ""]
    if ev.action:
        parts.append(json.dumps(ev.action, sort_keys=True, ensure_ascii=False))
    parts += [f"{a.path}\n{a.content}" for a in ev.artifacts or []]
    parts.append(ev.reply or "")
    return "\n".join(parts)


def verbatim(quotes: Sequence[str], ev: EvidenceRecord) -> tuple[str, ...]:
    """Keep only quotes that occur character for character in the evidence."""
    hay = evidence_text(ev)
    return tuple(dict.fromkeys(q for q in quotes if q and q.strip() and q in hay))


class Check:
    """Base of every check type: a name, the stages it runs at, the evidence each stage needs."""

    type: ClassVar[str] = ""
    programmatic: ClassVar[bool] = True

    def stages(self) -> tuple[Stage, ...]:
        return tuple(s for s in STAGES if s in self.needs())

    def needs(self) -> dict[str, list[str]]:  # stage -> evidence keys
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **asdict(self)}  # type: ignore[call-overload]

    def run(self, ev: EvidenceRecord) -> Judgment:
        raise NotImplementedError

    def stage_problems(self) -> list[str]:
        """Evidence a stage would need before it exists (empty for a well-formed check)."""
        return [f"stage {s} needs {k}, which does not exist yet at that stage"
                for s, keys in self.needs().items() for k in keys if k not in AVAILABLE.get(s, ())]


def _na(stage: str, what: str) -> Judgment:
    return Judgment("not_applicable", f"no {what} at the {stage} stage", (), "programmatic")


def _no_reply(ev: EvidenceRecord) -> Judgment | None:
    """The guard every reply check shares: not applicable before delivery, unknown without a reply."""
    if ev.stage != "delivery":
        return _na(ev.stage, "reply")
    if ev.reply is None:
        return Judgment("unknown", "the delivery evidence carries no reply", (), "programmatic")
    return None


@dataclass(frozen=True)
class MaxWords(Check):
    """An explicit word limit on the reply's prose (code blocks are not words of the reply)."""

    value: int
    type: ClassVar[str] = "max_words"

    def needs(self) -> dict[str, list[str]]:
        return {"delivery": ["reply"]}

    def run(self, ev: EvidenceRecord) -> Judgment:
        if (j := _no_reply(ev)) is not None:
            return j
        n = tx.prose_word_count(ev.reply)
        first = " ".join(ev.reply.split()[:8])
        quote = first if first in ev.reply else ""
        if n > self.value:
            return Judgment("violation", f"reply has {n} words, limit {self.value}", (quote,) if quote else (),
                            "programmatic")
        return Judgment("pass", f"reply has {n} words, limit {self.value}", (), "programmatic")


def json_objects(reply: str) -> list[dict]:
    """JSON objects in a reply: the whole reply, fenced blocks, or the outermost braces."""
    cands = [reply.strip()] + [b.strip() for b in tx.code_blocks(reply)]
    i, j = reply.find("{"), reply.rfind("}")
    if 0 <= i < j:
        cands.append(reply[i:j + 1])
    out = []
    for c in cands:
        c = re.sub(r"^json\s*\n", "", c)
        try:
            obj = json.loads(c)
        except (ValueError, TypeError):
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


_FENCE = re.compile(r"^```[\w+-]*[ \t]*\n(?P<body>.*?)\n?```$", re.DOTALL)


def reply_json_object(reply: str) -> dict | None:
    """The reply as one JSON object: the whole reply, or one code fence that is the whole reply
    (a fence is formatting; prose around the object means the reply is not a JSON object)."""
    s = reply.strip()
    m = _FENCE.match(s)
    if m:
        s = m.group("body").strip()
    try:
        obj = json.loads(s)
    except (ValueError, TypeError):
        return None
    return obj if isinstance(obj, dict) else None


@dataclass(frozen=True)
class JsonFields(Check):
    """The reply is a JSON object carrying every named field."""

    fields: tuple[str, ...]
    type: ClassVar[str] = "json_fields"

    def needs(self) -> dict[str, list[str]]:
        return {"delivery": ["reply"]}

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "fields": list(self.fields)}

    def run(self, ev: EvidenceRecord) -> Judgment:
        if (j := _no_reply(ev)) is not None:
            return j
        obj = reply_json_object(ev.reply)
        if obj is None:
            q = ev.reply.strip()[:60]
            why = "the reply is not a JSON object" + (" (it wraps one in other text)" if json_objects(ev.reply) else "")
            return Judgment("violation", why, (q,) if q else (), "programmatic")
        missing = [f for f in self.fields if f not in obj]
        if missing:
            return Judgment("violation", f"JSON reply lacks field(s) {', '.join(missing)}", (), "programmatic")
        return Judgment("pass", f"JSON reply has {', '.join(self.fields)}", (), "programmatic")


def _dig(obj: Any, dotted: str) -> Any:
    cur = obj
    for part in dotted.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return _MISSING
    return cur


_MISSING = object()


def command_fields(command: str) -> dict[str, Any]:
    """Fields a shell command carries, read from its words (git's own syntax as data: the
    commit ``message`` of ``-m``, the ``branch``/``remote`` of a push, ``force`` for ``-f`` /
    ``--force*`` or a ``+refspec``). Only the last command of a ``&&`` / ``;`` chain per tool."""
    import shlex

    out: dict[str, Any] = {}
    for part in re.split(r"\s*(?:&&|\|\||;)\s*", command):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        while words and re.fullmatch(r"\w+=.*", words[0]):  # VAR=value prefixes
            words = words[1:]
        if len(words) < 2 or words[0] != "git":
            continue
        sub, rest = words[1], words[2:]
        if sub == "commit":
            for i, w in enumerate(rest):
                if w in ("-m", "--message") or (w.startswith("-") and not w.startswith("--") and w.endswith("m")):
                    if i + 1 < len(rest):
                        out["message"] = rest[i + 1]
                        break
                if w.startswith("--message="):
                    out["message"] = w.split("=", 1)[1]
                    break
        elif sub == "push":
            pos = [w for w in rest if not w.startswith("-")]
            out["force"] = any(w in ("-f", "--force") or w.startswith("--force-") for w in rest)
            if pos:
                out["remote"] = pos[0]
            if len(pos) > 1:
                ref = pos[1]
                if ref.startswith("+"):
                    out["force"], ref = True, ref[1:]
                out["branch"] = ref.split(":", 1)[-1].removeprefix("refs/heads/")
    return out


#: keys of an action's envelope: they name the call (``tool``) or carry its shell line
#: (``command``); a tool's own arguments live under ``args`` (or ``arguments``/``params``)
_ACTION_ARGS = ("args", "arguments", "params", "parameters", "input")


def _find_field(obj: Any, name: str, action: bool = False) -> Any:
    """A field by dotted path, anywhere in nested dicts (tool arguments are often nested), or
    carried by the action's shell ``command`` (:func:`command_fields`). For an ``action`` a tool
    call's arguments are read before its envelope, and the envelope's ``tool`` (the call's name)
    is never an argument: in ``{"tool": "deploy", "args": {"tool": "x"}}`` the argument ``tool``
    is ``x``, and ``{"tool": "shell", "command": "ls"}`` has no argument ``tool``."""
    if action and isinstance(obj, dict):
        for key in _ACTION_ARGS:
            if isinstance(obj.get(key), dict):
                v = _find_field_dict(obj[key], name)
                if v is not _MISSING:
                    return v
        if name == "tool":
            return _MISSING
    v = _find_field_dict(obj, name)
    if v is _MISSING and isinstance(obj, dict) and isinstance(obj.get("command"), str):
        v = command_fields(obj["command"]).get(name.split(".")[-1], _MISSING)
    return v


def _find_field_dict(obj: Any, name: str) -> Any:
    v = _dig(obj, name)
    if v is not _MISSING:
        return v
    if isinstance(obj, dict):
        for sub in obj.values():
            if isinstance(sub, dict):
                v = _find_field_dict(sub, name)
                if v is not _MISSING:
                    return v
    return _MISSING


def _field_in_text(content: str, name: str) -> tuple[str, str] | None:
    """``name = value`` / ``name: value`` / ``"name": "value"`` in a file: (value, matched text)."""
    key = re.escape(name.split(".")[-1])
    for rx in (rf'"{key}"\s*:\s*"?(?P<v>[^",\n}}]*)"?', rf"^\s*{key}\s*[:=]\s*[\"']?(?P<v>[^\"'\n#]*)[\"']?"):
        m = re.search(rx, content, re.MULTILINE | re.IGNORECASE)
        if m:
            return m.group("v").strip(), m.group(0).strip()
    return None


@dataclass(frozen=True)
class FieldEquals(Check):
    """A field of an action, artifact or reply must equal a literal."""

    target: Literal["action", "artifact", "reply"]
    field: str
    value: str
    type: ClassVar[str] = "field_equals"

    def needs(self) -> dict[str, list[str]]:
        if self.target == "action":
            return {"pre_action": ["action"]}
        if self.target == "artifact":
            return {"artifact": ["artifacts"]}
        return {"delivery": ["reply"]}

    def _verdict(self, found: str, where: str, quote: str) -> Judgment:
        ok = found.strip().strip("'\"").lower() == self.value.strip().lower()
        label: Label = "pass" if ok else "violation"
        return Judgment(label, f"{where} {self.field} is {found!r}, required {self.value!r}",
                        (quote,) if quote else (), "programmatic")

    def run(self, ev: EvidenceRecord) -> Judgment:
        if ev.stage not in self.needs():
            return _na(ev.stage, self.target)
        if self.target == "action":
            if ev.action is None:
                return Judgment("unknown", "the pre-action evidence carries no action", (), "programmatic")
            v = _find_field(ev.action, self.field, action=True)
            if v is _MISSING:
                return Judgment("not_applicable", f"the action has no {self.field}", (), "programmatic")
            return self._verdict(str(v), "action", "")
        if self.target == "artifact":
            arts = [a for a in ev.artifacts or [] if not a.deleted]
            if ev.artifacts is None:
                return Judgment("unknown", "no artifacts in the evidence", (), "programmatic")
            for a in arts:
                hit = _field_in_text(a.content, self.field)
                if hit:
                    return self._verdict(hit[0], a.path, hit[1])
            return Judgment("not_applicable", f"no artifact sets {self.field}", (), "programmatic")
        if ev.reply is None:
            return Judgment("unknown", "the delivery evidence carries no reply", (), "programmatic")
        for obj in json_objects(ev.reply):
            v = _find_field(obj, self.field)
            if v is not _MISSING:
                return self._verdict(str(v), "reply", "")
        hit = _field_in_text(ev.reply, self.field)
        if hit:
            return self._verdict(hit[0], "reply", hit[1])
        return Judgment("not_applicable", f"the reply has no {self.field}", (), "programmatic")


@dataclass(frozen=True)
class StartsWith(FieldEquals):
    """A field of an action, artifact or reply must start with one of the literals (case kept:
    ``Feat:`` does not start with ``feat:``). ``value`` holds the literals joined by ``|``."""

    type: ClassVar[str] = "starts_with"

    def literals(self) -> tuple[str, ...]:
        return tuple(v for v in self.value.split("|") if v)

    def run(self, ev: EvidenceRecord) -> Judgment:
        if self.target == "reply" and not self.field:  # the reply itself must open with a literal
            if (j := _no_reply(ev)) is not None:
                return j
            return self._verdict(ev.reply, "the", ev.reply.strip()[:40])
        return super().run(ev)

    def _verdict(self, found: str, where: str, quote: str) -> Judgment:
        got = found.strip().strip("'\"")
        ok = any(got.startswith(v) for v in self.literals())
        label: Label = "pass" if ok else "violation"
        want = " or ".join(repr(v) for v in self.literals())
        return Judgment(label, f"{where} {self.field} {got[:60]!r} {'starts' if ok else 'does not start'} with {want}",
                        (quote,) if quote else (), "programmatic")


@dataclass(frozen=True)
class FieldNotEquals(FieldEquals):
    """A field of an action, artifact or reply must never equal a literal (``tool``: the call it
    belongs to, when the rule names one; a call of another tool is not reached)."""

    tool: str = ""
    type: ClassVar[str] = "field_not_equals"

    def run(self, ev: EvidenceRecord) -> Judgment:
        if self.target == "action" and self.tool and ev.action is not None and ev.stage in self.needs():
            name = ev.action.get("tool") or ev.action.get("name")
            if isinstance(name, str) and name.lower() not in (self.tool.lower(), "shell", "bash"):
                return Judgment("not_applicable", f"the action calls {name}, not {self.tool}", (), "programmatic")
        return super().run(ev)

    def _verdict(self, found: str, where: str, quote: str) -> Judgment:
        same = found.strip().strip("'\"").lower() == self.value.strip().lower()
        label: Label = "violation" if same else "pass"
        return Judgment(label, f"{where} {self.field} is {found!r}, never allowed: {self.value!r}",
                        (quote,) if quote else (), "programmatic")


@dataclass(frozen=True)
class FileLacks(Check):
    """No written file of the named types (``endings``: ``.md``, ``.py``, or a file name such as
    ``Dockerfile``) may contain ``value``; no such file written: not applicable."""

    endings: tuple[str, ...]
    value: str
    type: ClassVar[str] = "file_lacks_literal"

    def needs(self) -> dict[str, list[str]]:
        return {"artifact": ["artifacts"], "delivery": ["artifacts"]}

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "endings": list(self.endings), "value": self.value}

    def covers(self, path: str) -> bool:
        p = path.lower()
        return any(p.endswith(e.lower()) if e.startswith(".") else p.rsplit("/", 1)[-1] == e.lower()
                   for e in self.endings)

    def run(self, ev: EvidenceRecord) -> Judgment:
        if ev.stage not in self.needs():
            return _na(ev.stage, "file")
        if ev.artifacts is None:
            if ev.stage == "artifact":
                return Judgment("unknown", "no artifacts in the evidence", (), "programmatic")
            return Judgment("not_applicable", "no files written", (), "programmatic")
        files = [a for a in ev.artifacts if not a.deleted and self.covers(a.path)]
        if not files:
            return Judgment("not_applicable", f"no {'/'.join(self.endings)} file written", (), "programmatic")
        for a in files:
            i = a.content.find(self.value)
            if i >= 0:
                line = a.content[a.content.rfind("\n", 0, i) + 1:].split("\n", 1)[0].strip()
                return Judgment("violation", f"{a.path} contains {self.value!r}", (line,) if line else (),
                                "programmatic")
        return Judgment("pass", f"no {'/'.join(self.endings)} file contains {self.value!r}", (), "programmatic")


@dataclass(frozen=True)
class MaxLines(Check):
    """An explicit line limit on the reply (non-empty lines of the whole reply, code included)."""

    value: int
    type: ClassVar[str] = "max_lines"

    def needs(self) -> dict[str, list[str]]:
        return {"delivery": ["reply"]}

    def run(self, ev: EvidenceRecord) -> Judgment:
        if (j := _no_reply(ev)) is not None:
            return j
        lines = [x for x in ev.reply.strip().splitlines() if x.strip()]
        label: Label = "violation" if len(lines) > self.value else "pass"
        quote = (lines[self.value].strip(),) if label == "violation" and lines[self.value].strip() in ev.reply else ()
        return Judgment(label, f"reply has {len(lines)} lines, limit {self.value}", quote, "programmatic")


@dataclass(frozen=True)
class SemanticSpec(Check):
    """A semantic specification, judged by the compliance reader (offline) or an LLM.

    ``polarity`` is ``forbid`` or ``require``; ``subject`` is what is required or forbidden;
    ``evidence`` maps each checking stage to the evidence it needs there.
    """

    applies_when: str
    required: str
    compliance: str
    violation: str
    polarity: Literal["forbid", "require"]
    subject: str
    target: Literal["action", "artifact", "reply"]
    scope: str = "global"
    conditions: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()
    evidence: dict[str, list[str]] = field(default_factory=dict)
    type: ClassVar[str] = "semantic"
    programmatic: ClassVar[bool] = False

    def needs(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in self.evidence.items()}

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["conditions"], d["exceptions"] = list(self.conditions), list(self.exceptions)
        return {"type": self.type, **d}

    def run(self, ev: EvidenceRecord) -> Judgment:  # pragma: no cover - judged by the reader
        raise TypeError("a semantic check is judged through toolkit.rules.checks.judge()")


#: check types by name (a researcher's own type registers here)
CHECK_TYPES: dict[str, type[Check]] = {
    "max_words": MaxWords, "json_fields": JsonFields, "field_equals": FieldEquals, "semantic": SemanticSpec,
    "starts_with": StartsWith, "max_lines": MaxLines, "field_not_equals": FieldNotEquals,
    "file_lacks_literal": FileLacks,
}


def register_check_type(cls: type[Check]) -> type[Check]:
    """Register a check type by its ``type`` name (usable as a class decorator)."""
    CHECK_TYPES[cls.type] = cls
    return cls


def check_from_dict(d: dict[str, Any]) -> Check:
    """Rebuild a check from its ``to_dict()`` form (the ``check`` field of a compile record)."""
    d = dict(d)
    kind = d.pop("type", None)
    cls = CHECK_TYPES.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown check type {kind!r}; known: {', '.join(sorted(CHECK_TYPES))}")
    for k in ("fields", "conditions", "exceptions", "endings"):
        if k in d and isinstance(d[k], list):
            d[k] = tuple(d[k])
    return cls(**d)


def make_evidence(stage: str, task: str, *, reply: str | None = None, action: dict | None = None,
                  artifacts: dict[str, str] | None = None) -> EvidenceRecord:
    """An evidence record from plain values (used by validation cases and tests)."""
    arts = None if artifacts is None else [ArtifactRecord(path=p, content=c) for p, c in artifacts.items()]
    return EvidenceRecord(stage=stage, task=task, reply=reply, action=action, artifacts=arts)


def _programmatic_or_none(reading, rule) -> Check | None:
    """The programmatic check a rule reading gives (global rules without conditions only)."""
    from toolkit.rules.checks._compiler import _programmatic_check

    if reading.programmatic and rule.scope == "global" and not rule.conditions and not rule.exceptions:
        return _programmatic_check(*reading.programmatic, reading.body)
    return None
