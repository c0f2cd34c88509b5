"""Refuse user-written regular expressions that can take exponential time (ReDoS).

Python's ``re`` backtracks: ``(a+)+$`` or ``(x|x)*y`` on a 30-character reply runs for
minutes. Patterns from files (profile checks) are checked once on load: a repeated group may
not hold another repeat, an alternation whose branches can start alike, or a backreference.
"""

from __future__ import annotations

import re

try:  # Python >= 3.11
    from re import _constants as _c
    from re import _parser as _p
except ImportError:  # pragma: no cover
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT} | ({_c.POSSESSIVE_REPEAT} if hasattr(_c, "POSSESSIVE_REPEAT") else set())


def _first(items) -> object | None:
    """The first literal an alternative must start with, or None when it cannot tell."""
    for op, av in items:
        if op is _c.LITERAL:
            return av
        if op is _c.SUBPATTERN:
            return _first(av[-1])
        return None
    return None


def _risky(items, in_repeat: bool) -> str | None:
    for op, av in items:
        if op in _REPEATS:
            lo, hi, sub = av
            unbounded = hi is _c.MAXREPEAT or hi > 1
            if in_repeat and unbounded and op is not getattr(_c, "POSSESSIVE_REPEAT", None):
                return "a repeat inside a repeated group"
            r = _risky(sub, in_repeat or unbounded)
            if r:
                return r
        elif op is _c.SUBPATTERN:
            r = _risky(av[-1], in_repeat)
            if r:
                return r
        elif op is _c.BRANCH:
            alts = av[1]
            if in_repeat:
                firsts = [_first(a) for a in alts]
                if None in firsts or len(set(firsts)) != len(firsts):
                    return "an alternation whose branches can start alike, inside a repeated group"
            for a in alts:
                r = _risky(a, in_repeat)
                if r:
                    return r
        elif op in (_c.GROUPREF, getattr(_c, "GROUPREF_EXISTS", None)):
            return "a backreference"
        elif op in (_c.ASSERT, _c.ASSERT_NOT):
            r = _risky(av[1], in_repeat)
            if r:
                return r
    return None


def check_safe_regex(pattern: str) -> None:
    """Raise ValueError when ``pattern`` is invalid or can backtrack exponentially."""
    try:
        re.compile(pattern)
        parsed = _p.parse(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        raise ValueError(f"pattern is not a valid regular expression ({exc})") from None
    why = _risky(list(parsed), False)
    if why:
        raise ValueError(f"pattern could take exponential time ({why}); rewrite it without nesting")
