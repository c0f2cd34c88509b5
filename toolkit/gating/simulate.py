"""Simulated memory users: PerMemBench-like fact streams with hidden, delayed utility.

Each simulated user has a persona (a few favourite topic families, a handful of personal
named entities, personal tastes in what kind of fact matters to them) and a stream of
sessions; about 16 candidate facts are extracted per session. Whether a fact is used
later is drawn from a hidden logistic model whose logit mixes

* a part **shared by all users**: some kinds of fact (standing preferences, constraints,
  plans) and some topic families are generally useful, small talk and transient states
  are not; and
* a part **of the user's own**: the persona's favourite topics, personal entities and a
  per-user taste over kinds.

``shared_fraction`` is the share of the utility logit's variance that comes from the
shared part (0 = fully personal, 1 = identical rule for everybody). A fact that is used
gets its first hit after a random delay (log-normal, scaled to the history length); hits
that would fall after the last session are never observed, exactly as in a finite log.
Fact texts are short templated sentences whose words carry the topic, kind and entities,
mixed with filler words, so TF-IDF can learn utility but not perfectly.

Besides the facts, :func:`simulate_users` returns later *probe turns*: user messages
that need a fact (paraphrasing it) plus generic messages that need no memory; the
labelling pipeline (:mod:`toolkit.gating.labels`) re-derives hits from them.

Everything is deterministic per ``seed``; each user's randomness comes from
``item_rng(seed, "gating-sim", user_index)``, so a user's stream does not depend on how
many other users are generated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from toolkit._seeding import item_rng
from toolkit.records import Fact

__all__ = ["SIZES", "SimUser", "ProbeTurn", "simulate_benchmark", "simulate_users", "stream_stats"]

#: size presets: users, sessions (mean, sd, min, max), facts per session (mean), delay scale
#: (median first-hit delay as a share of the history), utility intercept (tuned once so the
#: observed hit rate lands near Tables 5-6 at the default shared_fraction)
SIZES: dict[str, dict[str, float]] = {
    "tiny": {"users": 4, "sess_mean": 14, "sess_sd": 2, "sess_min": 10, "sess_max": 18,
             "facts": 9.0, "delay": 0.30, "intercept": -1.6},
    "S": {"users": 20, "sess_mean": 54.25, "sess_sd": 9.9, "sess_min": 36, "sess_max": 70,
          "facts": 15.8, "delay": 0.27, "intercept": -2.45},
    "L": {"users": 20, "sess_mean": 150.35, "sess_sd": 30.8, "sess_min": 94, "sess_max": 193,
          "facts": 16.3, "delay": 0.21, "intercept": -1.85},
}

TOPICS: dict[str, tuple[str, ...]] = {
    "cooking": ("recipe", "pasta", "curry", "oven", "spices", "baking", "dinner", "sauce",
                "vegetarian", "kitchen", "bread", "soup"),
    "travel": ("flight", "hotel", "itinerary", "passport", "beach", "luggage", "train",
               "visa", "museum", "lisbon", "kyoto", "roadtrip"),
    "fitness": ("running", "marathon", "gym", "squats", "cardio", "yoga", "workout",
                "stretching", "cycling", "treadmill", "pace", "protein"),
    "finance": ("bills", "savings", "mortgage", "invoice", "taxes", "retirement",
                "spreadsheet", "loan", "expenses", "stocks", "rent", "insurance"),
    "gardening": ("tomatoes", "compost", "seedlings", "garden", "roses", "soil", "pruning",
                  "herbs", "greenhouse", "watering", "mulch", "orchids"),
    "music": ("guitar", "piano", "playlist", "concert", "chords", "jazz", "album", "band",
              "lessons", "vinyl", "choir", "violin"),
    "pets": ("dog", "cat", "vet", "leash", "kibble", "puppy", "kitten", "grooming",
             "aquarium", "walks", "litter", "parrot"),
    "work": ("deadline", "manager", "promotion", "meeting", "client", "report", "quarterly",
             "presentation", "colleague", "roadmap", "slides", "interview"),
    "health": ("allergy", "migraine", "doctor", "medication", "sleep", "insomnia", "diet",
               "blood", "therapy", "dentist", "asthma", "physio"),
    "reading": ("novel", "author", "library", "fantasy", "memoir", "chapter", "bookclub",
                "poetry", "kindle", "mystery", "biography", "paperback"),
    "photography": ("camera", "lens", "portrait", "lightroom", "tripod", "aperture",
                    "sunset", "prints", "mirrorless", "exposure", "film", "drone"),
    "coding": ("python", "repository", "bug", "database", "frontend", "api", "deployment",
               "typescript", "refactor", "tests", "server", "rust"),
    "parenting": ("toddler", "daughter", "son", "school", "homework", "daycare", "bedtime",
                  "playdate", "nanny", "teenager", "tutor", "diapers"),
    "home": ("renovation", "plumber", "paint", "kitchen", "furniture", "roof", "apartment",
             "landlord", "tiles", "garage", "heating", "sofa"),
    "cars": ("car", "mechanic", "tires", "electric", "charging", "commute", "engine",
             "lease", "brakes", "hybrid", "parking", "motorbike"),
    "gaming": ("console", "rpg", "multiplayer", "controller", "steam", "strategy", "quest",
               "esports", "boardgame", "dungeon", "speedrun", "chess"),
    "language": ("spanish", "japanese", "vocabulary", "grammar", "duolingo", "fluency",
                 "french", "pronunciation", "tutor", "kanji", "conjugation", "german"),
    "movies": ("film", "series", "documentary", "netflix", "director", "thriller", "comedy",
               "cinema", "anime", "sequel", "trailer", "horror"),
    "outdoors": ("hiking", "camping", "trail", "tent", "kayak", "climbing", "backpack",
                 "summit", "fishing", "national", "park", "boots"),
    "coffee": ("espresso", "roast", "latte", "grinder", "beans", "tea", "matcha", "brew",
               "cafe", "barista", "decaf", "pourover"),
}

#: fact kinds: the cue phrases that express them and their generally-shared utility (logit).
#: Written apart from the offline gating rubric (toolkit/resources/gating/rubric.yaml, the
#: B.1 rubric's words): no phrase here shares a cue with it (tests/test_gating_rubric.py).
KINDS: dict[str, tuple[tuple[str, ...], float]] = {
    "preference": (("would rather have", "really enjoys", "is put off by", "favorite is",
                    "always chooses", "can't stand"), 1.3),
    "constraint": (("is allergic to", "can spend little on", "cannot use", "must avoid",
                    "can only manage", "needs step-free"), 1.5),
    "plan": (("is getting ready to try", "intends to start", "has promised to take up",
              "will begin", "is saving up for", "signed up for"), 1.0),
    "relationship": (("shares with partner", "goes with sister", "helps a friend with",
                      "her brother loves", "his mother asked about", "coworker recommended"),
                     0.4),
    "biography": (("works on", "lives near", "has owned", "grew up with", "studied",
                   "has years of"), 0.3),
    "question": (("asked how to", "looked up", "wondered about", "asked for a quick",
                  "wanted a definition of", "checked"), -0.8),
    "transient": (("is worn out by this week's", "is busy with this morning's", "just finished",
                   "is currently waiting on", "spilled coffee near", "was late for"), -1.3),
    "smalltalk": (("chatted about", "joked about", "mentioned the weather and",
                   "said thanks for help with", "greeted the assistant about",
                   "traded niceties on"), -1.6),
}

FILLER: tuple[str, ...] = (
    "weekend", "morning", "evening", "new", "old", "compact", "big", "local", "cheap", "quick",
    "online", "nearby", "monday", "friday", "summer", "winter", "spring", "autumn", "usual",
    "recent", "second", "extra", "simple", "fancy", "quiet", "busy", "short", "long", "daily",
    "weekly", "city", "downtown", "home", "office", "afternoon", "holiday", "tonight",
    "tomorrow", "yesterday", "month", "year", "some", "several", "favorite", "basic", "classic",
)

GENERIC_TURNS: tuple[str, ...] = (
    "What is the boiling point of water at high altitude?",
    "Explain the difference between a list and a tuple.",
    "Give me a synonym for happy.",
    "How many days are there in a leap year?",
    "Summarise the causes of the first world war.",
    "Translate good morning into Italian.",
    "What does photosynthesis produce?",
    "Write a haiku about rain.",
    "How do vaccines train the immune system?",
    "What is the tallest mountain in Africa?",
    "Define inflation in one sentence.",
    "Tell me a fun fact about octopuses.",
    "My teacher asked what causes the seasons; can you explain?",
    "Could you suggest a good name for a sailing boat?",
    "I wonder how long light takes to reach the earth.",
    "What would you recommend as a first programming language in general?",
)

PROBE_OPENERS: tuple[str, ...] = (
    "Can you help me again with my", "Any ideas for my", "Remember my",
    "Given what I told you about my", "Based on my", "I need advice about my",
    "Could you plan something around my", "What would you suggest for my",
    "Quick question, what about the", "Thinking again about the", "Anything new on",
    "Should I change anything regarding",
)

_PERSONA_TOPICS = 4  # favourite topic families per user


@dataclass(frozen=True)
class ProbeTurn:
    """A later user message in a session; the hidden ``needs`` names the facts it requires."""

    user: str
    session: int
    text: str
    needs: tuple[str, ...] = ()


@dataclass
class SimUser:
    """One simulated user: persona, facts (with hidden hits), probe turns and hidden utility."""

    user: str
    persona: str
    n_sessions: int
    facts: list[Fact] = field(default_factory=list)
    turns: list[ProbeTurn] = field(default_factory=list)
    hidden_p: dict[str, float] = field(default_factory=dict)  # fact_id -> P(used eventually)
    hidden_shared: dict[str, float] = field(default_factory=dict)  # shared logit part (z)
    hidden_own: dict[str, float] = field(default_factory=dict)  # user's own logit part (z)
    hidden_kind: dict[str, str] = field(default_factory=dict)  # fact_id -> generator kind


def _preset(size: str) -> dict[str, float]:
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, not {size!r}")
    return SIZES[size]


def _shared_weights(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Shared (all-user) utility of each topic family and each kind, standardised."""
    rng = item_rng(seed, "gating-sim", "shared")
    topic_w = rng.normal(0.0, 1.0, len(TOPICS))
    kind_w = np.array([u for _, u in KINDS.values()]) + rng.normal(0.0, 0.2, len(KINDS))
    return topic_w, kind_w


def _standardise(x: np.ndarray) -> np.ndarray:
    sd = float(x.std())
    return (x - x.mean()) / sd if sd > 0 else x - x.mean()


def _simulate_user(idx: int, preset: dict[str, float], *, seed: int, n_sessions: int | None,
                   shared_fraction: float, scale: float) -> SimUser:
    rng = item_rng(seed, "gating-sim", idx)
    topic_names = list(TOPICS)
    kind_names = list(KINDS)
    n_t, n_k = len(topic_names), len(kind_names)
    user = f"u{idx:02d}"
    if n_sessions is None:
        n = int(round(rng.normal(preset["sess_mean"], preset["sess_sd"])))
        n = int(np.clip(n, preset["sess_min"], preset["sess_max"]))
    else:
        n = int(n_sessions)
    # persona: favourite topics (talked about more and useful to this user), entities, tastes
    fav = rng.choice(n_t, size=_PERSONA_TOPICS, replace=False)
    topic_freq = np.ones(n_t)
    topic_freq[fav] += 2.0
    topic_freq /= topic_freq.sum()
    own_topic = rng.normal(0.0, 0.15, n_t)
    own_topic[fav] += rng.uniform(1.5, 3.0, len(fav))
    own_kind = rng.normal(0.0, 0.3, n_k)
    entities = {int(t): (_coined_name(rng), _coined_name(rng)) for t in fav}
    persona = (f"{user} cares most about " + ", ".join(topic_names[t] for t in fav)
               + "; personal names: " + ", ".join(f"{e}" for t in fav for e in entities[int(t)]))
    # shared part from the seed-level tables; both parts standardised over the user's mix
    shared_topic, shared_kind = _shared_weights(seed)
    bias = rng.normal(0.0, 0.35)

    facts_raw: list[tuple[int, int, int, str, bool]] = []  # session, topic, kind, text, has_entity
    for s in range(n):
        k_facts = max(3, int(rng.poisson(preset["facts"])))
        for _ in range(k_facts):
            t = int(rng.choice(n_t, p=topic_freq))
            k = int(rng.integers(n_k))
            cue = str(rng.choice(KINDS[kind_names[k]][0]))
            words = list(rng.choice(TOPICS[topic_names[t]], size=2, replace=False))
            has_ent = bool(t in entities and rng.random() < 0.45)
            if has_ent:
                words.insert(0, str(rng.choice(entities[t])))
            fill = list(rng.choice(FILLER, size=int(rng.integers(1, 4)), replace=False))
            text = f"User {cue} {' '.join(words)} ({' '.join(fill)})."
            facts_raw.append((s, t, k, text, has_ent))

    t_idx = np.array([f[1] for f in facts_raw])
    k_idx = np.array([f[2] for f in facts_raw])
    ent = np.array([f[4] for f in facts_raw], dtype=float)
    shared = _standardise(shared_topic[t_idx] + shared_kind[k_idx])
    own = _standardise(own_topic[t_idx] + own_kind[k_idx] + 1.5 * ent)
    a = float(np.clip(shared_fraction, 0.0, 1.0))
    logit = preset["intercept"] + bias + scale * (np.sqrt(a) * shared + np.sqrt(1 - a) * own)
    p_used = 1.0 / (1.0 + np.exp(-logit))

    out = SimUser(user=user, persona=persona, n_sessions=n)
    turns_by_session: dict[int, list[tuple[str, str]]] = {}
    for j, (s, t, _k, text, _e) in enumerate(facts_raw):
        fid = f"{user}-s{s:03d}-f{j:04d}"
        out.hidden_p[fid] = float(p_used[j])
        out.hidden_shared[fid] = float(shared[j])
        out.hidden_kind[fid] = kind_names[int(k_idx[j])]
        out.hidden_own[fid] = float(own[j])
        hits: list[int] = []
        if rng.random() < p_used[j]:
            delay = 1 + int(rng.lognormal(np.log(max(1.0, preset["delay"] * n)), 0.7))
            h = s + delay
            while h < n:
                hits.append(h)
                h += 1 + int(rng.geometric(0.12))
                if rng.random() < 0.45:
                    break
        out.facts.append(Fact(user=user, fact_id=fid, session=s, text=text, hits=hits))
        for h in hits:
            turns_by_session.setdefault(h, []).append((fid, _probe_text(rng, text, topic_names[t])))
    for s in range(n):
        for fid, txt in turns_by_session.get(s, []):
            out.turns.append(ProbeTurn(user=user, session=s, text=txt, needs=(fid,)))
        for _ in range(int(rng.integers(1, 4))):
            out.turns.append(ProbeTurn(user=user, session=s, text=str(rng.choice(GENERIC_TURNS))))
    return out


def _coined_name(rng: np.random.Generator) -> str:
    """A made-up personal name (pet, project, place) that almost surely no other user has."""
    syl = ("ka", "lo", "mi", "ru", "te", "vo", "zan", "pel", "dor", "shi", "bex", "qua", "nim",
           "tor", "ya", "fen", "gil", "hu", "jor", "wex")
    return "".join(rng.choice(syl, size=3))


def _probe_text(rng: np.random.Generator, fact_text: str, topic: str) -> str:
    """A later user message that needs the fact: its content words, rephrased as a request."""
    body = fact_text.removeprefix("User ").split("(")[0].strip()
    words = [w for w in body.replace(".", "").split() if len(w) > 3]
    keep = [w for w in words if rng.random() < 0.75] or words[:1]
    return f"{rng.choice(PROBE_OPENERS)} {' '.join(keep)}? It's about {topic}."


def simulate_users(size: str = "S", *, seed: int = 0, n_users: int | None = None,
                   n_sessions: int | None = None, shared_fraction: float = 0.5,
                   scale: float = 2.6) -> list[SimUser]:
    """Simulated users with personas, fact streams, probe turns and their hidden utility.

    ``scale`` multiplies the standardised utility logit (larger: used facts are easier to tell).
    """
    preset = _preset(size)
    users = int(preset["users"]) if n_users is None else int(n_users)
    return [_simulate_user(i, preset, seed=seed, n_sessions=n_sessions,
                           shared_fraction=shared_fraction, scale=scale) for i in range(users)]


def simulate_benchmark(size: str = "S", *, seed: int = 0, n_users: int | None = None,
                       n_sessions: int | None = None, shared_fraction: float = 0.5) -> list[Fact]:
    """PerMemBench-like fact records (``"tiny"``, ``"S"`` or ``"L"``) with hidden delayed hits.

    ``n_users``/``n_sessions`` override the preset (every user then has exactly
    ``n_sessions`` sessions); ``shared_fraction`` is the share of utility variance common to
    all users. Deterministic per ``seed``; facts are ordered by user, then session.
    """
    users = simulate_users(size, seed=seed, n_users=n_users, n_sessions=n_sessions,
                           shared_fraction=shared_fraction)
    return [f for u in users for f in u.facts]


def stream_stats(facts: list[Fact]) -> dict[str, dict[str, float]]:
    """Per-user statistics in the layout of Tables 5-6: mean, median, min, max, std (ddof=1)."""
    by_user: dict[str, list[Fact]] = {}
    for f in facts:
        by_user.setdefault(f.user, []).append(f)
    rows: dict[str, list[float]] = {"sessions": [], "entries": [], "hit_entries": [],
                                    "hit_rate": [], "delay": []}
    for fs in by_user.values():
        hit = [f for f in fs if f.hits]
        rows["sessions"].append(len({f.session for f in fs}))
        rows["entries"].append(len(fs))
        rows["hit_entries"].append(len(hit))
        rows["hit_rate"].append(len(hit) / len(fs))
        if hit:
            rows["delay"].append(float(np.mean([f.hits[0] - f.session for f in hit])))
    out: dict[str, dict[str, float]] = {}
    for key, vals in rows.items():
        v = np.asarray(vals, dtype=float)
        out[key] = {"mean": float(v.mean()) if v.size else float("nan"),
                    "median": float(np.median(v)) if v.size else float("nan"),
                    "min": float(v.min()) if v.size else float("nan"),
                    "max": float(v.max()) if v.size else float("nan"),
                    "std": float(v.std(ddof=1)) if v.size > 1 else float("nan"),
                    "n": int(v.size)}
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m toolkit.gating.simulate --size S -o facts.jsonl``: write a simulated stream."""
    import argparse

    from toolkit.datasets.jsonl import write_jsonl

    p = argparse.ArgumentParser(prog="python -m toolkit.gating.simulate",
                                description="Write simulated PerMemBench-like fact records (JSONL).")
    p.add_argument("--size", default="S", choices=sorted(SIZES))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--users", type=int, default=None)
    p.add_argument("--sessions", type=int, default=None)
    p.add_argument("--shared-fraction", type=float, default=0.5)
    p.add_argument("-o", "--output", default="-")
    a = p.parse_args(argv)
    write_jsonl(simulate_benchmark(a.size, seed=a.seed, n_users=a.users, n_sessions=a.sessions,
                                   shared_fraction=a.shared_fraction), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
