"""Offline interpreter: compile a preference (its ``check`` or its natural-language text) to checks.

The text grammar recognises the common kinds of preference: length limits, brevity, required or
forbidden content, list/heading/table/JSON/markdown format, tone (pleasantries, apologies,
emojis, hedging), unsolicited suggestions, workspace cleanup, asking before acting, actions never
to take or always to take, code conventions, tool substitutions ("use X instead of Y") and things a
traveller avoids or prefers. Their cues live in the kind files (``toolkit/resources/compliance/
kinds/*.yaml``, ``rules``), run stage by stage (:data:`_RULES`) by ``_catalogue_data.run_stage``;
this module keeps the clause split, the shared negation-scope reading of a cue (:func:`cue_places`)
and the named builders that turn a matched cue into checks. Conditions ("when ...", "unless ...")
are split off. A preference
with no recognisable cue compiles to :class:`~toolkit.compliance._checks.Unknown`, so the simulator
stays silent and says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from toolkit import text as tx
from toolkit.compliance import _lexicons as lx
from toolkit.compliance._catalogue_data import read_kinds, run_stage
from toolkit.compliance._checks import (
    ActionRule,
    Check,
    CodeStyle,
    Forbid,
    Headings,
    Matcher,
    MaxCount,
    MaxItems,
    MinCount,
    PriceCap,
    Require,
    RequireTerms,
    Unknown,
    matcher,
)
from toolkit.compliance._conditions import SYNONYMS, Conditional
from toolkit.compliance._kind_builders import example_forbid
from toolkit.compliance._kind_builders import quoted as quoted_terms
from toolkit.compliance._param_readers import builder
from toolkit.compliance._types import Rule

_GENERIC = frozenset(lx.GENERIC_NOUNS | {tx.stem(w) for w in lx.GENERIC_NOUNS})
_NOISE = frozenset(lx.ADJECTIVE_NOISE | {tx.stem(w) for w in lx.ADJECTIVE_NOISE})
_STOP = frozenset(lx.STOPWORDS)


@dataclass(frozen=True)
class CompiledPreference:
    """A preference as the offline simulator uses it: checks plus when it applies."""

    id: str
    checks: tuple[Check, ...]
    applies_when: tuple[str, ...] = ()
    except_when: tuple[str, ...] = ()
    source: str = "text"
    topic: frozenset[str] = frozenset()  # stems of the preference's own words (see condition_holds)

    @property
    def judgeable(self) -> bool:
        return not all(isinstance(c, Unknown) for c in self.checks)


# -- text preparation -----------------------------------------------------------------------
_DEFINITIONAL = re.compile(r"^\s*(enforce|consider this|this is (satisfied|violated)|note:|"
                           r"mixed prose)", re.I)
_LEAD_COND = re.compile(r"^\s*(?:when(?:ever)?|if|while|during|for|in|on|once|after)\s+(?P<c>[^,:]{3,120})[,:]\s*"
                        r"(?P<b>.+)$", re.I | re.S)
_TRAIL_EXC = re.compile(r"[,;]?\s*\b(?:unless|except (?:when|if|for|in)|except|other than when|but not when|"
                        r"save for when)\b\s+(?P<c>[^.;]+)", re.I)
_TRAIL_COND = re.compile(r"[,;]?\s*\b(?:when(?:ever)?|if|only if|any time)\s+(?P<c>(?:i|you|the|a|an|we|it|"
                         r"there|working|writing|doing|touching|editing|fixing|changing|making|"
                         r"planning|booking|a task|tasks?)\b[^.;]+)", re.I)


def _clean(text: str) -> str:
    t = re.sub(r"\(\)", "", text)
    t = re.sub(r"\([^)]*\)", " ", t)
    t = re.sub(r"\s+([,.;:])(?=\s|$)", r"\1", t)
    t = t.replace("\u201c", '"').replace("\u201d", '"')
    t = re.sub(r'"([^"\n]*)"', lambda m: "that" if " " in m.group(1).strip() else m.group(0), t)
    t = t.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    sents = re.split(r"(?<=[.!?])\s+", t)
    keep = [s for s in sents if not _DEFINITIONAL.match(s)]
    return " ".join(keep).strip() or t.strip()


def split_conditions(text: str) -> tuple[str, list[str], list[str]]:
    """(body, conditions, exceptions) from one preference text."""
    body = _clean(text)
    conds: list[str] = []
    excs: list[str] = []
    out = []
    for s in re.split(r"(?<=[.!?])\s+", body):
        for m in list(_TRAIL_EXC.finditer(s)):
            if re.match(r"(you('ve| have)|you (actually )?(run|ran|test|tested|verif|check))", m.group("c").strip(), re.I):
                continue
            excs.append(m.group("c").strip(" ."))
        s = _TRAIL_EXC.sub(lambda m: m.group(0) if re.match(r"(you('ve| have)|you (actually )?(run|ran|test|tested|"
                                                            r"verif|check))", m.group("c").strip(), re.I) else "", s)
        m = _LEAD_COND.match(s)
        if m and re.match(r"\s*(?:for|in|on|during)\b", s, re.I) and (
                len(m.group("c").split()) > 6 or re.search(r"\b(use|write|give|keep|put|make|add|avoid|is|are|fine)\b|\)",
                                                           m.group("c"), re.I)):
            m = None  # "For diagnostics use the logger, not print()" is an instruction, not a condition
        if m and re.match(r"\s*(?:for|in|on)\b", s, re.I) and not [
                w for w in _content_words(m.group("c")) if w not in ("text", "itself", "general", "case", "fact")]:
            m = None  # "In the text itself, ..." names no situation
        if m and not re.match(r"\s*(?:in|on|for)\s+(?:every|all|each|any|general|short)\b", s, re.I):
            conds.append(m.group("c").strip())
            s = m.group("b")
        m = re.search(r"^(?:\w+\s+){0,2}?(?P<c>(?:longer|long|lengthy|detailed|multi-paragraph|bigger)\s+"
                      r"(?:answers?|replies|responses|explanations?|write-?ups?|reports?))\b", s, re.I)
        if m:
            conds.append(m.group("c"))
        m = re.search(r"\s+(?:in|for|on)\s+(?P<c>(?:short|quick|small|simple|brief|one-line|trivial|minor)\s+"
                      r"(?:answers?|replies|questions?|tasks?|fixes|changes?|requests?|edits?))\b", s, re.I)
        if m:
            conds.append(m.group("c"))
            s = s[: m.start()] + s[m.end():]
        m = _TRAIL_COND.search(s)
        if m and re.match(r"(you('re| are| have|'ve) (done|finished|through)|you finish|you wrap|you hand|"
                          r"i review|i check)", m.group("c").strip(), re.I):
            s = s[: m.start()]
            m = None
        if m and (re.search(r"\b(?:them|it|those|these)\b", m.group("c")[:40]) and re.search(
                r"\byou\s+(?:made|created|added|wrote|generated)\b", m.group("c"), re.I) or re.search(
                r"\bI(?:'ll| will| can| may|'d| would)\b[^.;,]*$", s[: m.start()]) or re.search(r"\beven\s*$", s[: m.start()])):
            m = None  # "if you made them ..." names the things; "I'll add it if I agree" is the user's own step
        if m and m.start() > 10:
            conds.append(m.group("c").strip(" ."))
            s = s[: m.start()]
        out.append(s)
    return " ".join(out).strip(), conds, excs


# -- helpers ---------------------------------------------------------------------------------
def _neg_before(body: str, pos: int) -> bool:
    return tx.negated_at(body, pos, window=6)


_POST_NEG_RX = re.compile(
    r"^[^.;!?]{0,60}?\b(leave (them|it|those|these|that) out|cut (them|it|that) out|drop (them|it)|skip (them|it)|"
    r"get rid of (them|it)|(is|are|feels?|looks?) (so |really |very )?(annoying|unprofessional|distracting|"
    r"unnecessary|not needed|a no-go|off[- ]limits|banned|forbidden|noise|grating|cringe\w*|tiresome|"
    r"pointless|useless|clutter)|makes? (it|things|me|the \w+)\b[^.;]{0,25}\b(unprofessional|annoyed|cringe|"
    r"worse|harder|cluttered)|no-go|not (welcome|wanted|okay|ok|needed|necessary)|annoy\w*|"
    r"(please )?(stop|quit)\b|bother\w* me|drive\w* me (crazy|nuts|mad)|can go|have to go|must go|"
    r"(must|should|may|can|will)( not|n't)\b|never\b|cannot\b|are not|is not|aren't|isn't)", re.I)


def cue_places(body: str, pattern: str) -> list[tuple[int, bool]]:
    """Positions of a cue and whether each is negated in its clause (before or after the cue)."""
    out = []
    for m in re.finditer(pattern, body, flags=re.I):
        head = body[max(0, m.start() - 60): m.start()].lower()
        if re.search(r"\b(don't|do not) mind\b|\b(is|are) (fine|ok|okay|acceptable)\b", head[-30:]):
            continue
        neg = _neg_before(body, m.start()) or bool(re.search(r"\b(too many|excessive|overuse|any|constant|"
                                                             r"endless|all the|unnecessary|needless)\s*$", head))
        if re.search(r"\b(?:no|not) (?:more|fewer|less) than\s+\w+\s*(?:\w+\s+)?$", head):
            neg = False  # "no more than 5 bullets" caps them, it does not ban them
        neg = neg or bool(_POST_NEG_RX.match(body[m.end(): m.end() + 90]))
        out.append((m.start(), neg))
    return out


def _content_words(phrase: str) -> list[str]:
    ws = [w for w in tx.words(phrase.lower()) if w not in _STOP]
    return [w for w in ws if tx.stem(w) not in _GENERIC]


def _np(text: str) -> str:
    """Trim a noun phrase at the first clause boundary or reason/contrast word."""
    text = re.split(r"\s+(?:because|as|since|due to|so that|so|but|and (?:prefer|i|would|instead|rather)|"
                    r"preferring|which|that|when|unless|except|instead|rather|whenever|if|while|"
                    r"though|although|for (?:my|the|a) (?:health|safety|comfort|reasons?))\b|[.;:!?()]",
                    text.strip(), maxsplit=1, flags=re.I)[0]
    return text.strip(" ,-")


def _domain_terms(phrase: str) -> tuple[list[str], list[str]]:
    """Lexicon expansions for a phrase: (phrases, regexes)."""
    low = " " + " ".join(tx.stem(w) for w in tx.words(phrase.lower())) + " "
    phrases: list[str] = []
    regexes: list[str] = []
    for key, vals in lx.DOMAIN.items():
        k = " " + " ".join(tx.stem(w) for w in tx.words(key)) + " "
        if k in low or (k.strip() and (" " + k.strip()) in low):
            for v in vals:
                (regexes.append(v[4:]) if v.startswith("~rx:") else phrases.append(v))
    return phrases, regexes


_MODIFIER_AMBIGUOUS = frozenset(tx.stem(w) for w in (
    "budget", "cheap", "early", "late", "night", "morning", "evening", "public", "local", "private", "group",
    "free", "open", "fresh", "extra", "super", "first", "second", "last", "next", "other", "single", "double"))
_ABSTRACT = frozenset(tx.stem(w) for w in (
    "jargon", "buzzword", "buzzwords", "cliche", "cliches", "complexity", "ambiguity", "vagueness", "passive",
    "repetition", "redundancy", "condescension", "sarcasm", "negativity", "acronyms", "abbreviations",
    "technical", "terminology", "fluff", "filler", "wordiness", "verbosity", "hype", "marketing", "speak",
    "tone", "formality", "informality", "slang", "assumptions", "guesswork", "surprises", "mistakes", "errors",
    "clutter", "noise", "confusion"))


def _subject_terms(phrase: str) -> Matcher | None:
    """A matcher for the things a phrase names: lexicon expansions plus its specific words."""
    phrase = _np(phrase)
    if any(tx.stem(w) in _ABSTRACT for w in tx.words(phrase.lower())):
        return None
    dom_p, dom_r = _domain_terms(phrase)
    ws = [w for w in tx.words(phrase.lower()) if w not in _STOP]
    ws = [w for w in ws if tx.stem(w) not in _NOISE]
    while ws and tx.stem(ws[0]) in _GENERIC:
        ws = ws[1:]
    specific = [w for w in ws if tx.stem(w) not in _GENERIC]
    phrases = list(dom_p)
    for w in specific[:-1]:
        if "-" in w and len(w) > 5:
            phrases += [w, w.replace("-", " ")]
    if len(specific) == 2 and len(specific[0]) > 4 and "-" not in specific[0] and \
            tx.stem(specific[0]) not in _NOISE | _MODIFIER_AMBIGUOUS and not specific[0].endswith(("ing", "ed")) \
            and not _domain_terms(specific[0])[0] and not _domain_terms(specific[0])[1] and dom_p:
        head_p = set(_domain_terms(specific[1])[0])
        phrases = [p for p in phrases if p not in head_p] + [specific[0]]
    if len(specific) == 1 and dom_r and not dom_p:
        pass  # a syntax detector (LaTeX, hashtags): the word itself is a mention, not a use
    elif len(specific) == 1 and specific[0].endswith("ing") and len(specific[0]) > 5 and not dom_p:
        return matcher([], (rf"\b{re.escape(specific[0])}\b",))  # "no running": the activity, not "can run 600 mg"
    elif len(specific) == 1:
        phrases.append(specific[0])
    elif specific:
        phrases.append(" ".join(specific))
        if len(specific) == 2 and not dom_p:
            phrases.append(" ".join(ws))
    if not phrases and not dom_r:
        return None
    return matcher(phrases, tuple(dom_r))


# -- cue rules -------------------------------------------------------------------------------
def _unit(u: str) -> str:
    u = u.lower().rstrip("s")
    u = {"char": "character", "bullet point": "bullet", "item": "bullet"}.get(u, u)
    return {"word": "words", "sentence": "sentences", "line": "lines", "paragraph": "paragraphs",
            "character": "characters", "bullet": "bullets"}.get(u, "words")


def _part_limit(body: str, start: int, end: int) -> bool:
    """Whether a length limit belongs to one part of the reply ("a TL;DR of three sentences", "the summary in 50 words")."""
    return bool(re.search(r"\b(tl;?dr|summary|intro\w*|opening|first paragraph|teaser|lede|abstract|recap|subject line|"
                          r"preview text)\s+(?:of|in|at|under|with|to|that'?s|is)?\s*$", body[max(0, start - 30): start],
                          re.I) or re.match(r"\s+(?:of|for|in)\s+(?:the\s+)?(tl;?dr|summary|intro)", body[end: end + 20], re.I))


@builder("function_lines")
def _function_lines(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Keep functions under 40 lines"."""
    out.append(CodeStyle("max_function_lines", int(m.group(2))))


@builder("line_length")
def _line_length(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Lines under 100 characters" in code."""
    out.append(CodeStyle("max_line_length", int(m.group(1))))


@builder("length_limit")
def _length_limit(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Under 100 words", "no more than 3 sentences" (a cap), "more than 200 words" when wanted (a floor)."""
    op = m.group("op").lower()
    n = tx.parse_number(m.group(2))
    if n is None or _part_limit(body, m.start(), m.end()):
        return  # a limit on one part ("a TL;DR of three sentences") is not a limit on the whole reply
    unit = _unit(m.group(3))
    if op in ("more than", "over", "past", "beyond", "above") and not _neg_before(body, m.start()) and \
            re.search(r"\b(at least|minimum|want|give me|write|include|need)\b", body[max(0, m.start() - 40):
                                                                                   m.start()], re.I) and \
            not re.search(r"\btoo\b", body[m.end(): m.end() + 30]):
        out.append(MinCount(unit, n + 1))
    elif op == "in" and not re.search(r"\b(answer|reply|respond|explain|keep|summari[sz]e|fit|fits|fitting)\w*\s+$",
                                      body[: m.start()], re.I):
        return
    else:
        out.append(MaxCount(unit, n, per_line=unit == "characters" and bool(re.search(
            r"\b(headlines?|titles?|subject lines?|taglines?|slogans?|tweets?|captions?|names?|labels?|"
            r"button text|alt text)\b", body, re.I))))


@builder("length_range")
def _length_range(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Two or three sentences is plenty": the upper end caps it."""
    n = tx.parse_number(m.group(2))
    if n:
        out.append(MaxCount(_unit(m.group(3)), n))


@builder("length_limit_after")
def _length_limit_after(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"200 words max"."""
    n = tx.parse_number(m.group(1))
    if n and not _part_limit(body, m.start(), m.end()):
        out.append(MaxCount(_unit(m.group(2)), n))


@builder("length_minimum")
def _length_minimum(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"At least 3 paragraphs"."""
    n = tx.parse_number(m.group(1))
    if n:
        out.append(MinCount(_unit(m.group(2)), n))


@builder("one_unit")
def _one_unit(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"One-sentence answers"."""
    out.append(MaxCount(_unit(m.group(2)), 1))


_DEP_STEMS = frozenset(tx.stem(w) for w in ("dependency", "dependencies", "package", "packages", "library",
                                            "libraries", "requirement", "requirements"))


def _action_group(words_: list[str]) -> tuple[str | None, list[str]]:
    """The action group named by a phrase and the object words after its verb."""
    st = [tx.stem(w) for w in words_]
    for i, s in enumerate(st):
        g = lx.ACTION_TRIGGERS.get(s)
        if g is None and s.startswith("force"):
            g = "push"
        if g is None and s in ("pull", "bring") and any(x in _DEP_STEMS for x in st[i + 1:]):
            g = "install"  # "pulling in a new package"
        if g:
            rest = [w for w in words_[i + 1:] if w.lower() not in _STOP]
            if g == "create" and any(tx.stem(w) in _DEP_STEMS for w in rest):
                g = "install"
            if s in _DEP_STEMS:
                g, rest = "install", [words_[i]] + rest
            pathish = any(tx.stem(w) in ("fil", "folder", "directory", "dir") or re.search(r"[/.]\w", w) for w in rest)
            if g in ("run", "create", "modify") and not (g == "modify" and pathish):
                for w in rest:
                    st2 = tx.stem(w)
                    g2 = lx.ACTION_TRIGGERS.get(st2) or next(
                        (v for k, v in lx.ACTION_TRIGGERS.items() if len(k) >= 5 and st2.startswith(k)), None)
                    if g2 in ("migrate", "deploy", "push", "commit", "merge"):
                        g = g2
                        break
            return g, rest
    return None, []


def _objects(words_: list[str]) -> Matcher:
    m = _objects_plain(words_)
    if any(p == ("fil",) for p in m.phrases):
        return Matcher(m.phrases, m.regexes + (r"\b[\w\-]+(/[\w\-.]+)*\.[A-Za-z]{1,5}\b",))
    if any(p in (("dependency",), ("packag",), ("library",)) for p in m.phrases):
        return Matcher(m.phrases, m.regexes + (r"requirements[\w.-]*\.txt", r"pyproject\.toml", r"package\.json",
                                                r"\bfrom v?\d+(\.\d+)+ to v?\d+(\.\d+)+"))
    return m


def _objects_plain(words_: list[str]) -> Matcher:
    stems: list[str] = []
    weak: list[str] = []
    folder = any(tx.stem(w) in ("folder", "directory", "dir") for w in words_)
    for w in words_:
        s = tx.stem(w)
        if s in _GENERIC or s in _NOISE or (s in lx.ACTION_TRIGGERS and not folder) or w.lower() in ("existing", "current", "old",
                                                                                  "make", "pass", "them", "it",
                "anything", "something", "things", "stuff", "change", "changes", "code", "work", "directly",
                "against", "on", "in", "to", "into",
                "first", "yourself", "myself"):
            continue
        (weak if s in ("fil", "folder", "directory", "dir") else stems).append(w.lower())
    stems = stems or weak
    phrases: list[str] = []
    for w in stems[:3]:
        syn = lx.OBJECT_SYNONYMS.get(w) or lx.OBJECT_SYNONYMS.get(tx.stem(w)) or \
            lx.OBJECT_SYNONYMS.get(w.rstrip("s")) or (w,)
        phrases.extend(syn)
    return Matcher(tuple(tx.stems_of(p) for p in dict.fromkeys(phrases) if tx.words(p)), ())


_CANON = {"book": "booking or paying for {obj}", "install": "adding dependencies", "delete": "deleting {obj}", "push": "pushing to {obj}",
          "commit": "committing", "merge": "merging", "deploy": "deploying", "modify": "changing {obj}",
          "refactor": "restructuring code", "upgrade": "upgrading versions", "run": "running {obj}",
          "create": "creating {obj}", "migrate": "running migrations", "reset": "rewriting git history"}


_CANON_BARE = {"book": "booking or paying for anything", "push": "pushing", "run": "running that", "create": "creating new files"}


_TOOL_LANG = {**{t: "python" for t in ("ruff", "flake8", "pylint", "mypy", "pyright", "pytype", "pytest", "black",
                                        "isort", "tox", "nox", "unittest")},
              **{t: "javascript" for t in ("eslint", "tsc", "jest", "vitest", "mocha", "prettier", "stylelint")},
              "clippy": "rust", "rustfmt": "rust", "gofmt": "go", "golangci-lint": "go", "rubocop": "ruby",
              "rspec": "ruby", "shellcheck": "shell", "phpunit": "php"}
_TOOL_KIND = {t: k for k, ts in {
    "lint": ("eslint", "ruff", "flake8", "pylint", "clippy", "golangci-lint", "rubocop", "stylelint", "shellcheck"),
    "typecheck": ("tsc", "mypy", "pyright", "pytype"),
    "tests": ("pytest", "jest", "vitest", "mocha", "unittest", "tox", "nox", "rspec", "phpunit"),
    "formatter": ("prettier", "black", "gofmt", "rustfmt", "isort"),
}.items() for t in ts}


def _action(mode: str, phrase: str) -> ActionRule | None:
    phrase = re.sub(r"\b(on (my|your|our) (behalf|own)|for me|by yourself|yourself|on your own|"
                    r"without (asking|checking)\b.*$)", " ", phrase, flags=re.I)
    if mode == "require" and re.search(r"\b(unit tests?|tests? for|with tests?|add(ing)? tests?|write tests?|"
                                       r"test coverage|covered by tests?)\b", phrase, re.I):
        return ActionRule("require", "tests for the new code", frozenset({"add", "writ", "creat"}),
                          matcher(["test", "tests", "spec"]), (),
                          (r"\b(add|added|adding|wrote|written|new) (a |some |unit |two |three )?tests?\b",
                           r"\btests? (for|covering)\b", r"\btest_\w+"),
                          ("*test_*", "*_test.*", "tests/*", "*.test.*", "*.spec.*"),
                          todo="add unit tests for the new code")
    ws = tx.words(_np(phrase))
    langs = tuple(sorted({_TOOL_LANG[w.lower()] for w in ws if w.lower() in _TOOL_LANG}))
    if mode == "require":
        ws = [_TOOL_KIND.get(w.lower(), w) for w in ws]
    g, rest = _action_group(ws)
    if g is None and mode == "require":
        for key, (lab, results, globs) in lx.REQUIRED_ACTIONS.items():
            if any(tx.stem(w).startswith(key) for w in ws):
                return ActionRule("require", lab, frozenset({"run", "execut"}), Matcher(), (), results, globs)
    if g is None:
        return None
    objs = _objects(rest)
    if g == "install":
        objs = matcher(["dependency", "package", "library", "requirements", "pyproject", "package.json", "lockfile",
                        "deps", "module"], (r"requirements[\w.-]*\.txt", r"pyproject\.toml", r"package\.json",
                                            r"go\.mod", r"Cargo\.toml", r"Gemfile", r"setup\.py"))
    verbs = frozenset(lx.ACTION_VERBS[g])
    obj_word = next((p[0] for p in objs.phrases if p and len(p[0]) > 2), "") if g not in ("install", "migrate") else ""
    obj_word = {"databas": "the database", "fil": "files", "test": "the tests", "config": "the config",
                "main": "main", "remot": "the remote", "branch": "branches", "schema": "the schema",
                "api": "the API", "data": "data files"}.get(obj_word, obj_word)
    label = _CANON[g].format(obj=obj_word) if obj_word else _CANON_BARE.get(g, _CANON[g].format(obj="things"))
    if mode == "require":
        for key, (lab, results, globs) in lx.REQUIRED_ACTIONS.items():
            if any(tx.stem(w).startswith(key) for w in ws):
                todo = {"test": "run the tests before handing it back", "lint": "run the linter before you finish",
                        "format": "run the formatter first", "typ": "run the type checker first",
                        "changelog": "add a changelog entry", "doc": "update the docs too"}[key]
                return ActionRule("require", lab, verbs | frozenset({"run", "execut"}), objs, (), results, globs,
                                  todo=todo, code_langs=langs)
        return ActionRule("require", label, verbs, objs, lx.ACTION_COMMANDS.get(g, ()), (), (),
                          todo=f"make sure you finish with {label}")
    if mode == "forbid" and g == "modify" and not objs.phrases and not objs.regexes:
        return None  # "don't change things" with nothing named would flag every edit
    solo = frozenset({"install"}) if g == "install" else frozenset()
    return ActionRule(mode, label, verbs, objs, lx.ACTION_COMMANDS.get(g, ()),  # type: ignore[arg-type]
                      solo_verbs=solo)


def _extra_tools(act: str, first: ActionRule | None) -> list[Check]:
    """"run go test and go vet": one more require rule per further tool the phrase names."""
    parts = [p.strip(" `") for p in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s+plus\s+", act) if p.strip()]
    out: list[Check] = []
    for part in parts[1:]:
        part = re.sub(r"^(?:run|execute|then|also)\s+", "", part, flags=re.I)
        part = re.sub(r"\s+(?:\./\.\.\.|\.)$|\s+(?:on|for|over|against)\b.*$", "", part).strip(" `")
        ws = tx.words(part)
        if not ws or len(ws) > 3 or any(w.lower() in _STOP for w in ws):
            continue
        if first is not None and first.objects and first.objects.find(part, affirmative=False):
            continue
        out.append(ActionRule("require", f"running {part}", frozenset(lx.ACTION_VERBS["run"]), matcher([part]),
                              (re.escape(part) + r"\b",), (), (), todo=f"run {part} before you report back"))
    return out


def _take(rule: ActionRule | None, m: re.Match, out: list[Check], state: dict) -> None:
    if rule:
        out.append(rule)
        state.setdefault("taken", []).append(m.span())


@builder("off_limits")
def _off_limits(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Force-pushing is off limits": a forbidden action."""
    _take(_action("forbid", m.group("act")), m, out, state)


@builder("check_passes")
def _check_passes(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Make sure the tests pass": run them (and each checking tool the rule names elsewhere)."""
    for tool in dict.fromkeys(w.lower() for w in re.findall(r"[\w-]+", body)
                              if w.lower() in _TOOL_KIND or w.lower() in ("clippy", "vet")):
        if tool not in m.group(0).lower():
            out.append(ActionRule("require", f"running {tool}", frozenset(lx.ACTION_VERBS["run"]),
                                  matcher([tool]), (rf"\b{re.escape(tool)}\b",), (), (),
                                  todo=f"run {tool} before you report back"))
    act = m.group("act").lower()
    act = "run the linter" if act.startswith("lint") else "run the type check" if act.startswith("type") \
        else "run the tests"
    _take(_action("require", act), m, out, state)


@builder("ask_before")
def _ask_before(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Ask before you delete anything": an action to ask about first."""
    _take(_action("ask", m.group("act")), m, out, state)


def _require(m: re.Match, out: list[Check], state: dict, *, claim: bool) -> None:
    act = m.group("act")
    if re.match(r"\s*(?:verify|verifying|check|checking)\b", act, re.I):
        act = "run the tests"
    rule = _action("require", act)
    out.extend(_extra_tools(act, rule))
    if rule is not None and claim and re.search(r"\b(works?|working|fixed)\b", m.group(0), re.I):
        rule = replace(rule, claim_rx=r"\b(works?|working|fixed|should work|done|solved|resolved|passes|"
                                      r"finished|complete)\b")
    _take(rule, m, out, state)


@builder("require_act")
def _require_act(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Always run the tests": a required action (and one per further tool named)."""
    _require(m, out, state, claim=False)


@builder("require_before_claim")
def _require_before_claim(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Don't say it works until you've run it": a required action; a claim of success without it counts."""
    _require(m, out, state, claim=True)


@builder("forbid_act")
def _forbid_act(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Never push to main": a forbidden action, unless an earlier action rule already read this place."""
    if any(s <= m.start() < e for s, e in state.get("taken", [])):
        return
    if re.match(r"no\s+\w+ing\s*,", m.group(0), re.I):
        return  # "No running, jumping, deep squats or lunges" lists things to avoid
    act = m.group("act")
    if re.search(r"\b(comments?|emojis?|summar\w*|bullets?|headings?|notes?|explanations?|disclaimers?|"
                 r"caveats?|apolog\w*|suggestions?)\b", act, re.I):
        return
    rule = _action("forbid", act)
    if rule:
        out.append(rule)


_CODEY = re.compile(r"\b(librar|package|tool|command|framework|module|function|import|cli|npm|pip|python|"
                    r"javascript|typescript|code|syntax|runner|manager|dependenc|api|sdk|shell|script|"
                    r"query|orm|class|method|test|lint|format)", re.I)


@builder("substitute")
def _substitute_all(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Use X instead of Y", "never use Y": a ban on each named Y (the preferred X goes into the ask)."""
    for y in re.split(r"\s+or\s+|\s*,\s*|\s+and\s+|\s*/\s*", m.group("y").strip()):
        _substitute(body, m, y, out)


def _substitute(body: str, m: re.Match, y: str, out: list[Check]) -> None:
    if re.match(r"\s*(?:in|on|at|under|inside|within|into|as|for|with|the|a|an|my|your|our)\b", y, re.I):
        return  # "under a separate heading, not in the main plan" is about placement, not a banned thing
    if re.match(r"\s*(be|respond|have|start|end|provide|include|get|keep|make|offer|use|give|avoid|see|ask|"
                r"answer|show|state|explain|always|only|not|never|structure|format|write|reply|stay|go)\b", y, re.I):
        return
    yw = [w for w in tx.words(y) if w.lower() not in _STOP]
    if not yw or len(yw) > 3:
        return
    ylow = " ".join(yw).lower()
    if re.fullmatch(r"(the )?(print|prints|print statements?|print\(\)|console\.log)", ylow):
        out.append(Forbid("print calls", Matcher((), lx.PRINTS_RX), where="code", task_override=False,
                          ask=f"use {m.group('x').strip()} instead of print" if m.groupdict().get("x") else
                          "drop the print calls"))
        return
    if re.search(r"\b(bullets?|bullet points?|headings?|emojis?|markdown|tables?|lists?|prose|"
                 r"paragraphs?|jargon|apolog\w*|comments?)\b", ylow):
        return
    lang_ext = {"java": "java", "javascript": "js", "typescript": "ts", "python": "py", "kotlin": "kt", "ruby": "rb",
                "go": "go", "rust": "rs", "php": "php", "swift": "swift", "scala": "scala", "perl": "pl"}.get(ylow)
    if lang_ext:  # "in Kotlin, not Java": new code in that language, not the word in a path
        ext = re.escape(lang_ext)
        out.append(Forbid(f"{ylow} code", Matcher((), (rf"```{re.escape(ylow)}\b", rf"```{ext}\b",
                                                       rf"\b(?:created|added|new|wrote|written)\b(?![^.\n]{{0,60}}\bexisting\b)(?:[^.\n]|\.(?=\w)){{0,150}}?\.{ext}\b")),
                          where="any", ask=f"write it in {m.group('x').strip()} instead" if m.groupdict().get("x")
                          else f"no {ylow} code"))
        return
    phrases, rxs = _domain_terms(ylow)
    codey = bool(_CODEY.search(body)) or bool(re.search(r"\w[._/@]\w|^[._/@]\w", y.strip()))
    out.append(Forbid(ylow, matcher([ylow, *phrases], tuple(rxs)), where="codeish" if codey else "any",
                      ask=f"use {m.group('x').strip()} instead" if "x" in m.groupdict() and m.group("x")
                      else f"keep {ylow} out of it"))


_REQ_SYNONYMS = {"run": ["so far", "cumulative", "running", "to date", "total"], "cost": ["price", "$", "total", "usd", "eur", "budget"], "pric": ["cost", "$", "total"],
                 "total": ["total", "sum", "overall", "altogether"], "time": ["hour", "minute", "am", "pm", "min", "mins", "hr", "hrs"],
                 "distanc": ["km", "mile", "minute walk", "walk", "minutes", "blocks", "away", "metres", "meters"],
                 "duration": ["hour", "minute", "hrs", "mins"],
                 "mileag": ["miles", "km", "odometer"], "link": ["http", "www"],
                 "address": ["street", "st", "road", "avenue"], "estimat": ["approx", "about", "around", "roughly", "~"],
                 "gram": ["g"], "kilogram": ["kg"], "minute": ["min", "mins"], "hour": ["h", "hr", "hrs"],
                 "calori": ["kcal", "cal"], "kilometr": ["km"], "kilometer": ["km"], "percent": ["%"],
                 "temperatur": ["\u00b0c", "\u00b0f", "degrees"],
                 "practic": ["your turn", "try", "exercise", "now you", "challenge", "have a go", "on your own"],
                 "question": ["?", "solve", "try", "your turn", "exercise", "work out", "find", "calculate"]}
_REQ_REGEX = {tx.stem(k): v for k, v in {
    "number": (r"#\s?\d+", r"\b(?:no\.|nr\.?|n\u00ba)\s?\d+", r"\b\d{3,}\b"),
    "timestamp": (r"\b\d{1,2}:\d\d\b",), "time": (r"\b\d{1,2}:\d\d\b", r"\b\d+\s?(?:min|h)\b"),
    "date": (r"\b\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}\b",)}.items()}
_REQ_SYNONYMS = {**_REQ_SYNONYMS, **{tx.stem(k): v for k, v in _REQ_SYNONYMS.items()}}
_PREFER_HEADS = frozenset(tx.stem(w) for w in (
    "hotel", "flight", "seat", "restaurant", "room", "airline", "train", "car", "tour", "cuisine", "breakfast",
    "dinner", "lunch", "accommodation", "neighborhood", "neighbourhood", "beach", "destination", "transport",
    "ride", "cafe", "coffee", "wine", "meal", "snack", "clothes", "shoe", "brand", "device", "laptop", "phone",
    "bed", "view", "stay", "hostel", "apartment", "rental", "airport", "museum", "show", "music", "book",
    "movie", "film", "game", "sport", "class", "gym", "workout", "diet", "fabric", "material", "fare", "ticket"))
_DIET_MAP = {"meat-free": "vegetarian", "coeliac": "gluten", "celiac": "gluten", "vegetarian": "vegetarian", "vegan": "vegan", "plant-based": "plant-based",
             "pescatarian": "meat", "gluten-free": "gluten", "lactose intolerant": "lactose",
             "lactose-intolerant": "lactose", "dairy-free": "dairy", "sober": "alcohol", "teetotal": "alcohol",
             "halal": "pork", "kosher": "pork"}
#: what a diet whose word names what it keeps (not what it bans) rules out, for the check's label
_DIET_BANS = {"vegetarian": "meat", "vegan": "animal-product", "plant-based": "animal-product"}


_STAYS = ["hotel", "stay", "restaurant", "apartment", "room", "inn", "hostel", "b&b", "airbnb", "cafe", "lodge",
          "accommodation", "guesthouse", "resort", "campsite", "rental"]
_FRIENDLY = {"pet": ["dog", "dogs", "pet", "pets", "dog-friendly", "pet-friendly", "animals welcome"],
             "dog": ["dog", "dogs", "pet", "pets", "dog-friendly", "pet-friendly"],
             "kid": ["kid", "kids", "child", "children", "family", "family-friendly", "kid-friendly"],
             "child": ["kid", "kids", "child", "children", "family", "family-friendly"],
             "family": ["kid", "kids", "child", "children", "family", "family-friendly"],
             "wheelchair": ["wheelchair", "step-free", "accessible", "lift", "elevator", "ramp"]}


_LODGING = ["hotel", "hotels", "accommodation", "apartment", "airbnb", "hostel", "guesthouse", "inn", "lodge", "resort",
            "place to stay", "where to stay"]
_CURRENCY = {"euro": (r"\u20ac", r"\beur\b", r"\beuros?\b"), "dollar": (r"\$", r"\busd\b", r"\bdollars?\b"),
             "pound": (r"\u00a3", r"\bgbp\b", r"\bpounds? sterling\b"), "yen": (r"\u00a5", r"\bjpy\b", r"\byen\b")}


_PRICE_CTX = r"(night|per night|a night|hotel|room|flight|ticket|meal|dinner|day|person|trip|stay|month|rent|week|budget)"


def _literal_code(part: str) -> tuple[str, str] | None:
    """A forbidden code token written literally ("SELECT *", "rm -rf", "!important"): (label, regex).

    Word stems would lose the symbol that makes it a violation (any SELECT is not SELECT *).
    """
    core = re.split(r"\s+(?:in|on|for|from|within|inside|anywhere|when|with)\b", part.strip(), maxsplit=1,
                    flags=re.I)[0].strip(" ,\"'`")
    if not re.search(r"[*=<>!|&$@#{}\[\]]|(?:^|\s)--?[a-z]", core) or len(core) > 30 or len(tx.words(core)) > 4:
        return None
    toks = [re.escape(t).replace("=", r"\s*=\s*") for t in core.split()]
    rx = r"(?<![\w])" + r"\s*".join(toks) + (r"(?!\w)" if re.search(r"\w$", core) else "")
    return core, rx


def _money(m: re.Match) -> int:
    return int(m.group(1).replace(",", ""))


@builder("price_cap")
def _price_cap(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"Under 150 a night": a price cap, about what the rule prices (a night, a ticket) when it says."""
    low = body.lower()
    if re.match(r"\s*(?:mg|g|kg|km|m|ml|l|cm|mm|kcal|calories|cal|minutes?|mins?|hours?|words?|characters?|steps?|"
                r"reps?|sets?|miles?|mph|%|percent|people|pages?)\b", low[m.end():]):
        return False  # "under 1,500 mg of sodium" is not a price
    ctx = re.search(_PRICE_CTX, low)
    if ctx:
        out.append(PriceCap(_money(m), matcher([ctx.group(1).split()[-1]])))
        return True
    if re.search(r"[\u20ac$\u00a3]|\b(?:euros?|eur|dollars?|usd|pounds?|gbp)\b", m.group(0).lower()):
        out.append(PriceCap(_money(m)))
        return True
    return False


@builder("must_include")
def _must_include(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"Every hotel must have a pool": a required feature of the things the rule names."""
    subj_text, np_text = m.group("subj").lower(), m.group("np").lower()
    if re.search(r"\b(you|reply|replies|answer|answers|response|responses|code|function|commit)\b", subj_text):
        return False
    terms = _content_words(_np(np_text))
    subj = [w for w in _content_words(subj_text)]
    if terms and subj:
        out.append(Require(" ".join(terms[:3]), matcher(terms[:3]), about=matcher(subj[-1:]),
                           ask=f"make sure it comes with {' '.join(terms[:3])}"))
        return True
    return False


@builder("always_np")
def _always_np(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"Aisle seats, always": the named kind of thing wanted."""
    ws = [w for w in tx.words(m.group("np").lower()) if w not in _STOP]
    if len(ws) >= 2 and tx.stem(ws[-1]) in _PREFER_HEADS:
        out.append(Require(" ".join(ws), matcher(ws[:-1]), about=matcher([ws[-1]]), ask=f"get me {' '.join(ws)}"))
        return True
    return False


@builder("bores_me")
def _bores_me(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"Museums bore me", "not into nightlife": leave that subject out."""
    np = m.group("np").lower()
    mt = _subject_terms(np)
    if mt is not None:
        label = " ".join(_content_words(np)[:3])
        out.append(Forbid(label, mt, where="reply", ask=f"skip the {label}"))
    return False


@builder("currency")
def _currency(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"Prices in euros": no other currency (the stage goes on when totals are asked for too)."""
    low = body.lower()
    g = m.group(1).lower()
    cur = {"eur": "euro", "\u20ac": "euro", "usd": "dollar", "$": "dollar", "gbp": "pound", "\u00a3": "pound",
           "jpy": "yen"}.get(g, g.rstrip("s"))
    others = tuple(rx for k, v in _CURRENCY.items() if k != cur for rx in v)
    out.append(Forbid("other currencies", Matcher((), others), where="reply", task_override=True,
                      ask=f"give the prices in {cur}s",
                      skip_before=r"\(" if re.search(r"\b(brackets?|parenthes[ie]s)\b", low) else ""))
    return not re.search(r"\b(total|sum|add up|breakdown|broken down)\b", low)


@builder("walking_distance")
def _walking_distance(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"Within walking distance": somewhere to stay that is a walk away."""
    out.append(Require("walking distance", matcher(["walk", "walking", "on foot", "steps from", "stroll",
                                                    "walkable", "around the corner"]),
                       about=matcher(_LODGING), ask="pick somewhere I can walk from"))
    return True


@builder("friendly_places")
def _friendly_places(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"Pet-friendly", "travel with our dog": places that welcome them."""
    key = (m.group(1) or m.group(4)).lower()
    key = {"cat": "pet"}.get(key, key)
    out.append(Require(f"{key}-friendly places", matcher(_FRIENDLY.get(key, [key])), about=matcher(_STAYS),
                       ask=f"only suggest places that are fine with the {key}" if key in ("dog", "pet") else
                       f"check that places are {key}-friendly"))
    return True


@builder("not_before_hour")
def _not_before_hour(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"Nothing before 9am": no times in the early hours."""
    low = body.lower()
    if not 5 <= int(m.group(1)) <= 12:
        return False
    hrs = "|".join(str(h) for h in range(4, int(m.group(1))))
    rx = (rf"(?<![\u20ac$\u00a3\d.,])\b0?({hrs})[:.h][0-5]\d\b(?!\s?(?:pm|p\.m\.))", rf"\b0?({hrs})\s?(?:am|a\.m\.)")
    out.append(Forbid(f"anything before {m.group(1)} am", Matcher((), rx), where="reply",
                      ask=f"move it to after {m.group(1)} in the morning",
                      skip_before=r"\b(?:arriv\w*|gets? in|lands?|landing|reach\w*|until|till|to|-|\u2013)"
                      if re.search(r"\b(depart\w*|leav\w*|flights?|trains?|buses|bus|start\w*)\b", low) else ""))
    return True


@builder("nonstop")
def _nonstop(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"Direct flights only": no connections."""
    p, r = _domain_terms("layover")
    out.append(Forbid("connecting flights", matcher(p, tuple(r)), where="reply",
                      ask="find me a nonstop option",
                      about=matcher(["flight", "fly", "airline", "airport", "plane", "layover"])))
    return True


@builder("diet")
def _diet(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"I'm vegetarian": no dishes the diet rules out (labelled by what it bans)."""
    d = m.group("d").lower() if m.group("d") else None
    key = _DIET_MAP.get((d or m.group("d2").lower()).replace("  ", " "))
    if key:
        p, r = _domain_terms(key)
        out.append(Forbid(f"{_DIET_BANS.get(key, key)} items", matcher(p, tuple(r)), where="reply",
                          ask=f"stick to {d or 'gluten-free'} options"))
    return False


@builder("no_alcohol")
def _no_alcohol(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"I don't drink": nothing with alcohol."""
    p, r = _domain_terms("alcohol")
    out.append(Forbid("alcohol", matcher(p, tuple(r)), where="reply", ask="leave out anything with alcohol"))
    return False


@builder("avoid")
def _avoid(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"Avoid X, Y and Z", "keep X out", "X is a no-go": a ban on each named thing."""
    if re.search(r"\bnot (?:just|only)\s*$", body[max(0, m.start() - 12): m.start() + 8], re.I) or \
            re.match(r"not (?:just|only)\b", m.group(0), re.I):
        return False  # "not just -e" means "more than", not a ban
    np = _np(m.group("np"))
    if not np or re.search(r"\b(asking|checking|approval|permission)\b", np, re.I):
        return False
    for part in re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+or\s+|\s+and\s+|\s+nor\s+", np):
        if not part or re.match(r"(i|we|my|it|they|he|she|you)\b", part, re.I):
            continue
        lit = _literal_code(part)
        if lit:
            out.append(Forbid(lit[0], Matcher((), (lit[1],)), where="any", ask=f"drop the {lit[0]}"))
            continue
        if re.match(r"\s*(?:new\s+|extra\s+|more\s+|additional\s+|third-party\s+)+(?:dependenc\w*|packages?|librar\w*)\b",
                    part, re.I):
            rule = _action("forbid", "add new dependencies")
            if rule:
                out.append(rule)
                continue
        mt = _subject_terms(part)
        if mt is not None:
            core = re.split(r"\s+(?:on|in|at|for|with|from|during|longer|shorter|more|than|that|which|"
                            r"when|where)\b", part, maxsplit=1, flags=re.I)[0]
            label = " ".join(_content_words(core)[:3]) or core
            out.append(Forbid(label, mt, where="reply", ask=f"leave out the {label}"))
    return False


@builder("require_terms")
def _require_terms_v(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"Always include the total cost", "end with a question": the named content is required."""
    return _require_terms(body, m, m.group("v").lower(), out, state)


@builder("end_with")
def _end_with(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"End every day with a dinner option": the named content closes the reply."""
    return _require_terms(body, m, "end with", out, state)


def _require_terms(body: str, m: re.Match, verb: str, out: list[Check], state: dict) -> bool:
    np = _np(m.group("np"))
    if re.match(r"\s*(?:\w+ly\s+)?(why|whether|what|which|who|when|at most|at least|no more|up to|only|"
                r"more than|fewer|less than)\b", np, re.I):
        return False
    full = m.group(0) + body[m.end(): m.end() + 80]
    where = "start" if re.search(r"\b(start|begin|open|lead)\b", verb) or re.search(
        r"\b(at the (?:very )?(?:top|start|beginning)|up front|before (?:step 1|anything else|the first)|first thing)\b",
        full, re.I) else "end" if re.search(r"\b(end|close|finish|sign off)\b", verb + " " + np) and not re.search(
        r"\bnot\b[^.]{0,25}\bend\b", full, re.I) else "reply"
    parts2 = re.split(r"\s+(?:of|for|in|on|at|to|with|from|whenever|every)\s+(?:a|an|the|my|your|each|every|"
                      r"any|all)\b", np, maxsplit=1, flags=re.I)
    np2 = parts2[0]
    tail = [w for w in _content_words(parts2[1]) if tx.stem(w) in _PREFER_HEADS] if len(parts2) > 1 else []
    np2 = re.sub(r"\bhow far\b", "distance", re.sub(r"\bhow much\b", "cost", np2, flags=re.I), flags=re.I)
    np2 = re.sub(r"\bhow long\b", "duration", np2, flags=re.I)
    cw = [w for w in _content_words(np2) if not (w.endswith("ly") and len(w) > 4) and w not in (
        "per", "each", "every", "exactly", "roughly", "first", "last", "next", "then", "later", "before", "after", "now",
        "options", "option", "choices", "them", "it", "let", "me", "try", "i", "you", "can", "will", "decide", "choose",
        "pick", "see", "know", "check", "look", "think", "want", "draft", "drafts", "version", "material", "answer",
        "reply", "result", "results")]
    if not cw:
        return False
    if any(tx.stem(w) == "question" for w in cw) and where in ("end", "start") and not per_item_hint(np):
        out.append(Require("a question for me", Matcher((), (r"\?", r"\byour turn\b", r"\btry (?:this|these|it|one)\b",
                                                             r"\bnow (?:you|try)\b", r"\b(?:solve|calculate|work out)\b")),
                           where=where,
                           ask="finish with a quick question I can try"))
        return False
    why = _not_content_np(verb, np2, cw)
    if why:
        state.setdefault("gated", []).append(f"\u201c{np2.strip()}\u201d {why}; judgement only, staying silent")
        return False
    groups = []
    for w in cw:
        st = tx.stem(w)
        extra = _REQ_SYNONYMS.get(st) or _REQ_SYNONYMS.get(w.lower(), [])
        rxs = ((r"[$\u20ac\u00a3]\s?\d",) if "$" in extra else ()) + _REQ_REGEX.get(st, ())
        groups.append(matcher([w] + [e for e in extra if e != "$"], rxs))
    scope = [w for w in _content_words(m.groupdict().get("scope") or "")
             if w.lower() not in ("reply", "replies", "answer", "answers", "response", "responses", "message",
                                  "messages", "them", "it", "one")]
    about_words = tail[:1] + scope[:1]
    rest = np[len(parts2[0]):] if len(parts2) > 1 else ""
    doc = re.search(r"\bin\s+(?:the|your|my|all|each|every|any)\s+([\w\- ]{3,30})$", rest, re.I)
    per_item = bool(re.match(r"\s*(?:for|of|on|in|with)\s+(?:each|every)\b", rest, re.I))
    if doc:
        about_words = [" ".join(_content_words(doc.group(1))[:2])] if _content_words(doc.group(1)) else []
    elif per_item and not about_words:
        item = _content_words(parts2[1])[:1]
        about_words = [w for w in item if tx.stem(w) not in _GENERIC]
    per_item = per_item and not doc and bool(about_words)
    for w in list(about_words):
        about_words += list(SYNONYMS.get(w.lower(), SYNONYMS.get(tx.stem(w), ())))
    out.append(RequireTerms(" ".join(cw[:4]), tuple(groups), max(1, -(-2 * len(groups) // 3)), where,
                            ask=f"include {' '.join(cw[:4])}", about=matcher(about_words) if about_words else None,
                            per_item=per_item))
    return False


@builder("prefer")
def _prefer(body: str, m: re.Match, out: list[Check], state: dict) -> bool:
    """"I prefer boutique hotels": the named kind of the thing wanted."""
    np = _np(m.group("np"))
    ws = [w for w in tx.words(np.lower()) if w not in _STOP and tx.stem(w) not in _NOISE]
    if len(ws) < 2 or re.match(r"(to|the agent|responses?|answers?|agent|you)\b", np.lower()) or re.search(r"\d", np):
        return False
    head, mods = ws[-1], [w for w in ws[:-1] if tx.stem(w) not in _GENERIC]
    if not mods or tx.stem(head) in _GENERIC or tx.stem(head) not in _PREFER_HEADS:
        return False
    out.append(Require(" ".join(mods) + " " + head, matcher(mods), about=matcher([head]),
                       ask=f"I'd rather have {np.lower()}"))
    return False


def per_item_hint(np: str) -> bool:
    """'a question for each section' asks for one per item, not one at the end."""
    return bool(re.search(r"\b(?:for|after|under)\s+(?:each|every)\b", np, re.I))


_STATE_WORDS = frozenset({
    "focused", "focussed", "short", "brief", "concise", "clean", "tidy", "simple", "small", "minimal", "consistent",
    "separate", "relevant", "tight", "lean", "readable", "clear", "polite", "neutral", "professional", "casual",
    "friendly", "formal", "informal", "narrow", "atomic", "light", "plain", "honest", "direct", "calm", "organized",
    "organised", "scoped", "current", "private", "secret", "safe", "secure", "stable", "quick", "fast", "slow",
    "accurate", "correct", "precise", "specific", "visible", "updated", "together", "apart", "intact", "open",
    "closed", "low", "high", "realistic", "reasonable", "modest", "contained", "isolated", "aside", "separately",
    "short-lived", "small-scale", "self-contained", "on-topic", "in-scope", "in", "out", "up", "down", "going"})
_NOUN_ED = frozenset({"need", "needs", "feed", "feeds", "speed", "seed", "seeds", "bed", "shed", "red", "owed", "attached",
                      "included", "used", "needed", "required", "expected", "estimated", "charged", "paid"})


def _not_content_np(verb: str, np: str, cw: list[str]) -> str:
    """Why a free-text 'required' phrase is not a recognisable content noun phrase ('' if it is one).

    A literal 'required words missing' check is only worth a violation when the phrase names a
    thing the reply could contain (a summary, the estimated total cost). 'Keep each change focused'
    describes a state of the work, so it must not become 'include change focused'.
    """
    words = tx.words(np.lower())
    head = cw[-1].lower()
    if verb == "keep" and not (words and words[0] in ("a", "an")):
        return "describes how to keep the work, not content to add"
    if head in _STATE_WORDS or (head.endswith("ed") and head not in _NOUN_ED) or head.endswith(("ly", "ous", "ful")):
        return "ends in a state word, not a content noun"
    if re.search(r"\b(after|before|next to|beside|below|above|underneath|alongside|in (?:brackets|parentheses|quotes|"
                 r"bold|italics?))\b", np.lower()):
        return "says where or how to place something, which word presence cannot verify"
    if words and words[0] in ("it", "them", "things", "everything", "each", "every", "all") and len(cw) < 2:
        return "names no content"
    return ""


_GENERIC_OPTIONS = frozenset(tx.stem(w) for w in ("options", "choices", "suggestions", "recommendations",
                                                 "alternatives", "ideas", "picks"))


@builder("max_items")
def _max_items(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"At most 3 hotel options": a cap on the items offered, about the noun named before the count's noun."""
    n = tx.parse_number(m.group(1))
    noun = m.group(2).lower()
    head = re.search(r"\s+(\w+)\s+" + re.escape(m.group(2)), m.group(0))
    about = head.group(1) if head and head.group(1).lower() not in ("different", "other", "more") and \
        tx.parse_number(head.group(1)) is None else noun
    if n and tx.stem(about.lower()) in _GENERIC_OPTIONS:  # any request for suggestions, whatever they are
        out.append(MaxItems(n, about.lower(), matcher(["find", "suggest", "recommend", "option", "choice",
                                                       "idea", "pick", "shortlist", "alternative", "which"])))
    elif n and tx.stem(noun) in ("question", "exercis", "step", "task", "problem", "slid", "item", "point"):
        out.append(MaxItems(n, noun, None))  # counted as the list's items, whatever they are called
    elif n:
        out.append(MaxItems(n, about.lower(), matcher([about])))


@builder("max_items_plain")
def _max_items_plain(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Options, 3 max": a cap on the list's items."""
    n = tx.parse_number(m.group(2))
    if n:
        out.append(MaxItems(n, m.group(1).lower(), None))


#: the compiler's stages in order: a name is a stage whose cue rules are data (kind files' ``rules``)
_RULES = ("length", "items", "brevity", "tone", "suggestions", "format", "parts",
          "cleanup", "code", "actions", "substitution")


_EXAMPLE_LABELS = ("pleasantries", "preamble", "hedging", "unrequested suggestions", "apologies", "hype")


def _quoted_examples(text: str) -> list[str]:
    """Example phrases the user quotes ("like 'Happy to help!'"): forbidden-content examples."""
    t = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")
    out = re.findall(r'"([^"]{4,80})"', t)
    out += re.findall(r"(?:(?<=[\s(])|^)'(.{4,80}?)'(?=[\s,.)!?;:]|$)", t)
    return [re.sub(r"[.!?,\u2026]+$|\.\.\.$", "", o).strip() for o in out]


_DOUBLE_NEG = (
    (r"\b(?:don't|do not|never|please don't|please do not)\s+(?:ever\s+)?(?:forget|neglect|fail)\s+to\s+", "always "),
    (r"\b(?:don't|do not|never)\s+(?:ever\s+)?(?:leave out|omit|skip|drop|forget(?: about)?|miss|leave off)\s+",
     "always include "),
    (r"\bremember to\s+", "always "),
    (r"\bleave\s+(?!it\b|them\b|that\b|this\b)([\w-]+(?:\s+[\w-]+)?)\s+out of\b", r"don't use \1 in"),
    (r"^\s*unless (?:i|we) (?:tell|say|ask)(?: you)? otherwise,\s*", ""),
)


def positive_form(text: str) -> str:
    """Rewrite double negatives ("never leave out X", "don't forget to X") as the requirement they state."""
    t = text.replace("\u2019", "'")
    for rx, rep in _DOUBLE_NEG:
        t = re.sub(rx, rep, t, flags=re.I)
    return re.sub(r"(^|[.!?]\s+)(always)", lambda m: m.group(1) + "Always", t)


_DONE_COND = re.compile(r"^\s*(?:when|once|after|before)\s+(?:(?:a|the|your|my)\s+(?:draft|task|work|job|change|piece|"
                        r"edit)\s+is\s+(?:finished|done|complete|final)|you(?:'re| are| have|'ve)?\s+)?(?:done|finished|"
                        r"finish\w*|hand(?:ing)?\b[^,]{0,30}\bback|wrap(?:ping)? up|report(?:ing)? back|are through)"
                        r"[^,]{0,20},\s*", re.I)


def local_clauses(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Split off later sentences that carry their own condition ("If a section runs long, split it").

    Their condition must gate only their own checks, not the whole preference.
    """
    sents = [x for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip())
             for x in re.split(r";\s+(?=(?:if|when|whenever|once)\b)", s, flags=re.I)]
    main: list[str] = []
    local: list[tuple[str, str]] = []
    for i, sent in enumerate(sents):
        sent = _DONE_COND.sub("", sent)
        m = _LEAD_COND.match(sent)
        if i > 0 and main and m and re.match(r"\s*(?:if|when(?:ever)?|once)\b", sent, re.I) and re.match(
                r"\s*(?:then\s+)?(?:it'?s|that'?s|this is)\s+(?:fine|ok|okay|allowed|acceptable)|\s*(?:then\s+)?(?:go as long|"
                r"feel free|you can|you may|no need|don't bother|ignore|skip (?:it|this|that)|any length|longer is fine|"
                r"go ahead|(?:then )?(?:it|that) doesn't matter)", m.group("b"), re.I):
            cond = re.sub(r"[\"\u201c\u201d]", "", m.group("c").strip())
            main.append(f"Unless {cond}.")  # "If I ask for a deep dive, go as long as you need": an exception
        elif i > 0 and main and m and re.match(r"\s*(?:if|when(?:ever)?|once)\b", sent, re.I):
            local.append((m.group("c").strip(), m.group("b")))
        else:
            main.append(sent[:1].upper() + sent[1:] if sent else sent)
    return " ".join(main), local


def compile_text(text: str) -> tuple[tuple[Check, ...], list[str], list[str]]:
    """Checks, inline conditions and inline exceptions recognised in a preference text."""
    text = positive_form(text)
    text, local = local_clauses(text)
    checks, conds, excs = _compile_main(text)
    extra: list[Check] = []
    for cond, clause in local:
        sub, sub_conds, sub_excs = _compile_main(clause)
        extra += [Conditional(c, (cond, *sub_conds), tuple(sub_excs)) for c in sub if not isinstance(c, Unknown)]
    if extra:
        checks = tuple(c for c in checks if not isinstance(c, Unknown)) + tuple(extra)
    return checks, conds, excs


def _compile_main(text: str) -> tuple[tuple[Check, ...], list[str], list[str]]:
    body, conds, excs = split_conditions(text)
    body = re.sub(r"\b(?:a couple of|a couple|a pair of)\s+(?=(?:short\s+)?(?:sentences?|lines?|words?|paragraphs?|"
                  r"bullets?|bullet points?|items?)\b)", "two ", body, flags=re.I)
    body = re.sub(r"\ba few\s+(?=(?:short\s+)?(?:sentences?|lines?|paragraphs?|bullets?|bullet points?)\b)", "three ",
                  body, flags=re.I)
    body = re.sub(r"(\bkeep\b[^.;]{0,60}?)\bto\s+(?=(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
                  r"(?:short\s+)?(?:sentences?|lines?|words?|paragraphs?|bullets?|bullet points?)\b)", r"\1at most ",
                  body, flags=re.I)
    kind_checks, drop = read_kinds(text)
    run_stage("forbid_verbs", body, kind_checks)
    out: list[Check] = []
    for rule in _RULES:
        if isinstance(rule, str):
            run_stage(rule, body, out)
        else:
            rule(body, out)
    out = [c for c in out if not _superseded(c, drop, text)]
    kind_checks = [k for k in kind_checks if not _redundant(k, out)]
    out = kind_checks + out
    if not out:  # the domain stage reads what a rule without any other kind wants or avoids
        state = run_stage("domain", body, out)
        if not out and state.get("gated"):
            out.append(Unknown(reason=state["gated"][0]))
    if not any(isinstance(c, Forbid) and c.label == "the words you asked me to avoid" for c in out):
        ex = example_forbid(text)
        if ex is not None:
            out = [*out, ex]
    if not out:
        out.append(Unknown())
    examples = _quoted_examples(text)
    if examples:
        ex = tuple(tx.stems_of(" ".join(tx.words(e)[:5])) for e in examples if len(tx.words(e)) >= 2)
        out = [replace(c, match=Matcher(c.match.phrases + ex, c.match.regexes))
               if isinstance(c, Forbid) and not c.task_override and c.label in _EXAMPLE_LABELS else c for c in out]
    if any(isinstance(c, Forbid) and c.label == "the words you asked me to avoid" for c in out) and \
            not re.search(r"\b(pleasantr\w*|niceties|small talk)\b", text, re.I):
        out = [c for c in out if not (isinstance(c, Forbid) and c.label in ("pleasantries", "apologies"))]
    uniq: list[Check] = []
    for c in out:
        if c not in uniq and not (isinstance(c, ActionRule) and any(
                isinstance(u, ActionRule) and (u.mode, u.label) == (c.mode, c.label) for u in uniq)):
            uniq.append(c)
    return tuple(uniq), conds, excs


def _redundant(k: Check, out: list[Check]) -> bool:
    """A code-identifier ban another check already covers (e.g. console.log by the debug-print ban)."""
    if not (isinstance(k, Forbid) and k.where == "code" and re.match(r"[\w.]+$", k.label)):
        return False
    probe = f"{k.label}(1)"
    return any(isinstance(c, Forbid) and c.match.find(probe, affirmative=False) for c in out)


def _superseded(c: Check, drop: set[str], text: str) -> bool:
    """Whether a generic check is replaced by a more specific kind recognised in the same text."""
    if isinstance(c, Require) and c.label in drop:
        return True
    if "*requireterms*" in drop and isinstance(c, RequireTerms):
        return True
    if "*headings*" in drop and isinstance(c, Headings):
        return True
    if "*actions*" in drop and isinstance(c, ActionRule):
        return True
    if isinstance(c, Forbid) and f"*forbid:{c.label.lower()}*" in drop:
        return True
    if isinstance(c, Forbid) and any(d.startswith("*forbid-containing:") and d[19:-1] in c.label.lower()
                                     for d in drop):
        return True
    if "*code_line_length*" in drop and isinstance(c, CodeStyle) and c.rule == "max_line_length":
        return True
    if "*char_limit*" in drop and isinstance(c, MaxCount) and c.unit == "characters":
        return True
    if "*quoted*" in drop and isinstance(c, Forbid):
        quoted = {tx.stem(w) for q in quoted_terms(text) for w in tx.words(q)}
        return bool(quoted & set(tx.stems_of(c.label))) or bool(re.match(r"(words?|phrases?)\b", c.label))
    return False


_CITE_CTX = (r"\b(according to|per|source:|sources:|cited?|citing|see|from|seg\u00fan|via|reported by|"
             r"as (?:stated|noted|reported) (?:by|in|on))\s+(?:the\s+)?(?:\w+\s+){{0,1}}{x}\b",
             r"\(\s*{x}\b", r"https?://[^\s]*{x}")


@builder("forbid_verb")
def _forbid_verb(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Never promise refunds", "don't cite Wikipedia": the named things must not appear (cited)."""
    verb = m.group("v").lower()
    np = re.split(r"\s+(?:unless|when|if|because|since|without|in (?:any|my|your)|to (?:a|the|any))\b",
                  m.group("np"), maxsplit=1, flags=re.I)[0]
    for part in re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+or\s+|\s+and\s+|\s+nor\s+", np):
        ws = [w for w in tx.words(part) if w.lower() not in _STOP and w.lower() not in
              ("anything", "something", "things", "stuff", "customers", "customer", "people", "them", "me")]
        if not ws:
            continue
        label = " ".join(ws[:3])
        if verb in ("cite", "quote", "reference", "link to"):
            x = r"\s+".join(re.escape(w) for w in ws[:3])
            out.append(Forbid(f"citing {label}", Matcher((), tuple(r.format(x=x) for r in _CITE_CTX)),
                              where="reply", ask=f"use another source than {label}"))
        else:
            out.append(Forbid(label, matcher([" ".join(ws[:3])]),
                              where="reply", task_override=False, ask=f"don't {verb} {label}"))


_DOC_NOUNS = (r"intros?|introductions?|opening paragraphs?|drafts?|status updates?|updates?|user stories|specs?|sessions?|"
              r"explanations?|practice problems?|"
              r"lesson plans?|worksheets?|quizz(?:es)?|quiz|(?:payment )?reminders?|newsletters?|invoices?|job ads?|"
              r"job postings?|blog posts?|charts?|plots?|graphs?|shopping lists?|project plans?|dinners?|lunch(?:es)?|"
              r"breakfasts?|meals?|headlines?|taglines?|subject lines?|tweets?|"
              r"lit(?:erature)? notes|paper summar(?:y|ies)|itinerar(?:y|ies)|(?:(?!(?:the|a|an|my|your|our|this|that)\b)[\w-]+\s+)summar(?:y|ies)|"
              r"reading lists?|captions?|headlines?|titles?|reports?|abstracts?|outlines?|conclusions?|"
              r"proposals?|cover letters?|release notes|changelogs?|agendas?|meeting notes|minutes|recipes?|"
              r"taglines?|slogans?|blurbs?|product descriptions?|descriptions?|bios?|announcements?|press releases?|"
              r"ads?|adverts?|invitations?|essays?|stories|poems?|speeches|letters?|memos?|briefs?|"
              r"pr descriptions?|pull request descriptions?|readmes?|(?:[\w-]+\s+)plans?|training plans?|workouts?|"
              r"meal plans?|menus?|(?:[\w-]+\s+)lists?|checklists?|polic(?:y|ies)|guidelines?|handbooks?|procedures?|"
              r"day[- ]by[- ]day (?:plans?|itinerar(?:y|ies))|travel plans?|incident (?:summar(?:y|ies)|reports?|"
              r"write-?ups?)|post-?mortems?|blog posts?|newsletters?|tweets?|slides?|cv|résumés?|resumes?")
_SUBJ_NP = rf"(?:(?!(?:the|a|an|my|your|our)\b)[\w-]+\s+)?(?:{_DOC_NOUNS}|social posts?|posts?|tweets?|emails?|newsletters?)"
_WEEKDAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_SUBJECT_RX = re.compile(
    rf"^\s*(?:all |any |every |each |the |my |your |our |a |an )?(?P<s>(?:{_WEEKDAYS}\s+(?:to|-|through|and)\s+{_WEEKDAYS}\s+)?{_SUBJ_NP}(?:\s+(?:and|or|&)\s+{_SUBJ_NP})?)\s+(?:should|must|"
    rf"need|needs|go|goes|have to|has to|are to|is to|stay|stays|follow|get|belong|can't|cannot|shouldn't|open|start|begin|"
    rf"end|close|lead|come|carry|list|use|include|ends|opens|starts|begins|closes|leads|comes|carries|lists|uses|includes|"
    rf"gets|goes|stays|follows|"
    rf"mustn't|may not|are|is|can|as a|as an|in a|in an)\b", re.I)
_KEEP_SUBJECT_RX = re.compile(rf"^\s*(?:keep|make|write|limit|cap|put|format|give me|start|begin|open|end|finish|close)\s+"
                              rf"(?:all |any |every |each |the |my |your |a |an |"
                              rf"our )?(?P<s>(?:(?!(?:the|a|an|my|your|our)\b)[\w-]+\s+)?(?:{_DOC_NOUNS}))\b", re.I)


def subject_scope(text: str) -> str | None:
    """A document kind the preference is about ("Intros should ...", "Keep itineraries ..."), as a condition.

    Such a preference applies only when the delivery is that kind of document."""
    first = re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0]
    m = re.match(r"\s*([A-Z][\w -]{2,30}?):\s+\S", first)  # "Practice problems: don't put the answer ..."
    if m and (len(m.group(1).split()) > 4 or re.search(r"\b(as|with|in|for|to|the|commit\w*)\b", m.group(1), re.I)):
        m = None
    if m and not re.search(r"\b(note|important|rule|please|always|never|tip|ps|yourself|you|me)\b", m.group(1), re.I) and \
            not re.match(r"(clean|keep|use|write|make|put|give|don't|do|no|avoid|remember|stop|check|ask|be|tidy|leave|"
                         r"start|end|sign|add|include|show|tell|send|run|test|cut|skip|drop|lose|ditch|remove|never|watch|"
                         r"mind|prefer|follow|match|list|report|lead|quote|cite|format|spell|round|label|name|save)\b",
                         m.group(1), re.I):
        return m.group(1).strip()
    m = re.match(r"\s*(?:keep\s+|make\s+|limit\s+)?(?:my |your |the |all )?(?:answers?|repl(?:y|ies)|responses?)\s+"
                 r"(?:to|for|on|about)\s+(?P<s>[^.,;]{3,40}?)\s+(?:should|must|need|needs|have to|has to|are to|"
                 r"can't|cannot|shouldn't|to|under|below|within|short|brief|at)\b", first, re.I)
    if m:
        return m.group("s").strip()
    if re.search(r"\b(summar\w+|describe|list|report|recap)\b[^.]{0,20}\b(your|the) changes\b|\bwhat you (did|changed)\b|"
                 r"\bwhat (has )?changed\b", first, re.I):
        return "a code change"
    m = re.search(r"\bfor (?:each|every|all|any) (?P<x>meals?|recipes?|dish(?:es)?|days?|trips?|hotels?|flights?|"
                  r"restaurants?|workouts?|sessions?|exercises?|steps?|papers?|articles?|chapters?)\b", first, re.I)
    if m:
        return m.group("x")
    m = _SUBJECT_RX.match(first) or _KEEP_SUBJECT_RX.match(first)
    if not m:
        return None
    subj = m.group("s").strip()
    if re.search(r"\bcommit", subj, re.I):
        return None  # commit-message checks find the commit themselves
    if re.match(r"(new|short|long|longer|brief|quick|all|full|first|final|email|slack|linkedin|instagram|blog|project|"
                r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
                r"lesson|meeting|status|release|job|cover|payment|commit|pr|customer|client|paper|literature|social|"
                r"shopping|practice)\s", subj, re.I) is None and \
            len(subj.split()) > 1 and not re.search(r"summar|itinerar|plan|notes|letters?|posts?|reports?|"
                                                      r"write-?ups?|lists?", subj, re.I):
        subj = subj.split()[-1]
    return subj


def compile_preference(rule: Rule) -> CompiledPreference:
    """Compile one rule: its structured check if it has one, else its text."""
    return _compile_cached(rule.cache_key())


@lru_cache(maxsize=4096)
def _compile_cached(key: str) -> CompiledPreference:
    from toolkit.compliance._structured import compile_check

    rule = Rule.from_cache_key(key)
    checks, conds, excs = compile_text(rule.text)
    source = "text"
    if rule.check is not None:
        checks = (compile_check(rule.check),)
        source = "check"
    subj = subject_scope(rule.text) if source == "text" and not rule.conditions else None
    if subj and subj not in conds:
        conds = [*conds, subj]
    applies = tuple(list(rule.conditions) + conds)
    excepts = tuple(list(rule.exceptions) + excs)
    for exc in excepts:  # "unless it's the low-sodium or no-salt-added version": those versions are fine
        mv = re.search(r"\b(?:the\s+)?([\w-]+(?:\s+or\s+[\w-]+)*)\s+(?:version|variety|kind|type|option)s?\b", exc, re.I)
        if mv and "-" in mv.group(1):
            mods = [x for x in re.split(r"\s+or\s+", mv.group(1)) if "-" in x]
            rx = r"\b(?:" + "|".join(re.escape(x).replace(r"\-", r"[- ]") for x in mods) + r")\s*$"
            checks = tuple(replace(c, skip_before=rx) if isinstance(c, Forbid) and not c.skip_before else c
                           for c in checks)
    main = rule.text.lower()
    for part in (*[c for c in conds if len(c.split()) > 2], *excs):  # a one-word scope ("Sessions") is the topic itself
        main = main.replace(part.lower(), " ")
    topic = frozenset(tx.stem(w) for w in tx.words(main) if w not in lx.STOPWORDS)
    return CompiledPreference(rule.id, checks, applies, excepts, source, topic)
