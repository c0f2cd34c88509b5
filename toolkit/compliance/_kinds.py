"""More preference kinds the offline interpreter recognises, each a small check with its own detector.

Kinds: reply language, date format, decimal places, random seeds in sampling code, uncertainty
beside estimates, units beside quantities, leaked secrets, shell commands outside fenced blocks,
a quoted sign-off or opening, an email subject line, British/American spelling, quoted words or
phrases to avoid, and "do A before B" workflows. When a kind is recognised in a preference text
is data (its kind file's ``recognise`` triggers or cue rules of stage ``kinds``; parameters are read
by the builders of :mod:`toolkit.compliance._kind_builders`); every detector stays silent
(``not_applicable``) when the delivery gives it nothing to judge.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from toolkit import text as tx
from toolkit.compliance._catalogue_data import MONTHS as _MONTHS
from toolkit.compliance._checks import (
    Check,
    Finding,
    View,
)

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


def language_names() -> tuple[list[str], list[str]]:
    """The languages the reader can detect, and the aliases a rule may name them by."""
    return list(_LANG_SETS), list(_LANG_ALIASES)
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
_DATE_STYLES = {
    "iso": r"\b\d{4}-\d{2}-\d{2}\b",
    "numeric": r"\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b",
    "dmy": rf"\b\d{{1,2}}(?:st|nd|rd|th)?\.?\s+(?:de\s+)?(?:{_MONTHS})\.?,?\s+(?:de\s+)?\d{{4}}\b",
    "mdy": rf"\b(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}}\b|\b(?!:))",
}


@dataclass(frozen=True)
class DateFormat(Check):
    """Dates in the reply must be written in one style (``iso``, ``numeric`` or ``month_name``)."""

    style: str
    label: str = "dates"

    def evaluate(self, view: View) -> Finding:
        text = tx.prose(view.reply) if self.style != "iso" else view.reply
        found: dict[str, list[re.Match]] = {k: list(re.finditer(rx, text, re.I)) for k, rx in _DATE_STYLES.items()}
        ok_styles = ("dmy", "mdy") if self.style == "month_name" else (self.style,)
        other = [m for k, ms in found.items() if k not in ok_styles for m in ms
                 if not any(m.start() < o.end() and o.start() < m.end() for st in ok_styles for o in found[st])]
        if other:
            m = other[0]
            return Finding("violated", f"the date \u201c{m.group(0)}\u201d is not written as {self.label}",
                           f"write dates as {self.label}", "date format")
        if any(found[st] for st in ok_styles):
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
    percent_only: bool = False

    def evaluate(self, view: View) -> Finding:
        text = tx.prose(view.reply)
        nums = [m for m in _NUMBER_RX.finditer(text)
                if not self.percent_only or re.match(r"\s?(%|percent|per cent|pp\b|percentage)", text[m.end():])]
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
        est = [sent for sent in re.split(r"(?<=[.!?])\s+|\n", text)
               if re.search(r"\d\s?%|(?<![vV.])(?<!version )(?<!release )\b\d+\.\d+(?!\.\d)", sent) and
               re.search(r"%|\b(average|mean|median|rate|estimate[sd]?|effect|difference|share|growth|conversion|"
                         r"correlation|probability|proportion|ratio|odds|lift|uplift|increase[sd]?|decrease[sd]?|"
                         r"rose|fell|dropped|gained|accuracy|score|coefficient|slope|elasticity|weight|time|"
                         r"promedio|media|tasa)\b", sent, re.I)]
        if not est:
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
_TRAINING = re.compile(r"\bfor\s+epoch\b|\.backward\(\)|\boptimi[sz]er\.step\(|\btrain_epoch\(|\.fit\(", re.I)
_SEEDED = re.compile(r"\b(seed|random_state|random_seed|rng_seed)\s*=\s*\w|\.seed\(\s*\w|manual_seed\(\s*\w|"
                     r"default_rng\(\s*\w|set\.seed\(\s*\w|RandomState\(\s*\w", re.I)


@dataclass(frozen=True)
class SeedCode(Check):
    """Code that samples, shuffles or splits at random (or trains a model, if asked) fixes a seed."""

    training: bool = False

    def evaluate(self, view: View) -> Finding:
        code = view.code
        m = _RANDOM_CALL.search(code) or (_TRAINING.search(code) if self.training else None)
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
              r"\b\w*(password|passwd|secret|token|api[_-]?key)\w*\s*[=:]\s*(?:['\"](?!\*{3}|\$\{|\$[A-Z_(]|<|your|xxx|changeme)"
              r"[^\s'\"]{6,}['\"]|(?!\$|<|your|xxx)(?=[^\s'\"]*\d)(?=[^\s'\"]*[A-Za-z])[^\s'\";,)]{12,})",
              r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
              r"(?<![\w/.])(?=[A-Za-z0-9_\-]{28,}\b)(?=[^\s]*\d)(?=[^\s]*[a-z])(?=[^\s]*[A-Z])[A-Za-z0-9_\-]{28,}")


@dataclass(frozen=True)
class SecretLeak(Check):
    """The reply must not show a credential (token, key, password value)."""

    in_code: bool = False  # also look in the code the agent wrote ("never hardcode keys in settings")

    def evaluate(self, view: View) -> Finding:
        text = view.reply + ("\n" + "\n".join(b for _, b in sorted((view.artifacts or {}).items())) + "\n" + view.code
                             if self.in_code else "")
        for rx in _SECRET_RX:
            m = re.search(rx, text, re.I if not rx.startswith("(?<!") else 0)
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
_CMD_AFTER_VERB = re.compile(rf"\b(?:run|type|execute|enter)[:\s]+`?(?:sudo\s+)?(?:{_CLI})\s+(?!(?:to|for|and|or|the|a|"
                             rf"an|in|on|with|is|was|again|first|now|then|it|that|this|locally)\b)[-\w./:@=\"']+", re.I)
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
        letter = _EMAILISH.search(view.reply + "\n" + view.documents) or re.search(
            r"\b(e-?mail|letter|message|reply to|respond to|write to|note to|dm|slack|text to|card|memo|newsletter)\b",
            view.task, re.I)
        greeting = self.where == "end" or re.match(r"\s*(hi|hello|dear|hey|good (morning|afternoon))\b", self.phrase, re.I)
        if greeting and not letter:
            return Finding("not_applicable", "not a letter or message", topic="sign-off")
        if view.documents and re.search(r"\b(saved|wrote|written|put|stored|drafted)\b", view.reply, re.I):
            inner = View(view.task, view.documents, None)  # the piece is in the saved file, the reply is a cover note
            return Bookend(self.phrase, self.where).evaluate(inner)
        lines = [ln for ln in view.reply.strip().splitlines() if ln.strip()]
        if not lines:
            return Finding("not_applicable", "empty reply", topic="sign-off")
        if re.search(r"\b(?:haven't|have not|didn't|did not|won't|will not)\s+(?:yet\s+)?(?:drafted|written|sent|draft|write|"
                     r"send)\b", view.reply, re.I):
            return Finding("not_applicable", "no draft in this delivery", topic="sign-off")
        part = lines[-3:] if self.where == "end" else lines[:2]
        if self.where == "start" and lines and re.match(r"\s*subject\s*:", lines[0], re.I):
            part = lines[1:3]
        seg = _norm(" ".join(part))
        want = _norm(self.phrase)
        if re.sub(r"\b(first name|name|x|y)\b", "", want).strip() != want:
            want = re.sub(r"\s*\b(first name|name|x|y)\b.*$", "", want).strip()
        # a template slot ("ticket #NNNNN", "<name>", "[date]") matches anything: compare what comes before it
        want = re.sub(r"\s*\b(?:n{3,}|x{3,}|\d{0}#+)\b.*$|\s*[<\[{][^>\]}]*[>\]}].*$", "", want).strip() or want
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
    body = re.sub(r"[\"\u201c][^\"\u201d\n]{0,80}[\"\u201d]|(?<!\w)['\u2018][^'\u2019\n]{0,60}['\u2019](?!\w)", " ",
                  tx.prose(text))
    body = re.sub(r"(?<=[a-z,;] )[A-Z][a-z]+(?:\s+(?:for|of)\s+[A-Z][a-z]+)?", " ", body)
    low = body.lower()
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
)
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


_DIST_RX = re.compile(r"(\d+(?:[.,]\d+)?)\s*(km|kilometres?|kilometers?|mi|miles?|m|metres?|meters?)\b", re.I)
_TO_KM = {"km": 1.0, "kilometre": 1.0, "kilometer": 1.0, "mi": 1.609, "mile": 1.609, "m": 0.001, "metre": 0.001,
          "meter": 0.001}


@dataclass(frozen=True)
class DistanceCap(Check):
    """Distances covered on foot (or by the named means) stay under a cap, in kilometres."""

    cap_km: float
    means: str = r"walk\w*|on foot|stroll\w*|hike|hiking"

    def evaluate(self, view: View) -> Finding:
        seen = False
        for sent in view.sentences or [view.reply]:
            if not re.search(rf"\b({self.means})\b", sent, re.I):
                continue
            for m in _DIST_RX.finditer(sent):
                unit = m.group(2).lower().rstrip("s")
                km = float(m.group(1).replace(",", ".")) * _TO_KM.get(unit, 1.0)
                seen = True
                if km > self.cap_km + 1e-9:
                    return Finding("violated", f"\u201c{m.group(0)}\u201d on foot is over {self.cap_km:g} km",
                                   f"keep walks under {self.cap_km:g} km", "walking distance")
        if seen:
            return Finding("satisfied", "walks stay within the limit", topic="walking distance")
        return Finding("not_applicable", "no walking distances given", topic="walking distance")

    def describe(self) -> str:
        return f"walks at most {self.cap_km:g} km"


@dataclass(frozen=True)
class FenceLanguage(Check):
    """Fenced code blocks carry a language tag."""

    def evaluate(self, view: View) -> Finding:
        fences = re.findall(r"^\s*```([^\n`]*)$", view.reply, re.M)
        opens = fences[0::2]
        if not opens:
            return Finding("not_applicable", "no code blocks", topic="code blocks")
        if any(not o.strip() for o in opens):
            return Finding("violated", "a code block has no language tag", "tag each code block with its language",
                           "code blocks")
        return Finding("satisfied", "code blocks are tagged", topic="code blocks")

    def describe(self) -> str:
        return "code blocks with a language tag"


@dataclass(frozen=True)
class SqlCase(Check):
    """SQL keywords in the delivered queries are upper (or lower) case."""

    upper: bool = True

    def evaluate(self, view: View) -> Finding:
        blocks = [b for b in tx.code_blocks(view.reply) if re.search(r"\bselect\b[\s\S]+\bfrom\b", b, re.I)]
        blocks += [b for p, b in sorted((view.artifacts or {}).items()) if p.endswith(".sql")]
        if not blocks:
            return Finding("not_applicable", "no SQL in the delivery", topic="SQL case")
        core = r"\b(select|from|where|group by|order by|join|having|insert into|values|delete from|create table)\b"
        for b in blocks:
            body = re.sub(r"'[^']*'|--[^\n]*", " ", b)
            for m in re.finditer(core, body, re.I):
                w = m.group(0)
                if (self.upper and w != w.upper()) or (not self.upper and w != w.lower()):
                    return Finding("violated", f"\u201c{w}\u201d is not {'upper' if self.upper else 'lower'} case",
                                   f"write SQL keywords in {'upper' if self.upper else 'lower'} case", "SQL case")
        return Finding("satisfied", "SQL keywords follow the case", topic="SQL case")

    def describe(self) -> str:
        return f"SQL keywords {'upper' if self.upper else 'lower'} case"


_SMALL_WORDS = frozenset("a an the and or but of to in on at for with by from as vs via into over per".split())


@dataclass(frozen=True)
class TitleCase(Check):
    """Titles/headings use sentence case (``sentence``) or title case (``title``)."""

    style: str = "sentence"

    def evaluate(self, view: View) -> Finding:
        titles = [m.group(1) for m in re.finditer(r"^\s*#{1,6}\s+(.+)$", view.reply, re.M)]
        lines = [ln.strip().strip('"*\u201c\u201d') for ln in view.reply.strip().splitlines() if ln.strip()]
        if not titles and len(lines) == 1 and len(lines[0].split()) <= 12 and not lines[0].endswith((".", "?", "!")) \
                and re.search(r"\b(title|heading|headline|name)\b", view.task, re.I):
            titles = lines
        if not titles:
            return Finding("not_applicable", "no titles or headings", topic="title case")
        for t in titles:
            ws = [w for w in re.findall(r"[A-Za-z][\w'-]*", t)][1:]
            ws = [w for w in ws if w.lower() not in _SMALL_WORDS and not (w.isupper() and len(w) > 1)]
            if len(ws) < 1:
                continue
            caps = sum(w[0].isupper() for w in ws)
            if self.style == "sentence" and caps >= max(1, (len(ws) + 1) // 2) and len(ws) >= 1 and caps == len(ws):
                return Finding("violated", f"\u201c{t}\u201d is in title case", "use sentence case for titles",
                               "title case")
            if self.style == "title" and caps < len(ws):
                return Finding("violated", f"\u201c{t}\u201d is not in title case", "use title case for titles",
                               "title case")
        return Finding("satisfied", f"titles are in {self.style} case", topic="title case")

    def describe(self) -> str:
        return f"titles in {self.style} case"


_AMENITIES = ("pool", "rooftop pool", "gym", "fitness", "spa", "sauna", "wi-fi", "wifi", "free breakfast",
              "breakfast included", "kids' club", "kids club", "parking", "24-hour reception", "air conditioning",
              "minibar", "room service", "concierge", "jacuzzi", "hot tub", "laundry", "balcony", "terrace")


_COMMIT_MSG_RX = (r"commit(?:ted)?(?: message)?(?: as| with(?: message)?| is|:)?\s*[:\-]?\s*[\"\u201c`']([^\"\u201d`'\n]{3,200})",
                  r"git commit[^\n]*?-m\s+[\"']([^\"'\n]+)")


@dataclass(frozen=True)
class CommitSubjectLength(Check):
    """The commit subject line (first line) is at most ``n`` characters."""

    n: int

    def evaluate(self, view: View) -> Finding:
        msgs = [m.group(1).strip() for rx in _COMMIT_MSG_RX for m in re.finditer(rx, view.reply, re.I)]
        msgs += [b.strip().splitlines()[0] for p, b in sorted((view.artifacts or {}).items())
                 if p.endswith("COMMIT_EDITMSG") and b.strip()]
        if not msgs:
            return Finding("not_applicable", "no commit message in this delivery", topic="commit message")
        for msg in msgs:
            first = msg.splitlines()[0]
            if len(first) > self.n:
                return Finding("violated", f"the commit subject is {len(first)} characters",
                               f"keep the commit subject under {self.n} characters", "commit message")
        return Finding("satisfied", "commit subject is short enough", topic="commit message")

    def describe(self) -> str:
        return f"commit subject at most {self.n} chars"


_CONTRACTION_RX = (r"\b\w+n['\u2019]t\b", r"\b(i|you|we|they|he|she|it|that|there|what|who|let)['\u2019](m|re|s|ve|ll|d)\b")


@dataclass(frozen=True)
class Contractions(Check):
    """No contractions (don't, it's, we're ...) in the reply's prose."""

    def evaluate(self, view: View) -> Finding:
        text = tx.prose(view.reply)
        for rx in _CONTRACTION_RX:
            m = re.search(rx, text, re.I)
            if m:
                return Finding("violated", f"\u201c{m.group(0)}\u201d is a contraction", "write the words out in full",
                               "contractions")
        if len(tx.words(text)) < 5:
            return Finding("not_applicable", "too little prose", topic="contractions")
        return Finding("satisfied", "no contractions", topic="contractions")

    def describe(self) -> str:
        return "no contractions"


_UNIT_WORDS = r"%|percent|km|kg|g|mb|gb|ms|s|h|x|px|pt|cm|mm|m|°|years?|months?|weeks?|days?|hours?|minutes?|seconds?"


@dataclass(frozen=True)
class SpellSmallNumbers(Check):
    """Whole numbers below ``limit`` are written as words in prose (not with units, dates or decimals)."""

    limit: int = 10

    def evaluate(self, view: View) -> Finding:
        text = tx.prose(view.reply)
        for m in re.finditer(r"(?<![\w.,/:\-\u00a3$\u20ac#])(\d+)(?![\w.,/:%\-]|\.\d)", text):
            v = int(m.group(1))
            after = text[m.end(): m.end() + 12].lower()
            if v >= self.limit or re.match(rf"\s*({_UNIT_WORDS})\b", after):
                continue
            if re.search(r"\b(table|figure|fig\.|section|step|version|v|chapter|page|eq\.|equation)\s*$",
                         text[max(0, m.start() - 12): m.start()], re.I):
                continue
            return Finding("violated", f"\u201c{m.group(0)}\u201d should be spelled out", "spell out small numbers",
                           "numbers")
        return Finding("satisfied", "small numbers are spelled out", topic="numbers")

    def describe(self) -> str:
        return f"numbers below {self.limit} in words"


_CITE_RX = re.compile(r"\(([A-Z][\w'\-]+(?: et al\.?| (?:and|&) [A-Z][\w'\-]+)?)(,?)\s+((?:19|20)\d\d[a-z]?)\)")


@dataclass(frozen=True)
class CitationComma(Check):
    """Parenthetical author-year citations with (``comma``) or without a comma before the year."""

    comma: bool

    def evaluate(self, view: View) -> Finding:
        cites = list(_CITE_RX.finditer(view.reply))
        if not cites:
            return Finding("not_applicable", "no author-year citations", topic="citation style")
        for m in cites:
            if bool(m.group(2)) != self.comma:
                return Finding("violated", f"\u201c{m.group(0)}\u201d has the wrong citation format",
                               "fix the citation format", "citation style")
        return Finding("satisfied", "citations follow the format", topic="citation style")

    def describe(self) -> str:
        return f"citations (Author{',' if self.comma else ''} Year)"


@dataclass(frozen=True)
class WordSwap(Check):
    """A word to use instead of another (e.g. "we" rather than "I"), matched as whole words."""

    use: str
    avoid: str

    def evaluate(self, view: View) -> Finding:
        flags = 0 if len(self.avoid) == 1 and self.avoid.isupper() else re.I
        text = tx.prose(view.reply)
        m = re.search(rf"(?<![\w'\u2019]){re.escape(self.avoid)}(?![\w'\u2019])", text, flags)
        if m and not tx.negated_at(text, m.start(), 2):
            return Finding("violated", f"it says \u201c{self.avoid}\u201d", f"say \u201c{self.use}\u201d instead",
                           "wording")
        return Finding("satisfied", f"no \u201c{self.avoid}\u201d", topic="wording")

    def describe(self) -> str:
        return f"{self.use!r} not {self.avoid!r}"


@dataclass(frozen=True)
class Substitute(Check):
    """Code uses X rather than Y: violated when Y appears in the code and X does not."""

    use: str
    avoid: str

    def evaluate(self, view: View) -> Finding:
        text = view.code or view.reply
        has = lambda w: re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text, re.I)  # noqa: E731
        if has(self.avoid) and not has(self.use):
            return Finding("violated", f"it uses {self.avoid}", f"use {self.use} instead of {self.avoid}", self.use)
        if has(self.use):
            return Finding("satisfied", f"it uses {self.use}", topic=self.use)
        return Finding("not_applicable", f"neither {self.use} nor {self.avoid} here", topic=self.use)

    def describe(self) -> str:
        return f"{self.use} instead of {self.avoid}"


_PLOT_CALL = re.compile(r"\b(plt|ax\w*|sns|px|fig\w*)\.\w*(plot|bar|hist|scatter|line|box|violin|heatmap|pie|area|"
                        r"imshow|relplot|catplot|displot|lmplot|countplot)\w*\(|\.plot\(")


@dataclass(frozen=True)
class ChartLabels(Check):
    """Plotting code sets axis labels and a title."""

    def evaluate(self, view: View) -> Finding:
        code = view.code
        if not _PLOT_CALL.search(code):
            return Finding("not_applicable", "no plotting code", topic="chart labels")
        missing = [n for n, rx in (("x-axis label", r"xlabel|labels\s*=|x_label|x=\s*['\"].*title"),
                                   ("y-axis label", r"ylabel|labels\s*=|y_label"),
                                   ("title", r"title|suptitle")) if not re.search(rx, code, re.I)]
        if missing:
            return Finding("violated", f"the chart has no {missing[0]}", "label the axes and add a title",
                           "chart labels")
        return Finding("satisfied", "axes labelled and titled", topic="chart labels")

    def describe(self) -> str:
        return "charts with axis labels and title"


@dataclass(frozen=True)
class WrapErrors(Check):
    """Go code wraps returned errors (``fmt.Errorf("...: %w", err)``) instead of returning them bare."""

    def evaluate(self, view: View) -> Finding:
        go = "\n".join(b for p, b in sorted((view.artifacts or {}).items()) if p.endswith(".go"))
        go += "\n".join(b for b in tx.code_blocks(view.reply) if re.search(r"\bfunc\b|:=", b))
        if not re.search(r"\breturn\b[^\n]*\berr\b", go):
            return Finding("not_applicable", "no returned errors in Go code", topic="error wrapping")
        m = re.search(r"^\s*return\s+(?:[\w.&{}\[\]*]+\s*,\s*)*err\s*$", go, re.M)
        if m:
            return Finding("violated", f"\u201c{m.group(0).strip()}\u201d returns the error without context",
                           "wrap errors with fmt.Errorf and %w", "error wrapping")
        return Finding("satisfied", "errors are wrapped", topic="error wrapping")

    def describe(self) -> str:
        return "errors wrapped with context"


_CTA_RX = (r"^(try|start|get|sign up|download|upgrade|buy|join|order|book|visit|subscribe|contact|call|click|shop|tap|"
           r"follow|message|dm|reply|comment|tag|share|save|swipe|pre-?order|ask|email|text|come|drop by|stop by|"
           r"pick up|browse|donate|vote|rsvp|"
           r"grab|claim|register|learn more|find out|discover|see|explore|turn on|switch|install|request|reserve|"
           r"apply|enrol|enroll|give|check out|head to|go to|open|update)\b",
           r"\b(today|now|free trial|sign up|learn more|get started|in the app|link in bio)\b[.!]?\s*$")


@dataclass(frozen=True)
class CallToAction(Check):
    """The reply closes with a call to action (an imperative inviting the reader to act)."""

    def evaluate(self, view: View) -> Finding:
        sents = [x for x in view.sentences if x.strip() and not re.fullmatch(r"(\s*#\w+)+\s*", x)]
        if not sents:
            return Finding("not_applicable", "empty reply", topic="call to action")
        tail = [x.strip().strip('"\u201c\u201d') for x in sents[-2:]]
        if any(re.search(rx, last, re.I) for rx in _CTA_RX for last in tail) or \
                re.search(r"https?://\S+|\b[\w-]+\.(?:com|co|io|org|net|shop|store)(?:/\S*)?", " ".join(tail)):
            return Finding("satisfied", "it ends with a call to action", topic="call to action")
        return Finding("violated", "it ends without a call to action", "close with a call to action",
                       "call to action")

    def describe(self) -> str:
        return "ends with a call to action"


@dataclass(frozen=True)
class MaxMarks(Check):
    """At most ``n`` occurrences of a mark in the prose ("one exclamation mark per piece at most")."""

    label: str
    rx: str
    n: int

    def evaluate(self, view: View) -> Finding:
        k = len(re.findall(self.rx, tx.prose(view.reply)))
        if k > self.n:
            return Finding("violated", f"{k} {self.label} where I allow {self.n}",
                           f"keep it to {self.n} {self.label} at most", self.label)
        return Finding("satisfied", f"{k} {self.label} (limit {self.n})", topic=self.label)

    def describe(self) -> str:
        return f"at most {self.n} {self.label}"


_COUNTED = {"hashtag": ("hashtags", r"(?<![\w&])#[A-Za-z]\w*"), "exclamation": ("exclamation marks", r"(?<![=!<>])!(?!=)"),
            "emoji": ("emoji", tx.EMOJI_RE.pattern), "question": ("question marks", r"\?(?=\s|$)")}


_ACRONYMS = frozenset("HTTP HTTPS JSON HTML NASA ASAP FAQ UTC USD EUR GBP GDPR CEO CTO API APIS SDK URL PDF CSV SQL "
                      "YAML TOML AWS GCP RSVP SaaS UNESCO NATO OPEC FIFA UEFA JPEG HDMI USB WIFI".split())


@dataclass(frozen=True)
class NoShouting(Check):
    """No ordinary words written in ALL CAPS for emphasis (acronyms are fine)."""

    def evaluate(self, view: View) -> Finding:
        for m in re.finditer(r"\b[A-Z]{4,}\b", tx.prose(view.reply)):
            w = m.group(0)
            if w in _ACRONYMS or not re.search(r"[AEIOU]", w) or re.search(rf"\({w}\)|{w}\s*\(", view.reply):
                continue
            return Finding("violated", f"\u201c{w}\u201d is in all caps", "drop the all-caps emphasis", "all caps")
        return Finding("satisfied", "no all-caps words", topic="all caps")

    def describe(self) -> str:
        return "no ALL CAPS emphasis"


@dataclass(frozen=True)
class MinMentions(Check):
    """At least ``n`` lines (rows, items or sentences) of the reply mention ``term``."""

    term: str
    n: int

    def evaluate(self, view: View) -> Finding:
        units = [ln for ln in view.reply.splitlines() if ln.strip()]
        if len(units) <= 2:
            units = view.sentences + [p for s in view.sentences for p in re.split(r",\s*", s)]
        rx = rf"\b{re.escape(self.term)}"
        k = sum(1 for u in units if re.search(rx, u, re.I))
        if len(units) < 3:
            return Finding("not_applicable", "nothing here to count", topic=self.term)
        if k >= self.n:
            return Finding("satisfied", f"{k} mention(s) of {self.term}", topic=self.term)
        return Finding("violated", f"only {k} {self.term} item(s), I want at least {self.n}",
                       f"include at least {self.n} {self.term} items", self.term)

    def describe(self) -> str:
        return f"at least {self.n} x {self.term}"


_IMPERIAL = (r"\b\d+(?:\.\d+)?\s*(?:miles?|mi)\b", r"\bmin(?:utes)?\s*(?:/|per)\s*mi(?:le)?\b", r"\bmph\b",
             r"(?:\b\d+(?:\s+\d/\d)?|\b\d/\d|\u00bd|\u00bc|\u00be)\s*(?:cups?|fl\.? oz|quarts?|gallons?|sticks? of butter)\b",
             r"\b\d+(?:\.\d+)?\s*(?:feet|ft|yards?|yds?|inch(?:es)?)\b", r"\b\d+(?:\.\d+)?\s*(?:lbs?|pounds|oz|ounces)\b",
             r"\d\s?\u00b0\s?F\b")
_METRIC = (r"\b\d+(?:\.\d+)?\s*(?:km|kilomet\w+)\b", r"\bmin(?:utes)?\s*(?:/|per)\s*km\b", r"\bkm/h\b",
           r"\b\d+(?:\.\d+)?\s*(?:m|metres?|meters?|cm|mm|centimet\w+)\b", r"\b\d+(?:\.\d+)?\s*(?:kg|g|grams?|kilograms?)\b",
           r"\d\s?\u00b0\s?C\b")


_WRITE_VERBS = (r"\b(edit(?:ed|ing)?|modif(?:y|ied|ying)|chang(?:e|ed|ing)|updat(?:e|ed|ing)|add(?:ed|ing)?|wr(?:ote|itten|"
                r"iting|ite)|creat(?:e|ed|ing)|generat(?:e|ed|ing)|sav(?:e|ed|ing)|overwr(?:ote|itten|ite)|delet(?:e|ed|ing)|"
                r"remov(?:e|ed|ing)|renam(?:e|ed|ing)|squash(?:ed|ing)?|touch(?:ed|ing)?|rewr(?:ote|itten|ite)|"
                r"patch(?:ed|ing)?|append(?:ed|ing)?|mov(?:e|ed|ing)|put|dropp?(?:ed|ing)?|fix(?:ed|ing)?|bump(?:ed|ing)?|"
                r"regenerat(?:e|ed|ing)|tweak(?:ed|ing)?|replac(?:e|ed|ing)|clean(?:ed|ing)?)\b")
_KEPT = r"\b(alone|untouched|as (?:it|they) (?:is|are|was|were)|unchanged|read-only|didn't|did not|haven't|have not|no changes)\b"


@dataclass(frozen=True)
class ProtectedPath(Check):
    """A folder or file the agent must not change ("leave migrations/ alone", "data/raw/ is read-only")."""

    path: str

    def evaluate(self, view: View) -> Finding:
        p = self.path.lower().rstrip("/")
        rx = (r"(?<![\w-])" + re.escape(p) + (r"/" if self.path.endswith("/") else r"\b")) if "." in p or "/" in p \
            or self.path.endswith("/") else r"\b" + re.escape(p) + r"\b"
        if re.fullmatch(r"\.\w{1,10}", p):
            rx = r"\w" + re.escape(p) + r"\b"  # a file type: any file with that ending
        mentioned = False
        for sent in tx.sentences(view.reply) + [ln for ln in view.reply.splitlines() if ln.strip()]:
            low = sent.lower()
            m = re.search(rx, low)
            if not m:
                continue
            mentioned = True
            verbs = [v for v in re.finditer(_WRITE_VERBS, low) if not tx.negated_at(low, v.start(), 4)]
            if verbs and not re.search(_KEPT, low):
                return Finding("violated", f"you changed {self.path} (\u201c{tx.snippet(sent, m.start(), m.end())}\u201d)",
                               f"leave {self.path} alone", self.path)
        if not mentioned:
            return Finding("not_applicable", f"nothing here touches {self.path}", topic=self.path)
        return Finding("satisfied", f"{self.path} left alone", topic=self.path)

    def describe(self) -> str:
        return f"hands off {self.path}"


@dataclass(frozen=True)
class NotebookOutputs(Check):
    """Saved notebooks carry no cell outputs ("clear outputs before saving an .ipynb")."""

    def evaluate(self, view: View) -> Finding:
        nbs = {p: b for p, b in sorted((view.artifacts or {}).items()) if p.endswith(".ipynb")}
        if not nbs:
            return Finding("not_applicable", "no notebook in the workspace", topic="notebook outputs")
        for path, body in nbs.items():
            try:
                cells = json.loads(body).get("cells", [])
            except (ValueError, AttributeError):
                cells = []
                if re.search(r'"outputs"\s*:\s*\[\s*\{', body):
                    return Finding("violated", f"{path} still has outputs", "clear the notebook outputs",
                                   "notebook outputs")
            if any(c.get("outputs") for c in cells if isinstance(c, dict)):
                return Finding("violated", f"{path} still has outputs", "clear the notebook outputs", "notebook outputs")
        return Finding("satisfied", "notebook outputs are cleared", topic="notebook outputs")

    def describe(self) -> str:
        return "notebooks saved without outputs"


_DUR = re.compile(r"(\d+(?:\.\d+)?)\s*(?:(?:-|\u2013|to)\s*(\d+(?:\.\d+)?)\s*)?(minutes?|mins?|hours?|hrs?|h)\b", re.I)


def _minutes(m: re.Match) -> float:
    v = float(m.group(2) or m.group(1))
    return v * 60 if m.group(3).lower().startswith("h") else v


@dataclass(frozen=True)
class TimeCap(Check):
    """The stated total time stays within a cap ("on the table within 40 minutes, prep included")."""

    minutes: int

    def evaluate(self, view: View) -> Finding:
        text = tx.prose(view.reply) + "\n" + view.documents
        lines = [ln for ln in re.split(r"\n|(?<=[.;])\s+", text) if _DUR.search(ln)]
        if not lines:
            return Finding("not_applicable", "no times given", topic="time")
        total = [_minutes(m) for ln in lines if re.search(r"\b(total|all in|altogether|in all|start to finish|ready in)\b",
                                                            ln, re.I) for m in _DUR.finditer(ln)]
        parts = [max(_minutes(m) for m in _DUR.finditer(ln)) for ln in lines
                 if re.search(r"\b(prep|preparation|cook|cooking|bake|baking|simmer|roast|marinat\w*|rest|chill)\w*\b",
                              ln, re.I)]
        t = max(total) if total else sum(parts) if parts else max(_minutes(m) for ln in lines for m in _DUR.finditer(ln))
        if t > self.minutes:
            return Finding("violated", f"that takes about {t:g} minutes", f"keep it within {self.minutes} minutes",
                           "time")
        return Finding("satisfied", f"about {t:g} minutes (limit {self.minutes})", topic="time")

    def describe(self) -> str:
        return f"done within {self.minutes} minutes"


_LANG_CODE = {"curl": (r"\bcurl\s", r"```(?:bash|sh|shell|console)"), "python": (r"```py", r"\bimport \w+|\brequests\.\w+\(",
                                                                           r"\bdef \w+\("),
              "javascript": (r"```(?:js|javascript|node)", r"\bfetch\(|\bconst \w+ =|\brequire\("),
              "typescript": (r"```(?:ts|typescript)",), "go": (r"```go", r"\bfunc \w+\(|:= "),
              "ruby": (r"```rb|```ruby", r"\bputs\b"), "java": (r"```java", r"\bpublic (?:static )?\w+"),
              "bash": (r"```(?:bash|sh|shell)", r"^\s*\$ "), "sql": (r"```sql", r"\bselect\b[\s\S]+\bfrom\b"),
              "php": (r"```php", r"<\?php"), "c#": (r"```(?:cs|csharp)",)}


def named_languages(text: str) -> tuple[str, ...]:
    """Two or more code languages a preference wants examples in ("a curl command and a Python snippet")."""
    low = text.lower()
    if not re.search(r"\b(examples?|snippets?|samples?|commands?)\b", low):
        return ()
    langs = tuple(k for k in _LANG_CODE if re.search(r"(?<![\w#])" + re.escape(k) + r"(?![\w#])", low))
    return langs if len(langs) >= 2 else ()


@dataclass(frozen=True)
class CodeLanguages(Check):
    """Examples come in each named language (e.g. curl and Python)."""

    langs: tuple[str, ...]

    def evaluate(self, view: View) -> Finding:
        text = view.reply + "\n" + view.documents
        if "```" not in text and not re.search(r"^\s{4}\S", text, re.M):
            return Finding("not_applicable", "no code examples here", topic="examples")
        missing = [k for k in self.langs if not any(re.search(rx, text, re.I | re.M) for rx in _LANG_CODE[k])]
        if missing:
            return Finding("violated", f"no {missing[0]} example", f"add a {missing[0]} example too", "examples")
        return Finding("satisfied", f"examples in {', '.join(self.langs)}", topic="examples")

    def describe(self) -> str:
        return f"examples in {' and '.join(self.langs)}"


@dataclass(frozen=True)
class Servings(Check):
    """Recipes are sized for ``n`` people."""

    n: int

    def evaluate(self, view: View) -> Finding:
        text = view.reply + "\n" + view.documents
        found = [int(x) for m in re.finditer(r"\bserves\s+(\d+)|\bfor\s+(\d+)\s+(?:people|persons|adults)|"
                                             r"\b(\d+)\s+(?:servings|portions)\b|\bserving\s+(\d+)\b", text, re.I)
                 for x in m.groups() if x]
        if not found:
            return Finding("not_applicable", "no serving size given", topic="servings")
        want = self.n
        m = re.search(r"\b(?:just|only) (me|us two)\b|\bfor (\w+)(?: people| persons| of us)?\b(?=[^.?!]{0,30}(?:tonight|dinner|"
                      r"lunch|meal|people|of us|guests))|\b(\w+) of us\b|\b(\w+) (?:people|guests|adults)\b", view.task, re.I)
        if m:  # the task says otherwise ("it's just me tonight")
            word = m.group(1) or m.group(2) or m.group(3) or m.group(4)
            want = {"me": 1, "us two": 2}.get(word.lower(), tx.parse_number(word) or want)
        bad = [k for k in found if k != want]
        if bad:
            return Finding("violated", f"it serves {bad[0]}, not {want}", f"size it for {want}", "servings")
        return Finding("satisfied", f"sized for {self.n}", topic="servings")

    def describe(self) -> str:
        return f"sized for {self.n} people"


_RAN_TOOL = re.compile(r"`[^`\n]{2,80}`|\b(?:go (?:test|vet|build)|cargo (?:test|clippy|build|fmt|check)|pytest|npm (?:test|run \w+)|"
                       r"pnpm \w+|yarn \w+|\./gradlew \w+|gradle \w+|make \w+|mvn \w+|tox|ruff|mypy|eslint|tsc|jest|vitest|"
                       r"rspec|phpunit|dotnet test|swift test|ctest)\b|^\s*\$ \S", re.M)


@dataclass(frozen=True)
class RanCommands(Check):
    """The reply names the commands the agent ran to check its work, not just 'tests pass'."""

    def evaluate(self, view: View) -> Finding:
        claims = re.search(r"\b(tests? (?:all )?pass\w*|all green|verified|checked|works|passing|ran the tests|tested)\b",
                           view.reply, re.I)
        if _RAN_TOOL.search(view.reply) and re.search(r"\b(ran|run|running|executed|passed|passes|output|result)\b",
                                                       view.reply, re.I):
            return Finding("satisfied", "the reply names what was run", topic="commands run")
        if not claims and not view.changes_code:
            return Finding("not_applicable", "nothing was checked here", topic="commands run")
        return Finding("violated", "you don't say which commands you ran", "tell me the exact commands you ran",
                       "commands run")

    def describe(self) -> str:
        return "names the commands that were run"


def _name_pattern(example: str) -> str:
    """A file-name pattern from a template or an example ("YYYY-MM-DD-feature-name.md", "okafor-2023-adapters.md")."""
    name = example.rsplit("/", 1)[-1]
    stem, _, ext = name.rpartition(".")
    out = []
    for tok in re.split(r"([-_.])", stem):
        if tok in ("-", "_", "."):
            out.append(re.escape(tok))
        elif len(tok) >= 2 and tok.isupper() and tok.isalpha() and not re.fullmatch(r"Y{4}|M{2}|D{2}|N+|X+", tok):
            out.append(re.escape(tok))  # a fixed code in the name ("_EN-GB")
        elif re.fullmatch(r"y{4}|Y{4}", tok) or re.fullmatch(r"\d{4}", tok):
            out.append(r"\d{4}")
        elif re.fullmatch(r"mm|MM|dd|DD|\d{2}", tok):
            out.append(r"\d{2}")
        elif re.fullmatch(r"\d+|n|num|number|nn+|NN+", tok):
            out.append(r"\d+")
        elif tok.lower() == "year":
            out.append(r"\d{4}")
        elif tok.lower() == "date":
            out.append(r"\d{4}-\d{2}-\d{2}")
        else:
            out.append(r"[a-z0-9]+(?:[-_][a-z0-9]+)*" if tok.islower() or tok.isupper() else r"[A-Za-z0-9]+")
    pat = "".join(out)
    pat = re.sub(r"(\[a-z0-9\]\+\(\?:\[-_\]\[a-z0-9\]\+\)\*)(?:\\-\1)+", r"\1", pat)
    return pat + (r"\." + re.escape(ext) if ext else "")


@dataclass(frozen=True)
class FileNaming(Check):
    """Files the agent saves go in a folder and follow a naming pattern ("docs/specs/YYYY-MM-DD-name.md")."""

    folder: str
    pattern: str
    ext: str
    label: str

    def evaluate(self, view: View) -> Finding:
        ext = re.escape(self.ext) if self.ext else r"[A-Za-z0-9]{1,5}"
        said = re.findall(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\." + ext + r")\b", view.reply)
        saved = [p for p in said if re.search(r"\b(sav\w*|wrote|written|creat\w*|stored|new file|filed)\b[^.\n]{0,40}"
                                              + re.escape(p), view.reply, re.I)]
        saved += [p for p in (view.artifacts or {}) if re.search(r"\." + ext + "$", p) and p.rsplit("/", 1)[-1] in view.reply]
        saved = list(dict.fromkeys(saved))
        if not saved:
            return Finding("not_applicable", "no file saved here", topic="file names")
        for path in saved:
            if self.folder and not path.lower().startswith(self.folder.lower()):
                return Finding("violated", f"{path} is not in {self.folder}", f"save it under {self.folder}", "file names")
            if self.pattern and not re.fullmatch(self.pattern, path.rsplit("/", 1)[-1]):
                return Finding("violated", f"{path} does not follow the {self.label} naming",
                               f"name it like {self.label}", "file names")
        return Finding("satisfied", "files are where and how you want them", topic="file names")

    def describe(self) -> str:
        return f"files in {self.folder or 'any folder'} named like {self.label}"


_LITERAL_KINDS = {"bash": (".sh", ".bash"), "shell": (".sh", ".bash"), "dockerfile": ("dockerfile",),
                  "python": (".py",), "makefile": ("makefile",), "yaml": (".yml", ".yaml"), "workflow": (".yml", ".yaml")}


@dataclass(frozen=True)
class RequireLiteral(Check):
    """Files of a kind must contain literal lines ("#!/usr/bin/env bash", "set -euo pipefail", a USER line)."""

    literals: tuple[str, ...]
    kinds: tuple[str, ...]

    def evaluate(self, view: View) -> Finding:
        files = {p: b for p, b in sorted((view.artifacts or {}).items())
                 if any(p.lower().endswith(k) or p.lower().rsplit("/", 1)[-1] == k for k in self.kinds)}
        if not files:
            return Finding("not_applicable", "no such file here", topic="required lines")
        for path, body in files.items():
            for lit in self.literals:
                if not re.search(r"(?m)^\s*" + re.escape(lit).replace(r"\ ", r"\s+"), body):
                    return Finding("violated", f"{path} has no \u201c{lit}\u201d", f"add {lit} to {path}", "required lines")
        return Finding("satisfied", "the required lines are there", topic="required lines")

    def describe(self) -> str:
        return f"{' / '.join(self.kinds)} files contain {', '.join(self.literals)}"
