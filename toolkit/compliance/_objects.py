"""The objects a preference names and whether the delivery shows them: a kind-free requirement reading.

A preference often names the thing it is about: a quoted string ("sign off with \u201cCheers\u201d"), a code
identifier (``Obj.magic``, ``ref()``), a file (``settings.toml``, ``migrations/``) or a named thing
("Latin", "The Smoker"). Whether that object is present in the reply and the workspace, read with the
polarity of the clause it sits in (a negation scope from the shared text layer: "never call
``Obj.magic``" forbids it, "always end with \u201cthanks\u201d" requires it), is evidence no catalogue kind has
to cover. The patterns live in ``toolkit/resources/compliance/objects.yaml`` (cue-table format, examples
run as tests); only the rule's main clause is read (its conditions and exceptions say *when*, not *what*).

:func:`object_features` gives the learned reader's columns (:data:`OBJECT_NAMES`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from toolkit import text as tx
from toolkit.compliance._checks import View

#: object classes, in the order their features are laid out
CLASSES = ("quoted", "code_identifier", "file_name", "named_thing")


@dataclass(frozen=True)
class Obj:
    """One object of a preference: its text, class and whether a negation scope covers it."""

    text: str
    cls: str
    negated: bool


@lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern]:
    table = tx.load_table("compliance/objects")
    return {c: table[c] for c in CLASSES}


@lru_cache(maxsize=8192)
def objects(rule_text: str) -> tuple[Obj, ...]:
    """The objects named in the main clause of a rule (first occurrence of each text wins)."""
    main = tx.split_rule(rule_text)[0] or rule_text
    seen: dict[str, Obj] = {}
    for cls, rx in _patterns().items():
        for m in rx.finditer(main):
            t = next(x for x in m.groups() if x is not None).strip(" .,;:")
            if len(t) < 2 or any(t in s for s in seen):  # a part of an object already read is not another
                continue
            if cls == "quoted" and _patterns()["code_identifier"].fullmatch(t):
                cls_t = "code_identifier"  # a quoted identifier ("`ref()`") is read as code
            else:
                cls_t = cls
            k = next(i for i in range(1, len(m.groups()) + 1) if m.group(i) is not None)
            seen[t] = Obj(t, cls_t, tx.negated(main, m.start(k), m.end(k)))
    return tuple(seen.values())


def _present(o: Obj, hay: str, hay_low: str) -> bool:
    """Whether the object occurs in the text: code identifiers and files exactly (as a whole token),
    quoted strings and named things ignoring case."""
    if o.cls in ("code_identifier", "file_name"):
        core = o.text[:-2] if o.text.endswith("()") else o.text
        edge = r"\w" if core[:1].isalnum() or core[:1] in "_@$" else r"[^\s\w]"
        return re.search(rf"(?<!{edge})" + re.escape(core) + rf"(?!{edge})", hay) is not None
    return re.search(r"(?<!\w)" + re.escape(o.text.lower()) + r"(?!\w)", hay_low) is not None


OBJECT_NAMES = ("obj_n_log", "obj_neg_present", "obj_neg_present_code", "obj_quoted_neg_present",
                "obj_code_neg_present", "obj_named_neg_present", "obj_plain_absent", "obj_plain_absent_share",
                "obj_plain_present_share", "obj_in_task", "obj_code_plain_absent", "obj_named_plain_absent")


def object_features(rule_text: str, view: View) -> list[float]:
    """Per pair (order :data:`OBJECT_NAMES`): how many objects the rule names; whether a negated one is
    present (anywhere; in code; named things apart, since a name is often mentioned for good reason),
    whether a required one is absent (any; share), the share of required ones present, whether the
    task names any of them, and the same reads per class (quoted, code identifier, named thing).
    A rule without objects gets zeros."""
    objs = objects(rule_text)
    if not objs:
        return [0.0] * len(OBJECT_NAMES)
    files = "\n".join(f"{k}\n{v}" for k, v in sorted((view.artifacts or {}).items()))
    hay = view.reply + "\n" + files
    low, code, task_low = hay.lower(), view.code, view.task.lower()
    neg = [(o, _present(o, hay, low)) for o in objs if o.negated]
    plain = [(o, _present(o, hay, low)) for o in objs if not o.negated]
    things = [h for o, h in plain if o.cls != "named_thing"]

    def hit(pairs: list, cls: str, want: bool) -> float:
        return float(any(h is want for o, h in pairs if o.cls == cls))

    return [
        math.log1p(len(objs)), float(any(h for o, h in neg if o.cls != "named_thing")),
        float(any(_present(o, code, code.lower()) for o, _ in neg if o.cls != "named_thing")),
        hit(neg, "quoted", True), hit(neg, "code_identifier", True), hit(neg, "named_thing", True),
        float(not all(things)) if things else 0.0,
        (1 - sum(things) / len(things)) if things else 0.0, (sum(things) / len(things)) if things else 0.0,
        float(any(_present(o, view.task, task_low) for o in objs)),
        hit(plain, "code_identifier", False), hit(plain, "named_thing", False),
    ]
