"""Named parameter readers for the catalogue's cue rules: a check argument read from a rule's text.

A kind file names a reader (``read: {fields: json_fields}``) instead of spelling its logic; each
reader is a small typed function registered here by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from toolkit.compliance import _lexicons as lx

READERS: dict[str, Callable[[str], Any]] = {}


def reader(name: str) -> Callable[[Callable[[str], Any]], Callable[[str], Any]]:
    """Register a parameter reader under ``name``."""
    def wrap(fn: Callable[[str], Any]) -> Callable[[str], Any]:
        READERS[name] = fn
        return fn
    return wrap


@reader("json_fields")
def json_fields(body: str) -> tuple[str, ...]:
    """The fields a JSON reply must carry: `code` or "quoted" names, else the words after 'fields'/'keys'."""
    fields = re.findall(r"`([A-Za-z_][\w\-]*)`", body) or re.findall(r"\"([A-Za-z_][\w\-]*)\"", body)
    if not fields:
        fm = re.search(r"\b(?:fields?|keys?|properties)\s*(?:called|named|:)?\s+([\w, ]+?)(?:[.;]|$)", body, re.I)
        if fm:
            fields = [w for w in re.split(r",\s*|\s+and\s+|\s+", fm.group(1)) if w and w not in lx.STOPWORDS]
    return tuple(fields)
