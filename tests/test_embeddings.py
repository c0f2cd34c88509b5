"""Embedders through the gateway: OpenAI-compatible /v1/embeddings on a local server (real
openai client), the packaged MiniLM (reference vectors, sha256 check), TF-IDF, lazy torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from llm_server import Reply, fake_vector

from toolkit.errors import UsageError
from toolkit.llm import (
    CacheMissError,
    EmbedderError,
    Gateway,
    LLMError,
    TfidfEmbedder,
    get_embedder,
)

ROOT = Path(__file__).resolve().parent.parent
MODEL = "openai-api/local/embed-test"
TEXTS = ["Keep replies short.", "Use metric units.", "Keep replies short."]


def gw(tmp_path, **kw) -> Gateway:
    kw.setdefault("backoff_base", 0.01)
    return Gateway(cache_dir=str(tmp_path / "cache"), **kw)


def _unit(v: list[float]) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def test_import_toolkit_does_not_import_torch():
    code = ("import sys, toolkit, toolkit.llm, toolkit.cli\n"
            "from toolkit.llm import get_embedder\n"
            "e = get_embedder('minilm'); toolkit.cli.build_parser()\n"
            "bad = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT)
    assert out.stdout.strip() == "", f"imported at import time: {out.stdout.strip()}"


def test_openai_embeddings_are_unit_float32_and_cached(llm_env, tmp_path):
    g = gw(tmp_path)
    emb = get_embedder(MODEL, g)
    v = emb.embed(TEXTS)
    assert v.dtype == np.float32 and v.shape == (3, 8)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(v[0], _unit(fake_vector(TEXTS[0])), rtol=1e-6)
    assert (v[0] == v[2]).all()
    assert llm_env.paths == ["/v1/embeddings"]
    body = llm_env.requests[0]
    assert body["model"] == "embed-test" and body["input"] == TEXTS[:2]  # duplicates sent once
    # cache hit: a new embedder on the same cache sends nothing and returns the same bits
    g2 = gw(tmp_path)
    again = get_embedder(MODEL, g2).embed(TEXTS)
    assert len(llm_env.requests) == 1 and again.tobytes() == v.tobytes()
    (row,) = g2.ledger.rows()
    assert (row["live_calls"], row["cache_hits"], row["role"]) == (0, 2, "embedding")
    (row,) = g.ledger.rows()
    assert (row["live_calls"], row["cache_hits"], row["requests"]) == (2, 0, 1)
    assert row["tokens_in"] == 6


def test_dimensions_are_sent_and_part_of_the_key(llm_env, tmp_path):
    g = gw(tmp_path)
    a = get_embedder(MODEL, g, dimensions=4).embed(["Use metric units."])
    b = get_embedder(MODEL, g).embed(["Use metric units."])
    assert a.shape == (1, 4) and b.shape == (1, 8)
    assert [r.get("dimensions") for r in llm_env.requests] == [4, None]


def test_replay_miss_names_the_call_and_sends_nothing(llm_env, tmp_path):
    g = gw(tmp_path)
    get_embedder(MODEL, g).embed(["Use metric units."])
    n = len(llm_env.requests)
    rg = gw(tmp_path, cache_mode="replay")
    assert get_embedder(MODEL, rg).embed(["Use metric units."]).shape == (1, 8)
    with pytest.raises(CacheMissError, match=r"openai-api/local/embed-test.*1 of 2.*'Delete temp"):
        get_embedder(MODEL, rg).embed(["Use metric units.", "Delete temporary files."])
    assert len(llm_env.requests) == n


def test_retry_on_429_then_ok(llm_env, tmp_path):
    llm_env.script([Reply(status=429, body={"error": {"message": "slow down"}},
                          headers={"retry-after": "0"})])
    v = get_embedder(MODEL, gw(tmp_path)).embed(["Use metric units."])
    assert v.shape == (1, 8) and len(llm_env.requests) == 2


def test_client_error_is_not_retried(llm_env, tmp_path):
    llm_env.script([Reply(status=400, body={"error": {"message": "bad model"}})])
    with pytest.raises(LLMError, match="HTTP 400"):
        get_embedder(MODEL, gw(tmp_path)).embed(["Use metric units."])
    assert len(llm_env.requests) == 1


def test_wrong_number_of_vectors_is_an_error_and_not_cached(llm_env, tmp_path):
    llm_env.script([Reply(body={"object": "list", "data": [], "usage": {"prompt_tokens": 0,
                                                                         "total_tokens": 0}})])
    g = gw(tmp_path)
    with pytest.raises(LLMError, match="0 embeddings for 1 texts"):
        get_embedder(MODEL, g).embed(["Use metric units."])
    assert len(g.cache) == 0


def test_api_key_never_stored_or_keyed(llm_env, tmp_path, monkeypatch):
    g = gw(tmp_path)
    get_embedder(MODEL, g).embed(TEXTS)
    assert llm_env.headers[0]["authorization"] == "Bearer sk-test-SENTINEL"
    monkeypatch.setenv("LOCAL_API_KEY", "sk-other-key")
    get_embedder(MODEL, gw(tmp_path)).embed(TEXTS)
    assert len(llm_env.requests) == 1  # another key, same cache entries
    for f in (tmp_path / "cache").iterdir():
        assert b"SENTINEL" not in f.read_bytes()
    assert "SENTINEL" not in repr(get_embedder(MODEL, g))


def test_base_url_credentials_are_not_in_the_key(llm_env, tmp_path, monkeypatch):
    url = llm_env.base_url.replace("http://", "http://user:pw@")
    monkeypatch.setenv("LOCAL_BASE_URL", url + "?api-key=sk-in-url-123456")
    emb = get_embedder(MODEL, gw(tmp_path))
    assert emb.base_url == llm_env.base_url and "pw" not in repr(emb)


def test_unknown_embedder_strings():
    for bad in ("bert", "minilm/x", "tfidf/2", "", "nope/x"):
        with pytest.raises(UsageError):
            get_embedder(bad)


def test_tfidf_is_explicit_and_fit_on_a_named_corpus():
    emb = get_embedder("tfidf")
    assert isinstance(emb, TfidfEmbedder) and emb.name == "tfidf"
    corpus = ["keep replies short", "use metric units", "delete temporary files"]
    v = emb.fit(corpus).embed(["short replies please", "units", "zebra"])
    assert v.dtype == np.float32 and v.shape[1] == emb.dim
    np.testing.assert_allclose(np.linalg.norm(v[:2], axis=1), 1.0, rtol=1e-6)
    assert not v[2].any()  # no known term: a zero row, not a made-up vector
    unfit = get_embedder("tfidf").embed(["a cat", "a dog", "the cat"])
    assert unfit[0] @ unfit[2] > 0.5 and unfit[0] @ unfit[1] == 0


def test_minilm_matches_reference_vectors(tmp_path):
    ref = json.loads((ROOT / "fixtures/semantic/minilm_reference_vectors.json").read_text())
    g = gw(tmp_path)
    v = get_embedder("minilm", g).embed(ref["sentences"])
    assert v.dtype == np.float32 and v.shape == (len(ref["sentences"]), 384)
    np.testing.assert_allclose(v, np.asarray(ref["vectors"], dtype=np.float32), atol=1e-5)
    # a second run reads every vector back bitwise and computes nothing
    g2 = gw(tmp_path)
    again = get_embedder("minilm", g2).embed(ref["sentences"][::-1])
    assert again.tobytes() == v[::-1].tobytes()
    (row,) = g2.ledger.rows()
    assert row["live_calls"] == 0 and row["cache_hits"] == len(ref["sentences"])
    blank = get_embedder("minilm", g2).embed(["", "  "])
    assert blank.shape == (2, 384) and not blank.any()
    # a fresh process with every vector cached never imports torch
    code = ("import sys, json; from toolkit.llm import Gateway, get_embedder\n"
            f"g = Gateway(cache_dir={str(tmp_path / 'cache')!r})\n"
            f"v = get_embedder('minilm', g).embed({ref['sentences']!r})\n"
            "print(v.shape[0], 'torch' in sys.modules, g.ledger.rows()[0]['live_calls'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.split() == [str(len(ref["sentences"])), "False", "0"]


def test_minilm_weights_with_another_sha256_are_refused(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"not the model")
    emb = get_embedder("minilm", gw(tmp_path), model_dir=str(folder))
    with pytest.raises(EmbedderError, match=r"model\.safetensors: sha256 .* differs"):
        emb.embed(["Use metric units."])


def test_retrieval_scores_on_a_toy_set():
    from toolkit.embedding_eval import Query, retrieval_scores

    qs = [Query(id="q1", text="a", target="p1", kind="paraphrase"),
          Query(id="q2", text="b", target="p2", kind="complaint"),
          Query(id="q3", text="c", target=None, kind="unrelated"),
          Query(id="q4", text="d", target="p1", kind="complaint")]
    sim = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.2], [0.0, 0.0]])
    s = retrieval_scores(sim, ["p1", "p2"], qs)
    assert s["n_targeted"] == 3 and s["hits"] == 1  # q2 ranks p1 first; q4 has nothing similar
    assert s["recall_at_1_by_kind"]["complaint"] == {"recall": 0.0, "n": 2}
    assert s["n_unrelated"] == 1 and 0 <= s["pair_auc"] <= 1
    assert s["detection_auc"] == pytest.approx(2 / 3)


def test_benchmark_script_runs_on_a_toy_set(tmp_path, capsys):
    import importlib.util

    (tmp_path / "prefs.jsonl").write_text(
        '{"id": "p1", "text": "Keep replies short."}\n{"id": "p2", "text": "Use metric units."}\n')
    (tmp_path / "queries.jsonl").write_text(
        '{"id": "q1", "text": "replies should be short", "target": "p1", "kind": "paraphrase"}\n'
        '{"id": "q2", "text": "what is 2+2", "target": null, "kind": "unrelated"}\n')
    spec = importlib.util.spec_from_file_location("bench_emb", ROOT / "benchmarks/embeddings.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--embedder", "tfidf", "--data", str(tmp_path), "--no-speed",
                     "--json", str(tmp_path / "o.json")]) == 0
    out = json.loads((tmp_path / "o.json").read_text())
    assert out["retrieval"]["tfidf"]["recall_at_1"] == 1.0
    assert not (tmp_path / "FIRST_CONTACT.json").exists()


def test_minilm_encodes_with_one_thread_and_restores_torch(tmp_path, monkeypatch):
    import torch

    from toolkit.llm.embeddings import MiniLMEmbedder

    sentences = json.loads((ROOT / "fixtures/semantic/minilm_reference_vectors.json").read_text())["sentences"]
    before = torch.get_num_threads()
    seen: list[int] = []
    real = torch.set_num_threads
    monkeypatch.setattr(torch, "set_num_threads", lambda n: (seen.append(n), real(n))[1])
    g = Gateway(cache_dir=str(tmp_path / "a"), cache_mode="off")
    MiniLMEmbedder(g).embed(sentences)
    assert seen == [1, before] and torch.get_num_threads() == before


def test_a_minilm_vector_does_not_depend_on_the_batch_that_computed_it(tmp_path):
    """A text's vector alone, in a batch with texts of other lengths, and read back from the
    cache are bitwise the same (padded batches differed in the last bits, so a cold and a warm
    run of the resolver disagreed; so did a lone one-word text, three tokens, against the same
    word beside others: ``MIN_BATCH_TOKENS``). One-word texts and more same-length texts than
    one batch holds (the last batch of a group is short) are among them."""
    from toolkit.llm.embeddings import MiniLMEmbedder

    sentences = json.loads((ROOT / "fixtures/semantic/minilm_reference_vectors.json").read_text())["sentences"]
    words = ["tests", "code", "data", "file", "rule", "line", "list", "table", "style", "plot"]
    sentences = [*sentences, *words, *(f"{w} {v}" for w in words for v in words[:7])]  # 70 two-word
    off = Gateway(cache_dir=str(tmp_path / "a"), cache_mode="off")
    batch = MiniLMEmbedder(off).embed(sentences)
    alone = np.vstack([MiniLMEmbedder(off).embed([t]) for t in sentences])
    assert batch.tobytes() == alone.tobytes()
    cached = Gateway(cache_dir=str(tmp_path / "b"))
    part = MiniLMEmbedder(cached).embed(sentences[::2])  # a cold call on half of them
    warm = MiniLMEmbedder(cached).embed(sentences)  # half read back, half computed
    assert part.tobytes() == batch[::2].tobytes()
    assert warm.tobytes() == batch.tobytes()


def test_a_minilm_vector_does_not_depend_on_the_number_of_threads(tmp_path, monkeypatch):
    """Batches encoded on one, two or three threads, and on as many as a ``prefmem reproduce``
    pool leaves free (two while alone, one beside another diagnostic), give bitwise the same
    vectors: each thread encodes whole batches with one BLAS thread (BLAS threads instead moved
    last bits)."""
    from toolkit import _cores
    from toolkit.llm import embeddings as em

    sentences = json.loads((ROOT / "fixtures/semantic/minilm_reference_vectors.json").read_text())["sentences"]
    words = ["tests", "code", "data", "file", "rule", "line", "list", "table", "style", "plot"]
    texts = [*sentences, *words, *(f"{w} {v} {u}" for w in words for v in words[:5] for u in words[:3])]
    off = Gateway(cache_dir=str(tmp_path / "a"), cache_mode="off")
    one = em.MiniLMEmbedder(off, threads=1, batch_size=8).embed(texts)
    for n in (2, 3):
        assert em.MiniLMEmbedder(off, threads=n, batch_size=8).embed(texts).tobytes() == one.tobytes()

    import multiprocessing as mp

    monkeypatch.setattr(_cores, "_RUNNING", mp.get_context("spawn").Value("i", 0))
    monkeypatch.setattr(em.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_cores.os, "cpu_count", lambda: 2)
    widths: list[int] = []
    emb = em.MiniLMEmbedder(off, batch_size=8)
    real = emb._width
    monkeypatch.setattr(emb, "_width", lambda: (widths.append(real()), widths[-1])[1])
    with _cores.running():  # alone in the pool: both cores
        assert emb.embed(texts).tobytes() == one.tobytes() and set(widths) == {2}
    widths[:] = []
    with _cores.running(), _cores.running():  # beside another diagnostic: one core
        assert emb.embed(texts[::-1]).tobytes() == one[::-1].tobytes() and set(widths) == {1}
    with pytest.raises(UsageError, match="threads must be at least 1"):
        em.MiniLMEmbedder(off, threads=0)


def test_bounded_threads_keep_the_width_and_raise_the_first_error():
    """``_run_bounded`` never has more items in flight than the width read before each start,
    runs inline while the width is one, and raises an item's error."""
    import threading
    import time

    from toolkit.llm.embeddings import _run_bounded

    lock, active, peak, where = threading.Lock(), [0], [0], set()
    widths = iter([1, 1, 3, 3, 3, 3, 2, 2, 2, 2])

    def fn(i: int) -> None:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            where.add(threading.current_thread().name.startswith("minilm"))
        time.sleep(0.02)
        with lock:
            active[0] -= 1

    _run_bounded(fn, list(range(10)), lambda: next(widths))
    assert peak[0] == 3 and where == {True, False}
    done: list[int] = []

    def bad(i: int) -> None:
        if i == 3:
            raise ValueError("item 3")
        done.append(i)

    with pytest.raises(ValueError, match="item 3"):
        _run_bounded(bad, list(range(6)), lambda: 2)
    with pytest.raises(ValueError, match="item 3"):
        _run_bounded(bad, list(range(6)), lambda: 1)


#: environment that keeps torch, MKL, oneDNN and OpenBLAS on AVX2 kernels on a machine that has AVX512
AVX2_ONLY = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2",
             "OPENBLAS_CORETYPE": "Haswell"}
#: OpenBLAS's AVX-512 kernels (this machine's environment pins OpenBLAS to Haswell; a user may choose these)
AVX512 = {"OPENBLAS_CORETYPE": "SkylakeX"}


def _vectors_in_subprocess(tmp_path, name: str, extra_env: dict[str, str]) -> tuple[str, np.ndarray]:
    """MiniLM vectors of the reference sentences (cache off) and the kernels OpenBLAS and torch
    chose, computed in a fresh process with ``extra_env``."""
    import os

    out = tmp_path / f"{name}.npy"
    code = ("import json, sys, numpy as np, torch\n"
            "from threadpoolctl import threadpool_info\n"
            "from toolkit.llm import Gateway\n"
            "from toolkit.llm.embeddings import MiniLMEmbedder\n"
            f"s = json.load(open({str(ROOT / 'fixtures/semantic/minilm_reference_vectors.json')!r}))['sentences']\n"
            "words = ['tests', 'code', 'data', 'rule']\n"
            f"v = MiniLMEmbedder(Gateway(cache_dir={str(tmp_path / name)!r}, cache_mode='off')).embed(s + words)\n"
            f"np.save({str(out)!r}, v)\n"
            "arch = [i['architecture'] for i in threadpool_info() if i['internal_api'] == 'openblas']\n"
            "print(arch[0] + '/' + torch.backends.cpu.get_cpu_capability())")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **extra_env}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env=env)
    return res.stdout.split()[-1], np.load(out)


def test_a_minilm_vector_does_not_depend_on_the_instruction_set(tmp_path):
    """The same texts embedded with AVX512 kernels and with AVX2 kernels (OpenBLAS's matrix
    products, torch's erf) give bitwise the same vectors (computed in float64, rounded to
    float32). In float32 every vector differed in the last bits, and the learned admitter and
    resolver turned that into other counts on another machine. Runs where the CPU has AVX512:
    elsewhere there is only one instruction set to use."""
    from toolkit.llm._bert import openblas_kernels

    if "SkylakeX" not in openblas_kernels():
        pytest.skip("no AVX-512 here: no second instruction set to compare against")
    wide, a = _vectors_in_subprocess(tmp_path, "default", AVX512)
    narrow, b = _vectors_in_subprocess(tmp_path, "avx2", AVX2_ONLY)
    assert wide == "SkylakeX/AVX512" and narrow == "Haswell/AVX2"
    assert a.dtype == np.float32 and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def test_the_numpy_forward_pass_is_sentence_transformers_in_float64():
    """The encoder the embedder computes with (toolkit.llm._bert) against the reference forward
    pass (sentence-transformers on torch, float64) on texts from one word to the 256-token cap:
    the same token ids, vectors within 1e-13 (the float32 rounding then makes them equal)."""
    from toolkit.llm._minilm import load_encoder, load_model, packaged_model_dir
    from toolkit.llm.embeddings import _same_length_groups

    sentences = json.loads((ROOT / "fixtures/semantic/minilm_reference_vectors.json").read_text())["sentences"]
    texts = [*sentences, "tests", "  padded  ", " ".join(sentences) * 12]  # the last is truncated
    enc, model = load_encoder(packaged_model_dir()), load_model(packaged_model_dir())
    ids = enc.token_ids(texts)
    ref_ids = model.tokenizer([t.strip() for t in texts], truncation=True,
                              max_length=model.max_seq_length)["input_ids"]
    assert ids == ref_ids and max(len(i) for i in ids) == 256
    for idx, _ in _same_length_groups(ids):
        ours = enc.encode_ids(np.array([ids[i] for i in idx]))
        ref = model.encode([texts[i] for i in idx], batch_size=len(idx), convert_to_numpy=True,
                           normalize_embeddings=False, show_progress_bar=False)
        assert np.abs(ours - ref).max() < 1e-13


def test_a_model_folder_the_numpy_pass_does_not_support_is_refused(tmp_path):
    """A folder with the right weights but another activation is refused with a clear error,
    not computed wrongly."""
    from toolkit.llm._minilm import load_encoder, packaged_model_dir

    src = packaged_model_dir()
    folder = tmp_path / "model"
    (folder / "1_Pooling").mkdir(parents=True)
    for f in ("model.safetensors", "tokenizer.json", "sentence_bert_config.json"):
        (folder / f).symlink_to(src / f)
    (folder / "1_Pooling" / "config.json").symlink_to(src / "1_Pooling" / "config.json")
    cfg = json.loads((src / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**cfg, "hidden_act": "relu"}))
    with pytest.raises(EmbedderError, match="not a mean-pooled BERT with exact GELU"):
        load_encoder(folder)
