"""Names in corrections: public technologies (a lexicon built from public lists, tested on small
files written here) and names English has not seen (the user's own), as the text layer finds them
and the admitter's n-gram blocks read them."""

from __future__ import annotations

import numpy as np

from toolkit.resources import build_technologies as bt
from toolkit.rules.admission_model import (
    OWN_NAME_PLACEHOLDER,
    TECHNOLOGY_PLACEHOLDER,
    UNSEEN_ZIPF,
    Features,
    cue_features,
    feature_names,
    ngram_text,
)
from toolkit.text import (
    lexicon_spans,
    load_table,
    replace_spans,
    unseen_spans,
    word_zipf,
)

LEX = frozenset({"python", "vim script", "dockerfile", "c++", "terraform"})


def test_spans_take_the_longest_run_plural_and_case_with_offsets() -> None:
    text = "In Vim Script, Dockerfiles and C++; pythonic is no name"
    spans = lexicon_spans(text, LEX)
    assert [n for *_, n in spans] == ["vim script", "dockerfile", "c++"]
    assert [text[a:b] for a, b, _ in spans] == ["Vim Script", "Dockerfiles", "C++"]
    assert lexicon_spans("nothing public here", LEX) == []


def test_offsets_survive_characters_that_lower_to_two() -> None:
    text = "İstanbul team: any terraform you write"
    (a, b, name), = lexicon_spans(text, LEX)
    assert (text[a:b], name) == ("terraform", "terraform")


def test_mask_replaces_each_mention_and_nothing_else() -> None:
    text = "pin providers in any terraform, not python2"
    assert (replace_spans(text, [(a, b, "T") for a, b, _ in lexicon_spans(text, LEX)])
            == "pin providers in any T, not python2")


def test_shipped_list_knows_languages_and_tools_not_english_words() -> None:
    names = load_table("admission/technologies")["public_technology"]
    assert {"python", "typescript", "kotlin", "numpy", "terraform"} <= names
    assert not {"the", "always", "project", "please", "black", "click"} & names


def test_a_place_that_names_a_technology_is_no_place_of_the_user() -> None:
    i = feature_names().index("named_place")
    X = cue_features(["for kestrel-api, anything breaking needs a changelog line",
                      "for python-dotenv, anything breaking needs a changelog line"])
    assert X[:, i].tolist() == [1.0, 0.0]


MADE_UP = ["ncplots is numpy-style", "barsea-roms stays free-form", "ask quillstead first"]
SEEN = ["the turbine logs", "settle-svc metrics", "rename dye_01", "kestrel is typed", "use python"]


def test_unseen_names_are_made_up_ones_not_words_identifiers_or_technologies() -> None:
    for text in MADE_UP:
        assert len(unseen_spans(text, UNSEEN_ZIPF)) == 1, text
    for text in SEEN:
        assert unseen_spans(text, UNSEEN_ZIPF) == [], text
    assert word_zipf("the") > 6 > word_zipf("turbine") > 2 > UNSEEN_ZIPF > word_zipf("ncplots")
    # a span inside a skipped one (a technology's name) is left out
    assert unseen_spans("pnpm only", UNSEEN_ZIPF, [(0, 4)]) == []


def test_replace_spans_sorts_and_keeps_the_rest() -> None:
    assert replace_spans("a b c", [(4, 5, "C"), (0, 1, "A")]) == "A b C"


def test_ngram_blocks_read_names_as_placeholders(monkeypatch) -> None:
    from toolkit.rules import admission_model

    T, N = TECHNOLOGY_PLACEHOLDER, OWN_NAME_PLACEHOLDER
    assert ngram_text("no `any` in my typescript") == f"no `any` in my {T}"
    assert ngram_text("riskbook is an xlsxwriter shop") == f"{N} is an {T} shop"
    assert ngram_text("kestrel is typed") == "kestrel is typed"
    monkeypatch.setattr(admission_model, "embed", lambda texts, model: np.zeros((len(texts), 4)))
    X = Features.of(["no `any` in my typescript", "ncplots is typed"])
    assert X.texts == (f"no `any` in my {T}", f"{N} is typed")


def test_build_keeps_public_names_drops_english_words_and_short_names(tmp_path) -> None:
    (tmp_path / "languages.yml").write_text(
        "Python:\n  type: programming\n  aliases: [python3]\n"
        "Text:\n  type: prose\n"
        "Dockerfile:\n  type: programming\n  filenames: [Dockerfile, Containerfile, .dockerignore.x]\n"
        "R:\n  type: programming\n"
        "Vim Script:\n  type: programming\n", encoding="utf-8")
    (tmp_path / "popular.yml").write_text("- Python\n", encoding="utf-8")
    (tmp_path / "pypi.tsv").write_text(
        "name\tversion\tmonth\trank_among_15000_most_downloaded\tsummary\n"
        "numpy\t2\t2026-07\t3\tarrays\nflask\t3\t2026-07\t9\tweb\n"
        "prometheus-client\t1\t2026-07\t20\tmetrics\nobscure\t1\t2020-01\t\t\n", encoding="utf-8")
    (tmp_path / "npm.tsv").write_text("name\tversion\tdownloads_a_month\tsummary\n"
                                      "lodash\t4\t900\tutils\n@types/node\t1\t999\ttypes\n",
                                      encoding="utf-8")
    (tmp_path / "words").write_text("python\ntext\nflask\nPrometheus\nobscure\n", encoding="utf-8")
    p = {k: tmp_path / f for k, f in (("languages", "languages.yml"), ("popular", "popular.yml"),
                                       ("pypi", "pypi.tsv"), ("npm", "npm.tsv"), ("english", "words"))}
    words = bt.build(**p, top=10)
    # popular language kept although an English word; a plain English word, a one-letter name,
    # a scoped npm name and an unranked package are not; a family's head is
    assert words == ["containerfile", "dockerfile", "lodash", "numpy", "prometheus",
                     "prometheus-client", "python", "python3", "vim script"]
    out = tmp_path / "technologies.yaml"
    bt.write(words, out)
    assert "public_technology" in out.read_text(encoding="utf-8")
