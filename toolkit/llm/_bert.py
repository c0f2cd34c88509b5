"""A BERT encoder's forward pass in NumPy float64, for the packaged all-MiniLM-L6-v2.

Why not torch: the float64 sentence vectors are about 40% of ``prefmem reproduce``'s CPU time,
and outside its dense layers torch's float64 pass spends 58% of its time in a fused attention
kernel and 32% in an erf GELU, neither vectorised for float64 on CPU (torch's profiler). Here
attention is plain batched products and the GELU uses torch's vectorised erf. The dense layers
are NumPy's BLAS: with OpenBLAS's AVX2 kernels (this machine's environment pins them) the whole
pass runs at about torch's speed, with its AVX-512 kernels 1.35x (``benchmarks/minilm_forward.py``).
Its vectors agree with sentence-transformers' float64 ones to about 1e-15, which the embedder's
rounding to float32 removes (``tests/test_embeddings.py`` checks both, and both kernel families).

Each sequence's vector depends on its own tokens only: no padding is ever computed (callers
encode texts of one token count together) and every reduction runs within a row.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

__all__ = ["BertEncoder", "openblas_kernels"]

#: the AVX-512 subsets OpenBLAS's SkylakeX kernels use
_AVX512 = frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})


def openblas_kernels(cpuinfo: Path = Path("/proc/cpuinfo")) -> list[str]:
    """The OpenBLAS kernel families (``OPENBLAS_CORETYPE`` values) this CPU runs that the forward
    pass is compared across: ``Haswell`` (AVX2), and ``SkylakeX`` where the CPU has AVX-512 (read
    from ``cpuinfo``; Linux only, elsewhere just ``Haswell``)."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        text = ""
    flags = next((ln.partition(":")[2].split() for ln in text.splitlines() if ln.startswith("flags")), [])
    return ["Haswell"] + (["SkylakeX"] if _AVX512 <= set(flags) else [])


class BertEncoder:
    """Mean-pooled, L2-normalised sentence vectors from a sentence-transformers BERT folder.

    Reads ``config.json`` (dimensions, layer-norm epsilon), ``sentence_bert_config.json``
    (``max_seq_length``), ``tokenizer.json`` and ``model.safetensors`` (cast to float64).
    Supports what all-MiniLM-L6-v2 uses: absolute positions, exact-erf GELU, mean pooling,
    a final normalisation; anything else is refused at load rather than computed wrongly.
    """

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(folder)
        cfg = json.loads((folder / "config.json").read_text())
        st = json.loads((folder / "sentence_bert_config.json").read_text())
        pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
        if cfg.get("hidden_act") != "gelu" or cfg.get("position_embedding_type", "absolute") != "absolute" \
                or not pooling.get("pooling_mode_mean_tokens") or st.get("do_lower_case"):
            raise ValueError(f"{folder}: not a mean-pooled BERT with exact GELU and absolute positions")
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg["layer_norm_eps"])
        self.max_seq_length = int(st["max_seq_length"])
        raw = load_file(str(folder / "model.safetensors"))
        w = {k.removeprefix("bert."): v.astype(np.float64) for k, v in raw.items()}
        # dense layers as (in, out) matrices, so that x @ W is the layer (torch stores (out, in))
        self._dense = {k: np.ascontiguousarray(w.pop(k).T) for k in list(w)
                       if k.startswith("encoder.") and k.endswith(".weight") and w[k].ndim == 2}
        self._w = w  # embeddings, biases, layer norms
        tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tok.enable_truncation(max_length=self.max_seq_length)
        tok.no_padding()
        self._tok = tok

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Token ids per text, stripped of outer white space and truncated as sentence-transformers does."""
        return [e.ids for e in self._tok.encode_batch([str(t).strip() for t in texts])]

    def _ln(self, x: np.ndarray, name: str) -> np.ndarray:
        mu = x.mean(axis=-1, keepdims=True)
        xc = x - mu
        var = (xc * xc).mean(axis=-1, keepdims=True)
        return xc / np.sqrt(var + self.eps) * self._w[f"{name}.weight"] + self._w[f"{name}.bias"]

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        y = x @ self._dense[f"{name}.weight"]
        y += self._w[f"{name}.bias"]
        return y

    def encode_ids(self, ids: np.ndarray) -> np.ndarray:
        """(B, L) token ids, all of one length, to (B, hidden) unit vectors in float64."""
        from torch import erf, from_numpy

        ids = np.asarray(ids, dtype=np.int64)
        B, L = ids.shape
        w = self._w
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:L][None]
             + w["embeddings.token_type_embeddings.weight"][0][None, None])
        x = self._ln(x, "embeddings.LayerNorm").reshape(B * L, -1)
        H = x.shape[1]
        h, dh = self.heads, H // self.heads
        scale = 1.0 / np.sqrt(dh)

        def heads(t: np.ndarray) -> np.ndarray:
            return t.reshape(B, L, h, dh).transpose(0, 2, 1, 3)

        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q = heads(self._linear(x, f"{p}.attention.self.query"))
            k = heads(self._linear(x, f"{p}.attention.self.key"))
            v = heads(self._linear(x, f"{p}.attention.self.value"))
            s = np.matmul(q * scale, k.transpose(0, 1, 3, 2))  # (B, h, L, L)
            s -= s.max(axis=-1, keepdims=True)
            np.exp(s, out=s)
            s /= s.sum(axis=-1, keepdims=True)
            ctx = np.matmul(s, v).transpose(0, 2, 1, 3).reshape(B * L, H)
            x = self._ln(self._linear(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            u = self._linear(x, f"{p}.intermediate.dense")
            # exact GELU, u * Phi(u); torch's float64 erf is vectorised (three times SciPy's speed)
            g = u * (1.0 / np.sqrt(2.0))
            erf(from_numpy(g), out=from_numpy(g))
            g += 1.0
            g *= 0.5
            u *= g
            x = self._ln(self._linear(u, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        pooled = x.reshape(B, L, H).mean(axis=1)
        norm = np.sqrt((pooled * pooled).sum(axis=1, keepdims=True))
        return pooled / np.maximum(norm, 1e-12)
