"""Exceptions with one clear line for the user: file, line, field, message."""

from __future__ import annotations


class PrefmemError(Exception):
    """Base class for errors the CLI reports as one line and exit code 1."""


class InputError(PrefmemError):
    """Bad input data. ``problems`` holds one ``file:line field: message`` string each."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


class UsageError(PrefmemError):
    """The command was called wrongly (exit code 2)."""


class ConfigChangedError(PrefmemError):
    """``--resume`` asked for a run whose configuration differs from the stored one."""


class PrefmemWarning(UserWarning):
    """Something degraded but the run goes on (shown once, as one line)."""


class LockedError(PrefmemError):
    """Another run holds the output directory."""
