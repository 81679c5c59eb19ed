"""Fine-tunes all-MiniLM-L6-v2 end to end as a script window classifier (device job).

Protocol: research/scripts-finetune-gpu/README.md (fixed before any score existed).
- Data: .ftgpu/data.npz (prep.py): WordPiece windows of 128 tokens, at most 4 per text.
  Roles: fit (detection corpus train, validation sources left out), bfit (benign package corpus,
  train split), val (the validation sources), heldout (detection corpus held-out split).
- Training examples: attacks on their first 2 windows, benign texts on their first 4, each window
  weighing w/sqrt(k). Text weight w: each (source, class) weighs sqrt(its size), spread over its
  texts; both classes sum to the same total.
- Model: BERT encoder, mean pooling over the attention mask, a linear head. Text score = its worst
  (highest) window logit.
- AdamW, lr 5e-5 encoder / 1e-3 head, weight decay 0.01 (none on biases/LayerNorm/head), 10%
  warm-up then linear decay, 2 epochs, batch 64, bf16 autocast, dropout 0.1, clip 1.0.
- Stages (seed 1): inner = fit + bfit, scores val; final = fit + bfit + val, scores heldout and is
  exported to ONNX and int8 (returned in parts). Then seed 2 of both, scores only, if time allows.
"""
import json, math, os, sys, time, copy
import numpy as np
import torch
import torch.nn as nn

OUT = os.environ.get("OUT", "/tmp/out")
D = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else ".ftgpu"
dev = "cuda" if torch.cuda.is_available() else "cpu"
t0 = time.time()
ROLES = ["fit", "bfit", "val", "heldout"]


def log(*a):
    print(f"[{time.time() - t0:7.1f}s]", *a, flush=True)


d = np.load(f"{DATA}/data.npz")
ids_all = torch.from_numpy(d["ids"].astype(np.int64)).to(dev)
win_text, win_pos, nwin = d["win_text"], d["win_pos"], d["nwin"]
label, source, role = d["label"], d["source"], d["role"]
T = len(label)
log("texts", T, "windows", len(ids_all), "device", dev, torch.__version__, torch.cuda.get_device_name(0) if dev == "cuda" else "")

from transformers import BertConfig, BertModel  # noqa: E402

cfg = BertConfig.from_json_file(f"{DATA}/config.json")
w8 = np.load(f"{DATA}/w8.npz")
base_sd = {}
for k in w8.files:
    name, kind = k.split("|")
    if kind == "q":
        base_sd[name] = torch.from_numpy(w8[k].astype(np.float32) * w8[f"{name}|s"])
    elif kind == "h":
        base_sd[name] = torch.from_numpy(w8[k].astype(np.float32))
    elif kind == "i":
        base_sd[name] = torch.from_numpy(w8[k])


class Model(nn.Module):
    def __init__(self, c=cfg):
        super().__init__()
        self.enc = BertModel(c, add_pooling_layer=False)
        missing, _ = self.enc.load_state_dict(base_sd, strict=False)
        if missing:
            log("missing keys", missing)
        self.head = nn.Linear(c.hidden_size, 1)

    def forward(self, input_ids, attention_mask):
        h = self.enc(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        return self.head((h * m).sum(1) / m.sum(1).clamp(min=1.0)).squeeze(-1)


def text_weights(mask):
    w = np.zeros(T)
    for c in (0, 1):
        sel = mask & (label == c)
        for s in np.unique(source[sel]):
            m = sel & (source == s)
            w[m] = math.sqrt(m.sum()) / m.sum()
        if sel.any():
            w[sel] /= w[sel].sum()
    return w


def examples(mask):
    w = text_weights(mask)
    lt = label[win_text]
    keep = mask[win_text] & (((lt == 1) & (win_pos < 2)) | ((lt == 0) & (win_pos < 4)))
    widx = np.nonzero(keep)[0]
    k = np.minimum(nwin[win_text[widx]], np.where(lt[widx] == 1, 2, 4)).astype(np.float64)
    ww = w[win_text[widx]] / np.sqrt(k)
    return widx, ww / ww.mean(), lt[widx].astype(np.float32)


def train(mask, seed):
    torch.manual_seed(seed)
    model = Model().to(dev)
    widx, ww, yy = examples(mask)
    B, EPOCHS = 64, 2
    steps = EPOCHS * math.ceil(len(widx) / B)
    log(f"  {len(widx)} windows, {steps} steps")
    no_decay = lambda n: n.endswith("bias") or "LayerNorm" in n
    groups = [
        {"params": [p for n, p in model.enc.named_parameters() if not no_decay(n)], "lr": 5e-5, "weight_decay": 0.01},
        {"params": [p for n, p in model.enc.named_parameters() if no_decay(n)], "lr": 5e-5, "weight_decay": 0.0},
        {"params": list(model.head.parameters()), "lr": 1e-3, "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, betas=(0.9, 0.999), eps=1e-8)
    base_lr = [g["lr"] for g in opt.param_groups]
    warm = max(1, int(0.1 * steps))
    rng = np.random.default_rng(seed)
    model.train()
    step = 0
    wt, yt = torch.tensor(ww, dtype=torch.float32, device=dev), torch.tensor(yy, device=dev)
    while step < steps:
        order = rng.permutation(len(widx))
        for i in range(0, len(order), B):
            if step >= steps:
                break
            b = order[i:i + B]
            x = ids_all[torch.from_numpy(widx[b]).to(dev)]
            am = (x != 0).long()
            f = step / warm if step < warm else max(0.0, (steps - step) / max(1, steps - warm))
            for g, lr in zip(opt.param_groups, base_lr):
                g["lr"] = lr * f
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=dev == "cuda"):
                z = model(x, am)
            bt = torch.from_numpy(b).to(dev)
            loss = (nn.functional.binary_cross_entropy_with_logits(z.float(), yt[bt], reduction="none") * wt[bt]).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step += 1
            if step % 500 == 0:
                log(f"  step {step}/{steps} loss {loss.item():.4f}")
    model.eval()
    return model


@torch.no_grad()
def score(model, mask):
    widx = np.nonzero(mask[win_text])[0]
    out = np.full(T, -np.inf)
    for i in range(0, len(widx), 1024):
        b = widx[i:i + 1024]
        x = ids_all[torch.from_numpy(b).to(dev)]
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=dev == "cuda"):
            z = model(x, (x != 0).long()).float().cpu().numpy()
        np.maximum.at(out, win_text[b], z)
    out[~mask] = np.nan
    return out


SCORES = {}


def save(name, arr):
    SCORES[name] = arr.astype(np.float32)
    np.savez(f"{OUT}/scores.npz", **SCORES)


def auc(name, s, mask):
    y = label[mask]; v = s[mask]
    if y.min() == y.max():
        return
    order = np.argsort(v)
    r = np.empty(len(v)); r[order] = np.arange(1, len(v) + 1)
    a = (r[y == 1].sum() - (y == 1).sum() * ((y == 1).sum() + 1) / 2) / ((y == 1).sum() * (y == 0).sum())
    log(f"{name}: AUC {a:.4f} on {mask.sum()} texts")


def export(model, tag):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    ec = copy.deepcopy(cfg)
    ec._attn_implementation = "eager"
    em = Model(ec)
    em.load_state_dict({k: v.float().cpu() for k, v in model.state_dict().items()})
    em.eval()
    x = ids_all[:2].cpu()
    p = f"/tmp/{tag}.onnx"
    kw = dict(input_names=["input_ids", "attention_mask"], output_names=["logit"],
              dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}, "logit": {0: "batch"}}, opset_version=17)
    torch.onnx.export(em, (x, (x != 0).long()), p, dynamo=False, **kw)
    q = f"/tmp/{tag}-int8.onnx"
    quantize_dynamic(p, q, weight_type=QuantType.QInt8)
    data = open(q, "rb").read()
    n = 15 * 1024 * 1024
    for k in range(0, len(data), n):
        open(f"{OUT}/{tag}-int8.onnx.part{k // n}", "wb").write(data[k:k + n])
    log("onnx", os.path.getsize(p), "int8", len(data), "parts", math.ceil(len(data) / n))


fit = (role == 0) | (role == 1)
val = role == 2
held = role == 3
for seed in (1, 2):
    if seed == 2 and time.time() - t0 > float(os.environ.get("SEED2_BEFORE", "330")):
        log("no time for seed 2")
        break
    log(f"inner seed {seed}")
    m = train(fit, seed)
    s = score(m, val)
    save(f"val_s{seed}", s)
    auc(f"val seed {seed}", s, val)
    del m
    log(f"final seed {seed}")
    m = train(fit | val, seed)
    s = score(m, held)
    save(f"heldout_s{seed}", s)
    auc(f"heldout seed {seed}", s, held)
    if seed == 1:
        try:
            export(m, "scripts-minilm")
        except Exception as e:
            log("export failed:", repr(e)[:500])
    del m
    torch.cuda.empty_cache()
log("done")
