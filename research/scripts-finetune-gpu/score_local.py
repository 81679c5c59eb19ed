"""Scores texts with the returned int8 ONNX model on this machine's CPU, one window per call.

  python score_local.py W PARTS_DIR [DEVICE_DIR]

Reads W/bench.npz (bval, bfresh2, bheld) and DEVICE_DIR/data.npz (heldout rows only; default
.ftgpu); the model is PARTS_DIR/scripts-minilm-int8.onnx.part*. Writes W/local-scores.npz: per
text of bench.npz its highest window logit (`bench`), and the same for data.npz's held-out rows
(`heldout`, NaN elsewhere). Two worker processes, one thread each.
"""
import glob, sys, os
import numpy as np
from multiprocessing import Pool

W, PARTS = sys.argv[1], sys.argv[2]
DEV = sys.argv[3] if len(sys.argv) > 3 else ".ftgpu"
MODEL = f"{W}/scripts-minilm-int8.onnx"
sess = None


def init():
    global sess
    import onnxruntime as ort
    o = ort.SessionOptions()
    o.intra_op_num_threads = 1
    o.inter_op_num_threads = 1
    sess = ort.InferenceSession(MODEL, o, providers=["CPUExecutionProvider"])


def run(ids):
    out = np.empty(len(ids), np.float32)
    for i, w in enumerate(ids):
        n = int((w != 0).sum())
        x = w[:n].astype(np.int64)[None, :]
        out[i] = sess.run(None, {"input_ids": x, "attention_mask": np.ones_like(x)})[0][0]
    return out


def scores(d, mask_text=None):
    ids, wt = d["ids"], d["win_text"]
    T = len(d["label"])
    sel = np.arange(len(ids)) if mask_text is None else np.nonzero(mask_text[wt])[0]
    chunks = np.array_split(sel, max(1, len(sel) // 2000))
    with Pool(2, initializer=init) as p:
        z = np.concatenate(p.map(run, [ids[c] for c in chunks]))
    out = np.full(T, -np.inf, np.float32)
    np.maximum.at(out, wt[sel], z)
    if mask_text is not None:
        out[~mask_text] = np.nan
    return out


if __name__ == "__main__":
    with open(MODEL, "wb") as f:
        for p in sorted(glob.glob(f"{PARTS}/scripts-minilm-int8.onnx.part*"), key=lambda s: int(s.rsplit("part", 1)[1])):
            f.write(open(p, "rb").read())
    print("model", os.path.getsize(MODEL), "bytes", flush=True)
    dd = np.load(f"{DEV}/data.npz")
    held = scores(dd, dd["role"] == 3)
    print("heldout scored", flush=True)
    bench = scores(np.load(f"{W}/bench.npz"))
    np.savez(f"{W}/local-scores.npz", bench=bench, heldout=held)
    print("bench scored:", len(bench), "texts", flush=True)
