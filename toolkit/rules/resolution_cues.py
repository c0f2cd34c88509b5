"""Cue grammar for rule resolution: tokens, concept lexicon, and update cues in a correction.

Resolution needs cues that admission does not (replacement, restatement, polarity against an
existing rule), so they live here; generic admission cues come from ``toolkit.rules.cues`` when
it is installed and are merged in :func:`correction_cues`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from toolkit.rules.cues import parse_cues

_WORD = re.compile(r"[a-z0-9][a-z0-9_+#'\-]*")

STOP = frozenset(
    """
a an the and or but of to in on at for with from by as is are was were be been being it its
this that these those there here i me my we our you your he she they them their so do does
did doing have has had having will would should could can may might must shall just please
now then than too very also really actually okay ok hey thanks thank yes no not again still
what which who whom whose when where why how all any each every some such only own same other
into onto over under about after before up down out off more most less few much many if else
im i'm you're that's it's don't dont doesn't didn't isn't aren't won't can't let's let
one ones thing things stuff way like get got make made want wanted need needed go going
sure kind bit lot always never stop don't dont avoid anymore rule rules policy
preference preferences requirement requirements instruction instructions future mind told
said tell forward onwards already
""".split()
)

#: common but weak words: present in many rules, so they count little
WEAK = frozenset(
    """
use using used keep always never code file files write writing add adding put change changes
run running time times work project repo thing answer answers response responses output
default rule rules
prefer preferred start stop avoid try include include
""".split()
)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix stripper so that ``commits``/``committing``/``commit`` meet."""
    w = word.lower().strip("'-")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) <= 3:
        return w
    for suf, rep, minlen in (
        ("ies", "y", 5),
        ("ing", "", 6),
        ("ed", "", 5),
        ("ly", "", 6),
        ("es", "", 5),
        ("s", "", 4),
    ):
        if w.endswith(suf) and len(w) >= minlen:
            if suf == "es" and not re.search(r"(ss|x|ch|sh|z)es$", w):
                continue
            if suf == "s" and w.endswith(("ss", "us")):
                continue
            w = w[: -len(suf)] + rep
            if suf in ("ing", "ed") and len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]
            if suf in ("ing", "ed") and re.search(r"[aeiou][^aeiou]ick$", w):
                w = w[:-1]  # panicking -> panic, mimicked -> mimic (the k is added to spell it)
            break
    return w


#: multiword names folded into one token before matching
PHRASES: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"\bline[- ](length|limit|width)s?\b"), "line-width"),
    (re.compile(r"\btype[- ]check(er|ers|ing)?\b"), "typechecker"),
    (re.compile(r"\bcode review(s)?\b"), "code-review"),
    (re.compile(r"\bpull[- ]requests?\b"), "pr"),
    (re.compile(r"\bprs\b"), "pr"),
    (re.compile(r"\bmerge[- ]requests?\b"), "mr"),
    (re.compile(r"\b(same|one) line\b"), "same-line"),
    (re.compile(r"\b(at|in) (great |more )?length\b"), "lengthy"),
    (re.compile(r"\b(own|new|separate|next|their own|its own) lines?\b"), "own-line"),
    (re.compile(r"(?<!non-)\bblocking\b"), "blocking_io"),
    # "check it in" is a commit, "an API you don't know" an unfamiliar one
    (
        re.compile(
            r"\bcheck(s|ed|ing)? (it |them |anything |something |code |that |this )?in\b"
            r"(?! (the|a|an|this|that|your|my|our)\b)"
        ),
        "commit",
    ),
    (
        re.compile(
            r"\b(you )?(don't|do not|didn't|haven't|have not|never) (know|seen|used)\b|"
            r"\bnot familiar with\b|\bnew to you\b"
        ),
        "unfamiliar",
    ),
    (re.compile(r"\btest[- ]suites?\b"), "tests"),
    # "wrap at 79 characters" sets a line width
    (re.compile(r"\b(\d+) (characters|chars|columns|cols)\b"), r"\1 \2 line-width"),
)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (known multiword names folded into one)."""
    low = text.lower()
    for pat, rep in PHRASES:
        low = pat.sub(rep, low)
    return _WORD.findall(low)


#: concept -> (pole A words, pole B words); words in different poles of one concept conflict
CONCEPTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "length": (
        (
            "concise",
            "brief",
            "short",
            "shorter",
            "terse",
            "succinct",
            "compact",
            "tl;dr",
            "minimal",
            "summary",
            "summarize",
            "summarise",
        ),
        (
            "detailed",
            "verbose",
            "long",
            "longer",
            "lengthy",
            "thorough",
            "elaborate",
            "in-depth",
            "comprehensive",
            "detail",
            "details",
            "extensive",
            "ramble",
            "rambling",
            "wordy",
            "exhaustive",
            "walkthrough",
        ),
    ),
    "indent": (
        ("tab", "tabs"),
        ("space", "spaces", "2-space", "4-space", "two-space", "four-space"),
    ),
    "quotes": (("single", "single-quoted"), ("double", "double-quoted")),
    "placement": (("same-line",), ("own-line",)),
    "build": (("compile", "compiles", "compiled", "build", "builds", "compiler", "buildable"), ()),
    "dataformat": (("json",), ("yaml", "yml", "toml", "ini", "xml")),
    "tone": (
        ("formal", "professional", "polite", "businesslike"),
        ("casual", "informal", "slang", "chatty", "relaxed", "colloquial", "jokey", "playful"),
    ),
    "concurrency": (
        ("synchronous", "synchronously", "sequential", "blocking_io"),
        ("async", "asyncio", "asynchronous", "await", "non-blocking", "coroutine", "coroutines"),
    ),
    "httpclient": (("urllib", "urllib3"), ("httpx", "aiohttp")),
    "humanlang": (
        ("english",),
        (
            "german",
            "french",
            "spanish",
            "italian",
            "dutch",
            "portuguese",
            "japanese",
            "chinese",
            "polish",
            "swedish",
            "korean",
            "russian",
        ),
    ),
    "datastyle": (("dict", "dicts", "dictionary", "dictionaries"), ("dataclass", "dataclasses")),
    "strquote": (("apostrophe", "apostrophes"), ("quotation-mark", "quotation-marks")),
    "testframework": (("pytest", "fixture", "fixtures"), ("unittest", "testcase", "setup", "nose")),
    "jsformat": (("prettier",), ("eslint",)),
    "pyformat": (("black",), ("yapf", "autopep8")),
    "pkgmanager": (("npm",), ("yarn", "pnpm")),
    "pyenv": (("pip", "requirements", "venv"), ("poetry", "uv", "conda", "pipenv")),
    "merge": (("merge", "merging"), ("rebase", "rebasing", "squash")),
    "case": (
        ("snake_case", "snake", "underscore", "underscores"),
        ("camelcase", "camel", "pascalcase", "kebab-case"),
    ),
    "strfmt": (("f-string", "f-strings", "fstring", "fstrings"), (".format", "%-formatting")),
    "paths": (("pathlib",), ("os.path",)),
    "logging": (
        ("logging", "logger", "log", "logs"),
        ("print", "prints", "println", "console.log"),
    ),
    "language_ts": (("typescript", "ts"), ("javascript", "js")),
    "structure": (
        ("bullet", "bullets", "list", "lists", "table", "tables"),
        ("prose", "paragraph", "paragraphs", "narrative"),
    ),
    "asking": (
        ("ask", "confirm", "confirmation", "check", "permission", "verify"),
        ("proceed", "autonomously"),
    ),
    "comments": (("comment", "comments", "docstring", "docstrings"), ()),
    "testing": (("test", "tests", "testing", "unit", "coverage", "spec", "specs"), ()),
    "types": (
        (
            "type",
            "types",
            "typed",
            "typing",
            "hint",
            "hints",
            "annotation",
            "annotate",
            "annotations",
            "mypy",
            "strict",
        ),
        (),
    ),
    "deps": (
        (
            "dependency",
            "dependencies",
            "package",
            "packages",
            "library",
            "libraries",
            "install",
            "deps",
            "third-party",
        ),
        (),
    ),
    "commit": (("commit", "commits", "committing", "message", "messages", "conventional"), ()),
    "branch": (("branch", "branches", "main", "master", "push", "force-push", "pr", "pull"), ()),
    "emoji": (("emoji", "emojis", "emoticon", "emoticons"), ()),
    "cleanup": (
        ("temporary", "temp", "tmp", "scratch", "cleanup", "clean", "leftover", "delete", "remove"),
        (),
    ),
    "errors": (
        (
            "error",
            "errors",
            "exception",
            "exceptions",
            "try",
            "except",
            "catch",
            "raise",
            "handling",
        ),
        (),
    ),
    "naming": (
        (
            "name",
            "names",
            "naming",
            "variable",
            "variables",
            "identifier",
            "identifiers",
        ),
        (),
    ),
    "clarity": (
        (
            "descriptive",
            "meaningful",
            "self-explanatory",
            "expressive",
            "readable",
            "intention-revealing",
            "understandable",
        ),
        (),
    ),
    "docs": (
        ("readme", "documentation", "docs", "changelog", "doc", "reference", "manual", "manpage"),
        (),
    ),
    "consult": (("consult", "read", "look", "lookup", "skim", "browse", "research"), ()),
    "explaining": (("explain", "tell", "describe", "clarify", "spell"), ()),
    "familiarity": (("unfamiliar", "unknown", "unseen", "undocumented"), ()),
    "rationale": (
        (
            "rationale",
            "reasoning",
            "reason",
            "reasons",
            "justification",
            "justify",
            "motivation",
            "why",
        ),
        (),
    ),
    "linewidth": (
        ("line", "lines", "width", "line-width", "80", "100", "120", "characters", "chars", "wrap"),
        (),
    ),
    "imports": (("import", "imports", "wildcard", "relative", "absolute"), ()),
    "functions": (
        (
            "function",
            "functions",
            "method",
            "methods",
            "helper",
            "helpers",
            "signature",
            "signatures",
            "parameter",
            "parameters",
            "argument",
            "arguments",
            "api",
            "apis",
        ),
        (),
    ),
    "replies": (
        (
            "answer",
            "answers",
            "reply",
            "replies",
            "response",
            "responses",
            "explanation",
            "explanations",
        ),
        (),
    ),
    "sql": (("sql", "query", "queries", "orm", "database", "migration", "migrations"), ()),
    "security": (
        (
            "secret",
            "secrets",
            "credential",
            "credentials",
            "token",
            "tokens",
            "key",
            "keys",
            "password",
            "passwords",
            "env",
        ),
        (),
    ),
    "sorting": (("alphabetical", "alphabetically", "sorted", "sort", "order", "ordered"), ()),
}

#: topic words that name a concept without taking a side ("answer length")
NEUTRAL: dict[str, tuple[str, ...]] = {
    "length": ("length", "verbosity", "wordiness", "wordy"),
    "indent": ("indentation", "indent", "indenting"),
    "quotes": ("quote", "quotes", "quoting", "quotation"),
    "tone": ("tone", "register", "style of writing"),
    "concurrency": ("concurrency", "concurrent"),
    "testframework": ("test framework", "runner"),
    "pkgmanager": ("package manager",),
    "case": ("casing",),
    "logging": ("debugging", "debug"),
    "structure": ("formatting", "layout", "structure"),
}

_CONCEPT_OF: dict[str, tuple[str, int]] = {}
for _c, (_a, _b) in CONCEPTS.items():
    for _w in _a:
        _CONCEPT_OF.setdefault(stem(_w), (_c, 0))
    for _w in _b:
        _CONCEPT_OF.setdefault(stem(_w), (_c, 1))
for _c, _ws in NEUTRAL.items():
    for _w in _ws:
        _CONCEPT_OF.setdefault(stem(_w), (_c, -1))


_VALUE = re.compile(r"(?<![\w<])(\d+(?:\.\d+)?|[\w<>*-]*[._<>/][\w<>*./-]*\w[>]?)(?![\w>])")


def values(text: str) -> set[str]:
    """Specific values in ``text``: numbers and code-like tokens (``72``, ``test_<m>.py``)."""
    return {v.lower().strip("./") for v in _VALUE.findall(text) if v.strip("./")}


_NEGATOR = re.compile(
    r"^(not|no|never|nobody|don't|dont|never|avoid|skip|stop|without|instead|over|"
    r"than|drop|ditch|quit|nor|against)$"
)
_AFFIRM = re.compile(r"^(use|write|prefer|want|go|switch|keep|choose|pick|with|and|but|[,;:])$")


_FAILS = re.compile(
    r"^(\w+ ){0,2}(isn't|is not|doesn't|does not|aren't|are not|don't|do not|wasn't) "
    r"(work|working|helping|help|helpful|good|great|useful)\b"
)


def stance(text: str) -> dict[str, set[int]]:
    """The pole a text asks for per two-pole concept ("skip bullets, write prose" -> prose)."""
    low = text.lower()
    for pat, rep in PHRASES:
        low = pat.sub(rep, low)
    toks = re.findall(r"[a-z0-9][a-z0-9_+#'\-.]*|[,;:]", low)
    asked: dict[str, set[int]] = {}
    rejected: dict[str, set[int]] = {}
    for i, tok in enumerate(toks):
        hit = _CONCEPT_OF.get(stem(tok.strip(".")))
        if not hit or hit[1] < 0 or not CONCEPTS[hit[0]][1]:
            continue
        if i > 0 and toks[i - 1] in ("you", "we", "i", "they"):
            continue  # "the dates you print": a verb, not the pole ("print" vs logging)
        neg = False
        for j in range(i - 1, max(-1, i - 4), -1):
            if _AFFIRM.match(toks[j]):
                break
            if _NEGATOR.match(toks[j]) or (toks[j] == "of" and j > 0 and toks[j - 1] == "instead"):
                neg = True
                break
        if _FAILS.match(" ".join(toks[i + 1 : i + 6])):
            neg = True  # "the terse style isn't working for me"
        (rejected if neg else asked).setdefault(hit[0], set()).add(hit[1])
    out = {c: set(p) for c, p in asked.items()}
    contrastive = bool(CONTRAST.search(text))
    for c, poles in rejected.items():
        if c not in out:
            if contrastive:
                out[c] = {1 - p for p in poles}
        else:
            out[c] -= poles
            if not out[c]:
                out[c] = {1 - p for p in poles}
    return out


def concept_of(stem_: str) -> str | None:
    """The concept a stem belongs to (None when it names none)."""
    hit = _CONCEPT_OF.get(stem_)
    return hit[0] if hit else None


def content_stems(text: str) -> list[str]:
    """Stems of the content words of ``text`` (stopwords dropped; hyphenated words also split)."""
    out = []
    for w in words(text):
        parts = [p for p in w.split("-") if p] if "-" in w.strip("-") else [w]
        out.extend(stem(p) for p in parts if p not in STOP and len(p) > 1 and not p.isdigit())
    return out


def concepts(text: str) -> dict[str, set[int]]:
    """Concepts mentioned in ``text`` and the poles used (0/1; concepts without poles use 0)."""
    out: dict[str, set[int]] = {}
    compounds = [stem(w) for w in words(text) if "-" in w.strip("-") and w not in STOP]
    for s in compounds + content_stems(text):
        hit = _CONCEPT_OF.get(s)
        if hit:
            out.setdefault(hit[0], set()).add(hit[1])
    return out


@lru_cache(maxsize=65536)
def _index_terms(text: str) -> tuple[str, ...]:
    stems = content_stems(text)
    # a hyphenated compound ("commented-out", "kebab-case") is also one term of its own
    low = text.lower()
    compounds = [stem(w) for w in words(text) if "-" in w.strip("-") and w in low]
    return tuple(stems + compounds + [f"@{c}" for c in sorted(concepts(text))])


def index_terms(text: str) -> list[str]:
    """Retrieval terms: content stems plus ``@concept`` tokens."""
    return list(_index_terms(text))


def term_weight(term: str) -> float:
    """How much a matching term says about a shared requirement."""
    if term.startswith("@"):
        return 0.5
    return 0.35 if term in _WEAK_STEMS else 1.0


_WEAK_STEMS = frozenset(stem(w) for w in WEAK)

# -- cue patterns --------------------------------------------------------------------------------
_P = lambda s: re.compile(s, re.I)  # noqa: E731

LASTING = _P(
    r"\b(from now on|going forward|moving forward|in (the )?future|from here on|"
    r"henceforth|always|never|every time|each time|whenever|by default|as a rule|"
    r"in general|generally|every (project|repo|file|task|time)|all (my )?(projects|repos|"
    r"the time)|remember( that|:)?|make (it|this) a rule|for good|permanently|"
    r"anymore|any more|no longer|from today|as standard|(in|for) all future)\b"
)
TEMPORARY = _P(
    r"\b(this time|just this once|this once|for now|for the moment|right now|"
    r"for this (\w+ ){0,2}(one|task|change|pr|fix|refactor|commit|file|run|answer|question|"
    r"request|ticket|script|function|bug|feature|diff|patch|session|reply|response)|"
    r"(only|just) (for|in) this (one|task|change|pr|fix|refactor|commit|file|answer|"
    r"question|request|ticket|script|function|bug|diff|patch|reply|response)|"
    r"(in|on|inside) this (\w+ ){0,2}(script|snippet|notebook|spike|experiment|prototype|"
    r"demo|task|change|pr|commit|function|diff|patch|answer|reply|response|message|one)|"
    r"just (while|until)|(while|until) (we|i|you)\b[^.;!?]*\b(this|that) (bug|issue|problem|"
    r"ticket|incident|outage|error|crash)|"
    r"today only|just today|in this (answer|reply|response|one)|here only|"
    r"temporarily|for the time being|until (i|we) say|just for today|this particular|"
    r"today|tonight|(fix|change|sort) (it|that|this) later|"
    r"this (answer|reply|response|one|output|summary|message)|"
    r"^(could|can|would|will) you\b[^.!]*\?\s*$)\b"
)
RETRACT = _P(
    r"(\bno longer (need|want|require|care|have to|must|should|bother)|"
    r"\b(don't|do not|dont) (need|have) to \w+.*\b(anymore|any more|again)\b|"
    r"\bno need to \w+.*\b(anymore|any more)\b|\bno need for\b[^.;!?]*\b(anymore|any more)\b|"
    r"\b(forget|ignore|drop|scrap|remove|delete|cancel|discard|disregard|retire|"
    r"withdraw|undo|revoke|lose|kill|ditch) (about )?(my|the|that|this|your) (earlier |old |"
    r"previous |former |original )?([\w/-]+ ){0,3}(rule|preference|instruction|request|"
    r"requirement|note|guideline)s?\b|"
    r"\bi (don't|do not|no longer) (need|want) (it|that|this|them|those)( rule)? "
    r"(anymore|any more)\b|"
    r"\bi (don't|do not|no longer) (need|want) (the|that|this|my|your|those|these) "
    r"([\w/-]+ ){0,4}(rule|preference|requirement|instruction|guideline)s?\b|"
    r"\b(forget|disregard|ignore) (what|everything) i (said|told you)|"
    r"\bthat (rule|preference|requirement|instruction) (is|was) (no longer|obsolete|"
    r"gone|retired|dead|void)|"
    r"\b(rule|preference|requirement) (no longer applies|is retired|is cancelled)|"
    r"\byou can (stop|go back to|drop|skip)\b|\bfeel free to \w+ again\b|"
    r"\b(is|are) (fine|ok|okay|allowed|acceptable) again\b|"
    r"\bi (don't|do not|no longer) (care|mind)\b|\bstop worrying about\b|"
    r"\b(lift|relax) (the|that|my) (rule|ban|restriction)|"
    r"\b(rule|ban|restriction|requirement|preference)\b[^.;!?]{0,40}\b(is|are|can be|"
    r"has been) (lifted|dropped|removed|cancell?ed|over|gone|void|obsolete)\b|"
    r"\b(rule|requirement|preference|restriction) can go\b|"
    r"\b(don't|do not|dont) bother (with|about|to)\b[^.;!?]*\b(anymore|any more)\b|"
    r"\b(doesn't|does not|don't|do not) matter (to me )?(anymore|any more)\b|"
    r"\b(that's|that is|it's|it is) not a thing\b|"
    r"\bnever mind (the|my|that|about)\b)"
)
REPLACE = _P(
    r"\b(instead of|instead|rather than|in place of|switch(ed|ing)? (to|over|from)|"
    r"(switch|change|move|convert|turn)(ed|ing)? (the |my |our |all |your )?([\w-]+ ){1,3}"
    r"(over )?to|"
    r"change(d)? (it )?to|changed my mind|replace|swap|move(d)? (over )?to|"
    r"migrate|prefer \w+( \w+)? over|not \w+( \w+)? but|no more \w+[,;:.]?\s|"
    r"now (use|prefer|want|go with)|use \w+ now|from now on use|these days|"
    r"go with|opposite|reverse|the other way)\b"
)
RESTATE = _P(
    r"(^\s*(where('s| is| are)|why (is|isn't|aren't|didn't|did you|no|not)|what happened to)\b|"
    r"\b(again|as i (said|asked|mentioned|told you)|like i (said|asked|told you)|"
    r"i (already|'ve already|have already) (said|asked|told)|remember|still|"
    r"keep (on )?|reminder|once more|as before|as usual|as always|same as before|"
    r"like we (agreed|discussed|said)|as (we )?(agreed|discussed)|(for )?the (second|third|"
    r"fourth|fifth|nth|\d+(st|nd|rd|th)) time|"
    r"i('ve| have)? (told|said|asked|mentioned)( (you|this|that|it))*( (before|already|twice|"
    r"repeatedly|many times|multiple times|several times))|i told you)\b)"
)

_SCOPE_WORDS = r"(project|repo|repository|codebase|code base|package|service|app|monorepo)"
PROJECT = _P(
    rf"\b((in|for|within|inside) (this|the|our|that) {_SCOPE_WORDS}|"
    rf"(in|for|within|to) (the )?[\w.\-]+ {_SCOPE_WORDS}|(in|for) {_SCOPE_WORDS} [\w.\-]+|"
    rf"{_SCOPE_WORDS}[- ]wide|(here|this {_SCOPE_WORDS}) only|only (here|in this "
    rf"{_SCOPE_WORDS}))\b"
)
GLOBAL = _P(
    rf"\b(everywhere|in (all|every|any) {_SCOPE_WORDS}s?|across (all )?{_SCOPE_WORDS}s?|"
    rf"globally|all (of )?my {_SCOPE_WORDS}s?|not just (in )?(this|here)|"
    rf"every {_SCOPE_WORDS}|wherever)\b"
)
CONDITION = _P(
    r"\b(only (when|if|for|in|on|while|during|after|before)\b[^.;!?]*|"
    r"(whenever|when|if|while|once|after|before) (you|we|i|the|a|an|it|there|"
    r"something|anything|writing|editing|adding|touching|working|changing|"
    r"creating|making|running|doing|committing|pushing|opening|reviewing|"
    r"deploying|releasing|fixing)\b[^.;!?]*|"
    r"(for|in|on) (python|typescript|javascript|go|rust|java|shell|bash|sql|yaml|"
    r"markdown|css|html|c\+\+|ruby|test|config|\.\w+|public|private|internal|"
    r"new|legacy|large|small|big|generated|production|frontend|backend|cli|api)\b"
    r"[^.;!?]*)"
)
EXCEPTION = _P(
    r"\b((?<![/\-])(?<!try )except( for| when| in| on| if)?|unless|apart from|other than|excluding|"
    r"with the exception of|but not (for|in|on|when|if)|not (for|in|on|when) "
    r"(the )?\w+|aside from|save for|exempt|is an exception|are an exception|"
    r"(is|are) exempt|skip (it|this|that|them|these|those) (for|when|in|on|with|during)|(fine|ok|okay) to skip|"
    r"(can|may|could|might) be (skipped|omitted|ignored|left out|dropped|relaxed) "
    r"(for|in|on|when|with|during|inside)|"
    r"(is|are|'s|'re) (fine|ok|okay|allowed|acceptable|alright|permitted) "
    r"(on|for|in|when|if|with|inside|under)|"
    r"(skip|exclude|leave out|ignore|stay out of|not touch) (the |any |all |my )?"
    r"[\w./-]+ (folder|directory|dir|files?|modules?|packages?|scripts?|tests?)|"
    r"doesn't apply to|does not apply to|no need (for|in|on|when)|"
    r"but (the |any |all |some )?[\w-]+( [\w-]+){0,4} (can|may) (go over|exceed|break|skip|"
    r"ignore|be longer|be exempt|stay|keep|use|have)|"
    r"(isn't|aren't|is not|are not|not) (needed|required|necessary|wanted|mandatory) "
    r"(for|in|on|when|with|inside|during)|"
    r"(don't|do not|needn't|need not) (have|need) to \w+[^.;!?]*? (for|when|in|on|with|"
    r"inside|during) )\b[^.;!?]*"
)
CHANGE_TIME = _P(
    r"\b(from now on|going forward|moving forward|in (the )?future|from here on|"
    r"henceforth|from today|these days|nowadays)\b|(?<!right )(?<!for )\bnow\s*[.!]?\s*$"
)
WIDEN = _P(
    r"\b(not just|not only|(as well|too)(?=\s*([,.;!?]|$|from|going))|also (for|to|in|on)|"
    r"in addition to|including|"
    r"extend (it|this|that|the rule) to|applies to \w+ as well)\b"
)
CONTRAST = _P(
    r"(\b(instead|rather|over|not \w+(,| but)|but use|in place of|versus|vs)\b|"
    r", (use|not|never|no|avoid) \W?\w)"
)
NEGATION = _P(
    r"\b(don't|do not|dont|never|no|not|stop|avoid|without|nor|quit|refrain|skip|"
    r"shouldn't|should not|mustn't|must not|can't|cannot|won't|no more)\b"
)
DIRECTIVE = _P(
    r"\b(use|keep|add|write|put|make|run|avoid|stop|start|always|never|don't|"
    r"do not|prefer|please|should|must|need|want|be|give|show|include|leave|"
    r"remove|delete|ask|check|name|sort|split|limit|wrap|mention|explain|document|"
    r"comment|test|commit|push|format|lint|pin|update|reply|answer|respond|create|"
    r"skip|no|stick|follow|switch|go|drop|forget|ignore|avoid|place|prefix|end|"
    r"call|return|raise|log|print|default|needs|requires?|goes|belongs?|lives?|has to|"
    r"have to|ought to)\b"
)


@dataclass(frozen=True)
class SegmentCues:
    """What one clause of a correction says about the rule library."""

    text: str
    lasting: bool = False
    temporary: bool = False
    retraction: bool = False
    replacement: bool = False
    restatement: bool = False
    negated: bool = False
    project: str | None = None
    global_scope: bool = False
    conditions: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()
    directive: bool = False
    widen: bool = False
    behavior: str = ""
    quotes: tuple[str, ...] = field(default_factory=tuple)


def _project_name(text: str) -> str | None:
    m = PROJECT.search(text)
    if not m:
        return None
    named = re.search(rf"\b(?:in|for|within|to) (?:the )?([\w.\-]+) {_SCOPE_WORDS}\b", text, re.I)
    if named and named.group(1).lower() not in ("this", "that", "our", "the", "my", "your"):
        return named.group(1)
    named = re.search(rf"\b(?:in|for) {_SCOPE_WORDS} ([\w.\-]+)", text, re.I)
    if named and named.group(2).lower() not in STOP:
        return named.group(2)
    return "this"


def _clauses(pattern: re.Pattern, text: str) -> tuple[str, ...]:
    return tuple(m.group(0).strip(" ,") for m in pattern.finditer(text) if m.group(0).strip())


def strip_clauses(text: str, parts: tuple[str, ...]) -> str:
    """``text`` without the condition/exception/scope clauses: what remains is the behaviour."""
    out = text
    for p in parts:
        out = out.replace(p, " ")
    return re.sub(r"\s+", " ", out).strip(" ,.;:")


def _add_clause(found: tuple[str, ...], extra: str | None) -> tuple[str, ...]:
    if not extra or any(extra in f or f in extra for f in found):
        return found
    return found + (extra,)


_LEADIN_WORDS = STOP | {
    "changed",
    "change",
    "note",
    "fyi",
    "important",
    "work",
    "reminder",
    "remember",
    "again",
    "once",
    "more",
    "one",
    "general",
    "seriously",
    "look",
    "listen",
}
_TRAIL = re.compile(
    r"[\s,]*\b(from now on|going forward|moving forward|in (the )?future|"
    r"from here on|for good|as a rule|by default)\b[\s.!]*$",
    re.I,
)
_LEAD = re.compile(
    r"^\s*(from now on|going forward|moving forward|in (the )?future|"
    r"from here on)\b[\s,:]*",
    re.I,
)


def clean_behavior(text: str) -> str:
    """The requested behaviour without lead-ins ("I changed my mind:", "From now on,")."""
    out = text.strip()
    for _ in range(3):
        m = re.match(r"^([^,:;]{1,60})[,:;]\s+", out)
        if m and all(w in _LEADIN_WORDS for w in words(m.group(1))):
            out = out[m.end() :]
        out = _LEAD.sub("", out)
    out = _TRAIL.sub("", out).strip(" ,.;:!")
    out = re.sub(r"^(please|kindly)\s+", "", out, flags=re.I)
    return out[:1].upper() + out[1:] if out else text.strip(" .")


_PLACED = (
    r"\b(line|lines|newline|newlines|space|spaces|comment|separator|header|divider|blank|"
    r"heading|break)\s+"
)


@lru_cache(maxsize=4096)
def segment_cues(text: str) -> SegmentCues:
    """Parse one clause: the shared admission grammar (``parse_cues``) plus resolution cues."""
    shared = parse_cues(text)
    low = text.lower()
    conds = _add_clause(_clauses(CONDITION, text), shared.condition)
    excs = _add_clause(_clauses(EXCEPTION, text), shared.exception)
    # "try/except" names a construct, not an exception to the rule
    excs = tuple(e for e in excs if not re.search(r"\btry\s*[/\-]?\s*" + re.escape(e), text, re.I))
    conds = tuple(c for c in conds if not any(c in e or e in c for e in excs))
    # a leading "When X, do Y" keeps only "When X"; lasting markers are not part of a condition
    conds = tuple(
        dict.fromkeys(
            t for t in (_TRAIL.sub("", c.split(",")[0]).strip(" ,;:") for c in conds) if t
        )
    )
    for part in re.split(r",\s*(?:but\s+)?", text)[1:]:
        # "Ask before X, but only on Y": a condition after a comma is a clause of its own
        for extra in _clauses(CONDITION, part):
            if not any(extra in c or c in extra for c in conds + excs):
                conds = (*conds, _TRAIL.sub("", extra).strip(" ,;:"))
    # "a blank line before a return statement" places something; it is not a trigger
    conds = tuple(
        c
        for c in conds
        if not (
            re.match(r"(before|after|above|below) (a|an|the|each|every)\b", c, re.I)
            and re.search(_PLACED + re.escape(c), text, re.I)
        )
    )
    temporary = bool(TEMPORARY.search(low)) or shared.temporary
    lasting = bool(LASTING.search(low)) or shared.lasting
    if temporary:
        conds = tuple(c for c in conds if not TEMPORARY.search(c.lower()))
    proj = _project_name(text) or shared.project or ("this" if shared.scope == "project" else None)
    scope_parts = tuple(m.group(0) for m in PROJECT.finditer(text))
    behavior = clean_behavior(strip_clauses(text, conds + excs + scope_parts))
    return SegmentCues(
        text=text,
        lasting=lasting,
        temporary=temporary and not lasting,
        retraction=bool(RETRACT.search(low)),
        replacement=bool(REPLACE.search(low)),
        restatement=bool(RESTATE.search(low)) or shared.friction,
        negated=bool(NEGATION.search(behavior.lower())),
        project=proj,
        global_scope=bool(GLOBAL.search(low)) or shared.explicit_global,
        conditions=conds,
        exceptions=excs,
        directive=bool(
            DIRECTIVE.search(low)
            or CONTRAST.search(low)
            or concepts(text)
            or conds
            or excs
            or proj
            or CHANGE_TIME.search(low)
        ),
        widen=bool(WIDEN.search(low)),
        behavior=behavior or text,
        quotes=(text,),
    )


_SENT = re.compile(r"\S.*?(?:[.!?]+(?=\s|$)|\n|$)", re.S)
_NEXT_DIRECTIVE = (
    r"(?=(?:also |then |please |(?:from now on|going forward|in future|moving forward),? )?"
    r"(?:stop|don't|do not|never|always|use|drop|switch|add|write|"
    r"keep|avoid|make|put|include|run|skip|forget|prefer|ignore|scrap|start|go)\b|"
    r"(?:please|kindly) (?!no\b|not\b)\w)"
)
# (?<!\s): the first branch starts only where a whitespace run starts (same matches; a long run
# of spaces was retried from every position, quadratic: 10 KB of spaces took 13 s)
_BUNDLE = re.compile(
    r",?(?<!\s)\s+\b(?:and also|and additionally|also,|plus,|and separately|"
    r"and another thing|oh and|and,? one more thing)\b\s*|"
    rf"(?:,|\s[-\u2013\u2014]|;)\s+and\s+{_NEXT_DIRECTIVE}|;\s+(?:also,?\s+(?=\w)|{_NEXT_DIRECTIVE})",
    re.I,
)


def split_segments(text: str) -> list[str]:
    """Clauses of a correction, each an exact substring of ``text`` (for bundled corrections)."""
    spans: list[tuple[int, int]] = []
    for m in _SENT.finditer(text):
        s, e = m.span()
        cut = s
        for b in _BUNDLE.finditer(text, s, e):
            spans.append((cut, b.start()))
            cut = b.end()
        spans.append((cut, e))
    out = []
    for s, e in spans:
        seg = text[s:e].strip()
        if seg and re.search(r"[A-Za-z]", seg):
            out.append(seg)
    return out
