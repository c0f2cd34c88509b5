"""Redact anything that looks like a credential before it is printed, logged or stored.

Servers echo keys back (``Incorrect API key provided: sk-proj-****abcd``), put them in URLs
(``https://user:pass@host``, ``?api_key=...``) and in headers (``Bearer ...``). Every message
the CLI prints and every error the gateway keeps goes through :func:`redact`. All patterns
are linear in the text (bounded repeats, anchored on literals), so a 1 MB message is cheap.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable

from toolkit.errors import PrefmemWarning

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # OpenAI-style keys, whole or partly masked (sk-..., sk-proj-..., sk-ant-...)
    (re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_*.\-]{4,}"), r"\1-***"),
    (re.compile(r"(?i)\b(bearer|basic)\s{1,4}[A-Za-z0-9_~+/=.\-]{4,}"), r"\1 ***"),
    # credentials in URLs: scheme://user:password@host, scheme://token@host
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]{0,15}://)[^/\s@]{1,256}@"), r"\1***@"),
    # key-like query parameters
    (re.compile(r"(?i)([?&;](?:api[_\-]?key|key|token|access[_\-]?token|secret|password|sig|signature)=)[^&#\s\"']{1,512}"),
     r"\1***"),
    # "api_key": "...", authorization=..., x-api-key: ...
    (re.compile(r"(?i)((?:api[_\-]?key|x-api-key|authorization|access[_\-]?token|client[_\-]?secret|password)"
                r"[\"']?\s{0,4}[:=]\s{0,4}[\"']?)[^\s\"',;}]{4,}"), r"\1***"),
]
_ENV_SUFFIXES = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET", "_PASSWORD")


def known_secrets(extra: Iterable[str | None] = ()) -> list[str]:
    """Secret values from the environment (``*_API_KEY``, ``*_TOKEN``, ...) plus ``extra``."""
    vals = [v for k, v in os.environ.items() if k.upper().endswith(_ENV_SUFFIXES) and v]
    vals += [v for v in extra if v]
    return sorted({v for v in vals if len(v) >= 8}, key=len, reverse=True)


def _cut_token(text: str, frag: str) -> str:
    """Replace every whitespace-delimited token holding ``frag`` by ``***`` (plain string ops)."""
    out = []
    pos = 0
    while True:
        i = text.find(frag, pos)
        if i < 0:
            out.append(text[pos:])
            return "".join(out)
        start = i
        while start > pos and not text[start - 1].isspace():
            start -= 1
        end = i + len(frag)
        while end < len(text) and not text[end].isspace():
            end += 1
        out.append(text[pos:start])
        out.append("***")
        pos = end


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with known secrets (whole, or the first / last 6 characters after a prefix such
    as ``sk-proj-``) and anything
    shaped like a credential replaced by ``***``."""
    if not text:
        return text
    for s in known_secrets(secrets):
        if s in text:
            text = text.replace(s, "***")
        body = re.sub(r"^(?:[A-Za-z]{1,8}[-_]){1,3}", "", s)  # "sk-proj-" says nothing secret
        for frag in {body[:6], body[-6:]} if len(body) >= 12 else set():
            if frag in text:
                text = _cut_token(text, frag)
    for pat, rep in _PATTERNS:
        text = pat.sub(rep, text)
    return text


def install_warning_format() -> None:
    """Show toolkit warnings as one line ``prefmem: warning: ...`` (others unchanged)."""
    original = warnings.formatwarning

    def fmt(message, category, filename, lineno, line=None):  # noqa: ANN001
        if isinstance(category, type) and issubclass(category, PrefmemWarning):
            return f"prefmem: warning: {redact(str(message))}\n"
        return original(message, category, filename, lineno, line)

    warnings.formatwarning = fmt  # type: ignore[assignment]
