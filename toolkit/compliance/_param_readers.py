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
Builder = Callable[[str, "re.Match[str]", list, dict], None]
#: check builders by name: (rule text, one match of a cue with named groups, checks so far, the stage's
#: shared state) -> appends checks
BUILDERS: dict[str, Builder] = {}


def builder(name: str) -> Callable[[Builder], Builder]:
    """Register a check builder under ``name``."""
    def wrap(fn: Builder) -> Builder:
        BUILDERS[name] = fn
        return fn
    return wrap


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


#: words naming a kind of leftover file, and the workspace globs they stand for
_LEFTOVER_GLOBS = (("output", ("*output*",)), ("dump", ("*dump*",)), ("plot", ("*.png", "*.svg")),
                   ("figure", ("*.png", "*.svg")), ("image", ("*.png", "*.jpg")), ("screenshot", ("*.png",)),
                   ("cache", ("*cache*",)), ("notebook", ("*.ipynb",)), ("log", ("*.log",)), ("profil", ("*.prof",)))


@reader("cleanup_globs")
def cleanup_globs(body: str, pos: int | None = None) -> tuple[str, ...]:
    """The workspace files a clean-up rule means: the usual temporary files plus those it names
    (`quoted` names, wildcards, extensions such as .log, folders such as tmp/, kinds such as plots)."""
    from toolkit.compliance._checks import TEMP_GLOBS

    low = body.lower()
    extra = []
    for m in re.finditer(r"`([^`]+)`|([\w.-]*\*[\w.*-]*)", body):
        g = m.group(1) or m.group(2)
        if g:
            extra.append(g.lower())
    for m in re.finditer(r"(?<![\w/*])\.(txt|log|out|tmp|bak|orig|rej|swp|prof|dump|pkl|npy)\b|(?<![\w/])(tmp|temp|scratch)/",
                         body, re.I):
        extra.append(f"*.{m.group(1).lower()}" if m.group(1) else f"{m.group(2).lower()}/*")
    for word, gl in _LEFTOVER_GLOBS:
        if re.search(r"\b" + word, low):
            extra.extend(gl)
    return TEMP_GLOBS + tuple(e if any(ch in e for ch in "*?") else f"*{e}*" for e in extra)
