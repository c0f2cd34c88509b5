"""Named parameter readers for the catalogue's cue rules: a check argument read from a rule's text.

A kind file names a reader (``read: {fields: json_fields}``) instead of spelling its logic; each
reader is a small typed function registered here by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from toolkit.compliance import _lexicons as lx

Reader = Callable[[str, "int | None"], Any]
#: parameter readers by name: (rule text after its conditions, place of the cue or None) -> value
READERS: dict[str, Reader] = {}


def reader(name: str) -> Callable[[Reader], Reader]:
    """Register a parameter reader under ``name``."""
    def wrap(fn: Reader) -> Reader:
        READERS[name] = fn
        return fn
    return wrap


@reader("json_fields")
def json_fields(body: str, pos: int | None = None) -> tuple[str, ...]:
    """The fields a JSON reply must carry: `code` or "quoted" names, else the words after 'fields'/'keys'."""
    fields = re.findall(r"`([A-Za-z_][\w\-]*)`", body) or re.findall(r"\"([A-Za-z_][\w\-]*)\"", body)
    if not fields:
        fm = re.search(r"\b(?:fields?|keys?|properties)\s*(?:called|named|:)?\s+([\w, ]+?)(?:[.;]|$)", body, re.I)
        if fm:
            fields = [w for w in re.split(r",\s*|\s+and\s+|\s+", fm.group(1)) if w and w not in lx.STOPWORDS]
    return tuple(fields)


@reader("where_at")
def where_at(body: str, pos: int | None) -> str:
    """Where in the reply a required part goes, from the words around its cue: end, start or anywhere."""
    low = body.lower()
    seg = low[max(0, (pos or 0) - 50): (pos or 0) + 40]
    if re.search(r"\b(end|bottom|close|closing|finish|final|last|conclude|wrap)", seg):
        return "end"
    if re.search(r"\b(start|top|begin|open|first|upfront|up front|lead)", seg):
        return "start"
    return "reply"


@reader("named_languages")
def named_languages(body: str, pos: int | None = None) -> tuple[str, ...]:
    """Programming languages the rule names for its examples (``_kinds.named_languages``)."""
    from toolkit.compliance._kinds import named_languages as names

    return names(body)
