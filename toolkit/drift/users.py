"""Drifting simulated users: a hidden style schedule that writes varied user turns.

A :class:`DriftingUser` follows a :class:`Schedule` of hidden styles (abrupt switch, gradual
drift, oscillation, stationary). Each turn it writes a message about one of many topics in
its *current* style (openers, question frames, asides, emotion cues and closers are drawn
from large pools and combined, so no two turns share a template), and it expects the reply
in that style (:meth:`DriftingUser.rate_reply`). Ground-truth change points come with the
schedule. Randomness is per (seed, user id, turn), so output never depends on call order.
The style is hidden: the messages are all a tracker ever sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolkit._seeding import item_rng
from toolkit.records import DriftInput, Turn


# -- styles ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Style:
    """A hidden writing style: continuous knobs in [0, 1] and an emotion."""

    name: str
    humor: float
    formality: float
    verbosity: float
    density: float
    gentle: float = 0.0
    emotion: str = "neutral"

    def labels(self) -> dict[str, str]:
        """The style's own labels on the tracker's five dimensions (what a reply should match)."""
        from toolkit.drift.describe import level

        if self.humor >= 0.5:
            tone = "humorous"
        elif self.formality >= 0.6:
            tone = "serious"
        elif self.gentle >= 0.5:
            tone = "gentle"
        else:
            tone = "neutral"
        return {"tone": tone, "length": level("length", self.verbosity),
                "emotion": self.emotion, "density": level("density", self.density),
                "formality": level("formality", self.formality)}


def blend(a: Style, b: Style, alpha: float) -> Style:
    """A style ``alpha`` of the way from ``a`` to ``b`` (emotion switches at the midpoint)."""
    mix = lambda x, y: round((1 - alpha) * x + alpha * y, 4)  # noqa: E731
    return Style(name=f"{a.name}->{b.name}@{alpha:.2f}", humor=mix(a.humor, b.humor),
                 formality=mix(a.formality, b.formality), verbosity=mix(a.verbosity, b.verbosity),
                 density=mix(a.density, b.density), gentle=mix(a.gentle, b.gentle),
                 emotion=a.emotion if alpha < 0.5 else b.emotion)


STYLES: dict[str, Style] = {
    "playful": Style("playful", humor=0.9, formality=0.08, verbosity=0.15, density=0.2, emotion="joy"),
    "casual": Style("casual", humor=0.25, formality=0.2, verbosity=0.25, density=0.3),
    "frustrated": Style("frustrated", humor=0.0, formality=0.2, verbosity=0.25, density=0.25,
                        emotion="frustrated"),
    "gentle": Style("gentle", humor=0.1, formality=0.5, verbosity=0.45, density=0.4, gentle=0.9),
    "anxious": Style("anxious", humor=0.0, formality=0.45, verbosity=0.5, density=0.35,
                     gentle=0.4, emotion="anxious"),
    "formal_dense": Style("formal_dense", humor=0.0, formality=0.95, verbosity=0.85, density=0.9,
                          emotion="focused"),
    "formal_brief": Style("formal_brief", humor=0.0, formality=0.9, verbosity=0.3, density=0.6,
                          emotion="focused"),
}


# -- schedules -------------------------------------------------------------------------
@dataclass(frozen=True)
class Schedule:
    """Which style holds at each turn (1-based), and where the true changes are."""

    kind: str
    styles: tuple[Style, ...]
    n_turns: int
    change_points: tuple[int, ...]
    params: dict[str, Any] = field(default_factory=dict)

    def style_at(self, turn: int) -> Style:
        """The hidden style at ``turn`` (1-based)."""
        p = self.params
        if self.kind == "stationary":
            return self.styles[0]
        if self.kind == "abrupt":
            return self.styles[1] if turn >= p["at"] else self.styles[0]
        if self.kind == "gradual":
            start, end = p["start"], p["end"]
            alpha = min(1.0, max(0.0, (turn - start + 1) / (end - start + 1)))
            return blend(self.styles[0], self.styles[1], alpha)
        if self.kind == "oscillation":
            return self.styles[((turn - 1) // p["period"]) % 2]
        raise ValueError(f"unknown schedule kind {self.kind!r}")


def stationary(style: str | Style, n_turns: int = 30) -> Schedule:
    s = STYLES[style] if isinstance(style, str) else style
    return Schedule("stationary", (s,), n_turns, ())


def abrupt(a: str | Style, b: str | Style, at: int, n_turns: int = 20) -> Schedule:
    """Style ``a`` until turn ``at - 1``, style ``b`` from turn ``at``."""
    sa, sb = (STYLES[x] if isinstance(x, str) else x for x in (a, b))
    return Schedule("abrupt", (sa, sb), n_turns, (at,), {"at": at})


def gradual(a: str | Style, b: str | Style, start: int, end: int, n_turns: int = 24) -> Schedule:
    """Linear drift from ``a`` to ``b`` over turns ``start..end`` (change point: ``start``)."""
    sa, sb = (STYLES[x] if isinstance(x, str) else x for x in (a, b))
    return Schedule("gradual", (sa, sb), n_turns, (start,), {"start": start, "end": end})


def oscillation(a: str | Style, b: str | Style, period: int, n_turns: int = 30) -> Schedule:
    """Alternate between ``a`` and ``b`` every ``period`` turns."""
    sa, sb = (STYLES[x] if isinstance(x, str) else x for x in (a, b))
    cps = tuple(range(1 + period, n_turns + 1, period))
    return Schedule("oscillation", (sa, sb), n_turns, cps, {"period": period})


# -- text material ---------------------------------------------------------------------
@dataclass(frozen=True)
class Topic:
    casual: str
    formal: str
    aspects: tuple[str, ...]
    mishaps: tuple[str, ...]


TOPICS: tuple[Topic, ...] = (
    Topic("git rebase", "interactive rebasing in Git",
          ("history rewriting", "conflict resolution", "shared branches", "reflog recovery"),
          ("nuked my branch", "ate half my commits", "made a mess of main")),
    Topic("sourdough", "sourdough fermentation",
          ("starter hydration", "bulk fermentation temperature", "gluten development", "acidity"),
          ("came out flat as a pancake", "smells like nail polish", "refuses to rise")),
    Topic("index funds", "passive index investing",
          ("expense ratios", "tracking error", "tax efficiency", "rebalancing frequency"),
          ("dropped 5% this week", "confuse me", "are apparently boring")),
    Topic("marathon training", "endurance training for the marathon",
          ("aerobic base building", "tapering", "glycogen replenishment", "injury prevention"),
          ("destroyed my knees", "made me cry on mile 14", "ate my weekends")),
    Topic("python decorators", "decorators in Python",
          ("closure semantics", "functools.wraps", "argument forwarding", "descriptor interaction"),
          ("broke my whole script", "look like magic spells", "confuse my linter")),
    Topic("the french revolution", "the causes of the French Revolution",
          ("fiscal crisis", "Enlightenment ideology", "grain prices", "the Estates-General"),
          ("came up at a pub quiz", "is on my exam", "started an argument at dinner")),
    Topic("kubernetes", "container orchestration with Kubernetes",
          ("pod scheduling", "resource limits", "service discovery", "rolling deployments"),
          ("pods keep dying", "yaml is eating my soul", "cluster just fell over")),
    Topic("houseplants", "indoor plant physiology",
          ("light intensity", "watering frequency", "root aeration", "nutrient uptake"),
          ("monstera is drooping", "fern died again", "cactus looks sad")),
    Topic("jet lag", "circadian adaptation after long-haul travel",
          ("light exposure timing", "melatonin dosing", "sleep pressure", "meal timing"),
          ("wrecked me", "has me awake at 4am", "turned me into a zombie")),
    Topic("sql joins", "join algorithms in relational databases",
          ("hash joins", "nested-loop joins", "index selection", "cardinality estimation"),
          ("return a billion rows", "are slow as heck", "keep duplicating stuff")),
    Topic("mortgages", "fixed-rate and variable-rate mortgage contracts",
          ("amortisation schedules", "interest-rate risk", "early repayment penalties", "loan-to-value ratios"),
          ("scare me", "are a maze", "make zero sense")),
    Topic("black holes", "the thermodynamics of black holes",
          ("Hawking radiation", "the information paradox", "event horizon entropy", "evaporation timescales"),
          ("broke my brain", "keep me up at night", "are terrifying")),
    Topic("coffee brewing", "extraction chemistry in coffee brewing",
          ("grind size distribution", "water temperature", "total dissolved solids", "brew ratio"),
          ("tastes like burnt socks", "is super sour", "turned into mud")),
    Topic("learning spanish", "second-language acquisition of Spanish",
          ("subjunctive mood", "spaced repetition", "comprehensible input", "pronunciation drills"),
          ("is going badly", "has me mixing up ser and estar", "keeps humbling me")),
    Topic("rust lifetimes", "lifetime annotations in Rust",
          ("borrow checking", "variance", "elision rules", "self-referential structures"),
          ("are bullying me", "made the compiler yell at me", "make me want to quit")),
    Topic("climate models", "general circulation climate models",
          ("cloud parameterisation", "ocean heat uptake", "equilibrium climate sensitivity", "ensemble spread"),
          ("seem kinda sus", "confuse my uncle", "came up in a debate")),
    Topic("chess openings", "opening theory in chess",
          ("pawn structure", "piece development", "tempo", "transpositions"),
          ("got me mated in 8 moves", "are impossible to memorise", "keep going wrong")),
    Topic("vaccines", "the immunology of mRNA vaccines",
          ("antigen presentation", "lipid nanoparticles", "antibody titres", "memory B cells"),
          ("made my arm hurt", "came up at work", "confuse my grandma")),
    Topic("home wifi", "wireless network performance in residential buildings",
          ("channel interference", "signal attenuation", "mesh topology", "band steering"),
          ("drops every evening", "is slower than a snail", "hates the bedroom")),
    Topic("budgeting", "personal budgeting methods",
          ("zero-based budgeting", "emergency funds", "variable expenses", "savings rates"),
          ("is a disaster", "lasted three days", "vanished after payday")),
    Topic("neural networks", "optimisation of deep neural networks",
          ("learning-rate schedules", "batch normalisation", "gradient clipping", "weight decay"),
          ("won't converge", "overfit like crazy", "spit out garbage")),
    Topic("bike repair", "bicycle drivetrain maintenance",
          ("chain wear", "derailleur indexing", "cassette compatibility", "lubrication intervals"),
          ("makes a horrible clicking noise", "dropped its chain again", "squeaks like a duck")),
)

CASUAL_OPENERS = ("", "", "ok so ", "yo ", "hey ", "random q: ", "sooo ", "quick one: ", "okay ",
                  "lol ok ", "real talk: ", "hmm ", "wait ", "so like ", "alright ", "question: ")
HUMOR_OPENERS = ("lol ", "haha ok ", "lmao ", "hehe ", "okay don't laugh but ", "brace yourself: ",
                 "plot twist: ", "confession: ")
CASUAL_QUESTIONS = (
    "what's the deal with {c}?", "how do i even start with {c}", "is {c} actually worth it?",
    "can u explain {c} like i'm five", "why is {c} so confusing lol", "what's the trick with {c}",
    "any tips on {c}?", "how does {c} work tho", "do i need to care about {a} for {c}?",
    "what's {a} and why does everyone bring it up", "{c}: worth the hype or nah?",
    "so {c}... where do i begin", "whats the easiest way to get {c} right",
    "be honest, is {a} a big deal?", "how bad is it if i ignore {a}?",
)
CASUAL_ASIDES = (
    "my {c} {m}", "tried reading about it but got lost", "my friend says it's easy, i doubt it",
    "keeping it simple pls", "no big words", "short answer is fine", "just the gist",
    "i've got like 5 minutes", "google was no help", "asking for a friend",
)
HUMOR_ASIDES = ("asking for a friend 😅", "my {c} {m} lol", "send help 😂", "my brain is melting haha",
                "for science obviously", "not gonna lie, i'm lost lol", "pls be gentle with my tiny brain 🙃",
                "my cat has opinions too lol", "no judgement pls haha")
CASUAL_CLOSERS = ("", "", "thx", "ty!", "cheers", "🙏", "thanks!", "lol", "haha", "pls")
MIDDLE_QUESTIONS = (
    "Could you explain how {c} works?", "I'd like to understand {a} a bit better.",
    "What's a good way to approach {c}?", "How much does {a} matter for {c}?",
    "Can you walk me through {a}?", "I've been reading about {c}, and I'm not sure how {a} fits in.",
    "What would you recommend for {c}?", "Is there a simple way to think about {a}?",
    "How do people usually handle {a} when dealing with {c}?",
)
MIDDLE_ASIDES = (
    "I've read a few articles but they disagree.", "I'm fairly new to this.", "An example would help.",
    "I'd like to get this right.", "A short overview is enough for now.",
    "My {c} {m}, which is why I'm asking.", "I'm mostly interested in the practical side.",
    "I also wonder whether {b} plays a part.",
)
MIDDLE_CLOSERS = ("", "Thanks!", "Thank you.", "Thanks in advance.", "Appreciate it.")
FORMAL_OPENERS = ("", "", "", "Good afternoon. ", "I have a further question. ",
                  "Following up on the previous point, ", "To continue, ", "A related question: ")
FORMAL_QUESTIONS = (
    "Could you provide a rigorous explanation of {f}, with particular attention to {a} and {b}?",
    "Please outline the principal trade-offs between {a} and {b} in {f}.",
    "What are the established mechanisms by which {a} influences {b} in the context of {f}?",
    "I would appreciate a systematic comparison of {a} and {b} as they pertain to {f}.",
    "Please provide a detailed account of {f}, including the role of {a} and the implications for {b}.",
    "How should one evaluate the relative importance of {a} and {b} when assessing {f}?",
    "Could you clarify the theoretical basis of {a} within {f}, and its consequences for {b}?",
    "What empirical evidence supports current recommendations regarding {a} in {f}?",
    "Please summarise the methodological considerations governing {a} and {b} in {f}.",
)
FORMAL_BRIEF = (
    "Could you clarify the role of {a} in {f}?", "How does {a} affect {b}?",
    "Please explain {a} in {f} concisely.", "What determines {a} in {f}?",
    "Is {a} relevant to {b}?", "What is the standard treatment of {a}?",
)
FORMAL_ELABORATIONS = (
    "In particular, I am interested in how {a} interacts with {b} under realistic constraints.",
    "Please state any assumptions explicitly and distinguish established results from conjecture.",
    "A comparison with the conventional treatment of {b} would also be valuable.",
    "Where relevant, quantitative estimates of {a} and references to primary sources would be appreciated.",
    "For context, my analysis concerns {f} in a setting where {b} is the binding constraint.",
    "It would be helpful to address the limitations of current approaches to {a}.",
    "Furthermore, please specify the conditions under which {b} ceases to be the dominant factor.",
    "Consequently, the relationship between {a} and measurable outcomes is of primary concern.",
)
FORMAL_CLOSERS = ("", "", "Thank you.", "Thank you in advance.", "I appreciate your assistance.")
GENTLE_BITS = ("Hi there, hope you're well! ", "Hello! ", "Hi, sorry to bother you again. ",
               "Thank you so much for the last answer. ")
GENTLE_ASIDES = ("No rush at all.", "Take your time, please.", "If you don't mind, a gentle explanation would help.",
                 "Thanks so much for your patience with me.", "I hope that's not a silly question.")
EMOTION_BITS: dict[str, tuple[str, ...]] = {
    "joy": ("this is so fun!!", "love this stuff", "honestly so excited about it 🎉", "yay, finally getting somewhere!",
            "ok this is awesome"),
    "frustrated": ("ugh, still not working.", "this is so annoying", "seriously, why is this so hard?!",
                   "i've tried this three times already, ugh", "nothing works and i'm fed up",
                   "it keeps failing again and again"),
    "anxious": ("I'm a bit worried I'm doing it wrong.", "Honestly I'm nervous about getting this wrong.",
                "The deadline is tomorrow and I'm stressed.", "I'm scared I'll make it worse.",
                "I'm concerned this could be risky."),
    "focused": ("Specifically, I need the precise conditions.", "Please be precise and structured.",
                "A step-by-step analysis would be ideal.", "I need a detailed and exact answer."),
    "neutral": ("",),
}
CORRECTIONS_CASUAL = ("way too long lol, shorter pls", "umm can u keep it chill and short",
                      "less essay more vibes pls 😅", "tl;dr pls")
CORRECTIONS_FORMAL = ("Please respond with greater precision and detail.",
                      "The previous answer was insufficiently rigorous; please elaborate.",
                      "Please adopt a more formal register in your reply.")


def _pick(rng: np.random.Generator, pool: Sequence[str]) -> str:
    return pool[int(rng.integers(len(pool)))]


def _fill(template: str, topic: Topic, rng: np.random.Generator) -> str:
    order = rng.permutation(len(topic.aspects))
    a, b = topic.aspects[int(order[0])], topic.aspects[int(order[1])]
    return template.format(c=topic.casual, f=topic.formal, a=a, b=b, m=_pick(rng, topic.mishaps))


def _sharp(knob: float) -> float:
    """How often a knob's discrete choice is taken: near 0 or 1 away from the middle."""
    return 1.0 / (1.0 + float(np.exp(-12.0 * (knob - 0.5))))


def _register(formality: float, rng: np.random.Generator) -> str:
    """Casual, middle or formal wording, peaked at the register nearest the knob."""
    centres = {"casual": 0.1, "middle": 0.5, "formal": 0.9}
    w = {k: float(np.exp(-(((formality - c) / 0.12) ** 2))) for k, c in centres.items()}
    u = rng.random() * sum(w.values())
    for k in ("casual", "middle", "formal"):
        u -= w[k]
        if u <= 0:
            return k
    return "formal"


def write_turn(style: Style, topic: Topic, rng: np.random.Generator) -> str:
    """One user message about ``topic`` in ``style`` (each part sampled by the style's knobs)."""
    register = _register(style.formality, rng)
    formal = register == "formal"
    funny = rng.random() < _sharp(style.humor)
    gentle = rng.random() < _sharp(style.gentle)
    # natural variation: now and then a much longer or much shorter turn than usual
    verb = style.verbosity + (0.35 if rng.random() < 0.12 else 0.0) - (0.2 if rng.random() < 0.12 else 0.0)
    n_extra = int(rng.binomial(3, min(1.0, max(0.0, verb))))
    parts: list[str] = []
    if formal:
        dense = rng.random() < _sharp(style.density)
        q = _fill(_pick(rng, FORMAL_QUESTIONS if dense else FORMAL_BRIEF), topic, rng)
        opener = _pick(rng, GENTLE_BITS) if gentle else _pick(rng, FORMAL_OPENERS)
        parts.append(opener + (q[0].lower() + q[1:] if opener.rstrip().endswith(",") else q))
        for tpl in rng.permutation(FORMAL_ELABORATIONS)[:n_extra]:
            parts.append(_fill(str(tpl), topic, rng))
        if style.emotion != "neutral" and rng.random() < 0.6:
            parts.append(_pick(rng, EMOTION_BITS[style.emotion]))
        if gentle:
            parts.append(_pick(rng, GENTLE_ASIDES))
        parts.append(_pick(rng, FORMAL_CLOSERS))
    elif register == "middle" and not funny:
        opener = _pick(rng, GENTLE_BITS) if gentle else ""
        parts.append(opener + _fill(_pick(rng, MIDDLE_QUESTIONS), topic, rng))
        for tpl in rng.permutation(MIDDLE_ASIDES)[:n_extra]:
            parts.append(_fill(str(tpl), topic, rng))
        if style.emotion != "neutral" and rng.random() < 0.6:
            parts.append(_pick(rng, EMOTION_BITS[style.emotion]))
        if gentle:
            parts.append(_pick(rng, GENTLE_ASIDES))
        parts.append(_pick(rng, MIDDLE_CLOSERS))
    else:
        opener = _pick(rng, HUMOR_OPENERS if funny else CASUAL_OPENERS)
        parts.append(opener + _fill(_pick(rng, CASUAL_QUESTIONS), topic, rng))
        asides = HUMOR_ASIDES if funny else CASUAL_ASIDES
        for tpl in rng.permutation(asides)[: max(0, n_extra - 1)]:
            parts.append(_fill(str(tpl), topic, rng))
        if style.emotion != "neutral" and rng.random() < 0.7:
            parts.append(_pick(rng, EMOTION_BITS[style.emotion]))
        if gentle:
            parts.append(_pick(rng, GENTLE_ASIDES))
        parts.append(_pick(rng, CASUAL_CLOSERS))
        if rng.random() < 0.5:
            parts = [p.lower() for p in parts]
    return " ".join(p for p in parts if p).strip()


# -- the user --------------------------------------------------------------------------
@dataclass
class DriftingUser:
    """A simulated user whose hidden style follows ``schedule``; it writes one turn per call."""

    id: str
    schedule: Schedule
    seed: int = 0
    topics: tuple[Topic, ...] = TOPICS

    def init_state(self) -> dict[str, Any]:
        """A fresh conversation state."""
        return {"turn": 0, "topic": None}

    def respond(self, reply: str | None, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The next user message given the assistant's last reply (None before the first)."""
        turn = state["turn"] + 1
        rng = item_rng(self.seed, self.id, turn)
        style = self.schedule.style_at(turn)
        topic_i = state["topic"]
        if topic_i is None or rng.random() < 0.35:
            topic_i = int(rng.integers(len(self.topics)))
        text = write_turn(style, self.topics[topic_i], rng)
        if reply is not None and self.rate_reply(reply, turn) < 0.6 and rng.random() < 0.5:
            fix = _pick(rng, CORRECTIONS_FORMAL if style.formality >= 0.5 else CORRECTIONS_CASUAL)
            text = f"{fix} {text}"
        return text, {"turn": turn, "topic": topic_i}

    def expected_style(self, turn: int) -> dict[str, str]:
        """The labels a reply at ``turn`` should carry (the user's current style)."""
        return self.schedule.style_at(turn).labels()

    def rate_reply(self, reply: str, turn: int) -> float:
        """Share of the five dimensions on which ``reply`` matches the expected style."""
        from toolkit.drift.describe import labels
        from toolkit.drift.extract import extract_offline

        got = labels(extract_offline(reply))
        want = self.expected_style(turn)
        return sum(got[d] == want[d] for d in want) / len(want)

    def dialogue(self, replies: Sequence[str] | None = None) -> DriftInput:
        """The whole schedule as a drift input (assistant turns from ``replies`` or empty)."""
        state = self.init_state()
        turns, last = [], None
        for i in range(self.schedule.n_turns):
            msg, state = self.respond(last, state)
            last = replies[i] if replies is not None else None
            turns.append(Turn(user=msg, assistant=last or ""))
        return DriftInput(id=self.id, turns=turns)


def standard_users(seed: int = 0, n_per_kind: int = 6) -> list[DriftingUser]:
    """A balanced panel: abrupt switches (both directions), gradual drifts, oscillations, stationary."""
    rng = item_rng(seed, "panel")
    names = sorted(STYLES)
    pairs_casual = ["playful", "casual", "frustrated"]
    pairs_formal = ["formal_dense", "formal_brief"]
    users: list[DriftingUser] = []
    for i in range(n_per_kind):
        a = pairs_casual[i % 3]
        b = pairs_formal[(i // 3) % 2]
        if i % 2:
            a, b = b, a
        at = int(rng.integers(3, 16))
        users.append(DriftingUser(f"abrupt-{i:02d}-{a}-to-{b}", abrupt(a, b, at, n_turns=at + 10), seed))
    for i in range(n_per_kind):
        a, b = pairs_casual[i % 3], pairs_formal[i % 2]
        if i % 2:
            a, b = b, a
        start = int(rng.integers(5, 12))
        users.append(DriftingUser(f"gradual-{i:02d}-{a}-to-{b}",
                                  gradual(a, b, start, start + 5, n_turns=start + 14), seed))
    for i in range(n_per_kind):
        a, b = pairs_casual[i % 3], pairs_formal[(i + 1) % 2]
        period = int(rng.integers(6, 9))
        users.append(DriftingUser(f"oscillation-{i:02d}-{a}-{b}", oscillation(a, b, period, 30), seed))
    for i in range(n_per_kind):
        s = names[i % len(names)]
        users.append(DriftingUser(f"stationary-{i:02d}-{s}", stationary(s, 30), seed))
    return users


def shipped_panel(seed: int = 0) -> list[DriftingUser]:
    """The schedules shipped in ``fixtures/drift/`` (the case study first)."""
    spec = [
        ("case-study-humorous-to-formal", abrupt("playful", "formal_dense", 3, n_turns=8)),
        ("abrupt-casual-to-formal-t8", abrupt("casual", "formal_dense", 8, n_turns=20)),
        ("abrupt-formal-to-playful-t10", abrupt("formal_dense", "playful", 10, n_turns=20)),
        ("abrupt-frustrated-to-formal-brief-t6", abrupt("frustrated", "formal_brief", 6, n_turns=16)),
        ("abrupt-formal-brief-to-casual-t12", abrupt("formal_brief", "casual", 12, n_turns=24)),
        ("abrupt-playful-to-formal-t15", abrupt("playful", "formal_dense", 15, n_turns=25)),
        ("gradual-casual-to-formal-t8-13", gradual("casual", "formal_dense", 8, 13, n_turns=24)),
        ("gradual-formal-to-playful-t6-11", gradual("formal_dense", "playful", 6, 11, n_turns=22)),
        ("oscillation-playful-formal-p6", oscillation("playful", "formal_dense", 6, n_turns=30)),
        ("oscillation-casual-formal-brief-p8", oscillation("casual", "formal_brief", 8, n_turns=30)),
    ] + [(f"stationary-{name.replace('_', '-')}", stationary(name, 30)) for name in sorted(STYLES)]
    return [DriftingUser(uid, sched, seed) for uid, sched in spec]


def gold_record(user: DriftingUser) -> dict[str, Any]:
    """The ground truth of one user's schedule, as stored next to its dialogue."""
    s = user.schedule
    return {"kind": s.kind, "n_turns": s.n_turns, "change_points": list(s.change_points),
            "styles": [x.name for x in s.styles], "params": dict(s.params)}
