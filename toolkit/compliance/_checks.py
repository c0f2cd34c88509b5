"""Compiled checks: small predicates over a delivery that return a verdict with evidence.

Each check is a frozen dataclass with ``evaluate(view) -> Finding``. The interpreter
(:mod:`toolkit.compliance._interpreter`) builds them from preference text or a profile's ``check``.
``ask`` holds what the user wants instead, in the simulator's own words, for phrasing.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from toolkit import text as tx

Verdict = Literal["violated", "satisfied", "not_applicable", "unknown"]
CODE_EXT = (".py", ".js", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".rb", ".sh", ".c", ".cc",
            ".cpp", ".h", ".kt", ".swift", ".php", ".cs", ".scala", ".sql", ".mjs", ".cjs")
DOC_EXT = (".md", ".markdown", ".txt", ".rst", ".tex", ".html", ".htm", ".csv", ".eml", ".ics")


@dataclass(frozen=True)
class Finding:
    """The outcome of one check on one delivery."""

    verdict: Verdict
    evidence: str = ""
    ask: str = ""
    topic: str = ""


class View:
    """A delivery as the checks see it, with derived text computed once."""

    def __init__(self, task: str, reply: str, artifacts: dict[str, str] | None, history: tuple = ()):
        self.task = task or ""
        self.reply = reply or ""
        self.artifacts = artifacts
        self.history = history

    @cached_property
    def memo(self) -> dict:
        """Answers computed on this view once and asked again (a condition read by the scope stage and
        again by the learned reader's scope cues); a view is never changed after it is made."""
        return {}

    @cached_property
    def reply_tokens(self) -> list[tx.Token]:
        return tx.tokens(self.reply)

    @cached_property
    def prose(self) -> str:
        return tx.prose(self.reply)

    @cached_property
    def sentences(self) -> list[str]:
        return tx.sentences(self.reply)

    @cached_property
    def code(self) -> str:
        """Code the agent produced: fenced blocks in the reply plus code files in the workspace."""
        parts = list(tx.code_blocks(self.reply))
        for path, body in sorted((self.artifacts or {}).items()):
            if path.endswith(CODE_EXT):
                parts.append(body)
        return "\n".join(parts)

    @cached_property
    def code_files(self) -> dict[str, str]:
        return {p: b for p, b in sorted((self.artifacts or {}).items()) if p.endswith(CODE_EXT)}

    @cached_property
    def changes_code(self) -> bool:
        """The task asks for, or the reply reports, a change to code."""
        asks = any(not re.search(r"\b(a|an|the|status|this|that|my|our|your|quick|small|any|no)\s+$",
                                 self.task.lower()[: m.start()])
                   for m in re.finditer(r"\b(fix|add|implement|refactor|rename|update|make|change|remove|write|create|"
                                        r"migrate|bump|speed up|stop|delete|move|replace|convert|port|wire|hook|"
                                        r"support|handle|clean)\b", self.task.lower()))
        did = re.search(r"\b(fixed|added|updated|changed|renamed|implemented|refactored|wrote|created|"
                        r"replaced|removed|moved|switched|wrapped|converted|migrated|patched)\b", self.reply.lower())
        if not self.code_files and re.search(
                r"\b(i )?(haven't|have not|didn't|did not)\s+(\w+\s+){0,2}?(changed|touched|removed|deleted|"
                r"modified|made any changes|edited|applied|pushed|run|ran)\b[^.?!]{0,30}(yet|so far)|"
                r"\bnothing (has been|was|is) (changed|run|touched|removed|deleted|modified|applied) (yet|so far)",
                self.reply.lower()):
            return False
        return bool((asks or did) and self.is_code_task)

    @cached_property
    def is_code_task(self) -> bool:
        if self.code_files or tx.code_blocks(self.reply):
            return True
        if re.search(r"`[A-Za-z_][\w.]*(\(\))?`|\b[\w\-/]+\.(py|js|ts|tsx|go|rs|java|rb|sh|sql)\b", self.reply):
            return True
        return bool(re.search(r"\b(fix|bug|implement|refactor|function|script|endpoint|module|class|"
                              r"test|repo|code|patch|feature|migration|build|lint|api|pr)\b",
                              self.task.lower()))

    @cached_property
    def deliverable(self) -> str:
        """The reply without its lead-in line and closing notes (see :func:`deliverable`)."""
        return deliverable(self.reply)

    @cached_property
    def documents(self) -> str:
        """Text documents the agent delivered in the workspace: files the reply or task names (a saved draft)."""
        said = self.reply + "\n" + self.task
        docs = [body for path, body in sorted((self.artifacts or {}).items())
                if path.lower().endswith(DOC_EXT) and (path in said or path.rsplit("/", 1)[-1] in said)]
        return "\n".join(docs)

    def region(self, where: str) -> str:
        if where == "code":
            return self.code
        if where == "any":
            return self.reply + "\n" + "\n".join(b for _, b in sorted((self.artifacts or {}).items()))
        if where == "codeish":
            inline = " ".join(re.findall(r"`([^`\n]+)`", self.prose))
            shell = "\n".join(ln for ln in self.prose.splitlines() if re.match(r"\s*[$>] ", ln))
            return "\n".join([self.code, inline, shell])
        if where == "start":
            return " ".join(self.sentences[:2])
        if where == "end":
            paras = [p for p in re.split(r"\n\s*\n", tx.prose(self.reply).strip()) if p.strip()]
            last = tx.sentences(paras[-1]) if paras else []
            if len(paras) > 1 and 0 < len(last) <= 3:
                return " ".join(last)
            return " ".join(self.sentences[-2:]) if len(self.sentences) > 2 else " ".join(self.sentences[-1:])
        return self.reply + ("\n" + self.documents if self.documents else "")


@dataclass(frozen=True)
class Matcher:
    """Phrases (matched on stems, negation-aware) and regexes (matched as is)."""

    phrases: tuple[tuple[str, ...], ...] = ()
    regexes: tuple[str, ...] = ()

    def find(self, text: str, *, affirmative: bool = True) -> list[tuple[int, int]]:
        toks = tx.tokens(text)
        spans: list[tuple[int, int]] = []
        for ph in self.phrases:
            spans.extend(tx.find_phrase(text, ph, toks, affirmative=affirmative))
        for rx in self.regexes:
            for m in re.finditer(rx, text, flags=re.I | re.M):
                if affirmative and m.start() > 0 and not tx.EMOJI_RE.match(m.group(0)) and \
                        (tx.negated_at(text, m.start(), window=3) or tx.free_suffix(text, m.end())):
                    continue  # an emoji is never a negated mention
                spans.append((m.start(), m.end()))
        return sorted(set(spans))

    def __bool__(self) -> bool:
        return bool(self.phrases or self.regexes)


def matcher(phrases: list[str] | tuple[str, ...] = (), regexes: tuple[str, ...] = ()) -> Matcher:
    return Matcher(tuple(tx.stems_of(p) for p in phrases if tx.words(p)), tuple(regexes))


@dataclass(frozen=True)
class Check:
    """Base class: a named predicate with a short description for traces."""

    def evaluate(self, view: View) -> Finding:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__


# -- length ---------------------------------------------------------------------------------


_LEAD_IN = re.compile(r"^(?:here(?:'s| is| are)|below is|i(?:'ve| have)\s+(?:drafted|written|rewritten|revised|edited|"
                      r"tightened|shortened|updated)|this is)\b[^\n]{0,120}:\s*$", re.I)
_META = re.compile(r"^\s*(?:\*\*)?(?:what i changed|changes(?: made)?|edits?(?: made)?|notes?|note:|i changed|"
                   r"let me know|want me to|shall i|should i|happy to)\b", re.I)


def deliverable(reply: str) -> str:
    """The piece itself: without a lead-in line ("Here's the revised abstract:") and closing notes about the edit.

    A user's length limit is about what they will paste or publish, not the agent's framing around it.
    """
    paras = [p for p in re.split(r"\n\s*\n", reply.strip()) if p.strip()]
    if len(paras) >= 2 and _LEAD_IN.match(paras[0].strip()) and "\n" not in paras[0].strip():
        paras = paras[1:]
    while len(paras) >= 2 and _META.match(paras[-1]):
        paras = paras[:-1]
    return "\n\n".join(paras)


def count_units(view: View, unit: str) -> int:
    if unit == "words":
        return len(tx.words(tx.prose(view.deliverable)))
    if unit == "sentences":
        return len(view.sentences)
    if unit == "lines":
        return len(tx.nonempty_lines(view.reply))
    if unit == "paragraphs":
        return len([p for p in re.split(r"\n\s*\n", view.deliverable) if p.strip()])
    if unit == "characters":
        return len(view.deliverable.strip())
    if unit == "bullets":
        return len(tx.bullet_lines(view.reply))
    raise ValueError(unit)


@dataclass(frozen=True)
class MaxCount(Check):
    unit: str
    n: int
    soft: bool = False
    per_line: bool = False  # a limit for each line (headlines, subject lines), not for the whole reply

    def evaluate(self, view: View) -> Finding:
        if self.per_line:
            items = [re.sub(r"^\s*(?:[-*\u2022+]|\d+[.)])\s+|^[\"\u201c*_]+|[\"\u201d*_]+$", "", ln.strip())
                     for ln in view.deliverable.splitlines() if ln.strip()]
            k = max((len(x) for x in items), default=0)
        else:
            k = count_units(view, self.unit)
        what = "short" if self.soft else f"to {self.n} {self.unit} or fewer"
        if k > self.n:
            return Finding("violated", f"that came out at {k} {self.unit}", f"keep it {what}", "length")
        return Finding("satisfied", f"{k} {self.unit} (limit {self.n})", topic="length")

    def describe(self) -> str:
        return f"at most {self.n} {self.unit}" + (" (soft)" if self.soft else "")


@dataclass(frozen=True)
class MinCount(Check):
    unit: str
    n: int

    def evaluate(self, view: View) -> Finding:
        k = count_units(view, self.unit)
        if k < self.n:
            return Finding("violated", f"that is only {k} {self.unit}",
                           f"give at least {self.n} {self.unit}", "length")
        return Finding("satisfied", f"{k} {self.unit}", topic="length")

    def describe(self) -> str:
        return f"at least {self.n} {self.unit}"


# -- content --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Forbid(Check):
    """Content that must not appear (negated mentions like 'no emojis' do not count)."""

    label: str
    match: Matcher
    where: str = "reply"
    task_override: bool = True
    ask: str = ""
    about: Matcher | None = None
    skip_before: str = ""  # a hit preceded (same clause) by this regex does not count, e.g. 'arrives' for departures
    skip_after: str = ""  # a hit followed closely by this regex does not count ("grams are fine for carbs")
    allowed: tuple[str, ...] = ()  # hits inside these phrases are fine ("Riverbend" inside "Riverbend Community Partners")

    def evaluate(self, view: View) -> Finding:
        if self.about is not None and not (self.about.find(view.reply, affirmative=False)
                                           or self.about.find(view.task, affirmative=False)):
            return Finding("not_applicable", f"nothing here is about {self.label}", topic=self.label)
        if self.task_override and self.match.find(view.task):
            return Finding("not_applicable", f"the task itself asks for {self.label}", topic=self.label)
        text = view.region(self.where)
        hits = self.match.find(text)
        if self.where in ("reply", "any"):
            # a banned word in quotes is mentioned, not used ("I replaced 'leverage' with 'use'")
            quoted = [(m.start(), m.end()) for m in re.finditer(r"[\"\u201c][^\"\u201c\u201d\n]{0,120}[\"\u201d]", text)] \
                if self.label in ("the words you asked me to avoid", "the things you asked me to avoid") else []
            hits = [(s, e) for s, e in hits if not (re.search(r"[\"\u201c'\u2018]\s*$", text[max(0, s - 2): s]) and
                                                    re.match(r"\s*[\"\u201d'\u2019]", text[e: e + 2]))
                    and not any(a < s and e < b for a, b in quoted)]
        if self.allowed:
            ok_spans = [(m.start(), m.end()) for a in self.allowed
                        for m in re.finditer(re.escape(a).replace(r"\ ", r"\s+"), text, re.I)]
            hits = [(s, e) for s, e in hits if not any(a <= s and e <= b for a, b in ok_spans)]
        if self.skip_after:
            hits = [(s, e) for s, e in hits if not re.match(r"[^.;!?\n]{0,25}?" + self.skip_after, text[e: e + 60], re.I)]
        if self.skip_before:
            hits = [(s, e) for s, e in hits if not re.search(
                self.skip_before + r"[^.;!?\n,]{0,30}$", text[max(0, s - 40): s], re.I)]
        if hits:
            s, e = hits[0]
            return Finding("violated", f"there's \u201c{text[s:e]}\u201d in there (\u201c{tx.snippet(text, s, e)}\u201d)",
                           self.ask or f"leave out {self.label}", self.label)
        return Finding("satisfied", f"no {self.label} found", topic=self.label)

    def describe(self) -> str:
        return f"no {self.label} in {self.where}"


@dataclass(frozen=True)
class Require(Check):
    """Content that must appear (somewhere, near the start, or near the end)."""

    label: str
    match: Matcher
    where: str = "reply"
    about: Matcher | None = None
    min_sentences: int = 0
    ask: str = ""
    code_only: bool = False

    def evaluate(self, view: View) -> Finding:
        if self.code_only and not view.changes_code:
            return Finding("not_applicable", "no code change in this delivery", topic=self.label)
        if self.about is not None and not (self.about.find(view.reply) or self.about.find(view.task)):
            return Finding("not_applicable", f"the delivery is not about {self.label}", topic=self.label)
        if len(view.sentences) < self.min_sentences:
            return Finding("not_applicable", "the reply is too short for this to matter", topic=self.label)
        text = view.region(self.where)
        if self.match.find(text):
            return Finding("satisfied", f"found {self.label}", topic=self.label)
        place = {"start": " up front", "end": " in the closing lines"}.get(self.where, "")
        return Finding("violated", f"I don't see {self.label}{place}",
                       self.ask or f"include {self.label}{place}", self.label)

    def describe(self) -> str:
        return f"needs {self.label} ({self.where})"


@dataclass(frozen=True)
class RequireTerms(Check):
    """Several words that should be covered (each by itself or a synonym); ``need`` of them suffice."""

    label: str
    groups: tuple[Matcher, ...]
    need: int = 1
    where: str = "reply"
    ask: str = ""
    about: Matcher | None = None
    per_item: bool = False

    def evaluate(self, view: View) -> Finding:
        if self.about is not None and not (self.about.find(view.reply, affirmative=False)
                                           or self.about.find(view.task, affirmative=False)):
            return Finding("not_applicable", f"nothing here is about {self.label}", topic=self.label)
        if self.per_item and self.about is not None and len(self.about.find(view.reply, affirmative=False)) < 2 \
                and len(tx.bullet_lines(view.reply)) < 2 and len(re.findall(r"(?m)^\s*\|", view.reply)) < 3:
            return Finding("not_applicable", "a 'for each' wish, and there is no list of items here",
                           topic=self.label)
        if len(tx.words(view.prose)) < (6 if self.about is not None else 12):
            return Finding("not_applicable", "a one-line answer, nothing to add there", topic=self.label)
        text = view.region(self.where)
        got = sum(1 for g in self.groups if g.find(text))
        if got >= self.need:
            return Finding("satisfied", f"mentions {self.label}", topic=self.label)
        place = {"start": " up front", "end": " in the closing lines"}.get(self.where, "")
        return Finding("violated", f"I don't see {self.label}{place}", self.ask or f"include {self.label}",
                       self.label)

    def describe(self) -> str:
        return f"needs {self.label} ({self.where})"


def _option_count(reply: str) -> int:
    """How many alternatives a reply offers: numbered items, 'Option N' labels, or a plain list of bullets.

    A plan that uses bullets for its parts (Flight: ..., Hotel: ...) is not a list of options."""
    numbered = tx.numbered_lines(reply)
    if len(numbered) >= 2:  # the longest run: numbering that restarts under a new heading is a new list
        runs, cur = [], 0
        for ln in reply.splitlines():
            m = re.match(r"\s*(\d+)[.)]\s+\S", ln)
            if m and not (m.group(1) == "1" and cur):
                cur += 1
            elif m:
                runs.append(cur)
                cur = 1
        return max([*runs, cur])
    labelled = set(re.findall(r"\b(?:option|choice|pick)\s*(?:#\s*)?(\d|[a-e])\b", reply, re.I))
    if len(labelled) >= 2:
        return len(labelled)
    bullets = tx.bullet_lines(reply)
    lines = [ln for ln in reply.splitlines() if ln.strip()]
    parts = [b for b in bullets if re.match(r"\s*[-*\u2022+]\s+(?:\*\*)?[\w ]{2,20}(?:\*\*)?\s*:", b)]
    if bullets and len(parts) < len(bullets) / 2 and not re.search(r"^\s*#{1,6}\s", reply, re.M) and \
            len(bullets) >= 0.5 * len(lines):
        return len(bullets)
    return 0


@dataclass(frozen=True)
class MaxItems(Check):
    """At most ``n`` options (counted as list items, or as mentions of the noun in a prose list)."""

    n: int
    noun: str
    about: Matcher | None = None

    def evaluate(self, view: View) -> Finding:
        if self.about is not None and not (self.about.find(view.reply, affirmative=False)
                                           or self.about.find(view.task, affirmative=False)):
            return Finding("not_applicable", f"no {self.noun} options here", topic="options")
        k = _option_count(view.reply)
        if k == 0:
            return Finding("satisfied", "no list of options", topic="options")
        if k > self.n:
            return Finding("violated", f"you gave me {k} of them", f"narrow it down to {self.n} at most", "options")
        return Finding("satisfied", f"{k} options", topic="options")

    def describe(self) -> str:
        return f"at most {self.n} {self.noun} options"


_COMMIT_RX = (r"\bgit commit[^\n]*?-m\s+[\"']([^\"'\n]+)[\"']", r"\bcommit(?:ted)?(?: it)? (?:as|with(?: the)? message)\s*:?\s*"
              r"[\"'`\u201c]([^\"'`\u201d\n]+)[\"'`\u201d]", r"\bcommit message\s*:\s*[\"'`\u201c]?([^\"'`\u201d\n]+)")


@dataclass(frozen=True)
class CommitFormat(Check):
    """Commit messages (as reported in the reply or COMMIT_EDITMSG) must match a pattern."""

    pattern: str

    def evaluate(self, view: View) -> Finding:
        msgs = [m.group(1).strip() for rx in _COMMIT_RX for m in re.finditer(rx, view.reply, flags=re.I)]
        msgs += [b.strip().splitlines()[0] for p, b in (view.artifacts or {}).items()
                 if p.endswith("COMMIT_EDITMSG") and b.strip()]
        if not msgs:
            return Finding("not_applicable", "no commit message in this delivery", topic="commit message")
        bad = [m for m in msgs if not re.match(self.pattern, m)]
        if bad:
            return Finding("violated", f"the commit message \u201c{bad[0][:60]}\u201d has the wrong shape",
                           "reword the commit message in the agreed format (type: summary)", "commit message")
        return Finding("satisfied", "commit messages fit", topic="commit message")

    def describe(self) -> str:
        return "commit message format"


# (?<!\d): an amount without a leading symbol starts where its digits start (linear on long
# digit runs; quadratic before)
_AMOUNT_RX = re.compile(r"(?:[\u20ac$\u00a3]\s?(\d[\d,]*(?:\.\d+)?))|(?:(?<!\d)(\d[\d,]*(?:\.\d+)?)\s?(?:\u20ac|eur\b|euros?\b|"
                        r"usd\b|dollars?\b|\$|\u00a3|gbp\b|pounds?\b))", re.I)


@dataclass(frozen=True)
class PriceCap(Check):
    """Prices quoted for the capped thing (e.g. a night) stay under the cap."""

    cap: int
    about: Matcher | None = None

    def evaluate(self, view: View) -> Finding:
        hits = []
        rows = [ln for ln in view.reply.splitlines() if ln.lstrip().startswith("|")]
        header_ok = bool(rows) and self.about is not None and bool(self.about.find(rows[0], affirmative=False))
        for sent in (view.sentences or [view.reply]) + (rows[2:] if header_ok else []):
            if self.about is not None and not self.about.find(sent, affirmative=False) and \
                    not (self.about.find(view.task, affirmative=False) and len(view.sentences) <= 3) and \
                    not (header_ok and sent in rows):
                continue
            for m in _AMOUNT_RX.finditer(sent):
                v = float((m.group(1) or m.group(2)).replace(",", ""))
                hits.append((v, sent))
        if not hits:
            return Finding("not_applicable", "no prices quoted for it", topic="budget")
        over = [h for h in hits if h[0] > self.cap]
        if over:
            return Finding("violated", f"that is {over[0][0]:g}, over my {self.cap} limit",
                           f"stay under {self.cap}", "budget")
        return Finding("satisfied", "prices within the cap", topic="budget")

    def describe(self) -> str:
        return f"prices at most {self.cap}"


# -- format ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ListFormat(Check):
    """Bullets or numbered items required (``required``) or unwanted."""

    numbered: bool = False
    required: bool = True
    min_sentences: int = 3
    steps_only: bool = False

    def evaluate(self, view: View) -> Finding:
        lines = tx.numbered_lines(view.reply) if self.numbered else tx.bullet_lines(view.reply)
        kind = "numbered steps" if self.numbered else "bullet points"
        if self.required and self.steps_only and not _looks_like_steps(view):
            return Finding("not_applicable", "the reply gives no step-by-step instructions", topic=kind)
        if self.required:
            if not self.steps_only and len(view.sentences) < self.min_sentences and len(tx.words(view.prose)) < 20:
                return Finding("not_applicable", "reply too short to need a list", topic=kind)
            if len(lines) >= (2 if self.numbered else 1):
                return Finding("satisfied", f"{len(lines)} list items", topic=kind)
            return Finding("violated", "it is all running prose",
                           f"lay it out as {kind}", kind)
        if len(lines) >= 2:
            return Finding("violated", f"you broke it into {len(lines)} list items",
                           "write it as prose, no list", kind)
        return Finding("satisfied", "no list", topic=kind)

    def describe(self) -> str:
        return ("needs " if self.required else "no ") + ("numbered list" if self.numbered else "bullets")


_IMPERATIVE = re.compile(r"^\s*(?:[-*\d.)]+\s*)?(run|install|copy|open|create|add|set|click|go|move|replace|delete|"
                         r"start|check|make|update|bump|switch|configure|clone|download|enable|edit|change|"
                         r"remove|restart|build|deploy|type|select|choose|navigate|log in|sign in)\b", re.I)


def _looks_like_steps(view: View) -> bool:
    """Instructions: several imperative clauses or sequence words (first, then, next, finally)."""
    seq = len(re.findall(r"\b(then|next|after that|afterwards|finally|first|second|third|lastly)\b",
                         view.prose.lower()))
    clauses = re.split(r"[,;.:]\s*|(?<!\s)\s+(?:and|then|and then)\s+", view.prose)  # linear on space runs
    imp = sum(1 for c in clauses if _IMPERATIVE.match(c))
    if imp >= 1 and re.search(r"^\s*how (do|can|should|would) (i|we|you)\b|\bhow to\b|\bsteps?\b|\bset ?up\b",
                              view.task.lower()):
        return True
    lists = len(tx.bullet_lines(view.reply))
    return seq + imp + lists >= 2 and bool(re.search(r"\b(run|install|copy|open|click|set|create|add|move|"
                                                      r"replace|configure|update|start|go)\b", view.prose.lower()))


@dataclass(frozen=True)
class Headings(Check):
    required: bool = True
    min_words: int = 80

    def evaluate(self, view: View) -> Finding:
        hs = tx.heading_lines(view.reply)
        if self.required:
            if len(tx.words(view.prose)) < self.min_words and len(view.sentences) < 4:
                return Finding("not_applicable", "reply too short to need sections", topic="headings")
            if hs:
                return Finding("satisfied", f"{len(hs)} headings", topic="headings")
            return Finding("violated", "there are no section headings",
                           "split it into sections with headings", "headings")
        if hs:
            return Finding("violated", f"you added headings (\u201c{hs[0].strip()[:40]}\u201d)",
                           "drop the headings", "headings")
        return Finding("satisfied", "no headings", topic="headings")

    def describe(self) -> str:
        return "needs headings" if self.required else "no headings"


@dataclass(frozen=True)
class NoMarkdown(Check):
    def evaluate(self, view: View) -> Finding:
        marks = []
        if tx.heading_lines(view.reply):
            marks.append("headings")
        if re.search(r"\*\*[^*\n]+\*\*|__[^_\n]+__", view.prose):
            marks.append("bold text")
        if tx.TABLE_RE.search(view.prose):
            marks.append("a table")
        if re.search(r"\[[^\]]+\]\([^)]+\)", view.prose):
            marks.append("link syntax")
        if len(tx.bullet_lines(view.reply)) >= 2:
            marks.append("a bulleted list")
        if marks:
            return Finding("violated", "it is full of markdown (" + ", ".join(marks) + ")",
                           "send plain text without markdown formatting", "markdown")
        return Finding("satisfied", "plain text", topic="markdown")

    def describe(self) -> str:
        return "plain text, no markdown"


@dataclass(frozen=True)
class Table(Check):
    required: bool = True

    def evaluate(self, view: View) -> Finding:
        has = bool(tx.TABLE_RE.search(view.prose))
        if self.required:
            if len(view.sentences) < 3:
                return Finding("not_applicable", "reply too short to need a table", topic="table")
            return (Finding("satisfied", "has a table", topic="table") if has else
                    Finding("violated", "the comparison is not in a table", "put it in a table", "table"))
        return (Finding("violated", "the reply contains a table", "use prose or a list, not a table",
                        "table") if has else Finding("satisfied", "no table", topic="table"))

    def describe(self) -> str:
        return "needs a table" if self.required else "no tables"


def _json_objects(view: View) -> list[object]:
    cands = list(tx.code_blocks(view.reply)) + [view.reply]
    cands += [b for p, b in sorted((view.artifacts or {}).items()) if p.endswith(".json")]
    out = []
    for c in cands:
        c = c.strip()
        for m in [c, *re.findall(r"(\{.*\}|\[.*\])", c, flags=re.S)]:
            try:
                out.append(json.loads(m))
                break
            except (ValueError, TypeError):
                continue
    return out


@dataclass(frozen=True)
class JsonFields(Check):
    fields: tuple[str, ...] = ()

    def evaluate(self, view: View) -> Finding:
        objs = _json_objects(view)
        if not objs:
            return Finding("violated", "the output is not valid JSON", "return valid JSON", "json")
        if not self.fields:
            return Finding("satisfied", "valid JSON", topic="json")

        def keys(o: object) -> set[str]:
            if isinstance(o, dict):
                return set(o)
            if isinstance(o, list) and o and isinstance(o[0], dict):
                return set(o[0])
            return set()

        best = max((keys(o) for o in objs), key=lambda k: len(k & set(self.fields)))
        missing = [f for f in self.fields if f not in best]
        if missing:
            return Finding("violated", "the JSON lacks " + ", ".join(f"`{m}`" for m in missing),
                           "include the fields " + ", ".join(f"`{f}`" for f in self.fields), "json")
        return Finding("satisfied", "JSON has the fields", topic="json")

    def describe(self) -> str:
        return "JSON" + (" with " + ", ".join(self.fields) if self.fields else "")


# -- workspace --------------------------------------------------------------------------------
TEMP_GLOBS = ("*.tmp", "*.temp", "*.bak", "*.orig", "*.rej", "*.swp", "*~", "*.log", "*.pyc",
              "*/__pycache__/*", "__pycache__/*", ".DS_Store", "*/.DS_Store", "tmp/*", "temp/*",
              "*scratch*", "*debug_*", "*_debug.*", "*tmp_*", "*_tmp.*", "*temp_*", "*_temp.*",
              "*.old", "nohup.out", "*/nohup.out", "*untitled*", "*test_output*", "*output.txt",
              "*repro*.py", "*try_*.py", "*playground*", "*.prof", "core.*", "*throwaway*",
              "*.copy.*", "* copy.*", "*_backup.*", "backup_*.*", "*.backup")


@dataclass(frozen=True)
class Cleanup(Check):
    """No leftover temporary, debug or backup files in the workspace."""

    globs: tuple[str, ...] = TEMP_GLOBS
    extra_terms: tuple[str, ...] = ()

    def evaluate(self, view: View) -> Finding:
        if view.artifacts is None:
            m = re.search(r"\b(left|kept|leaving|keep)\b[^.\n]{0,60}\b(scratch|temp|tmp|debug|backup|"
                          r"\.bak|\.log)\w*", view.reply, flags=re.I)
            if m and not tx.negated_at(view.reply, m.start()):
                return Finding("violated", f"\u201c{tx.snippet(view.reply, m.start(), m.end())}\u201d",
                               "clean up the temporary files before finishing", "cleanup")
            return Finding("unknown", "no workspace listing to inspect", topic="cleanup")
        bad = []
        for path in sorted(view.artifacts):
            low = path.lower()
            base = low.rsplit("/", 1)[-1]
            if any(fnmatch.fnmatch(low, g) or fnmatch.fnmatch(base, g) for g in self.globs):
                bad.append(path)
            elif any(t in tx.stems_of(base.replace("_", " ").replace(".", " ")) for t in self.extra_terms):
                bad.append(path)
        if bad:
            return Finding("violated", "you left " + ", ".join(f"`{b}`" for b in bad[:4]) + " in the workspace",
                           "delete the leftovers before you wrap up", "cleanup")
        return Finding("satisfied", "workspace has no temporary files", topic="cleanup")

    def describe(self) -> str:
        return "no leftover temp/debug files"


# -- actions ---------------------------------------------------------------------------------
ASK_RE = re.compile(
    r"\b(should i|shall i|want me to|would you like me to|do you want|let me know if|ok(ay)? (to|if i)|"
    r"can i|may i|is it ok|before i|with your (ok|approval|go-ahead)|if you('d| would)? approve|"
    r"your call|(?:please|can you|could you|once you|if you) confirm|confirm (?:that|whether|if)\b|"
    r"your confirmation|permission|sign[- ]off|green light|go ahead\?)", re.I)
FUTURE_RE = re.compile(r"\b(i'll|i will|i'm going to|going to|about to|next i'll|now i'll|let me)\b", re.I)
IRREGULAR = {"ran": "run", "rewrote": "rewrit", "wrote": "writ", "made": "mak", "did": "do",
             "rewritten": "rewrit", "written": "writ", "threw": "throw", "took": "tak",
             "set": "set", "put": "put", "rm": "delet", "nuked": "delet", "wiped": "delet",
             "shipped": "deploy", "went": "go", "built": "build", "bumped": "upgrad", "overwrote": "overwrit",
             "overwritten": "overwrit", "removed": "remov", "deleted": "delet", "dropped": "drop"}


def _clip(s: str, n: int = 90) -> str:
    """``s`` on one line, cut at a word boundary."""
    s = " ".join(s.split())
    return s if len(s) <= n else s[:n].rsplit(" ", 1)[0] + "..."


def _near(s: str, verb: tx.Token, span: tuple[int, int]) -> bool:
    """The object follows the verb closely, or precedes it in a passive ('tests were updated')."""
    if span[0] >= verb.end:
        return len(tx.words(s[verb.end: span[0]])) <= 7
    between = s[span[1]: verb.start].lower()
    return len(tx.words(between)) <= 3 and not re.search(r"[;:,]", between) and bool(re.search(r"\b(was|were|been|got|is|are|has|have)\b", between))


def _verb_hits(sentence: str, verbs: frozenset[str]) -> list[tx.Token]:
    out = []
    for t in tx.tokens(sentence):
        low = t.text.lower()
        st = IRREGULAR.get(low, t.stem)
        if st in verbs:
            out.append(t)
    return out


@dataclass(frozen=True)
class ActionRule(Check):
    """An action the agent must ask about first (``ask``), never do (``forbid``), or always do
    (``require``), recognised from the reply's own account of what it did."""

    mode: Literal["ask", "forbid", "require"]
    label: str
    verbs: frozenset[str] = frozenset()
    objects: Matcher = field(default_factory=Matcher)
    commands: tuple[str, ...] = ()
    results: tuple[str, ...] = ()
    artifact_globs: tuple[str, ...] = ()
    solo_verbs: frozenset[str] = frozenset()
    todo: str = ""
    claim_rx: str = ""
    code_langs: tuple[str, ...] = ()

    def _done(self, view: View) -> tuple[str | None, bool]:
        """A sentence reporting the action as done (or announced), and whether any was asked."""
        asked = False
        done = None
        for s in view.sentences + [ln for ln in tx.code_blocks(view.reply)]:
            low = s.lower()
            obj_spans = self.objects.find(s, affirmative=False) if self.objects else []
            obj_ok = not self.objects or bool(obj_spans)
            cmd = any(re.search(c, s, flags=re.I) for c in self.commands)
            vh = _verb_hits(s, self.verbs)
            if not obj_ok and self.solo_verbs:
                vh = [t for t in vh if IRREGULAR.get(t.text.lower(), t.stem) in self.solo_verbs]
                obj_ok = bool(vh)
            mentions = (obj_ok and bool(vh)) or cmd
            if mentions and (tx.is_question(s) or ASK_RE.search(low)):
                asked = True
                continue
            if not mentions:
                continue
            if cmd and not any(tx.negated_at(s, m.start(), 4) for c in self.commands
                               for m in re.finditer(c, s, flags=re.I)):
                done = done or s
                continue
            if self.objects and obj_spans and not self.solo_verbs:
                vh = [t for t in vh if any(_near(s, t, sp) for sp in obj_spans)]
            for t in vh:
                past = (t.text.lower().endswith(("ed", "en")) or t.text.lower() in IRREGULAR
                        or re.search(r"\b(have|has|i've|just|went ahead and)\b", low[: t.start].lower()))
                fut = self.mode != "require" and FUTURE_RE.search(low[: t.start])
                if (past or fut) and not tx.negated_at(s, t.start, 4):
                    done = done or s
        return done, asked

    def evaluate(self, view: View) -> Finding:
        done, asked = self._done(view)
        if self.mode == "require":
            if not view.changes_code:
                return Finding("not_applicable", "no code change in this delivery", topic=self.label)
            langs = code_languages(view)
            if self.code_langs and langs and not set(self.code_langs) & langs:
                return Finding("not_applicable", f"no {'/'.join(self.code_langs)} code in this delivery",
                               topic=self.label)
            if self.claim_rx and not re.search(self.claim_rx, view.prose, flags=re.I):
                return Finding("not_applicable", "the reply makes no claim that it works", topic=self.label)
            if any(re.search(r, view.reply, flags=re.I) and not tx.negated_at(
                    view.reply, re.search(r, view.reply, flags=re.I).start(), 3) for r in self.results):
                return Finding("satisfied", f"the reply reports {self.label}", topic=self.label)
            if self.artifact_globs and view.artifacts is not None and any(
                    fnmatch.fnmatch(p.lower(), g) for p in view.artifacts for g in self.artifact_globs):
                return Finding("satisfied", f"workspace shows {self.label}", topic=self.label)
            if done:
                return Finding("satisfied", f"\u201c{tx.snippet(done, 0, len(done), 0)[:90]}\u201d",
                               topic=self.label)
            if self.objects:
                for sent in view.sentences:
                    spans = self.objects.find(sent, affirmative=False)
                    if spans and re.search(r"\b(pass(es|ed)?|clean|green|succeed(s|ed)?|no (errors|issues|warnings|"
                                           r"complaints|findings)|all good|happy|ok)\b", sent[spans[0][0]:], re.I) and \
                            not tx.negated_at(sent, spans[0][0], 4):
                        return Finding("satisfied", f"the reply reports {self.label}", topic=self.label)
            return Finding("violated", f"nothing says you took care of {self.label}",
                           self.todo or f"take care of {self.label} before handing it back", self.label)
        if done is None:
            return Finding("not_applicable" if not asked else "satisfied",
                           "asked first" if asked else f"no {self.label} in this delivery", topic=self.label)
        if self.mode == "ask" and asked:
            return Finding("satisfied", "it asked before acting", topic=self.label)
        ask = f"check with me before {self.label}" if self.mode == "ask" else f"stop {self.label} on your own"
        return Finding("violated", f"you went ahead without asking (\u201c{_clip(done)}\u201d)" if self.mode == "ask" else f"you did it anyway (\u201c{_clip(done)}\u201d)", ask, self.label)

    def describe(self) -> str:
        return f"{self.mode}: {self.label}"


_EXT_LANG = {".py": "python", ".pyi": "python", ".ipynb": "python", ".js": "javascript", ".jsx": "javascript",
             ".ts": "javascript", ".tsx": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".rs": "rust",
             ".go": "go", ".rb": "ruby", ".sh": "shell", ".php": "php", ".sql": "sql", ".java": "java",
             ".kt": "kotlin", ".swift": "swift", ".c": "c", ".cc": "cpp", ".cpp": "cpp", ".cs": "csharp"}
_TAG_LANG = {"python": "python", "py": "python", "javascript": "javascript", "js": "javascript",
             "typescript": "javascript", "ts": "javascript", "tsx": "javascript", "jsx": "javascript", "sql": "sql",
             "rust": "rust", "go": "go", "ruby": "ruby", "bash": "shell", "sh": "shell", "shell": "shell",
             "java": "java", "kotlin": "kotlin", "swift": "swift"}


def code_languages(view: View) -> set[str]:
    """Programming languages of the code in the delivery (file extensions and code-fence tags)."""
    out = {lang for p in (view.artifacts or {}) for ext, lang in _EXT_LANG.items() if p.lower().endswith(ext)}
    for tag in re.findall(r"^\s*```\s*([\w+-]+)", view.reply, re.M):
        if tag.lower() in _TAG_LANG:
            out.add(_TAG_LANG[tag.lower()])
    return out


# -- code style -------------------------------------------------------------------------------
def _split_params(sig: str) -> list[str]:
    """Split a parameter list on top-level commas (``dict[str, int]`` stays whole)."""
    out, depth, cur = [], 0, []
    for ch in sig:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


_DEF_RE = re.compile(r"^(\s*)def\s+(\w+)\s*\((.*?)\)\s*(->\s*[^:]+)?:", re.M | re.S)


@dataclass(frozen=True)
class CodeStyle(Check):
    """Python code conventions in the code the agent produced."""

    rule: Literal["type_hints", "docstrings", "no_comments", "max_line_length", "max_function_lines"]
    n: int = 0

    def evaluate(self, view: View) -> Finding:
        code = view.code
        if not code.strip():
            return Finding("not_applicable", "no code in this delivery", topic=self.rule)
        defs = list(_DEF_RE.finditer(code))
        if self.rule == "type_hints":
            if not defs:
                return Finding("not_applicable", "no Python functions", topic="type hints")
            for m in defs:
                params = [p.strip() for p in _split_params(m.group(3)) if p.strip()]
                params = [p for p in params if p.split("=")[0].strip() not in ("self", "cls", "*", "/")
                          and not p.startswith("*")]
                if m.group(4) is None or any(":" not in p.split("=")[0] for p in params):
                    return Finding("violated", f"`def {m.group(2)}(...)` has no type annotations",
                                   "annotate the function signatures", "type hints")
            return Finding("satisfied", "functions are annotated", topic="type hints")
        if self.rule == "docstrings":
            if not defs:
                return Finding("not_applicable", "no Python functions", topic="docstrings")
            for m in defs:
                rest = code[m.end():].lstrip("\n")
                first = rest.split("\n", 1)[0].strip()
                if m.group(2).startswith(("_", "test_")) and not m.group(2).startswith("__init"):
                    continue
                if not first.startswith(('"""', "'''", 'r"""')):
                    return Finding("violated", f"`{m.group(2)}` has no docstring",
                                   "give each public function a docstring", "docstrings")
            return Finding("satisfied", "functions have docstrings", topic="docstrings")
        if self.rule == "no_comments":
            m = re.search(r"^\s*(#(?!!)|//)\s*\S.*$", code, flags=re.M)
            if m:
                return Finding("violated", f"comment in the code: `{m.group(0).strip()[:60]}`",
                               "strip the inline comments", "comments")
            return Finding("satisfied", "no comments", topic="comments")
        if self.rule == "max_line_length":
            long = [ln for ln in code.splitlines() if len(ln) > self.n]
            if long:
                return Finding("violated", f"{len(long)} code line(s) longer than {self.n} characters",
                               f"wrap code lines at {self.n} characters", "line length")
            return Finding("satisfied", "lines within limit", topic="line length")
        if self.rule == "max_function_lines":
            lines = code.splitlines()
            for m in defs:
                start = code[: m.start()].count("\n") + (1 if m.group(1) == "" else 1)
                indent = len(m.group(1).replace("\n", ""))
                n = 0
                for ln in lines[start:]:
                    if ln.strip() and len(ln) - len(ln.lstrip()) <= indent:
                        break
                    n += 1
                if n > self.n:
                    return Finding("violated", f"`{m.group(2)}` is {n} lines long",
                                   f"split functions longer than {self.n} lines", "function length")
            return Finding("satisfied", "functions are short", topic="function length")
        raise ValueError(self.rule)

    def describe(self) -> str:
        return f"code: {self.rule}" + (f" {self.n}" if self.n else "")


@dataclass(frozen=True)
class Unknown(Check):
    """A preference the offline interpreter cannot turn into a check (judgement only)."""

    reason: str = "no recognisable check in the preference text"

    def evaluate(self, view: View) -> Finding:
        return Finding("unknown", self.reason)

    def describe(self) -> str:
        return "judgement only"
