"""The kind catalogue as data: one validated file per kind under ``toolkit/resources/compliance/kinds/``.

Each file names the kind, the compiled check classes it stands for, what it is about, and examples
the catalogue stage must flag (``violated``), must pass (``satisfied``) and must abstain on
(``unknown``). tests/test_compliance_catalogue.py runs every example, so a kind without examples
fails CI.
"""

from __future__ import annotations

from functools import lru_cache
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


class Kind(BaseModel):
    """One kind of the catalogue."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    checks: list[str] = Field(min_length=1)
    about: str = Field(min_length=1)
    examples: KindExamples

    @model_validator(mode="after")
    def _has_examples(self) -> Kind:
        e = self.examples
        if self.checks == ["Unknown"]:
            if not e.must_abstain:
                raise ValueError(f"kind {self.kind}: needs must_abstain examples")
        elif not (e.must_flag and e.must_pass):
            raise ValueError(f"kind {self.kind}: needs at least one must_flag and one must_pass example")
        return self


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
