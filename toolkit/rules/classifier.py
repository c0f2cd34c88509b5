"""A scikit-learn admission classifier: TF-IDF n-grams plus cue-grammar features -> decision.

It is fit on the 64-instruction development set only (``fixtures/admission/dev*.jsonl``) and
never sees the held-out set. Fitting is deterministic (lbfgs, fixed ``random_state``) and cached
per process, so repeated calls cost nothing and return identical predictions.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_random_state

from toolkit.paper import fixtures_dir
from toolkit.rules.cues import parse_cues

DECISIONS: tuple[str, ...] = ("persist", "task_local", "defer")
_CUE_KEYS = (
    "lasting",
    "temporary",
    "project",
    "condition",
    "exception",
    "vague",
    "retraction",
    "friction",
    "preference",
    "has_behavior",
    "deictic",
)


def cue_matrix(texts: list[str], weight: float) -> np.ndarray:
    """Dense cue-feature matrix (one row per text), scaled by ``weight``."""
    rows = [[parse_cues(t).features()[k] for k in _CUE_KEYS] for t in texts]
    return np.asarray(rows, dtype=float).reshape(len(texts), len(_CUE_KEYS)) * weight


class AdmissionClassifier(ClassifierMixin, BaseEstimator):
    """Logistic regression over word and character TF-IDF n-grams and cue features."""

    def __init__(self, C: float = 4.0, cue_weight: float = 2.0, random_state: int | None = 0):
        self.C = C
        self.cue_weight = cue_weight
        self.random_state = random_state

    def _features(self, texts: list[str]) -> sparse.csr_matrix:
        words = self.word_vec_.transform(texts)
        chars = self.char_vec_.transform(texts)
        cues = sparse.csr_matrix(cue_matrix(texts, self.cue_weight))
        return sparse.hstack([words, chars, cues]).tocsr()

    def fit(self, texts: list[str], y: list[str]) -> AdmissionClassifier:
        """Fit the vectorisers and the logistic regression on development texts."""
        rs = check_random_state(self.random_state)
        self.word_vec_ = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, lowercase=True)
        self.char_vec_ = TfidfVectorizer(
            analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True, min_df=2
        )
        self.word_vec_.fit(texts)
        self.char_vec_.fit(texts)
        self.model_ = LogisticRegression(
            C=self.C, max_iter=2000, random_state=int(rs.randint(0, 2**31 - 1))
        )
        self.model_.fit(self._features(list(texts)), list(y))
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """Class probabilities, columns in ``classes_`` order."""
        return self.model_.predict_proba(self._features(list(texts)))

    def predict(self, texts: list[str]) -> np.ndarray:
        """Most probable decision per text."""
        return self.classes_[np.argmax(self.predict_proba(texts), axis=1)]


def dev_paths(root: Path | None = None) -> tuple[Path, Path]:
    """The development inputs and their gold labels."""
    d = (root or fixtures_dir()) / "admission"
    return d / "dev.jsonl", d / "dev.gold.jsonl"


def load_dev(root: Path | None = None) -> tuple[list[str], list[str]]:
    """Development texts and gold decisions, joined by id."""
    inputs, gold = dev_paths(root)
    texts = {
        json.loads(x)["id"]: json.loads(x)["text"]
        for x in inputs.read_text(encoding="utf-8").splitlines()
        if x.strip()
    }
    labels = {
        json.loads(x)["id"]: json.loads(x)["decision"]
        for x in gold.read_text(encoding="utf-8").splitlines()
        if x.strip()
    }
    ids = sorted(texts)
    return [texts[i] for i in ids], [labels[i] for i in ids]


@cache
def dev_classifier(random_state: int = 0) -> AdmissionClassifier:
    """The classifier fit on the development set (cached in-process, deterministic)."""
    texts, labels = load_dev()
    return AdmissionClassifier(random_state=random_state).fit(texts, labels)
