"""Safe reading and writing for every verb: limits, one-line errors, outputs that never clobber.

Reading (``read_text``, ``iter_text_lines``, ``parse_json_line``): a path that is missing, a
directory, binary, not UTF-8, larger than :data:`MAX_FILE_BYTES`, with a line longer than
:data:`MAX_LINE_BYTES`, nested deeper than :data:`MAX_DEPTH`, with a number longer than
:data:`MAX_NUMBER_CHARS` characters, ``NaN``/``Infinity`` or a lone surrogate raises
:class:`~toolkit.errors.InputError` with one ``file:line field: message`` line per problem.

Writing (:func:`output_target` then :meth:`OutputTarget.write`): ``-`` is stdout; a FIFO,
character device or socket is written through (never replaced); a symlink is followed and its
target written (the link stays a link); a regular file is replaced atomically (temporary file
in the same folder, fsync, rename). :func:`output_target` checks the destination *before* the
work starts, so a run never computes for an hour and then finds it cannot write.
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.errors import InputError

#: largest input file read (bytes)
MAX_FILE_BYTES = 256 * 1024 * 1024
#: longest JSONL line / YAML file (bytes)
MAX_LINE_BYTES = 32 * 1024 * 1024
#: deepest nesting of lists/objects in one record
MAX_DEPTH = 32
#: longest number literal (characters); longer integers are refused, not parsed
MAX_NUMBER_CHARS = 64
#: most YAML aliases (``*name``) in one file; alias bombs expand exponentially
MAX_YAML_ALIASES = 100
#: longest text field in a record (characters); a 1 MB "correction" is not one, and the offline
#: readers, linear as they are, take tens of seconds on it
MAX_TEXT_CHARS = 200_000

LIMITS_HELP = (
    f"input limits: files up to {MAX_FILE_BYTES // (1024 * 1024)} MB, lines up to "
    f"{MAX_LINE_BYTES // (1024 * 1024)} MB, nesting depth {MAX_DEPTH},\n"
    f"text fields up to {MAX_TEXT_CHARS} characters, numbers up to {MAX_NUMBER_CHARS} characters, "
    f"{MAX_YAML_ALIASES} YAML aliases per file;\ndrift dialogues up to 1000 turns; UTF-8 only.\n"
    "bad input: one line 'file:line field: message' per problem, exit 1 (usage errors exit 2)."
)


# -- reading -------------------------------------------------------------------------------
def check_input_path(path: str | os.PathLike) -> Path:
    """``path`` as a Path, or InputError when it is missing, a directory or unreadable."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError(f"{p}: file not found") from None
    except NotADirectoryError:
        raise InputError(f"{p}: file not found (a parent is not a folder)") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{p}: is a directory, expected a file")
    if not os.access(p, os.R_OK):
        raise InputError(f"{p}: cannot read (permission denied)")
    return p


def _decode(raw: bytes, where: str) -> str:
    if b"\x00" in raw:
        raise InputError(f"{where} <file>: binary content (NUL byte), expected UTF-8 text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{where} <file>: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
        ) from None


def iter_text_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """Yield ``(line_no, text)`` of a UTF-8 file (BOM and CRLF accepted), enforcing the limits."""
    p = check_input_path(path)
    total = 0
    try:
        fh = open(p, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise InputError(f"{p}: cannot read ({exc.strerror or exc})") from None
    with fh:
        i = 0
        while True:
            try:
                raw = fh.readline(MAX_LINE_BYTES + 1)
            except OSError as exc:
                raise InputError(f"{p}:{i + 1} <file>: cannot read ({exc.strerror or exc})") from None
            if not raw:
                return
            i += 1
            total += len(raw)
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise InputError(f"{p}:{i} <record>: line longer than {MAX_LINE_BYTES} bytes (limit)")
            if total > MAX_FILE_BYTES:
                raise InputError(f"{p}:{i} <file>: file larger than {MAX_FILE_BYTES} bytes (limit)")
            if i == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            yield i, _decode(raw, f"{p}:{i}")


def read_text(path: str | os.PathLike, *, limit: int = MAX_LINE_BYTES) -> str:
    """The whole UTF-8 text of a (small) file such as a YAML profile, with the same checks."""
    p = check_input_path(path)
    try:
        with open(p, "rb") as fh:
            raw = fh.read(limit + 1)
    except OSError as exc:
        raise InputError(f"{p}: cannot read ({exc.strerror or exc})") from None
    if len(raw) > limit:
        raise InputError(f"{p}:1 <file>: file larger than {limit} bytes (limit)")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if b"\x00" in raw:
        line = raw[: raw.index(b"\x00")].count(b"\n") + 1
        raise InputError(f"{p}:{line} <file>: binary content (NUL byte), expected UTF-8 text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"{p}:{line} <file>: not UTF-8 text (byte 0x{raw[exc.start]:02x})") from None


def field_path(loc: tuple | list) -> str:
    """``a.b.0.c`` for a location; odd key names (blank, spaces, control characters, very long)
    are quoted so the error stays one line with a visible field."""
    parts = []
    for x in loc:
        x = str(x)
        if not x or len(x) > 60 or any(c.isspace() or not c.isprintable() or c == "." for c in x):
            x = json.dumps(x[:60], ensure_ascii=True).replace(" ", "\\u0020")
        parts.append(x)
    return ".".join(parts) or "<record>"


class _Bad(ValueError):
    pass


def _parse_int(s: str) -> int:
    if len(s) > MAX_NUMBER_CHARS:
        raise _Bad(f"number with {len(s)} digits (limit {MAX_NUMBER_CHARS} characters)")
    return int(s)


def _parse_float(s: str) -> float:
    if len(s) > MAX_NUMBER_CHARS:
        raise _Bad(f"number with {len(s)} characters (limit {MAX_NUMBER_CHARS})")
    v = float(s)
    if not math.isfinite(v):
        raise _Bad(f"number {s} is out of range")
    return v


def _parse_constant(s: str) -> Any:
    raise _Bad(f"{s} is not a JSON number")


def check_value(obj: Any, *, max_depth: int = MAX_DEPTH) -> tuple[str, str] | None:
    """The first problem in a decoded JSON/YAML value as ``(field, message)``, or None.

    Checks nesting depth, text that cannot be UTF-8 (lone surrogates) or holds NUL, non-string
    keys and non-finite floats. Iterative, so it cannot overflow the stack itself. The field's
    path is spelled only for the problem it returns (spelling it for every value cost about
    half of reading a large valid file).
    """
    stack: list[tuple[Any, tuple, int]] = [(obj, (), 0)]
    while stack:
        v, loc, depth = stack.pop()
        if isinstance(v, dict):
            if depth >= max_depth:
                return field_path(loc), f"nested deeper than {max_depth} levels (limit)"
            for k, x in v.items():
                if not isinstance(k, str):
                    return field_path(loc), f"key {k!r} is not a string"
                stack.append((k, loc + ("<key>",), depth + 1))
                stack.append((x, loc + (k,), depth + 1))
        elif isinstance(v, list):
            if depth >= max_depth:
                return field_path(loc), f"nested deeper than {max_depth} levels (limit)"
            stack.extend((x, loc + (i,), depth + 1) for i, x in enumerate(v))
        elif isinstance(v, str):
            if len(v) > MAX_TEXT_CHARS:
                return field_path(loc), f"text of {len(v)} characters (limit {MAX_TEXT_CHARS})"
            if "\x00" in v:
                return field_path(loc), "text holds a NUL character"
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return field_path(loc), "text holds an unpaired surrogate (not valid Unicode)"
        elif isinstance(v, float) and not math.isfinite(v):
            return field_path(loc), "number is not finite"
    return None


def parse_json_line(text: str, where: str) -> Any:
    """Decode one JSON value; raise InputError ``where field: message`` on any problem."""
    try:
        obj = json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                         parse_constant=_parse_constant)
    except _Bad as exc:
        raise InputError(f"{where} <record>: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{where} <record>: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise InputError(f"{where} <record>: nested deeper than {MAX_DEPTH} levels (limit)") from None
    except ValueError as exc:  # e.g. int conversion limits
        raise InputError(f"{where} <record>: not valid JSON ({exc})") from None
    bad = check_value(obj)
    if bad is not None:
        raise InputError(f"{where} {bad[0]}: {bad[1]}")
    return obj


# -- writing -------------------------------------------------------------------------------
@dataclass(frozen=True)
class OutputTarget:
    """A checked output destination. ``mode``: ``stdout`` | ``through`` | ``atomic``.

    ``path`` is what the user named; ``real`` the file actually written (a symlink's target).
    """

    path: str
    mode: str
    real: Path | None = None
    flag: str = "-o"

    def write(self, text: str) -> None:
        """Write ``text`` (UTF-8) to the destination; a regular file is replaced atomically."""
        if self.mode == "stdout":
            try:
                sys.stdout.write(text)
                sys.stdout.flush()
            except BrokenPipeError:  # `prefmem ... | head`: the reader left, not an error
                try:
                    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                except (OSError, ValueError):
                    pass
            return
        data = text.encode("utf-8")
        assert self.real is not None
        try:
            if self.mode == "through":
                with open(self.real, "wb") as fh:  # a FIFO/device: write into it, never replace it
                    fh.write(data)
            else:
                atomic_write_bytes(self.real, data)
        except OSError as exc:
            raise InputError(f"{self.path} {self.flag}: cannot write ({exc.strerror or exc})") from None


def output_target(path: str | os.PathLike | None, *, flag: str = "-o") -> OutputTarget:
    """Check where output will go, before any work: raise InputError when it cannot be written."""
    if path is None or str(path) == "-":
        return OutputTarget("-", "stdout", None, flag)
    s = str(path)
    if not s.strip():
        raise InputError(f"{s!r} {flag}: empty output path")
    p = Path(s)

    def bad(msg: str) -> InputError:
        return InputError(f"{s} {flag}: {msg}")

    try:
        real = Path(os.path.realpath(p))
    except (OSError, ValueError) as exc:
        raise bad(f"cannot resolve ({exc})") from None
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise bad("a parent of this path is a file, not a folder") from None
    except OSError as exc:
        raise bad(f"cannot write ({exc.strerror or exc})") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise bad("is a directory; give a file name")
        if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode) or stat.S_ISSOCK(st.st_mode):
            if not os.access(real, os.W_OK):
                raise bad("cannot write (permission denied)")
            return OutputTarget(s, "through", real, flag)
        if not stat.S_ISREG(st.st_mode):
            raise bad("is not a regular file, FIFO or device")
        if not os.access(real, os.W_OK):
            raise bad("cannot write (permission denied)")
    # the folder that will hold the temporary file: the nearest existing ancestor must be writable
    parent = real.parent
    while not parent.exists():
        if parent == parent.parent:
            break
        parent = parent.parent
    if not parent.is_dir():
        raise bad(f"{parent} is a file, not a folder")
    _probe_dir(parent, bad)
    return OutputTarget(s, "atomic", real, flag)


def _probe_dir(d: Path, bad) -> None:
    """Create and remove a temporary file in ``d`` (os.access cannot see read-only mounts)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".prefmem-probe-")
    except OSError as exc:
        raise bad(f"cannot write in {d} ({exc.strerror or exc})") from None
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:
        pass


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Replace ``path`` by ``data`` via a temporary file in its folder, fsync and rename."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    mode = 0o644
    try:
        mode = stat.S_IMODE(os.stat(p).st_mode)  # keep an existing file's permissions
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_output(path: str | os.PathLike | OutputTarget | None, text: str, *, flag: str = "-o") -> None:
    """Write ``text`` to ``path`` (checked now if not an :class:`OutputTarget` already)."""
    target = path if isinstance(path, OutputTarget) else output_target(path, flag=flag)
    target.write(text)
