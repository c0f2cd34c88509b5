"""Tokens, light stemming, sentences, lists and negation windows (shared by every offline reader)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

TOKEN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_']*(?:[.\-][A-Za-z0-9_]+)*")
# the info string after ``` is bounded (200 chars): a long line of backticks was rescanned to
# its end from every position (quadratic); fences with normal info strings match as before
FENCE_RE = re.compile(r"```[^\n]{0,200}\n(.*?)(?:```|\Z)", re.S)
BULLET_RE = re.compile(r"^\s*(?:[-*\u2022+]|\d+[.)])\s+\S", re.M)
NUMBERED_RE = re.compile(r"^\s*\d+[.)]\s+\S", re.M)
HEADING_RE = re.compile(r"^\s*(?:#{1,6}\s+\S.*|\*\*[^*\n]{2,60}\*\*:?\s*)$", re.M)
TABLE_RE = re.compile(r"^\s*\|?[\s:]*-{3,}[\s:]*\|", re.M)
EMOJI_RE = re.compile(
    "[\U0001F300-\U0001FAFF\U00002600-\U000027BF\U0001F000-\U0001F2FF\U0001F900-\U0001F9FF"
    "\u2705\u274C\u2B50\u2728]"
)
NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "eighty": 80, "hundred": 100, "a hundred": 100,
    "single": 1, "a couple of": 2, "a few": 3,
}
NEGATORS = (
    "no", "not", "never", "don't", "dont", "do not", "doesn't", "does not", "didn't", "did not",
    "haven't", "have not", "hasn't", "won't", "wouldn't", "avoid", "avoided", "avoiding", "without",
    "skip", "skipped", "skipping", "dislike", "hate", "instead of", "rather than", "free of", "unlike",
    "none", "nothing", "isn't", "aren't", "wasn't", "shouldn't", "can't", "cannot", "nor",
    "removed", "deleted", "dropped", "excluded", "excluding", "steer clear", "stay away",
    "except", "non", "zero", "neither", "leave out", "left out", "omit", "omitted", "avoids", "skips",
    "excludes", "lacks", "lacking", "minus", "cut", "ditch", "spare me", "enough with", "get rid of",
)
_NEG_RE = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in NEGATORS) + r")\b")


_KEEP_S = frozenset({"this", "his", "is", "was", "has", "does", "yes", "its", "as", "thus", "less"})


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light suffix stripper so 'files', 'filed' and 'file' meet (deterministic, no data).

    Memoised: a pure function of the word, called for every word of every text by several
    readers (it was the compliance reader's largest cost)."""
    w = word.lower().replace("\u2019", "'")
    if w.endswith("'s"):
        w = w[:-2]
    for suf, rep in (("ies", "y"), ("sses", "ss"), ("zzes", "z"), ("ches", "ch"), ("shes", "sh"), ("xes", "x"),
                     ("s", "")):
        if w.endswith(suf) and len(w) - len(suf) >= 3 and not w.endswith(("ss", "us")) and w not in _KEEP_S:
            w = w[: -len(suf)] + rep
            break
    for suf, rep in (("ied", "y"), ("ing", ""), ("ed", "")):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)] + rep
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]
    if w.endswith("e") and len(w) > 3 and w not in _KEEP_E:
        w = w[:-1]
    return w


_KEEP_E = frozenset({"note", "none", "done", "gone", "come", "some", "here", "there", "where", "were"})


@dataclass(frozen=True)
class Token:
    text: str
    stem: str
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    """Word tokens with stems and character offsets."""
    return [Token(m.group(0), stem(m.group(0)), m.start(), m.end()) for m in TOKEN_RE.finditer(text)]


def words(text: str) -> list[str]:
    return [t.text for t in tokens(text)]


#: a name as written in prose: inner . + # - kept ("c++", "node.js", "scikit-learn"); a trailing
#: full stop or hyphen is punctuation. Not :data:`TOKEN_RE`, which splits "c++" and "c#" and keeps
#: an apostrophe inside a token ("python's")
NAME_RE = re.compile(r"[a-z0-9][a-z0-9+#._\-]*[a-z0-9+#]|[a-z0-9]")


def _lower_in_place(text: str) -> str:
    """``text`` lower-cased a character at a time, so offsets stay the text's ("İ".lower() is two
    characters and stays as it is)."""
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def lexicon_spans(text: str, lexicon: frozenset[str], longest: int = 3) -> list[tuple[int, int, str]]:
    """Where ``text`` mentions the lexicon's names (case-insensitive): ``(start, end, name)``, the
    longest run of up to ``longest`` names first ("vim script", "core data"), left to right, not
    overlapping; a plural form counts ("Dockerfiles"). Word-list entries of the cue tables hold
    lower-case names."""
    found = list(NAME_RE.finditer(_lower_in_place(text)))
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(found):
        for n in range(min(longest, len(found) - i), 0, -1):
            run = " ".join(m.group(0) for m in found[i:i + n])
            name = run if run in lexicon else (run[:-1] if run.endswith("s") and run[:-1] in lexicon
                                               else None)
            if name:
                out.append((found[i].start(), found[i + n - 1].end(), name))
                i += n
                break
        else:
            i += 1
    return out


@lru_cache(maxsize=1 << 16)
def word_zipf(word: str) -> float:
    """How common ``word`` is in English (wordfreq's Zipf scale: 0 never seen, 3 once per million
    words, 7 "the"); wordfreq's list is built from web text, subtitles, books and Wikipedia."""
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, "en"))


def unseen_spans(text: str, below: float, skip: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Names in ``text`` (:data:`NAME_RE`) with an alphabetic part of three letters or more that
    English has not seen (:func:`word_zipf` below ``below``): "ncplots", "barsea-roms", but not
    "turbine", "settle-svc" or "dye_01". Spans starting inside ``skip`` are left out."""
    out = []
    for m in NAME_RE.finditer(_lower_in_place(text)):
        if any(a <= m.start() < b for a, b in skip):
            continue
        parts = [p for p in re.split(r"[-_.+#]", m.group(0)) if p.isalpha() and len(p) >= 3]
        if any(word_zipf(p) < below for p in parts):
            out.append((m.start(), m.end()))
    return out


def replace_spans(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, replacement)`` span replaced (spans sorted here; they
    must not overlap)."""
    out, last = [], 0
    for a, b, new in sorted(spans):
        out += [text[last:a], new]
        last = b
    return "".join(out) + text[last:]


def code_blocks(text: str) -> list[str]:
    return FENCE_RE.findall(text or "")


def prose(text: str) -> str:
    """``text`` without fenced code blocks."""
    return FENCE_RE.sub(" ", text or "")


def prose_word_count(text: str) -> int:
    return len(words(prose(text)))


def sentences(text: str) -> list[str]:
    """Prose sentences: split on end punctuation and on line breaks (list items count as one)."""
    out: list[str] = []
    for line in prose(text).splitlines():
        line = re.sub(r"^\s*(?:[-*\u2022+]|\d+[.)]|#{1,6})\s+", "", line).strip()
        if not line or re.fullmatch(r"[#*_\-|:\s]+", line):
            continue
        parts = re.split(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9*])", line)
        out.extend(p.strip() for p in parts if len(words(p)) >= 1)
    return out


def nonempty_lines(text: str) -> list[str]:
    return [ln for ln in (text or "").splitlines() if ln.strip()]


def bullet_lines(text: str) -> list[str]:
    return BULLET_RE.findall(prose(text))


def numbered_lines(text: str) -> list[str]:
    return NUMBERED_RE.findall(prose(text))


def heading_lines(text: str) -> list[str]:
    return HEADING_RE.findall(prose(text))


def negated_at(text: str, start: int, window: int = 5) -> bool:
    """Whether a negator (or a warning such as 'many contain') sits in the few words before ``start``."""
    head = text[max(0, start - 80): start]
    head = re.split(r"[.;!?\n]|\bbut\b|\bhowever\b|\bthough\b", head.lower())[-1]
    head = re.sub(r"[\"\u201c'\u2018]\s*$", "", head)
    head = re.sub(r"(\b(?:and|or|nor)\s+)(?!(?:no|not|never|without|nor|none|unlike)\b)[\w'-]+\s*$", r"\1", head)  # "and lunge jumps"
    for _ in range(3):  # "not part of Marriott or Hilton": the negation reaches across a coordination
        shorter = re.sub(r"[\"\u201c]?\b(?!(?:no|not|never|without|nor)\b)[\w'-]+(?:\s+[\w'-]+){0,2}[\"\u201d]?\s*"
                         r"(?:,\s*(?:or|nor|and)?|\bor\b|\bnor\b|/)\s*$", "", head) if re.search(r"[\"\u201c]\s*$|/\s*$", head) \
            else re.sub(r"\b(?!(?:no|not|never|without|nor)\b)[\w'-]+(?:\s+[\w'-]+)?\s*(?:,\s*(?:or|nor|and)?|\bor\b|\bnor\b|"
                        r"\band\b|/)\s*$", "", head) if re.search(r"\b(?:left out|skipped|avoided|excluded|dropped|removed)\b",
                                                            head) \
            else re.sub(r"\b(?!(?:no|not|never|without|nor)\b)[\w'-]+\s*(?:,\s*(?:or|nor|and)?|\bor\b|\bnor\b|/)\s*$",
                        "", head)
        if shorter == head:
            break
        head = shorter
    tail = " ".join(head.split()[-window:])
    if re.search(r"\b(?:left out|leaving out|leave out|skipped|skipping|avoided|avoiding|excluded|excluding|dropped|"
                 r"cut out|steered clear of|replaced|swapped out|ruled out)\s+(?:the\s+|any\s+|all\s+)?(?:[\w'\"-]+\s+){0,2}$",
                 tail + " "):
        return True
    if re.search(r"\b(?:may|might|can|often|usually|many|most|some|which|that|it|they)\s+(?:also\s+)?contains?\s+"
                 r"(?:\w+\s+){0,1}$|\b(?:instead of|rather than|in place of|swap(?:ped)? out|replaced?|watch out for|"
                 r"check (?:the label )?for|free from|free of)\s+(?:the\s+|any\s+)?(?:\w+\s+){0,1}$", tail + " "):
        return True
    if re.search(r"-\s*$", head) and re.search(r"\bnon\s*-?\s*$", head):
        return True
    return bool(_NEG_RE.search(tail))


_POST_NEG = re.compile(r"^[^.;!?\n]{0,40}?\b(are|is|were|was|got|been|i)\s+(skipped|excluded|avoided|left out|"
                       r"ruled out|removed|dropped|filtered out|not included|omitted)\b|"
                       r"^[^.;!?\n]{0,50}?\b(?:but|so|and|which)\s+(?:i(?:'ve| have)?|we(?:'ve| have)?)\s+"
                       r"(?:deliberately\s+|intentionally\s+)?(?:left|kept|taken|took|skipped|dropped|removed|excluded|"
                       r"ruled|swapped|replaced|avoided)\s+(?:it|them|that|those|this)\b|"
                       r"^\W{0,3}(?:\w+\W+){0,5}?i(?:'ve| have)?\s+(?:left|kept|taken)\s+(?:the\s+)?(?:[\w-]+\s+){0,3}?out\b")


def free_suffix(text: str, end: int) -> bool:
    """'gluten-free', 'emoji free', '... options are skipped': negated by what follows."""
    if re.match(r"\s*-?\s*(?:free|less)\b", text[end: end + 8].lower()):
        return True
    return bool(_POST_NEG.match(text[end: end + 60].lower()))


def find_phrase(text: str, phrase_stems: tuple[str, ...], toks: list[Token] | None = None,
                *, affirmative: bool = True) -> list[tuple[int, int]]:
    """Spans where the stem sequence occurs; with ``affirmative`` negated mentions are skipped."""
    toks = tokens(text) if toks is None else toks
    n = len(phrase_stems)
    out = []
    for i in range(len(toks) - n + 1):
        if all(toks[i + k].stem == phrase_stems[k] for k in range(n)):
            s, e = toks[i].start, toks[i + n - 1].end
            if affirmative and (negated_at(text, s) or free_suffix(text, e)):
                continue
            out.append((s, e))
    return out


def stems_of(phrase: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in words(phrase))


def snippet(text: str, start: int, end: int, pad: int = 30) -> str:
    """A short excerpt around a span, on one line."""
    s = max(0, start - pad)
    e = min(len(text), end + pad)
    frag = " ".join(text[s:e].split())
    return ("..." if s > 0 else "") + frag + ("..." if e < len(text) else "")


def parse_number(s: str) -> int | None:
    s = s.strip().lower()
    if s.isdigit():
        return int(s)
    return NUMBER_WORDS.get(s)


def is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") or bool(
        re.match(r"^(should|shall|do you|would you|can i|may i|want me|ok(ay)? to|is it ok)", sentence.lower())
    )
