"""The public-technology lexicon: how the text layer finds its names, how the admitter reads them,
and how the list is built from public lists (on small files written here)."""

from __future__ import annotations

import numpy as np

from toolkit.resources import build_technologies as bt
from toolkit.rules.admission_model import (
    TECHNOLOGY_PLACEHOLDER,
    Features,
    cue_features,
    feature_names,
    ngram_text,
)
from toolkit.text import lexicon_mentions, lexicon_spans, load_table, mask_mentions

LEX = frozenset({"python", "vim script", "dockerfile", "c++", "terraform"})


def test_spans_take_the_longest_run_plural_and_case_with_offsets() -> None:
    text = "In Vim Script, Dockerfiles and C++; pythonic is no name"
    spans = lexicon_spans(text, LEX)
    assert [n for *_, n in spans] == ["vim script", "dockerfile", "c++"]
    assert [text[a:b] for a, b, _ in spans] == ["Vim Script", "Dockerfiles", "C++"]
    assert lexicon_mentions("nothing public here", LEX) == []


def test_offsets_survive_characters_that_lower_to_two() -> None:
    text = "İstanbul team: any terraform you write"
    (a, b, name), = lexicon_spans(text, LEX)
    assert (text[a:b], name) == ("terraform", "terraform")


def test_mask_replaces_each_mention_and_nothing_else() -> None:
    assert (mask_mentions("pin providers in any terraform, not python2", LEX, "T")
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


def test_ngram_blocks_read_technologies_as_one_placeholder(monkeypatch) -> None:
    from toolkit.rules import admission_model

    assert ngram_text("no `any` in my typescript") == f"no `any` in my {TECHNOLOGY_PLACEHOLDER}"
    monkeypatch.setattr(admission_model, "embed", lambda texts, model: np.zeros((len(texts), 4)))
    X = Features.of(["no `any` in my typescript", "kestrel is typed"])
    assert X.texts == (f"no `any` in my {TECHNOLOGY_PLACEHOLDER}", "kestrel is typed")


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
