# EXPERIMENT, not shipped (research/README.md, "Frozen contextual encoder"
# (2026-11-23)"): all-MiniLM-L6-v2 sentence vectors of the texts dumped by
# research/experiment-pi-encoder.ts --dump, per window of WINDOW tokens ([CLS] + WINDOW-2 + [SEP]),
# the first MAX_WINDOWS (default 4) windows of each text.
#   python3 -m venv VENV && VENV/bin/pip install numpy tokenizers
#   OPENBLAS_NUM_THREADS=1 nice -n 10 VENV/bin/python research/experiment-pi-encoder-embed.py \
#     MODEL_DIR ITEMS.jsonl OUT_BASE WINDOW [MAX_WINDOWS] [--onnx FILE]
# --onnx: encode with onnxruntime (one thread, one window at a time) on a graph written by
# experiment-pi-encoder-latency.py (e.g. its int8 one), to see what quantisation does to the heads.
# Writes OUT_BASE.f32 (one float32 row of 384 per window) and OUT_BASE.json ({dims, ids: the text
# id of each row}). Windows are batched by length (padding masked), so the result does not depend
# on the batching.
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiment_minilm import Encoder, tokenizer, windows  # noqa: E402

onnx_path = sys.argv[sys.argv.index("--onnx") + 1] if "--onnx" in sys.argv else None
args = [a for a in sys.argv[1:] if a not in ("--onnx", onnx_path)]
model_dir, items_path, out_base, size = args[0], args[1], args[2], int(args[3])
max_windows = int(args[4]) if len(args) > 4 else 4
tok = tokenizer(model_dir)
if onnx_path:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])
    encode = lambda batch: np.concatenate([sess.run(None, {"input_ids": np.array([ids], dtype=np.int64)})[0] for ids in batch])
else:
    encode = Encoder(model_dir).encode
rows = []  # (text id, token ids)
for line in open(items_path):
    if line.strip():
        item = json.loads(line)
        ws, _ = windows(tok, item["text"], size, max_windows)
        rows.extend((item["id"], w) for w in ws)
order = sorted(range(len(rows)), key=lambda i: len(rows[i][1]))
out = np.zeros((len(rows), 384), dtype=np.float32)
tokens = sum(len(w) for _, w in rows)
print(f"{len(rows)} windows, {tokens} tokens", file=sys.stderr)
start = time.time()
BATCH_TOKENS = 4096
i = 0
batches = 0
while i < len(order):
    # Batches of similar length, about BATCH_TOKENS tokens each.
    j = i + max(1, BATCH_TOKENS // len(rows[order[i]][1]))
    j = min(j, len(order))
    batch = order[i:j]
    out[batch] = encode([rows[k][1] for k in batch])
    i = j
    batches += 1
    if batches % 20 == 0:
        print(f"{i}/{len(rows)} {time.time() - start:.0f}s", file=sys.stderr)
out.tofile(out_base + ".f32")
json.dump({"dims": 384, "window": size, "ids": [r[0] for r in rows]}, open(out_base + ".json", "w"))
print(f"done in {time.time() - start:.0f}s", file=sys.stderr)
