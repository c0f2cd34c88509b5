"""Gating and utility with a sentence embedder: features, Table 1 rows, labels, and a rerun that
embeds nothing (a local OpenAI-compatible /v1/embeddings server stands in for the model)."""

from __future__ import annotations

import numpy as np
import pytest

from toolkit.cli import main
from toolkit.gating.features import EmbedderPCA, TfidfSVD, featurizer_for
from toolkit.gating.meta import meta_analysis
from toolkit.gating.retrieval import EmbeddingRetriever, make_retriever
from toolkit.gating.simulate import simulate_benchmark
from toolkit.llm import Gateway, get_embedder

EMB = "openai-api/local/embed-test"


def test_embedder_features_are_pca_unit_rows_plus_intercept(llm_env, tmp_path):
    texts = [f"User likes item {i} and colour {i % 7}" for i in range(40)]
    g = Gateway(cache_dir=str(tmp_path / "c"))
    f = featurizer_for(EMB, dim=4, seed=0, gateway=g)
    assert isinstance(f, EmbedderPCA)
    X = f.fit(texts).transform(texts[:5])
    assert X.shape == (5, 5) and (X[:, -1] == 1).all()
    np.testing.assert_allclose(np.linalg.norm(X[:, :-1], axis=1), 1.0)
    X2 = featurizer_for(EMB, dim=4, seed=0, gateway=g).fit(texts).transform(texts[:5])
    assert X2.tobytes() == X.tobytes()  # deterministic, and the second fit read the cache
    assert len(llm_env.requests) == 1
    assert isinstance(featurizer_for("tfidf", dim=4), TfidfSVD)


def test_meta_analysis_with_an_embedder_names_its_features(llm_env, tmp_path):
    facts = simulate_benchmark("S", seed=0, n_users=4, n_sessions=30)
    emb = get_embedder(EMB, Gateway(cache_dir=str(tmp_path / "c")))
    rep = meta_analysis(facts, folds=3, seed=0, embedder=emb)
    base = meta_analysis(facts, folds=3, seed=0)
    assert rep["features"] == EMB and base["features"] == "tfidf"
    assert rep["n_users"] == base["n_users"] == 4
    assert all(u["louo_auc"] is None or 0 <= u["louo_auc"] <= 1 for u in rep["users"])
    assert rep["louo_auc_mean"] != base["louo_auc_mean"]


def test_embedding_retriever_from_a_model_string(llm_env):
    r = make_retriever(EMB)
    assert isinstance(r, EmbeddingRetriever)
    bank = ["User is allergic to peanuts.", "User lives in Lyon."]
    hits = r.prime(bank).search(bank, "User is allergic to peanuts.", 1)
    assert hits[0][0] == 0 and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(ValueError, match="unknown retriever"):
        make_retriever("bm25")


def test_gating_rerun_embeds_nothing(llm_env, tmp_path, capsys):
    args = ["reproduce", "gating", "--quick", "--embedder", EMB, "--cache-dir",
            str(tmp_path / "cache"), "--set", "n_users=4", "--set", "pool_sizes=0",
            "--set", "test_users=1", "--set", "n_jobs=1"]
    assert main(args + ["--out", str(tmp_path / "a")]) == 0
    first = capsys.readouterr()
    n = len(llm_env.requests)
    assert n > 0 and f"embedder {EMB}" in (tmp_path / "a/gating/report.md").read_text()
    assert main(args + ["--out", str(tmp_path / "b")]) == 0
    second = capsys.readouterr()
    assert len(llm_env.requests) == n  # nothing sent again
    row = next(line for line in second.err.splitlines() if line.startswith(EMB[:32]))
    calls, live, cached = (int(x) for x in row[32:].split()[1:4])
    assert live == 0 and cached == calls > 0
    assert "0 texts embedded live" in (tmp_path / "b/gating/report.md").read_text()
    assert first.err.count(EMB) == 1


def test_utility_with_an_embedder_adds_rows_and_retrieves_by_embedding(llm_env):
    from toolkit.api import reproduce

    r = reproduce("utility", seed=0, quick=True, s_users=3, l_users=2, l_sessions=24,
                  label_users=1, sweep=0, locomo=0, embedder=EMB)
    t1 = r.tables["utility_table1"]
    assert set(t1["features"]) == {"tfidf", EMB}
    s = t1[(t1.dataset == "simulated S") & (t1.metric == "Self AUC")]
    assert len(s) == 2 and (s["paper"] == 0.756).all()
    assert any(f"by {EMB} embedding cosine" in line for line in r.text)
    assert r.meta["embedder"]["embedder"] == EMB and r.meta["embedder"]["live_texts"] > 0
    assert any(p.endswith("/embeddings") for p in llm_env.paths)
