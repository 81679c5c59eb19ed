"""Tokenises dump.ts's rows into MiniLM WordPiece windows (research/scripts-finetune-gpu/README.md).

  python prep.py ALL.jsonl MODEL_DIR DEVICE_DIR LOCAL_DIR

DEVICE_DIR/data.npz: roles fit, bfit (training), val, heldout (scored on the device);
DEVICE_DIR/w8.npz: the checkpoint, 2-D float tensors as int8 per row with an fp32 scale, the rest
fp16 (the trip to the device has a size limit); LOCAL_DIR/bench.npz: the benign corpus splits
bval, bfresh2, bheld (scored here, on the CPU, with the returned int8 ONNX model);
LOCAL_DIR/meta.json: per text its role, source, label, shipped verdict, language.
"""
import json, sys
import numpy as np
from tokenizers import Tokenizer
from safetensors.numpy import load_file

SRC, MODEL, DEV, LOC = sys.argv[1:5]
WIN, BODY, K = 128, 126, 4
ROLES = ["fit", "bfit", "val", "heldout", "bval", "bfresh2", "bheld"]
tok = Tokenizer.from_file(f"{MODEL}/tokenizer.json")
tok.no_truncation(); tok.no_padding()
CLS, SEP = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
rows = [json.loads(l) for l in open(SRC) if l.strip()]
print(len(rows), "rows")
sources = sorted({r["source"] for r in rows})
sid = {s: i for i, s in enumerate(sources)}


def build(sel):
    enc = tok.encode_batch([r["text"].encode("utf-8", "replace").decode("utf-8") for r in sel], add_special_tokens=False)  # lone surrogates -> ?
    ids, win_text, win_pos, nwin = [], [], [], []
    for ti, e in enumerate(enc):
        t = e.ids
        chunks = [t[i:i + BODY] for i in range(0, max(len(t), 1), BODY)][:K]
        for k, c in enumerate(chunks):
            w = [CLS] + c + [SEP]
            ids.append(np.array(w + [0] * (WIN - len(w)), dtype=np.uint16)); win_text.append(ti); win_pos.append(k)
        nwin.append(len(chunks))
    return dict(ids=np.stack(ids), win_text=np.array(win_text, np.int32), win_pos=np.array(win_pos, np.int8), nwin=np.array(nwin, np.int8),
                label=np.array([r["label"] for r in sel], np.int8), source=np.array([sid[r["source"]] for r in sel], np.int16),
                role=np.array([ROLES.index(r["role"]) for r in sel], np.int8), shipped=np.array([r.get("shipped", -1) for r in sel], np.int8))


dev_rows = [r for r in rows if r["role"] in ("fit", "bfit", "val", "heldout")]
loc_rows = [r for r in rows if r["role"] in ("bval", "bfresh2", "bheld")]
np.savez_compressed(f"{DEV}/data.npz", sources=np.array(sources), **build(dev_rows))
np.savez_compressed(f"{LOC}/bench.npz", sources=np.array(sources), **build(loc_rows))
json.dump({"sources": sources, "dev": [{k: r.get(k) for k in ("role", "source", "label", "shipped")} for r in dev_rows],
           "local": [{k: r.get(k) for k in ("role", "source", "file", "language", "label", "shipped")} for r in loc_rows]}, open(f"{LOC}/meta.json", "w"))

w = load_file(f"{MODEL}/model.safetensors")
q = {}
for k, v in w.items():
    if v.dtype == np.float32 and v.ndim == 2:
        s = np.abs(v).max(axis=1, keepdims=True) / 127.0
        s[s == 0] = 1.0
        q[f"{k}|q"] = np.round(v / s).astype(np.int8); q[f"{k}|s"] = s.astype(np.float32)
    elif v.dtype == np.float32:
        q[f"{k}|h"] = v.astype(np.float16)
    else:
        q[f"{k}|i"] = v
np.savez(f"{DEV}/w8.npz", **q)
for role in ROLES:
    sel = [r for r in rows if r["role"] == role]
    print(role, len(sel), "texts,", sum(r["label"] for r in sel), "attacks")
