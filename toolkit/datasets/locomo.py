"""LoCoMo adapter: each speaker's observations as fact records, used when they are QA evidence.

``locomo10.json`` (snap-research/LoCoMo) holds 10 long two-person conversations. Every
speaker of every conversation becomes one user (``"<sample_id>:<speaker>"``, 20 users);
``observation["session_k_observation"][speaker]`` lists ``[fact_text, dia_id]`` pairs, and
each becomes a :class:`~toolkit.records.Fact` in session ``k``. A fact is *used* when one
of its dia_ids is evidence for a QA item. The QA items are asked after the last session,
so a used fact gets the single hit ``last_session + 1`` of its conversation.

Every known quirk of the file is handled and counted in :class:`LocomoReport`:

* QA ``category`` ids are undocumented; we map 1 multi-hop, 2 temporal, 3 open-domain,
  4 single-hop, 5 adversarial (the mapping the data supports) and count each; items of an
  unknown category are counted and ignored; adversarial items (5) are ignored by default
  (their questions ask about things that were never said) but can be included;
* malformed evidence strings are repaired: ``"D:11:26"`` -> ``D11:26``, several ids in
  one string (``"D8:6; D9:17"``, ``"D9:1 D4:4 D4:6"``) are split, zero-padded turns
  (``"D30:05"``) are normalised; a string with no id in it (``"D"``) and ids that name no
  turn of the conversation are dropped and counted;
* QA items with empty evidence are counted (they mark nothing as used);
* integer answers and items carrying ``adversarial_answer`` instead of ``answer`` are
  counted (answers are not used by the labels);
* extra ``session_N_date_time`` keys without a session (conv-26) are counted and ignored;
* observation dia_ids given as a list or a comma-separated string are split (the fact is
  used if any of them is evidence).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.errors import InputError
from toolkit.records import Fact

__all__ = ["CATEGORIES", "LocomoReport", "load_locomo_facts", "parse_evidence"]

#: the QA category mapping the data supports (undocumented upstream)
CATEGORIES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
                              5: "adversarial"}

_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_CLEAN = re.compile(r"D(\d+):(\d+)")


@dataclass
class LocomoReport:
    """What the adapter found, repaired and dropped (counts), plus per-user fact totals."""

    conversations: int = 0
    users: int = 0
    sessions: int = 0
    facts: int = 0
    used_facts: int = 0
    qa_items: int = 0
    qa_by_category: dict[str, int] = field(default_factory=dict)
    qa_used_for_labels: int = 0
    counts: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict."""
        d = {k: v for k, v in self.__dict__.items() if k != "counts"}
        d["quirks"] = dict(sorted(self.counts.items()))
        return d

    def text(self) -> str:
        """A short human-readable report of what was repaired or dropped."""
        lines = [f"LoCoMo: {self.conversations} conversations, {self.users} users, "
                 f"{self.sessions} sessions, {self.facts} facts ({self.used_facts} used), "
                 f"{self.qa_items} QA items ({self.qa_used_for_labels} used for labels)",
                 "QA categories: " + ", ".join(f"{k} {v}" for k, v in self.qa_by_category.items())]
        for k, v in sorted(self.counts.items()):
            lines.append(f"  {k}: {v}")
        return "\n".join(lines)


def parse_evidence(raw: object, counts: Counter) -> list[str]:
    """Normalised dia_ids in one evidence entry, counting every repair or drop."""
    if not isinstance(raw, str):
        counts["evidence: not a string (dropped)"] += 1
        return []
    s = raw.strip()
    if _CLEAN.fullmatch(s) and not re.search(r":0\d", s):
        return [s]
    found = _ID.findall(s)
    if not found:
        counts["evidence: no dia_id in string (dropped)"] += 1
        return []
    if len(found) > 1:
        counts["evidence: several ids in one string (split)"] += 1
    elif re.match(r"D\s*:", s):
        counts["evidence: 'D:N:M' form (repaired)"] += 1
    elif re.search(r":0\d", s):
        counts["evidence: zero-padded turn (normalised)"] += 1
    else:
        counts["evidence: other malformed id (repaired)"] += 1
    return [f"D{int(a)}:{int(b)}" for a, b in found]


def _obs_ids(raw: object, counts: Counter) -> list[str]:
    """The dia_ids of one observation (a string, a comma-separated string or a list)."""
    items = raw if isinstance(raw, list) else [raw]
    if isinstance(raw, list):
        counts["observation: dia_id given as a list (split)"] += 1
    elif isinstance(raw, str) and len(_ID.findall(raw)) > 1:
        counts["observation: several dia_ids in one string (split)"] += 1
    out: list[str] = []
    for it in items:
        if isinstance(it, str):
            out.extend(f"D{int(a)}:{int(b)}" for a, b in _ID.findall(it))
    if not out:
        counts["observation: no dia_id (fact kept, never used)"] += 1
    return out


def _session_no(key: str, suffix: str) -> int | None:
    m = re.fullmatch(rf"session_(\d+){suffix}", key)
    return int(m.group(1)) if m else None


def load_locomo_facts(path: str | Path, *, include_adversarial: bool = False
                      ) -> tuple[list[Fact], LocomoReport]:
    """Fact records from ``locomo10.json`` and a report of every quirk repaired or dropped."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{p}: cannot read LoCoMo JSON ({exc})") from None
    if not isinstance(data, list):
        raise InputError(f"{p}: expected a list of conversations")
    rep = LocomoReport()
    c = rep.counts
    cats: Counter = Counter()
    facts: list[Fact] = []
    for ci, conv in enumerate(data):
        where = f"{p}: conversation {ci}"
        try:
            sid = str(conv["sample_id"])
            dialog = conv["conversation"]
            observation = conv["observation"]
            qa = conv["qa"]
        except (KeyError, TypeError) as exc:
            raise InputError(f"{where}: missing field {exc}") from None
        rep.conversations += 1
        sessions = sorted(n for k, v in dialog.items()
                          if (n := _session_no(k, "")) is not None and isinstance(v, list))
        dates = [n for k in dialog if (n := _session_no(k, "_date_time")) is not None]
        extra = sorted(set(dates) - set(sessions))
        if extra:
            c["date_time keys without a session (ignored)"] += len(extra)
        rep.sessions += len(sessions)
        last = max(sessions) if sessions else 0
        turn_ids = {t.get("dia_id") for s in sessions for t in dialog[f"session_{s}"]}
        # evidence -> used dia_ids
        used: set[str] = set()
        for q in qa:
            rep.qa_items += 1
            cat = q.get("category")
            name = CATEGORIES.get(cat) if isinstance(cat, int) else None
            cats[name or f"unknown {cat!r}"] += 1
            if isinstance(q.get("answer"), int | float) and not isinstance(q.get("answer"), bool):
                c["qa: numeric answer (kept as is; answers unused)"] += 1
            if "answer" not in q and "adversarial_answer" in q:
                c["qa: adversarial_answer instead of answer"] += 1
            elif "answer" in q and "adversarial_answer" in q:
                c["qa: both answer and adversarial_answer"] += 1
            ev = q.get("evidence") or []
            if not ev:
                c["qa: empty evidence (marks nothing)"] += 1
                continue
            if name is None:
                c["qa: unknown category (ignored)"] += 1
                continue
            if name == "adversarial" and not include_adversarial:
                c["qa: adversarial (ignored for labels)"] += 1
                continue
            rep.qa_used_for_labels += 1
            for raw in ev:
                for d in parse_evidence(raw, c):
                    if d in turn_ids:
                        used.add(d)
                    else:
                        c["evidence: id names no turn of the conversation (dropped)"] += 1
        speakers = [dialog.get("speaker_a"), dialog.get("speaker_b")]
        for spk in speakers:
            if not spk:
                raise InputError(f"{where}: missing speaker name")
            rep.users += 1
        for key in sorted(observation, key=lambda k: _session_no(k, "_observation") or 0):
            s = _session_no(key, "_observation")
            if s is None:
                c["observation: unexpected key (ignored)"] += 1
                continue
            for spk, items in observation[key].items():
                if spk not in speakers:
                    c["observation: unknown speaker (ignored)"] += 1
                    continue
                for j, item in enumerate(items):
                    if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                        c["observation: malformed entry (dropped)"] += 1
                        continue
                    ids = _obs_ids(item[1], c)
                    if any(not i.startswith(f"D{s}:") for i in ids):
                        c["observation: dia_id from another session (kept)"] += 1
                    is_used = any(i in used for i in ids)
                    facts.append(Fact(user=f"{sid}:{spk}", fact_id=f"{sid}:{spk}:s{s}:{j}",
                                      session=s, text=item[0].strip(),
                                      hits=[last + 1] if is_used else []))
    rep.facts = len(facts)
    rep.used_facts = sum(1 for f in facts if f.hits)
    rep.qa_by_category = {k: cats[k] for k in sorted(cats)}
    return facts, rep


def main(argv: list[str] | None = None) -> int:
    """``python -m toolkit.datasets.locomo locomo10.json -o facts.jsonl``; report on stderr."""
    import argparse
    import sys

    from toolkit.datasets.jsonl import write_jsonl

    ap = argparse.ArgumentParser(prog="python -m toolkit.datasets.locomo",
                                 description="LoCoMo observations -> fact records (JSONL).")
    ap.add_argument("path")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--include-adversarial", action="store_true")
    a = ap.parse_args(argv)
    try:
        facts, rep = load_locomo_facts(a.path, include_adversarial=a.include_adversarial)
    except InputError as exc:
        print(exc, file=sys.stderr)
        return 1
    write_jsonl(facts, a.output)
    print(rep.text(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
