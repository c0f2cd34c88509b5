"""More preference kinds the offline interpreter recognises, each a small check with its own detector.

Kinds: reply language, date format, decimal places, random seeds in sampling code, uncertainty
beside estimates, units beside quantities, leaked secrets, shell commands outside fenced blocks,
a quoted sign-off or opening, an email subject line, British/American spelling, quoted words or
phrases to avoid, and "do A before B" workflows. :func:`recognise` compiles preference text to
these checks; every detector stays silent (``not_applicable``) when the delivery gives it nothing
to judge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from toolkit.simuser import text as tx
from toolkit.simuser.checks import Check, Finding, Forbid, Matcher, View

# -- language -----------------------------------------------------------------------------------
_LANG_WORDS = {
    "english": "the and of to is in that it for was with are this you not have be on as by from at or",
    "spanish": "el la los las de que y en un una es por con para no se del al lo como más pero sus le ya "
               "muy también está son fue",
    "french": "le la les de des et en un une est que qui pour dans pas ne sur au du avec il elle sont "
              "nous vous ce cette",
    "german": "der die das und ist nicht ein eine zu den mit von für auf im sich dem des auch es sie wir "
              "ich wird sind",
    "italian": "il lo la gli le di che e un una per non con sono del della è nel anche come più ma",
    "portuguese": "o a os as de que e em um uma para com não do da no na por mais são é ao pelo",
    "dutch": "de het een en van is dat niet op te met voor zijn er maar ook als bij aan",
}
_LANG_SETS = {k: frozenset(v.split()) for k, v in _LANG_WORDS.items()}
_LANG_ALIASES = {"castilian": "spanish", "español": "spanish", "espanol": "spanish", "français": "french",
                 "deutsch": "german", "italiano": "italian", "português": "portuguese", "brazilian portuguese":
                 "portuguese", "flemish": "dutch"}


def detect_language(text: str) -> tuple[str | None, int]:
    """The most likely natural language of ``text`` by stop-word counts, and how many prose words."""
    prose = re.sub(r'"[^"\n]*"', " ", tx.prose(text))
    sents = [x for x in re.split(r"(?<=[.!?])\s+|\n+", prose)
             if re.search(r"[.!?]\s*$", x.strip()) and len(x.split()) >= 4 and not re.match(r"\s*[\[{]", x)]
    ws = [w.lower() for w in re.findall(r"[^\W\d_]+", " ".join(sents))]
    if len(ws) < 6:
        return None, len(ws)
    scores = {lang: sum(w in s for w in ws) for lang, s in _LANG_SETS.items()}
    best = max(sorted(scores), key=lambda k: scores[k])
    second = max((v for k, v in scores.items() if k != best), default=0)
    if scores[best] < 3 or scores[best] < 1.5 * second:
        return None, len(ws)
    return best, len(ws)


@dataclass(frozen=True)
class Language(Check):
    """The reply must be written in one natural language."""

    lang: str

    def evaluate(self, view: View) -> Finding:
        got, n = detect_language(view.reply)
        if got is None:
            return Finding("not_applicable" if n < 6 else "unknown", "cannot tell the reply's language",
                           topic="language")
        if got == self.lang:
            return Finding("satisfied", f"the reply is in {got.title()}", topic="language")
        return Finding("violated", f"the reply is in {got.title()}, not {self.lang.title()}",
                       f"answer in {self.lang.title()}", "language")

    def describe(self) -> str:
        return f"reply in {self.lang}"


# -- dates ----------------------------------------------------------------------------------------
_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
           "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|"
           "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|"
           "janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|"
           "januar|februar|märz|juni|juli|oktober|dezember")
_DATE_STYLES = {
    "iso": r"\b\d{4}-\d{2}-\d{2}\b",
    "numeric": r"\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b",
    "month_name": (rf"\b\d{{1,2}}(?:st|nd|rd|th)?\.?\s+(?:de\s+)?(?:{_MONTHS})\.?,?\s+(?:de\s+)?\d{{4}}\b|"
                   rf"\b(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b"),
}


@dataclass(frozen=True)
class DateFormat(Check):
    """Dates in the reply must be written in one style (``iso``, ``numeric`` or ``month_name``)."""

    style: str
    label: str = "dates"

    def evaluate(self, view: View) -> Finding:
        text = tx.prose(view.reply) if self.style != "iso" else view.reply
        found: dict[str, list[re.Match]] = {k: list(re.finditer(rx, text, re.I)) for k, rx in _DATE_STYLES.items()}
        other = [m for k, ms in found.items() if k != self.style for m in ms]
        if other:
            m = other[0]
            return Finding("violated", f"the date \u201c{m.group(0)}\u201d is not written as {self.label}",
                           f"write dates as {self.label}", "date format")
        if found[self.style]:
            return Finding("satisfied", f"dates are written as {self.label}", topic="date format")
        return Finding("not_applicable", "no dates in the reply", topic="date format")

    def describe(self) -> str:
        return f"dates as {self.label}"


# -- numbers --------------------------------------------------------------------------------------
_NUM_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "a single": 1, "single": 1}
_NUMBER_RX = re.compile(r"(?<![\w.\-/:])(\d+)\.(\d+)(?![\w.]|\.\d)")


@dataclass(frozen=True)
class Decimals(Check):
    """Numbers in the reply's prose carry at most ``n`` decimal places."""

    n: int

    def evaluate(self, view: View) -> Finding:
        text = tx.prose(view.reply)
        nums = list(_NUMBER_RX.finditer(text))
        if not nums:
            return Finding("not_applicable", "no decimal numbers in the reply", topic="rounding")
        for m in nums:
            if len(m.group(2)) > self.n:
                return Finding("violated", f"\u201c{m.group(0)}\u201d has {len(m.group(2))} decimal places",
                               f"round to {self.n} decimal places", "rounding")
        return Finding("satisfied", f"numbers have at most {self.n} decimals", topic="rounding")

    def describe(self) -> str:
        return f"at most {self.n} decimal places"


_UNCERTAINTY_RX = (r"\b(9[05]|99)\s?%\s*(ci|confidence|credible|interval)", r"\bconfidence intervals?\b",
                   r"\bintervalo de confianza\b", r"\bci\b", r"\bs\.?e\.?m?\b\s*[=:]?\s*\d", r"\(\s*se\b",
                   r"\bstandard (error|deviation)\b", r"\bstd\.?\b", r"\bsd\b\s*[=:]?\s*\d", r"\u00b1", r"\+/-",
                   r"\bmargin of error\b", r"\berror bars?\b", r"\bcredible interval\b", r"\binterquartile\b",
                   r"\biqr\b", r"\bp\s?[<=>]\s?0?\.\d")


@dataclass(frozen=True)
class Uncertainty(Check):
    """An estimate reported in the reply comes with its uncertainty (interval, SE, +-)."""

    def evaluate(self, view: View) -> Finding:
        text = tx.prose(view.reply)
        if not re.search(r"\d+\.\d+|\d\s?%", text):
            return Finding("not_applicable", "no estimate reported in the reply", topic="uncertainty")
        if any(re.search(rx, view.reply, re.I) for rx in _UNCERTAINTY_RX):
            return Finding("satisfied", "the estimate comes with its uncertainty", topic="uncertainty")
        return Finding("violated", "the estimate has no interval or standard error",
                       "give the uncertainty with the estimate", "uncertainty")

    def describe(self) -> str:
        return "estimates with uncertainty"


_UNIT_AFTER = re.compile(r"\s*(?:[(),;]|\.(?!\d)|$|and\b|or\b|to\b|vs\b|versus\b)", re.I)


@dataclass(frozen=True)
class Units(Check):
    """Reported quantities carry a unit (a bare decimal number ending a clause counts as missing one)."""

    def evaluate(self, view: View) -> Finding:
        text = tx.prose(view.reply)
        depth = 0
        bare = None
        seen = False
        pos = 0
        for m in _NUMBER_RX.finditer(text):
            depth += text.count("(", pos, m.start()) - text.count(")", pos, m.start())
            pos = m.start()
            before = text[max(0, m.start() - 6): m.start()]
            if depth > 0 or re.search(r"[$\u20ac\u00a3\u00a5]\s?$|[=:]\s?$|\bv$|version\s$", before, re.I):
                continue
            seen = True
            if _UNIT_AFTER.match(text, m.end()):
                bare = bare or m
        if bare is not None:
            return Finding("violated", f"\u201c{bare.group(0)}\u201d has no unit", "give the units", "units")
        if seen:
            return Finding("satisfied", "quantities carry units", topic="units")
        return Finding("not_applicable", "no quantities reported", topic="units")

    def describe(self) -> str:
        return "quantities with units"


# -- code ---------------------------------------------------------------------------------------
_RANDOM_CALL = re.compile(r"\.sample\(|\bshuffle\(|train_test_split\(|\brandom\.\w+\(|np\.random\.\w+\(|"
                          r"\bpermutation\(|\brandint\(|\.choice\(|\bKFold\(|\bShuffleSplit\(|\brandn?\(|"
                          r"torch\.rand\w*\(|\bdefault_rng\(|\bsample_frac\(|\.sample_n\(")
_SEEDED = re.compile(r"\b(seed|random_state|random_seed|rng_seed)\s*=\s*\w|\.seed\(\s*\w|manual_seed\(\s*\w|"
                     r"default_rng\(\s*\w|set\.seed\(\s*\w|RandomState\(\s*\w", re.I)


@dataclass(frozen=True)
class SeedCode(Check):
    """Code that samples, shuffles or splits at random fixes a seed."""

    def evaluate(self, view: View) -> Finding:
        code = view.code
        m = _RANDOM_CALL.search(code)
        if not m:
            return Finding("not_applicable", "no random sampling in the code", topic="random seed")
        if _SEEDED.search(code):
            return Finding("satisfied", "the random draw is seeded", topic="random seed")
        line = code[code.rfind("\n", 0, m.start()) + 1: code.find("\n", m.end()) if "\n" in code[m.end():]
                    else len(code)]
        return Finding("violated", f"\u201c{line.strip()[:80]}\u201d draws at random without a seed",
                       "fix the random seed", "random seed")

    def describe(self) -> str:
        return "seeded randomness in code"


_DOC_DEF = re.compile(r"^(?P<pre>[^\n]*\n)?(?P<def>[ \t]*export\s+(?:default\s+)?(?:async\s+)?(?:function\s*\*?\s*"
                      r"(?P<n1>\w+)|const\s+(?P<n2>\w+)\s*=\s*(?:async\s*)?(?:\([^)]*\)|\w+)\s*=>))", re.M)


@dataclass(frozen=True)
class DocComments(Check):
    """Exported JavaScript/TypeScript functions carry a ``/** ... */`` doc comment."""

    def evaluate(self, view: View) -> Finding:
        found = False
        for path, body in sorted((view.artifacts or {}).items()):
            if not path.endswith((".js", ".ts", ".tsx", ".jsx", ".mjs", ".cjs")):
                continue
            for m in re.finditer(r"^[ \t]*export\s+(?:default\s+)?(?:async\s+)?(?:function\s*\*?\s*(\w+)|"
                                 r"const\s+(\w+)\s*=\s*(?:async\s*)?(?:\([^)]*\)|\w+)\s*(?::[^=]+)?=>)", body, re.M):
                found = True
                head = body[: m.start()].rstrip()
                if not head.endswith("*/"):
                    name = m.group(1) or m.group(2)
                    return Finding("violated", f"`{name}` in {path} has no doc comment",
                                   "give each exported function a doc comment", "doc comments")
        if not found:
            return Finding("not_applicable", "no exported functions in the workspace", topic="doc comments")
        return Finding("satisfied", "exported functions are documented", topic="doc comments")

    def describe(self) -> str:
        return "doc comments on exported functions"


# -- secrets ------------------------------------------------------------------------------------
_SECRET_RX = (r"\b(ghp|gho|ghs|github_pat|glpat|xox[abprs])[-_][A-Za-z0-9_\-]{10,}", r"\bsk-[A-Za-z0-9_\-]{16,}",
              r"\bAKIA[0-9A-Z]{16}\b", r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
              r"\b(password|passwd|secret|token|api[_-]?key)\s*[=:]\s*['\"]?(?!\*{3})[^\s'\"]{6,}",
              r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
              r"(?<![\w/.])(?=[A-Za-z0-9_\-]{28,}\b)(?=[^\s]*\d)(?=[^\s]*[a-z])(?=[^\s]*[A-Z])[A-Za-z0-9_\-]{28,}")


@dataclass(frozen=True)
class SecretLeak(Check):
    """The reply must not show a credential (token, key, password value)."""

    def evaluate(self, view: View) -> Finding:
        for rx in _SECRET_RX:
            m = re.search(rx, view.reply, re.I if not rx.startswith("(?<!") else 0)
            if m:
                shown = m.group(0)
                return Finding("violated", f"a credential is shown in the reply (\u201c{shown[:6]}\u2026\u201d)",
                               "never paste credentials into the output", "secrets")
        return Finding("satisfied", "no credential shown", topic="secrets")

    def describe(self) -> str:
        return "no credentials in output"


# -- format -------------------------------------------------------------------------------------
_CLI = (r"kubectl|git|terraform|docker|docker-compose|helm|ssh|scp|rsync|curl|wget|ss|netstat|lsof|ps|kill|"
        r"systemctl|journalctl|service|sudo|apt|apt-get|yum|dnf|brew|pip3?|npm|pnpm|yarn|npx|python3?|node|make|"
        r"cargo|go|ls|cd|cp|mv|rm|mkdir|chmod|chown|cat|tail|head|grep|find|sed|awk|tar|export|aws|gcloud|az|"
        r"psql|mysql|redis-cli|ansible|ansible-playbook|nginx|haproxy|crontab|df|du|top|htop|ping|dig|nslookup|"
        r"openssl|ufw|iptables|mvn|gradle|pytest|ruff|eslint|tsc|poetry|uv|conda")
_CMD_INLINE = re.compile(rf"`(?:sudo\s+)?(?:{_CLI})\s[^`\n]+`")
_CMD_AFTER_VERB = re.compile(rf"\b(?:run|type|execute|enter|try|use)[:\s]+`?(?:sudo\s+)?(?:{_CLI})\s+[-\w./:@=\"']+", re.I)
_CMD_LINE = re.compile(rf"^\s*(?:\$\s*)?(?:sudo\s+)?(?:{_CLI})\s+[^\n]*?(?:\s-{{1,2}}\w|\s\|\s|\s>\s|/)[^\n]*$",
                       re.M)


@dataclass(frozen=True)
class FencedCommands(Check):
    """Shell commands in the reply sit in fenced code blocks, not inline or in running text."""

    def evaluate(self, view: View) -> Finding:
        outside = tx.prose(view.reply)
        m = _CMD_INLINE.search(outside) or _CMD_AFTER_VERB.search(outside) or _CMD_LINE.search(outside)
        if m:
            return Finding("violated", f"the command \u201c{m.group(0).strip(' `')[:60]}\u201d is not in a code block",
                           "put commands in a fenced code block", "code blocks")
        if tx.code_blocks(view.reply):
            return Finding("satisfied", "commands are fenced", topic="code blocks")
        return Finding("not_applicable", "no shell commands in the reply", topic="code blocks")

    def describe(self) -> str:
        return "commands in fenced blocks"


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", s.lower())).strip()


@dataclass(frozen=True)
class Bookend(Check):
    """The reply opens (``start``) or closes (``end``) with a given phrase, e.g. a quoted sign-off."""

    phrase: str
    where: Literal["start", "end"] = "end"

    def evaluate(self, view: View) -> Finding:
        lines = [ln for ln in view.reply.strip().splitlines() if ln.strip()]
        if not lines:
            return Finding("not_applicable", "empty reply", topic="sign-off")
        part = lines[-3:] if self.where == "end" else lines[:2]
        if self.where == "start" and lines and re.match(r"\s*subject\s*:", lines[0], re.I):
            part = lines[1:3]
        seg = _norm(" ".join(part))
        want = _norm(self.phrase)
        if re.sub(r"\b(first name|name|x|y)\b", "", want).strip() != want:
            want = re.sub(r"\s*\b(first name|name|x|y)\b.*$", "", want).strip()
        if want and seg.startswith(want) if self.where == "start" else want in seg:
            return Finding("satisfied", f"it {'opens' if self.where == 'start' else 'closes'} as asked",
                           topic="sign-off")
        what = "sign-off" if self.where == "end" else "opening"
        return Finding("violated", f"the {what} is not \u201c{self.phrase}\u201d",
                       f"use \u201c{self.phrase}\u201d as the {what}", what)

    def describe(self) -> str:
        return f"{self.where}s with {self.phrase!r}"


_EMAILISH = re.compile(r"^\s*(hi|hello|dear|hey)\b[^\n]{0,40},?\s*$|^\s*(best|regards|kind regards|cheers|thanks|"
                       r"sincerely|best wishes)\b[^\n]{0,30}$|\bemail\b", re.I | re.M)


@dataclass(frozen=True)
class SubjectLine(Check):
    """An email draft starts with a ``Subject:`` line."""

    def evaluate(self, view: View) -> Finding:
        if not (_EMAILISH.search(view.reply) or re.search(r"\b(e-?mail|reply to|write to|message to|answer a "
                                                          r"customer|respond to)\b", view.task, re.I)):
            return Finding("not_applicable", "the reply is not an email", topic="subject line")
        if re.search(r"^\s*(\*\*)?(subject|subj|re)\s*(\*\*)?\s*:", view.reply, re.I | re.M):
            return Finding("satisfied", "there is a subject line", topic="subject line")
        return Finding("violated", "the email has no subject line", "add a subject line", "subject line")

    def describe(self) -> str:
        return "email has a subject line"


# -- spelling ------------------------------------------------------------------------------------
_US_UK = (("color", "colour"), ("honor", "honour"), ("favor", "favour"), ("labor", "labour"),
          ("neighbor", "neighbour"), ("behavior", "behaviour"), ("humor", "humour"), ("flavor", "flavour"),
          ("rumor", "rumour"), ("harbor", "harbour"), ("center", "centre"), ("theater", "theatre"),
          ("meter", "metre"), ("liter", "litre"), ("fiber", "fibre"), ("catalog", "catalogue"),
          ("dialog", "dialogue"), ("defense", "defence"), ("offense", "offence"), ("license", "licence"),
          ("gray", "grey"), ("traveler", "traveller"), ("traveled", "travelled"), ("traveling", "travelling"),
          ("canceled", "cancelled"), ("modeling", "modelling"), ("jewelry", "jewellery"),
          ("program", "programme"), ("aluminum", "aluminium"), ("mom", "mum"), ("pajamas", "pyjamas"),
          ("tire", "tyre"), ("check", "cheque"), ("aging", "ageing"), ("analog", "analogue"))
_IZE_SAFE = frozenset("size prize seize capsize baize maize citize".split())


def _spelling_hits(text: str, variant: str) -> list[str]:
    """Words in ``text`` spelled the other way from ``variant`` ('british' or 'american')."""
    low = tx.prose(text).lower()
    words = re.findall(r"[a-z]+", low)
    hits = []
    pairs = [(us, uk) for us, uk in _US_UK if us not in ("program", "check", "tire", "mom", "meter")] \
        if variant == "british" else [(us, uk) for us, uk in _US_UK if uk not in ("programme", "cheque", "tyre")]
    wrong = {us if variant == "british" else uk for us, uk in pairs}
    for w in words:
        base = re.sub(r"(s|ed|ing|ful|ite|ites|ed|er|ers)$", "", w)
        if w in wrong or base in wrong:
            hits.append(w)
            continue
        if variant == "british" and re.match(r"^[a-z]{3,}(iz|yz)(e|es|ed|ing|ation|ations|er|ers)$", w) and \
                re.sub(r"(iz|yz).*$", "ize", w) not in _IZE_SAFE and not w.startswith(("citiz", "siz")):
            hits.append(w)
        if variant == "american" and re.match(r"^[a-z]{3,}(is|ys)(e|es|ed|ing|ation|ations)$", w) and \
                re.sub(r"(is|ys)(e|es|ed|ing|ation|ations)$", "", w) in _ISE_STEMS:
            hits.append(w)
    return hits


_ISE_STEMS = frozenset("organ real recogn apolog special emphas summar optim minim maxim standard priorit "
                       "categor util critic anal paral final author civil global local modern normal person "
                       "custom memor visual familiar".split())


@dataclass(frozen=True)
class Spelling(Check):
    """Words follow one spelling variant ('british' or 'american')."""

    variant: str

    def evaluate(self, view: View) -> Finding:
        hits = _spelling_hits(view.reply, self.variant)
        if hits:
            return Finding("violated", f"\u201c{hits[0]}\u201d is not {self.variant.title()} spelling",
                           f"stick to {self.variant.title()} spelling", "spelling")
        if len(tx.words(view.prose)) < 5:
            return Finding("not_applicable", "too little prose to judge spelling", topic="spelling")
        return Finding("satisfied", f"no non-{self.variant} spellings found", topic="spelling")

    def describe(self) -> str:
        return f"{self.variant} spelling"


# -- "do A before B" ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Prerequisite(Check):
    """When the reply reports doing B, it must also report doing A (e.g. backing up before editing)."""

    label: str
    trigger: tuple[str, ...]
    evidence: tuple[str, ...]

    def evaluate(self, view: View) -> Finding:
        text = view.reply
        hit = next((m for rx in self.trigger for m in [re.search(rx, text, re.I)] if m and not
                    tx.negated_at(text, m.start(), 4) and not tx.is_question(_sentence_at(text, m.start()))), None)
        if hit is None:
            return Finding("not_applicable", f"nothing here calls for {self.label}", topic=self.label)
        if any(re.search(rx, text, re.I) for rx in self.evidence) or \
                any(re.search(rx, p, re.I) for p in (view.artifacts or {}) for rx in self.evidence):
            return Finding("satisfied", f"the reply shows {self.label}", topic=self.label)
        return Finding("violated", f"no sign of {self.label} (\u201c{_sentence_at(text, hit.start())[:80]}\u201d)",
                       f"do {self.label} first", self.label)

    def describe(self) -> str:
        return f"prerequisite: {self.label}"


def _sentence_at(text: str, pos: int) -> str:
    start = max(text.rfind(". ", 0, pos), text.rfind("\n", 0, pos)) + 1
    end_c = [i for i in (text.find(". ", pos), text.find("\n", pos)) if i >= 0]
    return text[start: min(end_c) if end_c else len(text)].strip()


@dataclass(frozen=True)
class Sections(Check):
    """The reply has the named sections, each as a heading (markdown, bold or a ``Name:`` line)."""

    names: tuple[str, ...]

    def evaluate(self, view: View) -> Finding:
        missing = []
        for n in self.names:
            rx = (rf"^\s*(?:#+\s*|\*\*|__)?\s*{re.escape(n)}\s*(?:\*\*|__)?\s*:?\s*(?:\*\*)?\s*$|"
                  rf"^\s*(?:\*\*|__)?{re.escape(n)}(?:\*\*|__)?\s*:")
            if not re.search(rx, view.reply, re.I | re.M):
                missing.append(n)
        if not missing:
            return Finding("satisfied", "all the named sections are there", topic="sections")
        return Finding("violated", f"no {missing[0]} section", f"use the sections {', '.join(self.names)}",
                       "sections")

    def describe(self) -> str:
        return f"sections {', '.join(self.names)}"


_EMPH_RX = (r"\*\*[^*\n]+\*\*", r"(?<![\w*])__[^_\n]+__(?!\w)", r"(?<![\w*])\*(?!\s)[^*\n]+(?<!\s)\*(?![\w*])",
            r"(?<![\w_])_(?!\s)[^_\n]+(?<!\s)_(?![\w_])", r"</?(b|strong|i|em)>")


@dataclass(frozen=True)
class Advice(Check):
    """The reply must not tell the user to take an action (e.g. buy or sell)."""

    verbs: tuple[str, ...]

    def evaluate(self, view: View) -> Finding:
        v = "|".join(re.escape(x) for x in self.verbs)
        rxs = (rf"\b(you should|you could|you might want to|you ought to|i'?d|i would|i recommend|i suggest|i advise|"
               rf"consider|it'?s worth|worth|time to|go ahead and|my advice is to|recommend(ed)?|good time to)\s+"
               rf"(\w+\s+){{0,2}}?({v})(ing)?\b", rf"(^|[.!?]\s+)({v})\b(?!\w)[^.\n]{{0,40}}(now|today|it|them|before)",
               rf"\b(strong |a )({v})\b( rating| signal| recommendation)?")
        for rx in rxs:
            for m in re.finditer(rx, view.reply, re.I | re.M):
                if not tx.negated_at(view.reply, m.start() + 1, 4):
                    return Finding("violated", f"it tells you to {m.group(0).strip()[:50]}",
                                   "leave the decision to me", "advice")
        return Finding("satisfied", "no advice to act", topic="advice")

    def describe(self) -> str:
        return f"no advice to {'/'.join(self.verbs)}"


@dataclass(frozen=True)
class NoEmphasis(Check):
    """No bold or italic markup in the reply."""

    def evaluate(self, view: View) -> Finding:
        text = tx.prose(view.reply)
        for rx in _EMPH_RX:
            m = re.search(rx, text)
            if m:
                return Finding("violated", f"\u201c{m.group(0)[:40]}\u201d is emphasised", "drop the bold/italics",
                               "emphasis")
        return Finding("satisfied", "no bold or italics", topic="emphasis")

    def describe(self) -> str:
        return "no bold/italics"


# -- recogniser --------------------------------------------------------------------------------
_NEG = r"(?:never|don't|do not|no|avoid|stop|without|not)"


def _quoted(text: str) -> list[str]:
    t = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")
    out = re.findall(r'"([^"\n]{1,80})"', t)
    out += re.findall(r"(?:(?<=[\s(])|^)'([^'\n]{1,80}?)'(?=[\s,.)!?;:]|$)", t)
    return [o.strip(" .") for o in out if o.strip(" .")]


def _number(word: str) -> int | None:
    w = word.lower()
    if w.isdigit():
        return int(w)
    return _NUM_WORDS.get(w)


_PREREQ = (
    (r"\bback(ing)?[- ]?up\b|\bbackups?\b|\bcopy of\b",
     (r"\b(edit|edited|changed|modified|updated|fixed|added|rewrote|patched|tweaked)\b[^.\n]{0,60}"
      r"(\bconfig\w*|\.conf\b|\.cfg\b|\.ya?ml\b|\.ini\b|\.toml\b|/etc/)",
      r"(\bconfig\w*|\.conf\b|\.cfg\b|\.ya?ml\b|\.ini\b|\.toml\b|/etc/)[^.\n]{0,40}\b(edited|changed|modified|"
      r"updated|fixed|patched|rewritten)\b"),
     (r"\bback(ed)?[- ]?up\b", r"\bbackups?\b", r"\.(bak|orig|backup|old)\b", r"\bcop(y|ied)\b[^.\n]{0,40}\b(to|as)\b",
      r"\bsnapshot"), "a backup"),
    (r"\bterraform plan\b|\bplan\b[^.]{0,30}\bbefore\b[^.]{0,20}\bapply",
     (r"\bterraform apply\b", r"\bapplied\b[^.\n]{0,40}\b(terraform|plan|change)"),
     (r"\bterraform plan\b", r"\bPlan: \d", r"\bran the plan\b", r"\bplan (output|shows|says)\b"), "the plan first"),
    (r"\bdry[- ]run\b",
     (r"\b(ran|executed|applied|ran the)\b",),
     (r"\bdry[- ]run\b", r"--dry-run\b", r"--check\b", r"\bwhat-if\b"), "a dry run first"),
)


def recognise(text: str) -> tuple[list[Check], set[str]]:
    """Checks for the kinds in this module found in a preference text, and labels they supersede."""
    low = text.lower().replace("\u2019", "'")
    out: list[Check] = []
    drop: set[str] = set()
    # language of the reply
    m = re.search(r"\b(?:answer|reply|respond|write|speak|talk|communicate|responses?|replies|answers?)\b[^.;]{0,25}"
                  r"\bin\s+(" + "|".join(list(_LANG_SETS) + list(_LANG_ALIASES)) + r")\b", low) or \
        re.search(r"\b(" + "|".join(_LANG_SETS) + r")\s+only\b", low)
    if m:
        lang = _LANG_ALIASES.get(m.group(1), m.group(1))
        out.append(Language(lang))
    # date format
    if re.search(r"\bdates?\b", low):
        if re.search(r"\biso\b|yyyy-mm-dd|\d{4}-\d{2}-\d{2}", low):
            out.append(DateFormat("iso", "YYYY-MM-DD"))
        elif re.search(r"\b(dd|mm)[./](mm|dd)[./]yy(yy)?\b", low):
            out.append(DateFormat("numeric", "DD/MM/YYYY"))
        elif re.search(r"\b(month (names?|spelled|written)|spell(ed)? out the month|written[- ]out month)", low):
            out.append(DateFormat("month_name", "day month year"))
    # decimal places
    m = re.search(r"\b(\d|one|two|three|four|a single|single)\s+(?:decimal(?: places?| points?| digits?)?|dp|"
                  r"digits? after the (?:decimal )?point|significant decimals?)\b", low)
    if m and re.search(r"\b(round|decimal|dp|digits?|precision|no more than|at most|max)\b", low):
        n = _number(m.group(1))
        if n is not None:
            out.append(Decimals(n))
    # random seeds
    if re.search(r"\b(random )?seeds?\b|\brandom_state\b|\breproducib", low) and \
            re.search(r"\b(seed|random_state)\b", low) and not re.search(rf"\b{_NEG}\b[^.]{{0,15}}\bseed", low):
        out.append(SeedCode())
    # uncertainty beside estimates
    if re.search(r"\b(confidence intervals?|standard errors?|error bars?|margins? of error|uncertainty|"
                 r"credible intervals?|\bcis?\b)", low) and not re.search(rf"\b{_NEG}\b[^.]{{0,12}}\b(confidence|"
                                                                        r"standard|error|uncertaint)", low):
        out.append(Uncertainty())
        drop.add("a confidence estimate")
    # units
    if re.search(r"\bunits?\b", low) and re.search(r"\b(state|give|include|always|report|with|label|show|mention|"
                                                    r"add|need|every|each)\b", low) and \
            not re.search(r"\bunit tests?\b|\bunits? of work\b|\bsi units? only\b|\binstead of\b|\bnot\b", low):
        out.append(Units())
    # secrets
    if re.search(r"\b(secrets?|tokens?|api[ -]?keys?|passwords?|credentials?|private keys?)\b", low) and \
            re.search(rf"\b{_NEG}\b|\bredact|\bmask|\bkeep\b[^.]{{0,20}}\bout of\b", low) and \
            re.search(r"\b(print|show|echo|paste|output|display|log|reveal|expose|include|put|write|leak|share|"
                      r"redact|mask)\w*", low):
        out.append(SecretLeak())
    # fenced commands
    if re.search(r"\b(shell |terminal |cli |bash |console )?commands?\b", low) and \
            re.search(r"\b(code ?blocks?|fenced|fences|```|triple backticks)\b", low) and \
            not re.search(rf"\b{_NEG}\b[^.]{{0,20}}\b(code ?blocks?|fenced)", low):
        out.append(FencedCommands())
        drop.add("*requireterms*")
    # sign-off / opening with a quoted phrase
    q = _quoted(text)
    if q and not re.search(rf"\b{_NEG}\b[^.]{{0,20}}\b(sign|end|close|finish|conclude|start|open|begin|greet)", low):
        if re.search(r"\b(sign(ed)?[- ]off|end|close|finish|conclude)\w*\b[^.]{0,40}\bwith\b", low) or \
                re.search(r"\bsign[- ]?off\b", low):
            out.append(Bookend(q[-1], "end"))
            drop.add("*domain*")
        elif re.search(r"\b(start|open|begin|greet)\w*\b[^.]{0,40}\bwith\b", low):
            out.append(Bookend(q[0], "start"))
            drop.add("*domain*")
    # subject line
    if re.search(r"\bsubject(?: lines?)?\b", low) and re.search(r"\b(include|add|always|need|must|should|with|"
                                                                r"put|give|write)\b", low) and \
            not re.search(rf"\b{_NEG}\b[^.]{{0,15}}\bsubject", low):
        out.append(SubjectLine())
        drop.add("*requireterms*")
    # spelling variant
    m = re.search(r"\b(british|uk|commonwealth|american|us)\s+(english\s+)?spelling", low) or \
        re.search(r"\bspell\w*\b[^.]{0,30}\b(british|uk|american|us)\b", low) or \
        re.search(r"\b(british|american) english\b", low)
    if m:
        out.append(Spelling("british" if m.group(1) in ("british", "uk", "commonwealth") else "american"))
        drop.add("*domain*")
    # quoted words or phrases to avoid
    if q and re.search(r"\b(never|don't|do not|avoid|stop|ban|no)\b[^.]{0,30}\b(use|say|write|words?|phrases?|"
                       r"expressions?|terms?)\b|\b(words?|phrases?|expressions?|terms?)\b[^.]{0,40}\b(banned|"
                       r"forbidden|off[- ]limits|not allowed)", low) and not any(isinstance(c, Bookend) for c in out):
        pats = tuple(r"(?<!\w)" + re.escape(x).replace(r"\ ", r"\s+").replace("'", "['\u2019]") + r"\w{0,3}(?!\w)"
                     for x in q)
        out.append(Forbid("the words you asked me to avoid", Matcher((), pats), task_override=False,
                          ask="drop the words I asked you to avoid"))
        drop.add("*quoted*")
    # named sections
    m = re.search(r"\b(?:headings?|sections?|headers?|parts?)\s*(?:called|named|titled|:)?\s+((?:[\"'\u201c]?[A-Z][\w ]{1,25}"
                  r"[\"'\u201d]?\s*(?:,|and|&)\s*)+(?:and\s+|&\s+)?[\"'\u201c]?[A-Z][\w ]{1,25}[\"'\u201d]?)",
                  text.replace("\u2019", "'"))
    if m:
        names = [n.strip(" \"'\u201c\u201d.") for n in re.split(r"\s*,\s*(?:and\s+|&\s+)?|\s+and\s+|\s*&\s*",
                                                                m.group(1))]
        names = [n for n in names if n]
        if len(names) >= 2:
            out.append(Sections(tuple(names)))
            drop.add("*headings*")
    # bold / italics
    if re.search(r"\b(bold|italics?|italici[sz]\w*|emphasis|asterisks)\b", low) and \
            re.search(rf"\b{_NEG}\b[^.]{{0,25}}\b(bold|italics?|emphasis|asterisks)", low):
        out.append(NoEmphasis())
        drop.update({"*forbid:bold*", "*forbid:italics*", "*forbid:italic*", "*forbid:emphasis*"})
    # advice to act
    m = re.search(r"\b(?:don't|do not|never|no)\s+(?:ever\s+)?(?:tell|advise|recommend|suggest|urge|push)\w*\s+"
                  r"(?:me\s+|us\s+)?(?:to\s+|that i\s+)?(?P<v>buy|sell|invest|purchase|trade|short|hold|sign|quit|"
                  r"switch|move|cancel)(?:\s+(?:or|and|/)\s+(?P<v2>buy|sell|invest|purchase|trade|short|hold|"
                  r"sign|quit|switch|move|cancel))?\b", low)
    if m:
        out.append(Advice(tuple(x for x in (m.group("v"), m.group("v2")) if x)))
    # do A before B
    if re.search(r"\bbefore\b|\bfirst\b", low):
        for cue, trig, ev, lab in _PREREQ:
            if re.search(cue, low):
                out.append(Prerequisite(lab, trig, ev))
                drop.add("*actions*")
                break
    # overnight flights: departure clock times
    if re.search(r"\bred[- ]?eyes?\b|\bovernight flights?\b|\bnight flights?\b", low):
        out.append(Forbid("overnight flights", Matcher((("red", "eye"),), (
            r"\bred-?eyes?\b", r"\bovernight flights?\b", r"\bnight flights?\b",
            r"\bdepart\w*\s+(?:\w+\s+){0,2}?(?:at\s+)?(?:2[2-3]|0?[0-4])[:.h]\d\d\b",
            r"\bdepart\w*\s+(?:\w+\s+){0,2}?(?:at\s+)?(?:1[01](?:[:.]\d\d)?\s?p\.?m|12(?:[:.]\d\d)?\s?a\.?m|"
            r"[1-4](?:[:.]\d\d)?\s?a\.?m)\b")), task_override=True, ask="find a daytime flight"))
    # javadoc-style comments on exported functions
    if re.search(r"\b(jsdoc|tsdoc|doc ?comments?|documentation comments?)\b", low) and \
            not re.search(rf"\b{_NEG}\b[^.]{{0,12}}\b(jsdoc|tsdoc|doc)", low):
        out.append(DocComments())
    return out, drop
