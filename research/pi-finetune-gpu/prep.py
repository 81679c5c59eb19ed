"""Builds .gpu/data.npz for the device fine-tune: MiniLM WordPiece ids per 128-token window.

Texts: pi.jsonl of the detection builder (split train: training; split heldout: scored once).
Train sources are dealt into 3 groups for the out-of-group (leave-sources-out) scores.
"""
import json, sys, hashlib
import numpy as np
from tokenizers import Tokenizer

SRC, MODEL, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
WIN, BODY, MAX_WIN = 128, 126, 16
tok = Tokenizer.from_file(f"{MODEL}/tokenizer.json")
tok.no_truncation(); tok.no_padding()
CLS, SEP = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
recs = [json.loads(l) for l in open(SRC) if l.strip()]
recs = [r for r in recs if r["split"] in ("train", "heldout")]
enc = tok.encode_batch([r["text"] for r in recs], add_special_tokens=False)

# groups: greedy by size over train sources, largest first, into the group with the smallest share
train_sources = {}
for r in recs:
    if r["split"] == "train":
        train_sources.setdefault(r["source"], [0, 0])[r["label"]] += 1
groups = [[0, 0] for _ in range(3)]
gof = {}
for s, (b, a) in sorted(train_sources.items(), key=lambda kv: -(kv[1][0] + kv[1][1])):
    tb = sum(v[0] for v in train_sources.values()); ta = sum(v[1] for v in train_sources.values())
    g = min(range(3), key=lambda i: max((groups[i][0] + b) / tb, (groups[i][1] + a) / ta))
    gof[s] = g; groups[g][0] += b; groups[g][1] += a
sources = sorted({r["source"] for r in recs})
sid = {s: i for i, s in enumerate(sources)}

ids, win_text, win_pos = [], [], []
label, source, split, group, nwin = [], [], [], [], []
for ti, (r, e) in enumerate(zip(recs, enc)):
    t = e.ids
    chunks = [t[i:i + BODY] for i in range(0, max(len(t), 1), BODY)][:MAX_WIN]
    for k, c in enumerate(chunks):
        w = [CLS] + c + [SEP]
        ids.append(np.array(w + [0] * (WIN - len(w)), dtype=np.uint16)); win_text.append(ti); win_pos.append(k)
    label.append(r["label"]); source.append(sid[r["source"]]); split.append(0 if r["split"] == "train" else 1)
    group.append(gof.get(r["source"], -1)); nwin.append(len(chunks))
np.savez_compressed(OUT, ids=np.stack(ids), win_text=np.array(win_text, np.int32), win_pos=np.array(win_pos, np.int16),
                    label=np.array(label, np.int8), source=np.array(source, np.int16), split=np.array(split, np.int8),
                    group=np.array(group, np.int8), nwin=np.array(nwin, np.int16), sources=np.array(sources))
json.dump({"ids": [r["id"] for r in recs], "sha": [hashlib.sha256(r["text"].encode()).hexdigest() for r in recs],
           "groups": {s: g for s, g in gof.items()}, "sources": sources}, open(OUT.replace(".npz", "-meta.json"), "w"))
print(len(recs), "texts", len(ids), "windows", "groups (benign, attacks):", groups)
