"""Offline evaluation of a preference's conditions and exceptions ("when I ask for X", "in Python")."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from toolkit import text as tx
from toolkit.compliance import _lexicons as lx
from toolkit.compliance._checks import Check, Finding, View

_TABLE = tx.load_table("compliance/conditions")
#: words that name a kind of file or language, with the file endings and words that show it (data:
#: ``resources/compliance/conditions.yaml``, entry ``file_kinds``)
LANGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = dict(_TABLE["file_kinds"])
#: a condition's word (or stem) -> the words that show its topic (entry ``synonyms``)
SYNONYMS: dict[str, tuple[str, ...]] = {k: v[0] for k, v in _TABLE["synonyms"].items()}
#: words a condition's keywords leave out (entry ``generic_words``)
COND_GENERIC: frozenset[str] = _TABLE["generic_words"]
_CG = frozenset(COND_GENERIC | {tx.stem(w) for w in COND_GENERIC})
_ASK_WORDS = frozenset({"user", "ask", "asks", "asked", "asking", "explicit", "explicitly", "request", "requests",
                        "requested", "want", "wants", "say", "says", "tell", "told", "call", "calls", "task",
                        "question", "specifically", "actually", "really", "something", "anything", "thing"})
_ASK_GENERIC = frozenset(_ASK_WORDS | {tx.stem(w) for w in _ASK_WORDS})


def _context(view: View, wide: bool) -> str:
    # workspace paths are read for file kinds (LANGS) only: a folder called runs/ says nothing about "report results from runs"
    parts = [view.task]
    if wide:
        parts += [view.reply, "\n".join(b for _, b in sorted((view.artifacts or {}).items()))]
    return "\n".join(parts)


@lru_cache(maxsize=256)
def _stem_set(low: str) -> frozenset[str]:
    """The stems of a text's tokens (a delivery is stemmed once, not once per condition word)."""
    return frozenset(t.stem for t in tx.tokens(low))


@lru_cache(maxsize=256)
def _stem_text(low: str) -> str:
    """A text's words stemmed and joined by spaces (where a multi-word term is looked for)."""
    return " ".join(tx.stem(w) for w in tx.words(low))


def _has(ctx_low: str, ctx_stems: frozenset[str], term: str) -> bool:
    if not re.search(r"\w", term):
        return term in ctx_low
    st = tx.stems_of(term)
    if len(st) == 1:
        return st[0] in ctx_stems
    return " ".join(st) in _stem_text(ctx_low)


def _enumerates(view: View) -> tuple[bool, str]:
    """Whether the reply lists several steps or options (as a list or spelled out in prose)."""
    items = [ln for ln in view.reply.splitlines() if re.match(r"\s*([-*\u2022]|\d+[.)])\s+\S", ln)]
    if len(items) >= 2:
        return True, f"the reply lists {len(items)} items"
    for sent in view.sentences:
        if len(re.findall(r",", sent)) >= 2 and re.search(r"\b(and|or)\b", sent):
            return True, "the reply enumerates several items in one sentence"
    seq = re.findall(r"\b(first|then|next|after that|finally|second|third)\b", view.reply.lower())
    if len(seq) >= 2:
        return True, "the reply walks through steps"
    return False, "the reply does not list steps or options"


_DELIVERY_COND = re.compile(
    r"\b(?:the|your|a|my) (?:reply|answer|response|message|output|draft)\b|\bthere(?:'s| is| are)\s+(?:a |an |any |more "
    r"than \w+ )?(?:[\w-]+ )?(?:lists?|tables?|code|plots?|charts?|figures?|files?|numbers?|prices?|amounts?|costs?|"
    r"links?|commands?|examples?|steps?|questions?|quotes?)\b|"
    r"\b(?:reply|answer|response|it|you)\s+(?:\w+\s+)?(?:lists?|reports?|gives?|includes?|contains?|mentions?|quotes?|tell|"
    r"shows?|has|produces?|saves?|cites?|listing|reporting|giving|including|quoting|showing|saving)\b|"
    r"\bfile it produces\b|\b(?:lists?|reports?)\s+(?:two|three|four|five|several|\d)|"
    r"^(?:you|you've|you have)\s+(?:\w+ly\s+)?(?:dump|sav|creat|generat|add|install|edit|chang|modif|touch|delet|remov|ran\b|run\b|"
    r"download|export|copy|copie|mov|renam|commit|push|deploy|overwr|convert|extract|scrap|book|reserv|buy|bought|order|"
    r"upgrad|bump|migrat)\w*")  # what the agent did shows in the delivery
_NUMBERS = re.compile(r"(?<![\w.])[$\u20ac\u00a3]?\d[\d,]*(?:\.\d+)?\s?(?:%|k\b|m\b)?")
_MONEY = (r"[$\u20ac\u00a3]\s?\d[\d,.]*|\b\d[\d,.]*\s?(?:euros?|eur|dollars?|usd|pounds?|gbp|k\b)")
#: a file name; the bounded run keeps it linear on a long word (same matches under 256 chars)
_FILE_RX = re.compile(r"[\w\-/]{1,256}\.\w{1,5}\b")
_PATH_COND = re.compile(r"(?<![\w/])((?:[\w.-]+/)+)(?=[\s,.;)]|$)")


def _paths_said(view: View) -> list[str]:
    """Workspace paths plus paths the task or reply names."""
    # bounded runs: the same matches for paths under 256 characters, linear time on a long
    # word (unbounded, every start position rescanned the word: quadratic)
    rx = r"[\w\-./]{1,256}/[\w\-.]+|[\w\-]{1,256}\.\w{1,5}\b"
    return [p.lower() for p in (view.artifacts or {})] + [p.lower() for p in re.findall(rx, view.task + "\n" +
                                                                                     view.reply)]


_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = r"jan\w*|feb\w*|mar\w*|apr\w*|may|jun\w*|jul\w*|aug\w*|sep\w*|oct\w*|nov\w*|dec\w*"


def trip_days(task: str) -> int | None:
    """How many days a trip in the task spans (None when it does not say)."""
    low = task.lower().replace("\u2013", "-").replace("\u2014", "-")
    spans = []
    for m in re.finditer(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|a couple of)[- ](days?|nights?)\b", low):
        n = tx.parse_number(m.group(1)) or (2 if "couple" in m.group(1) else 1)
        spans.append(n + 1 if m.group(2).startswith("night") else n)
    for m in re.finditer(r"\b(\d+|one|two|three|a)\s+weeks?\b|\bfortnight\b", low):
        spans.append(14 if "fortnight" in m.group(0) else 7 * (tx.parse_number(m.group(1)) or 1))
    for m in re.finditer(r"\b(" + "|".join(_DAYS) + r")\s*(?:to|-|until|through|and)\s*(" + "|".join(_DAYS) + r")\b", low):
        a, b = _DAYS.index(m.group(1)), _DAYS.index(m.group(2))
        spans.append((b - a) % 7 + 1)
    for m in re.finditer(r"\b(\d{1,2})(?:st|nd|rd|th)?\s*(?:-|to|until)\s*(\d{1,2})(?:st|nd|rd|th)?\s+(?:" + _MONTHS + r")\b", low):
        a, b = int(m.group(1)), int(m.group(2))
        if 0 < b - a < 31:
            spans.append(b - a + 1)
    if not spans and re.search(r"\bweekend\b", low):
        spans.append(2)
    if not spans and re.search(r"\bday trip\b|\bone day\b|\bfor the day\b", low):
        spans.append(1)
    return max(spans) if spans else None


def _special(low: str, view: View) -> tuple[bool, str] | None:
    """Conditions with a direct reading: file counts, figure counts, folders."""
    m = re.search(r"(more|fewer|less) than (\w+) files?\b", low)
    if m:
        files = set(view.artifacts or {}) | set(re.findall(r"\b[\w\-/]+\.(?:py|js|ts|tsx|jsx|go|rs|java|rb|css|scss|"
                                                         r"html|md|sql|ya?ml|json|toml|sh)\b", view.reply))
        n = tx.parse_number(m.group(2)) or 0
        k = len(files)
        ok = k > n if m.group(1) == "more" else k < n
        return ok, f"{k} files touched"
    m = re.search(r"\b(two|three|four|five|six|\d+|several|multiple|a couple of|more than (?:one|two|a couple of)|"
                  r"a few)\s+(?:or more\s+)?(?:\w+\s+)?(figures|numbers|amounts|costs|prices|metrics|values|sums)\b", low)
    if m or re.search(r"\b(?:report|give|gives|giving|reporting|list|lists)\w*\s+(figures|numbers|amounts|costs)\b", low):
        word = m.group(1) if m else "two"
        n = tx.parse_number(word.split()[-1]) if word.split()[-1] not in ("several", "multiple", "few", "of") else 2
        n = (n or 2) + (1 if word.startswith("more than") else 0)
        text = tx.prose(view.reply) + "\n" + view.documents
        if (m.group(2) if m else "") in ("amounts", "costs", "prices", "sums") or re.search(r"\b(costs|amounts)\b", low):
            units = [ln for ln in text.splitlines() if re.match(r"\s*([-*\u2022|]|\d+[.)])", ln)] \
                if re.search(r"\blists?\b|\blisting\b", low) else [text]
            k = sum(len(re.findall(_MONEY, u, re.I)) for u in units)
            return k >= n, f"the reply lists {k} amounts of money"
        k = len([x for x in _NUMBERS.findall(text) if not re.fullmatch(r"(19|20)\d\d", x.strip())])
        return k >= n, f"the reply has {k} figures"
    if re.search(r"\byou\s+(?:explain|describe|summari[sz]e|report|tell me|list)\s+what you\s+(?:changed|did|"
                 r"edited|fixed)\b|^(?:you|we)\s+(?:edit|change|modify|revise|rewrite)\s+(?:something|anything|"
                 r"it|things|text|a (?:text|draft|paragraph))\b", low):
        did = re.search(r"\b(?:i(?:'ve| have)?\s+)?(?:changed|edited|updated|fixed|added|rewrote|rewritten|removed|cut|"
                        r"merged|replaced|renamed|moved|tightened|shortened|reworded)\b", view.reply.lower())
        asks = re.search(r"\b(edit|revise|rewrite|tidy|clean up|fix|change|update|proofread|shorten|improve|tighten|"
                         r"polish|rework)\b", view.task.lower())
        ok = bool(did or asks)
        return ok, "the delivery reports changes" if ok else "nothing was changed"
    if re.search(r"\bhow to\b|\bhow do\b|\bwalks? (?:them|me|you|the \w+) through\b|\bstep[- ]by[- ]step\b|"
                 r"\bset (?:something |it |things )?up\b|\btroubleshoot", low) and re.search(
                 r"\b(?:asks?|asked|wants?|needs?)\b", low):
        ok = bool(re.search(r"\bhow (?:do|can|should|would) (?:i|we|you)\b|\bhow to\b|\bset ?up\b|\bsteps?\b|"
                            r"\btroubleshoot|\bwalk (?:me|us) through\b|\bnot working\b|\berror\b|\bfix\b|\bconfigure\b",
                            view.task, re.I))
        return ok, "the task asks how to do something" if ok else "the task is not a how-to"
    days = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    m = re.search(r"\b(" + "|".join(days) + r")\s+(?:to|-|through)\s+(" + "|".join(days) + r")\b", low)
    if m:  # "Monday to Thursday dinners"
        a, b = days.index(m.group(1)), days.index(m.group(2))
        span = {days[(a + i) % 7] for i in range((b - a) % 7 + 1)}
        said = set(re.findall(r"\b(" + "|".join(days) + r")\b", view.task.lower()))
        if said:
            ok = bool(said & span)
            return ok, f"the task is for {', '.join(sorted(said))}"
        if re.search(r"\b(weeknights?|weekdays?)\b", view.task.lower()):
            return not span.isdisjoint(days[:5]), "the task is for a weeknight"
        if re.search(r"\bweekend\b", view.task.lower()):
            return not span.isdisjoint(days[5:]), "the task is for the weekend"
    m = re.search(r"\b(ticket|order|invoice|case|reference|booking|account)\s+(?:number|no\.?|id)\b", low)
    if m and re.search(r"\b(known|given|available|in the task|mentioned|provided)\b", low):
        ok = bool(re.search(r"#\s?\d{3,}|\b\d{4,}\b|\b[A-Z]{2,}-\d+\b", view.task))
        return ok, f"the task {'gives' if ok else 'gives no'} {m.group(1)} number"
    m = _PATH_COND.search(low)
    if m and re.search(r"\b(under|in|inside|within|lives?|living|from|to|into)\s+(?:the\s+)?" + re.escape(m.group(1)), low):
        folders = [f.lower() for f in _PATH_COND.findall(low)]
        said = _paths_said(view)
        hit = next((f for f in folders if any(p.startswith(f) or "/" + f in p for p in said)), None)
        return hit is not None, f"a path under {hit}" if hit else f"no path under {', '.join(folders)}"
    return None


def condition_holds(cond: str, view: View, *, wide: bool = False, topic: frozenset[str] = frozenset(),
                    majority: bool = False) -> tuple[bool | None, str]:
    """Whether ``cond`` holds for this delivery (None when it cannot be judged), with the reason.

    ``topic`` holds the stems of the preference's own words: for an exception ("unless it's a weekend
    session"), words it shares with the preference ("session") say nothing about whether it holds.
    Answered once per view (the scope stage and the learned reader's scope cues both ask)."""
    key = ("condition_holds", cond, wide, topic, majority)
    if key not in view.memo:
        view.memo[key] = _condition_holds(cond, view, wide=wide, topic=topic, majority=majority)
    return view.memo[key]


def _condition_holds(cond: str, view: View, *, wide: bool, topic: frozenset[str],
                     majority: bool) -> tuple[bool | None, str]:
    low = cond.lower().strip().replace("\u2019", "'")
    paren = re.search(r"\(([^)]{3,120})\)", low)  # "guest-facing (welcome letters, invitations)": examples that count
    if paren and not topic and not re.search(r"\b(not|except|no|can|may|fine|ok|okay|allowed|don't|doesn't|aren't|"
                                             r"isn't|exempt)\b", paren.group(1)):  # examples in a condition, not exemptions
        items = [x.strip() for x in re.split(r",|\bor\b|\band\b|/", paren.group(1))
                 if len(tx.words(x)) >= 2 or "-" in x.strip()]  # single common words ("Update") say too little
        ctx0 = (view.task + ("\n" + view.reply if wide else "")).lower()
        hit = next((x for x in items if x in ctx0 or (tx.words(x) and all(tx.stem(w) in _stem_set(ctx0)
                                                                          for w in tx.words(x)))), None)
        if hit:
            return True, f"{hit} named in the {'delivery' if wide else 'task'}"
    # the condition proper, without the reason or aside after it ("it's a Slack message; those need no sign-off")
    low = re.split(r";|\s+[-\u2013\u2014]\s+|,\s*(?:because|since|as|so|where|which|those|these|then|and then)\b|"
                   r"\s+\((?!\w+\))", low)[0].strip() or low
    special = _special(low, view)
    if special is not None:
        return special
    delivery = bool(_DELIVERY_COND.search(low)) and not re.search(
        r"\b(?:reply|answer|response|message|output|draft)\s+(?:is|is for|goes to|will be)\b", low)
    wide = wide or delivery
    ctx = _context(view, wide)
    # "Not homework, just practice": a negated word in the task does not count for the condition
    ctx_low = re.sub(r"\b(?:not|no|never|isn't|aren't|wasn't|without)\s+(?:a\s+|an\s+|the\s+|my\s+)?[\w-]+", " ", ctx.lower())
    ctx_stems = _stem_set(ctx_low)
    paths = [p.lower() for p in (view.artifacts or {})] + re.findall(_FILE_RX, view.task.lower())
    if wide:
        paths += re.findall(_FILE_RX, view.reply.lower())
    if re.search(r"\b(several|multiple|many|multi|longer than (one|a) day|more than (one|a) day|multi-day|"
                 r"overnight|days|nights)\b", low) and re.search(r"\b(days?|nights?|trip|stay|itinerar)", low):
        m = re.search(r"\b(?:more than|over|longer than)\s+(\w+)\s+(days?|nights?)|\b(\w+)\s+(?:or more|\+)\s+(days?|nights?)|"
                      r"\bat least\s+(\w+)\s+(days?|nights?)", low)
        span = trip_days(view.task)
        if re.search(r"\b(itinerar\w*|plan|schedule)\b", low) and not re.search(
                r"\b(plan|itinerar\w*|schedule|trip|days? in|what to do|things to do|weekend in|week in|visit|holiday|"
                r"vacation|tour)\b", view.task.lower()):
            return False, "the task does not ask for a plan"
        if m:
            n = tx.parse_number(m.group(1) or m.group(3) or m.group(5) or "") or 2
            unit = m.group(2) or m.group(4) or m.group(6)
            n = n + 1 if unit.startswith("night") else n
            need_days = n + 1 if m.group(1) else n
            ok = span is not None and span >= need_days
            return ok, f"the task covers {span or 'an unknown number of'} days"
        multi = span is not None and span >= 2
        return multi, "the task spans several days" if multi else "the task is not a multi-day trip"
    if len(low.split()) <= 7 and (re.search(r"\b(chang|touch|modif|edit|writ)\w*\s+(the\s+|any\s+)?code\b|\bcode (change|edit)s?\b|\bcoding\b|"
                  r"^(a|an|any|every|each)?\s*(code\s+)?(change|edit|commit)s?$", low) or
            re.search(r"\b(implement|fix)\w*\b", low) and not re.search(
                r"\b(typos?|links?|wording|spelling|comments?|docs?|documentation|migrations?|tests?|notebooks?)\b", low)):
        ok = view.changes_code
        return ok, "the delivery changes code" if ok else "no code change"
    if re.search(r"\b(lists?|listing|gives?|giving|has|have|contains?|includes?|several|multiple|many|more than "
                 r"(one|two|\d))\b[^.]{0,30}\b(steps|options|items|choices|alternatives|instructions|things)\b", low):
        return _enumerates(view)
    # quantity words about the task itself
    about_task = bool(re.search(r"\b(i|user|the user|they|task|question|request)\s+(explicitly\s+)?(ask|asks|asked|"
                                r"request|requests|requested|want|wants|say|says|tell|calls? for)\b", low))
    if not about_task and re.search(r"\b(long|longer|lengthy|detailed|multi-paragraph|bigger)\b", low) and \
            re.search(r"\b(answers?|repl(y|ies)|responses?|explanations?|write-?ups?|reports?)\b", low):
        n = len(tx.words(view.prose))
        return n >= 90 or len(view.sentences) >= 6, f"the reply has {n} words"
    if not about_task and re.search(r"\b(short|brief|one[- ]line|single[- ]line|quick)\b", low) and \
            re.search(r"\b(answers?|repl(y|ies)|responses?)\b", low):
        n = len(tx.words(view.prose))
        return n <= 100, f"the reply has {n} words"
    if re.search(r"\b(quick|small|trivial|tiny|minor|simple|short|one[- ]line|single[- ]line)\b", low) and \
            re.search(r"\b(questions?|fix(es)?|changes?|edits?|tasks?|tweaks?|requests?|query|queries|lookups?)\b",
                      low):
        small = bool(re.search(r"\b(quick|small|trivial|tiny|minor|simple|typo|one[- ]line|briefly|short)\b",
                               view.task.lower())) or (len(tx.words(view.task)) <= 12 and
                                                       len(tx.words(view.prose)) <= 40) or \
            (view.task.strip().endswith("?") and len(tx.words(view.task)) <= 14 and not tx.code_blocks(view.reply)
             and not view.artifacts and len(tx.words(view.prose)) <= 80 and
             bool(re.search(r"\bquestions?|quer(y|ies)\b", low)))
        return small, "the task is small" if small else "the task is not a small one"
    kws = []
    generic = _ASK_GENERIC if about_task else _CG
    for w in tx.words(low):
        if w in lx.STOPWORDS or w in generic or tx.stem(w) in generic:
            continue
        kws.append(w)
    kws = list(dict.fromkeys(kws))
    distinct = [w for w in kws if tx.stem(w) not in topic and w not in LANGS]
    if topic and distinct:
        kws = distinct + [w for w in kws if w in LANGS and tx.stem(w) not in topic]
    if not kws:
        return None, f"no usable words in the condition {cond!r}"
    matched = []
    salient_hit = False
    for w in kws:
        if w in LANGS:
            exts, names = LANGS[w]
            if any(p.endswith(exts) or any(e in p for e in exts if e.endswith(("_", "/", "."))) for p in paths) or \
                    any(_has(ctx_low, ctx_stems, n) for n in names):
                matched.append(w)
                salient_hit = True
            continue
        syns = SYNONYMS.get(w) or SYNONYMS.get(tx.stem(w)) or ()
        if _has(ctx_low, ctx_stems, w) or any(_has(ctx_low, ctx_stems, s) for s in syns):
            matched.append(w)
    short_list = re.search(r"(?:^|\s)(?:\S+\s+){0,2}\S+\s*(?:,\s*(?:\S+\s+){0,2}\S+\s*)*,?\s+or\s+(?:\S+\s+){0,2}\S+\s*$",
                           re.sub(r"^.*?\b(?:is|are|about|for|like|mentions?|asks? (?:for|about))\s+", "", low))
    if short_list:  # "meals, recipes or snacks": any one will do, but it has to be one of the things listed
        tail = re.sub(r"^.*?\b(?:is|are|about|for|like|mentions?|asks? (?:for|about)|giving me|writing|making|planning)\s+", "",
                      low)
        heads = [tx.words(x)[-1] for x in re.split(r",\s*|\s+or\s+|\s+and\s+", tail) if tx.words(x)]
        matched = [w for w in matched if w in heads] or ([] if heads else matched)
    need = 1 if short_list else max(1, math.ceil(len(kws) * (2 / 3 if delivery else 0.4)))
    names = [w.lower() for w in tx.words(re.sub(r"\([^)]*\)", " ", cond))[1:] if w[:1].isupper() and not w.isupper() and len(w) >= 3 and
             w.lower() not in lx.STOPWORDS]
    if names and not any(n in matched or _has(ctx_low, ctx_stems, n) for n in names):
        return False, f"{names[0]} is not in the {'delivery' if wide else 'task'}"  # "the post is for LinkedIn"
    if majority:  # a strict reading: most of the condition's own words are in the delivery
        ok = len(kws) >= 2 and len(matched) >= max(2, math.ceil(2 * len(kws) / 3))
        return ok, (f"condition words found: {', '.join(matched)}" if matched else "no condition words found")
    ok = salient_hit or (len(matched) >= need and (delivery or not wide))
    return ok, (f"condition words found: {', '.join(matched)}" if matched else
                f"none of {', '.join(kws[:5])} in the {'delivery' if wide else 'task'}")


@dataclass(frozen=True)
class Conditional(Check):
    """A check from a clause with its own condition ("If a section runs past 150 words, split it")."""

    inner: Check
    when: tuple[str, ...]
    unless: tuple[str, ...] = ()

    def evaluate(self, view: View) -> Finding:
        for exc in self.unless:
            ok, why = condition_holds(exc, view)
            if ok:
                return Finding("not_applicable", f"exception {exc!r} holds ({why})")
        for cond in self.when:
            ok, why = condition_holds(cond, view, wide=True)
            if not ok:
                return Finding("not_applicable", f"condition {cond!r} does not hold ({why})")
        return self.inner.evaluate(view)

    def describe(self) -> str:
        return f"{self.inner.describe()} (if {'; '.join(self.when)})"
