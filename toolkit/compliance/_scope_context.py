"""Whether a rule's conditions hold, read from the delivery's whole context rather than the task alone.

A condition often names a project, a publication or a language ("in smileslot", "articles for The
Smoker", "OCaml code") that the task text never repeats, while the workspace shows it: the artifact
paths (``smileslot/src/...``), the file endings (``.ml``), the code-fence tags, the files' contents or the
reply. These columns give the learned reader (and its applicability model: the names start with
``scope_``) that context, for the conditions and exceptions of :func:`compile_preference`:

- the share of a condition's content words found in the task, the reply, the workspace (paths and
  contents) and anywhere (the least of these over the rule's conditions, so every condition must hold);
- whether a condition's word names a part of an artifact path (a project or folder name);
- whether a language or format the condition names (``languages`` in ``objects.yaml``: words, fence tags,
  file endings) is shown by the delivery (1), or only other code is (0);
- the same share for exceptions (the largest over them).

NaN where the rule has no condition (no exception), or the condition has no content word.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from toolkit import text as tx
from toolkit.compliance import _lexicons as lx
from toolkit.compliance._checks import View

_STOP = lx.CONTEXT_STOPWORDS

CONTEXT_NAMES = ("scope_ctx_cond_task", "scope_ctx_cond_reply", "scope_ctx_cond_files", "scope_ctx_cond_any",
                 "scope_ctx_cond_path", "scope_ctx_cond_lang", "scope_ctx_exc_any")


@lru_cache(maxsize=1)
def _languages() -> dict[str, str]:
    """Word, fence tag or file ending -> language (``objects.yaml``, entry ``languages``)."""
    out: dict[str, str] = {}
    for lang, poles in tx.load_table("compliance/objects")["languages"].items():
        for pole in poles:
            for w in pole:
                out[w] = lang
    return out


@lru_cache(maxsize=8192)
def _terms(text: str) -> frozenset[str]:
    return frozenset(t.stem for t in tx.tokens(text) if t.text.lower() not in _STOP and len(t.text) > 2
                     and not t.text.isdigit())


def _context(view: View) -> dict:
    """Stems of the task, the reply and the workspace, path parts and the languages shown (memoised)."""
    if "scope_context" not in view.memo:
        arts = view.artifacts or {}
        parts = {p.lower() for path in arts for p in re.split(r"[/\\._-]+", path) if p}
        files = "\n".join(f"{k}\n{v}" for k, v in sorted(arts.items()))
        langs = {_languages()[e] for e in (p.rsplit(".", 1)[-1].lower() for p in arts if "." in p)
                 if e in _languages()}
        langs |= {_languages()[t] for t in re.findall(r"```\s*([\w+#-]+)", view.reply + "\n" + files)
                  if t.lower() in _languages() for t in [t.lower()]}
        view.memo["scope_context"] = {
            "task": _terms(view.task), "reply": _terms(view.reply), "files": _terms(files),
            "paths": {tx.stem(p) for p in parts} | parts, "langs": langs, "code": bool(view.code.strip())}
    return view.memo["scope_context"]


def _share(terms: frozenset[str], found: set | frozenset) -> float:
    return len(terms & found) / len(terms)


def context_features(conditions: list[str], exceptions: list[str], view: View) -> list[float]:
    """The columns of :data:`CONTEXT_NAMES` for one (rule, delivery) pair."""
    ctx = _context(view)
    out = [math.nan] * len(CONTEXT_NAMES)
    conds = [t for t in (_terms(c) for c in conditions) if t]
    if conds:
        anyw = ctx["task"] | ctx["reply"] | ctx["files"] | ctx["paths"]
        out[0] = min(_share(t, ctx["task"]) for t in conds)
        out[1] = min(_share(t, ctx["reply"]) for t in conds)
        out[2] = min(_share(t, ctx["files"] | ctx["paths"]) for t in conds)
        out[3] = min(_share(t, anyw) for t in conds)
        out[4] = float(any(t & ctx["paths"] for t in conds))
        named = {_languages()[w.lower()] for c in conditions for w in re.findall(r"[\w+#]+", c)
                 if w.lower() in _languages() and len(w) > 1}
        if named:
            out[5] = 1.0 if named & ctx["langs"] else (0.0 if ctx["langs"] or ctx["code"] else math.nan)
    excs = [t for t in (_terms(e) for e in exceptions) if t]
    if excs:
        anyw = ctx["task"] | ctx["reply"] | ctx["files"] | ctx["paths"]
        out[6] = max(_share(t, anyw) for t in excs)
    return out
