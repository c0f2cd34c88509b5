"""Per-turn preference extraction: the five-dimension vector of PAMU from one user turn.

Dimensions (PAMU Eq. 2): ``tone`` and ``emotion`` are probability vectors over named
categories; ``length``, ``density`` and ``formality`` are scalars in [0, 1]. We read the
*user's* turn (their own style is the preference signal), not the assistant's reply.

Two implementations side by side, chosen by ``model.is_offline``:

- :func:`extract_offline` -- lexicons and surface statistics, no model download. It reads
  :func:`prose`: fenced code, inline code spans, stack traces, log and code lines are cut
  out (each block becomes the one word ``code``), since a paste is not the user's style.
  * tone: cue-word evidence (laughter/joking, politeness/hedging, analytic vocabulary plus
    formality) turned into probabilities by a softmax against a constant neutral baseline.
    Limits: no sarcasm, irony or dry humour without markers; English only.
  * emotion: the same scheme with joy / focused / frustrated / anxious cue lists and
    phrases; a repeated cue word counts once; ALL-CAPS words intensify whichever of joy or
    frustration the words carry. Limits: no negation handling ("not happy" counts as
    joy), no sadness category (sad turns read neutral), no intensity.
  * length: ``(ln n - ln 5) / (ln 90 - ln 5)`` clipped, n = words in the turn; about 13
    words is the Sparse/Moderate edge and 33 the Moderate/Dense edge. Limits: counts words,
    not ideas; code cut out by :func:`prose` is one word, however long the paste.
  * density: a triple-count proxy for OpenIE. Each clause is cut into content chunks (runs
    of words that are not function words, pronouns, fillers or relation verbs); two
    successive chunks in a clause linked by a verb or preposition count as one
    (subject, relation, object) triple. ``ID = K / (L + 6)`` (Eq. 1, shrunk for very short
    turns) is blended with the share of content words (lexical density) and their mean length. Limits: no parser, so long noun compounds count once and lists count
    as chains; numbers and identifiers count as content.
  * formality: function-word statistics in the spirit of Heylighen and Dewaele's F-score
    (articles, prepositions, Latinate derivations and written-register markers such as
    "kindly", "regarding", "whereby" up; pronouns, interjections,
    contractions, emoji, repeated punctuation and lower-case sentence starts down) plus
    mean word length as a readability statistic, through a logistic. Limits: tuned on
    English chat; a terse but formal one-liner scores middling.
- :func:`extract_llm` -- one structured call per turn through the gateway with our own
  prompt ``toolkit/prompts/drift_extract.md``; length is always measured (word count), the
  model rates the other four. Malformed answers become ``None`` (counted as unknown).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from toolkit.drift import lexicons as lx

DIMS: tuple[str, ...] = ("tone", "length", "emotion", "density", "formality")
TONES: tuple[str, ...] = ("humorous", "gentle", "neutral", "serious")
EMOTIONS: tuple[str, ...] = ("joy", "neutral", "focused", "frustrated", "anxious")
CATEGORIES: dict[str, tuple[str, ...]] = {"tone": TONES, "emotion": EMOTIONS}
SCALARS: tuple[str, ...] = ("length", "density", "formality")

#: a per-turn observation: scalar dims -> float, categorical dims -> {category: prob}
Vector = dict[str, "float | dict[str, float]"]

_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*|\d+(?:[.,:/]\d+)*%?")
_EMOJI = re.compile("[\U0001F300-\U0001FAFF\u2600-\u27BF\u2B50\u2764]")
_EMOTICON = re.compile(r"(?:^|\s)(?:[:;=xX]-?[)(DPp3/\\|]|<3|\^_?\^|xD|XD)(?=\s|$|[.!?,])")
_LAUGH = re.compile(r"^(?:a?(?:ha){2,}h?|(?:he){2,}|lo+l|lo(?:lo)+l?|l+m+a+o+|x+d+)$", re.I)
_CLAUSE = re.compile(r"[.!?;:,()\n]+|\s(?:and|but|or|so|because|while|whereas|which|that)\s", re.I)
_S_STEMS = frozenset("what that it there how where who here let he she".split())
_SENT = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class TextStats:
    """Surface statistics of one text, shared by the offline extractors."""

    words: tuple[str, ...]
    n_words: int
    emoji: int
    exclaim: int
    repeated_punct: int
    lower_starts: float
    contractions: int
    all_caps: int


def _words(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


def text_stats(text: str) -> TextStats:
    """Tokenise and count the surface cues of ``text``."""
    raw = _WORD.findall(text)
    words = tuple(w.lower().replace("’", "'") for w in raw)
    sents = [s.strip() for s in _SENT.split(text) if s.strip()]
    starts = [s for s in sents if s[0].isalpha()]
    lower = sum(1 for s in starts if s[0].islower()) / len(starts) if starts else 0.0
    return TextStats(
        words=words,
        n_words=len(words),
        emoji=len(_EMOJI.findall(text)) + len(_EMOTICON.findall(text)),
        exclaim=text.count("!"),
        repeated_punct=len(re.findall(r"[!?]{2,}|\.{3,}|…", text)),
        lower_starts=lower,
        contractions=sum(1 for w in words if w.endswith(lx.CONTRACTION_ENDINGS) or w in ("gonna", "wanna")
                         or (w.endswith("'s") and w[:-2] in _S_STEMS)),
        all_caps=sum(1 for w in raw if len(w) >= 3 and w.isupper() and w.isalpha()),
    )


def _distinct_hits(words: Sequence[str], vocab: frozenset[str]) -> int:
    """Distinct cue words of ``vocab`` in ``words`` (a repeated word is one cue, not several)."""
    return len(set(words) & vocab)


def _hits(words: Sequence[str], vocab: frozenset[str]) -> int:
    return sum(1 for w in words if w in vocab)


def _phrase_hits(text: str, phrases: Sequence[str]) -> int:
    low = text.lower().replace("’", "'")
    return sum(low.count(p) for p in phrases)


def _softmax(evidence: dict[str, float]) -> dict[str, float]:
    m = max(evidence.values())
    ex = {k: math.exp(v - m) for k, v in evidence.items()}
    z = sum(ex.values())
    return {k: v / z for k, v in ex.items()}


def _clip01(x: float) -> float:
    return min(1.0, max(0.0, x))


def length_score(stats: TextStats) -> float:
    """Length on [0, 1]: log word count between 5 and 90 words (see module doc)."""
    n = max(stats.n_words, 1)
    return _clip01((math.log(n) - math.log(5)) / (math.log(90) - math.log(5)))


def _is_latinate(w: str) -> bool:
    return len(w) >= 7 and w.endswith(lx.LATINATE_SUFFIXES)


def formality_score(text: str, stats: TextStats) -> float:
    """Formality on [0, 1] from function-word and readability statistics (see module doc)."""
    w = stats.words
    n = max(stats.n_words, 1) + 3  # three pseudo-words: short turns carry weaker evidence
    up = (_hits(w, lx.ARTICLES) + _hits(w, lx.PREPOSITIONS) + sum(1 for x in w if _is_latinate(x))
          + _hits(w, lx.FORMAL_MARKERS)) / n
    down = (_hits(w, lx.PRONOUNS) * 0.5 + _hits(w, lx.INFORMAL) * 1.5 + stats.contractions) / n
    mean_len = sum(len(x) for x in w) / len(w) if w else 3.0
    chatty = (1.2 * stats.emoji + 0.6 * min(stats.exclaim, 4) + 0.8 * stats.repeated_punct
              + 0.5 * stats.all_caps)
    lone_i = len(re.findall(r"(?:^|\s)i(?=\s|')", text))
    unpunctuated = 0.0 if re.search(r"[.?!)\]]\s*$", text.strip()) else 1.0
    z = (4.0 * (up - down) + 0.9 * (mean_len - 4.6) - 0.9 * chatty / math.sqrt(n) * 2.0
         - 1.2 * stats.lower_starts - 0.8 * min(lone_i, 2) - 0.6 * unpunctuated + 0.5)
    return _clip01(1.0 / (1.0 + math.exp(-z)))


def _is_content(w: str) -> bool:
    return not (
        w in lx.ARTICLES or w in lx.PREPOSITIONS or w in lx.CONJUNCTIONS or w in lx.AUXILIARIES
        or w in lx.PRONOUNS or w in lx.INFORMAL or w in lx.DETERMINERS or w in lx.ADVERBS_FILLER
        or w in lx.WH_WORDS or w in lx.RELATION_VERBS or w.endswith(lx.CONTRACTION_ENDINGS)
        or w in lx.HUMOR or w in lx.POLITE or (len(w) <= 2 and not w[0].isdigit())
        or bool(_LAUGH.match(w)) or (w.endswith("'s") and _is_function_stem(w[:-2]))
    )


def _is_function_stem(w: str) -> bool:
    return w in lx.PRONOUNS or w in lx.WH_WORDS or w in ("here", "there", "let", "who")


def triple_count(text: str) -> tuple[int, int]:
    """(K, L): proxy (subject, relation, object) triples and the number of words."""
    k = 0
    for clause in _CLAUSE.split(text):
        words = _words(clause)
        chunks, in_chunk = 0, False
        for w in words:
            if _is_content(w):
                if not in_chunk:
                    chunks += 1
                in_chunk = True
            else:
                in_chunk = False
        k += max(0, chunks - 1)
    return k, len(_words(text))


def density_score(text: str, stats: TextStats) -> float:
    """Information density on [0, 1]: triples per word (Eq. 1) blended with content-word share."""
    k, n_words = triple_count(text)
    if n_words == 0:
        return 0.0
    content = [w for w in stats.words if _is_content(w)]
    share = len(content) / n_words
    # Eq. 1 with six pseudo-words in the denominator, so a three-word question is not "dense"
    id_t = k / (n_words + 6)
    mean_len = sum(len(w) for w in content) / len(content) if content else 0.0
    return _clip01(0.5 * _clip01((share - 0.2) / 0.45) + 0.25 * _clip01(id_t / 0.18)
                   + 0.25 * _clip01((mean_len - 4.0) / 4.5))


def tone_probs(text: str, stats: TextStats, formality: float) -> dict[str, float]:
    """Tone distribution over :data:`TONES` from cue-word evidence (see module doc)."""
    w = stats.words
    laughs = sum(1 for x in w if _LAUGH.match(x))
    humor = (1.3 * _hits(w, lx.HUMOR) + 1.3 * laughs + 1.0 * _phrase_hits(text, lx.HUMOR_PHRASES[:9])
             + 0.9 * stats.emoji + 0.3 * min(stats.exclaim, 3))
    gentle = 1.0 * _hits(w, lx.GENTLE) + 1.2 * _phrase_hits(text, lx.GENTLE_PHRASES)
    serious = 0.8 * _hits(w, lx.SERIOUS) + 4.0 * max(0.0, formality - 0.55)
    return _softmax({"humorous": humor, "gentle": 0.8 * gentle, "neutral": 1.0, "serious": serious})


def emotion_probs(text: str, stats: TextStats, formality: float) -> dict[str, float]:
    """Emotion distribution over :data:`EMOTIONS` from cue-word evidence (see module doc)."""
    w = stats.words
    laughs = sum(1 for x in w if _LAUGH.match(x))
    joy = (1.1 * _distinct_hits(w, lx.JOY) + 1.2 * _phrase_hits(text, lx.JOY_PHRASES) + 0.6 * laughs
           + 0.6 * stats.emoji + 0.2 * min(stats.exclaim, 3))
    focused = 0.8 * _hits(w, lx.FOCUSED) + 3.0 * max(0.0, formality - 0.6)
    frustrated = (1.2 * _distinct_hits(w, lx.FRUSTRATED) + 1.5 * _phrase_hits(text, lx.FRUSTRATED_PHRASES)
                  + 0.4 * len(re.findall(r"\?!|!\?", text)))
    # shouting is ambiguous: it intensifies whichever of joy or frustration the words carry
    caps = 0.5 * min(stats.all_caps, 4)
    if joy > frustrated:
        joy += caps
    else:
        frustrated += caps
    anxious = 1.3 * _distinct_hits(w, lx.ANXIOUS) + 1.2 * _phrase_hits(text, lx.ANXIOUS_PHRASES)
    return _softmax({"joy": joy, "neutral": 1.0, "focused": focused, "frustrated": frustrated,
                     "anxious": anxious})


_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_CODE_LINE = re.compile(
    r"^(?:\s{4,}|\t)\S"                                 # indented code / log continuation
    r"|^\s*(?:Traceback \(most recent call last\)|File \"[^\"]+\", line \d+)"
    r"|^\s*(?:[\w.]+(?:Error|Exception|Warning)|panic|fatal|FATAL|ERROR|WARN)\b[:\]]"
    r"|^\s*(?:at\s+[\w.$<>]+\(|\$ |>>> |#include|import |from \S+ import |def |class |return )"
)


def _is_code_line(line: str) -> bool:
    """A pasted code, shell or log line: a known shape, or mostly symbols rather than words."""
    if _CODE_LINE.search(line):
        return True
    core = line.strip()
    if len(core) < 8:
        return False
    symbols = sum(1 for ch in core if ch in "{}[]();=<>+*/\\|&^%$#@~_:")
    return symbols / len(core) > 0.15 and not core.endswith(("?", "."))


def prose(text: str) -> str:
    """The user's own words: fenced blocks, code/log lines and inline code cut out.

    Pasted code, stack traces and logs are not the user's writing style (they would read as
    long, dense and formal), so each pasted block or inline span becomes the single word
    ``code``. A turn that is nothing but code keeps that one word.
    """
    t = _FENCE.sub(" code ", text)
    t = _INLINE_CODE.sub(" code ", t)
    kept, in_block = [], False
    for line in t.splitlines():
        if _is_code_line(line):
            if not in_block:
                kept.append("code")
            in_block = True
        else:
            kept.append(line)
            in_block = False
    out = re.sub(r"[ \t]+", " ", "\n".join(kept)).strip()
    return out or "code"


def extract_offline(text: str) -> dict[str, float | dict[str, float]]:
    """The five-dimension observation of one user turn from lexicons and statistics."""
    text = prose(text)
    stats = text_stats(text)
    formality = formality_score(text, stats)
    return {
        "tone": tone_probs(text, stats, formality),
        "length": length_score(stats),
        "emotion": emotion_probs(text, stats, formality),
        "density": density_score(text, stats),
        "formality": formality,
    }


# -- LLM extractor ---------------------------------------------------------------------
class ToneDist(BaseModel):
    model_config = ConfigDict(extra="forbid")
    humorous: float = Field(ge=0, le=1)
    gentle: float = Field(ge=0, le=1)
    neutral: float = Field(ge=0, le=1)
    serious: float = Field(ge=0, le=1)


class EmotionDist(BaseModel):
    model_config = ConfigDict(extra="forbid")
    joy: float = Field(ge=0, le=1)
    neutral: float = Field(ge=0, le=1)
    focused: float = Field(ge=0, le=1)
    frustrated: float = Field(ge=0, le=1)
    anxious: float = Field(ge=0, le=1)


class StyleRating(BaseModel):
    """What the LLM extractor returns for one user turn."""

    model_config = ConfigDict(extra="forbid")
    tone: ToneDist
    emotion: EmotionDist
    density: float = Field(ge=0, le=1)
    formality: float = Field(ge=0, le=1)


def _normalise(d: dict[str, float], cats: Sequence[str]) -> dict[str, float]:
    z = sum(max(0.0, d[c]) for c in cats)
    if z <= 0:
        return {c: 1.0 / len(cats) for c in cats}
    return {c: max(0.0, d[c]) / z for c in cats}


def rating_to_vector(text: str, rating: StyleRating) -> dict[str, float | dict[str, float]]:
    """A validated LLM rating as an observation (probabilities renormalised, length measured)."""
    return {
        "tone": _normalise(rating.tone.model_dump(), TONES),
        "length": length_score(text_stats(prose(text))),
        "emotion": _normalise(rating.emotion.model_dump(), EMOTIONS),
        "density": float(rating.density),
        "formality": float(rating.formality),
    }


def extract_llm(texts: Sequence[str], model, *, ids: Sequence[str] | None = None) -> list[dict | None]:
    """Rate each user turn through the gateway; ``None`` where the answer stayed malformed."""
    from toolkit.llm.gateway import StructuredRequest
    from toolkit.llm.prompts import load_prompt

    prompt = load_prompt("drift_extract")
    reqs = [
        StructuredRequest(
            messages=({"role": "system", "content": prompt.system},
                      {"role": "user", "content": prompt.render_user(message=t)}),
            schema=StyleRating, role="drift-extract", prompt_version=prompt.version,
            id=(ids[i] if ids is not None else str(i)),
        )
        for i, t in enumerate(texts)
    ]
    outcomes = model.run(reqs, desc="drift extract") if reqs else []
    return [rating_to_vector(t, o.value) if o.ok else None for t, o in zip(texts, outcomes, strict=True)]


def extract_turns(texts: Sequence[str], model=None, *, ids: Sequence[str] | None = None) -> list[dict | None]:
    """Observations for ``texts``: offline when ``model`` is None or offline, else through the LLM."""
    if model is None or model.is_offline:
        return [extract_offline(t) for t in texts]
    return extract_llm(texts, model, ids=ids)
