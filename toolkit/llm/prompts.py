"""Prompts are data files in ``toolkit/prompts/`` versioned by the hash of their text."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Prompt:
    """A prompt template and its version (first 12 hex digits of sha256 of the text)."""

    name: str
    text: str
    version: str

    def render(self, **values: object) -> str:
        """Fill ``{name}`` placeholders (str.format syntax; write ``{{`` for a brace)."""
        return self.text.format(**values)

    @property
    def system(self) -> str:
        """The part before a line ``---user---`` (the whole text when there is none)."""
        return self.text.split("\n---user---\n", 1)[0]

    def render_user(self, **values: object) -> str:
        """The part after ``---user---`` filled with ``values``."""
        parts = self.text.split("\n---user---\n", 1)
        return parts[1].format(**values) if len(parts) == 2 else ""


@cache
def load_prompt(name: str) -> Prompt:
    """Load ``toolkit/prompts/<name>.md``."""
    text = resources.files("toolkit").joinpath("prompts", f"{name}.md").read_text(encoding="utf-8")
    return Prompt(name=name, text=text, version=hashlib.sha256(text.encode()).hexdigest()[:12])
