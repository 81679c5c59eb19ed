"""Scores texts with the exported (int8) ONNX model on the CPU as the service would: one text at a
time, each MiniLM WordPiece window of 128 tokens ([CLS] + 126 + [SEP]) run alone (batch 1), a
text's score is its worst window. (The device scored held-out in batches of 256 windows; dynamic
int8 quantisation takes one activation scale per batch tensor, so those scores depend on the batch
and differ from these: median 0.2, max 1.7 logits. The figures use these.)

  python onnx_score.py MODEL.onnx TOKENIZER.json IN.jsonl OUT.json [SPLIT]  # {sha: logit} per row's text (rows of SPLIT only)
  python onnx_score.py MODEL.onnx TOKENIZER.json --latency           # one core: set taskset outside
"""
import hashlib, json, os, sys, time
import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

WIN, BODY, MAX_WIN = 128, 126, 16


def session(path):
    o = ort.SessionOptions()
    o.intra_op_num_threads = 1
    o.inter_op_num_threads = 1
    return ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])


def windows(tok, text, max_win=MAX_WIN):
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    t = tok.encode(text, add_special_tokens=False).ids
    chunks = [t[i:i + BODY] for i in range(0, max(len(t), 1), BODY)][:max_win]
    return [np.array([[cls] + c + [sep]], dtype=np.int64) for c in chunks]


def score(sess, tok, text, max_win=MAX_WIN):
    best = -np.inf
    for x in windows(tok, text, max_win):
        best = max(best, float(sess.run(None, {"input_ids": x, "attention_mask": np.ones_like(x)})[0][0]))
    return best


def main():
    model, tokfile = sys.argv[1], sys.argv[2]
    tok = Tokenizer.from_file(tokfile)
    tok.no_truncation(); tok.no_padding()
    t0 = time.perf_counter()
    sess = session(model)
    load_s = time.perf_counter() - t0
    if sys.argv[3] == "--latency":
        rng = np.random.default_rng(1)
        prose = ("Please summarise the attached meeting notes and ignore the formatting of the tables. "
                 "The quarterly figures are in the second section and the action items follow. ") * 200
        print(json.dumps({"model_bytes": os.path.getsize(model), "load_s": round(load_s, 4)}))
        x = np.array([[101] + list(rng.integers(1000, 29000, 126)) + [102]], dtype=np.int64)
        for _ in range(20):
            sess.run(None, {"input_ids": x, "attention_mask": np.ones_like(x)})
        ts = []
        for _ in range(300):
            a = time.perf_counter(); sess.run(None, {"input_ids": x, "attention_mask": np.ones_like(x)}); ts.append(time.perf_counter() - a)
        ts = np.array(ts) * 1000
        print(json.dumps({"window128_ms_p50": round(float(np.percentile(ts, 50)), 2), "p99": round(float(np.percentile(ts, 99)), 2)}))
        for kb in (1, 10):
            text = prose[:kb * 1024]
            n = len(windows(tok, text, 10 ** 6))
            ts = []
            for _ in range(30 if kb == 10 else 100):
                a = time.perf_counter(); score(sess, tok, text, 10 ** 6); ts.append(time.perf_counter() - a)
            ts = np.array(ts) * 1000
            print(json.dumps({"payload_kb": kb, "windows": n, "ms_p50": round(float(np.percentile(ts, 50)), 2), "p99": round(float(np.percentile(ts, 99)), 2)}))
        return
    rows = [json.loads(l) for l in open(sys.argv[3]) if l.strip()]
    if len(sys.argv) > 5:
        rows = [r for r in rows if r.get("split") == sys.argv[5]]
    out = {}
    for r in rows:
        if "text" in r:
            out[hashlib.sha256(r["text"].encode()).hexdigest()] = score(sess, tok, r["text"])
    json.dump(out, open(sys.argv[4], "w"))
    print("scored", len(out), "texts; load", round(load_s, 3), "s")


if __name__ == "__main__":
    main()
