"""Build ``admission/technologies.yaml``: names of public technologies, as data from public lists.

Why: whether "no `any` in my typescript" or "pin providers in any terraform you write" limits a
rule to one of the user's projects, or names a public technology every project may use, is world
knowledge; character n-grams of a name's shape do not carry it (a made-up project name and a
tool's name look alike). This script turns public, ranked lists into one validated word list the
admitter reads (:data:`toolkit.rules.admission_model.TECHNOLOGIES`); it is run by hand
when the lists change, never at run time, and the YAML it writes is committed.

Sources (each read from a local path):
- GitHub Linguist's ``languages.yml`` (MIT): language names, aliases and special file names
  (``Dockerfile``, ``Makefile``), and ``popular.yml``;
- a ranked PyPI list (``name``, ``rank_among_15000_most_downloaded``) and a ranked npm list
  (``name``, ``downloads_a_month``), tab-separated, the ``top`` most used of each, and the head
  of each hyphenated family among them ("prometheus" from "prometheus-client");
- an English word list (one word a line, e.g. Debian's ``wamerican``): a name that is also a
  lower-case English word ("flask", "black", "click") is dropped, as the feature would fire on
  ordinary prose, unless Linguist lists it as a popular language ("python", "rust", "swift").
Names shorter than three characters are dropped ("go", "r", "c": too ambiguous in prose).

Usage::

    python -m toolkit.resources.build_technologies --languages languages.yml \\
        --popular popular.yml --pypi pypi.tsv --npm npm.tsv --english /usr/share/dict/words
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

import yaml

OUT = Path(__file__).parent / "admission" / "technologies.yaml"
#: the shape of a name kept in the list (lower case; inner . + # - allowed, as in "c++", "node.js")
NAME = re.compile(r"^[a-z0-9][a-z0-9+#.\-]*[a-z0-9+#]$")


def _english(path: Path) -> frozenset[str]:
    """Lower-case English words (proper nouns, capitalised in the list, are not words here)."""
    return frozenset(w.strip() for w in path.read_text(encoding="utf-8").splitlines()
                     if w.strip() and w.strip() == w.strip().lower() and "'" not in w)


def _linguist(languages: Path, popular: Path) -> tuple[set[str], set[str]]:
    """(names, popular names): language names and aliases, special file names, lower case."""
    data = yaml.safe_load(languages.read_text(encoding="utf-8"))
    names: set[str] = set()
    for name, spec in data.items():
        names.add(str(name).lower())
        names.update(str(a).lower() for a in spec.get("aliases", []) or [])
        names.update(str(f).lower() for f in spec.get("filenames", []) or []
                     if "." not in str(f).lstrip("."))
    pop = {str(p).lower() for p in yaml.safe_load(popular.read_text(encoding="utf-8"))}
    return names, pop


def _ranked(path: Path, column: str, top: int, descending: bool) -> list[str]:
    """The ``top`` package names by ``column`` (a rank, or a count when ``descending``)."""
    rows = []
    with path.open(encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            v = (r.get(column) or "").strip()
            if v.isdigit() and int(v) > 0:
                rows.append((int(v), r["name"].strip().lower()))
    rows.sort(key=lambda t: (-t[0], t[1]) if descending else (t[0], t[1]))
    return [n for _, n in rows[:top] if not n.startswith("@")]


def build(languages: Path, popular: Path, pypi: Path, npm: Path, english: Path,
          top: int = 2000) -> list[str]:
    """The sorted word list (see the module docstring for what is kept and why)."""
    words = _english(english)
    lang, pop = _linguist(languages, popular)
    packages = set(_ranked(pypi, "rank_among_15000_most_downloaded", top, False)) | set(
        _ranked(npm, "downloads_a_month", top, True))
    # a package family's head names the technology ("prometheus-client", "google-cloud-storage")
    heads = {n.split("-", 1)[0] for n in packages if "-" in n}
    candidates = lang | packages | heads
    keep = {n for n in candidates
            if len(n) >= 3 and NAME.match(n) and not n.isdigit()
            and (n in pop or n not in words)}
    # multi-word language names ("objective-c", "vim script") stay as written, spaces included
    keep |= {n for n in lang if " " in n and all(NAME.match(p) for p in n.split())}
    return sorted(keep)


def write(words: list[str], out: Path = OUT) -> None:
    """Write the table file with its examples (the examples are run as tests)."""
    doc = {
        "about": ("Names of public technologies (languages, file kinds, the most used PyPI and npm "
                  "packages), lower case, built by toolkit/resources/build_technologies.py from "
                  "GitHub Linguist's languages.yml and popular.yml and ranked PyPI and npm lists, "
                  "less lower-case English words (unless a popular language) and names under three "
                  "characters. The admitter's n-gram blocks read a mention as one placeholder, and "
                  "a place kind's match that names one is not counted (a public technology is no "
                  "project of the user's); never edited by hand."),
        "entries": {"public_technology": {
            "description": "a public programming language, file kind, framework or package",
            "type": "words",
            "words": words,
            "match": ["python", "typescript", "terraform", "dockerfile", "matplotlib", "numpy",
                      "kotlin", "prometheus"],
            "not_match": ["billing-svc", "orbitlab", "the", "always", "project", "invoice"],
        }},
    }
    out.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100),
                   encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("languages", "popular", "pypi", "npm", "english"):
        ap.add_argument(f"--{name}", type=Path, required=True)
    ap.add_argument("--top", type=int, default=2000, help="most used packages kept per registry")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    words = build(a.languages, a.popular, a.pypi, a.npm, a.english, a.top)
    write(words, a.out)
    print(f"{a.out}: {len(words)} names", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
