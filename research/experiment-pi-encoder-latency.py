# EXPERIMENT, not shipped (research/README.md, "Frozen contextual encoder"
# (2026-11-23)"): what all-MiniLM-L6-v2 costs per window on ONE core. Three runtimes:
#   numpy  the forward pass of experiment_minilm.py (run with OPENBLAS_NUM_THREADS=1)
#   ort    onnxruntime CPU, intra_op_num_threads=1, on an ONNX graph built here with onnx.helper
#          from the safetensors weights (no torch, no hub)
#   int8   the same graph after onnxruntime.quantization.quantize_dynamic (int8 weights)
# Each runtime first checks its vectors against numpy's, then times one window at a time
# (batch 1, full windows of 128 and 256 tokens cut from the dumped training texts), --n windows
# per size after 10 warm-up runs; prints p50/p99/mean in ms, and the tokens per 10,000 characters
# of those texts.
#   VENV/bin/pip install numpy tokenizers onnx onnxruntime
#   OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 VENV/bin/python research/experiment-pi-encoder-latency.py \
#     MODEL_DIR ITEMS.jsonl WORK_DIR [--n 300]
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiment_minilm import H, LAYERS, NH, Encoder, load_weights, tokenizer, windows  # noqa: E402

model_dir, items_path, work = sys.argv[1], sys.argv[2], sys.argv[3]
N = int(sys.argv[sys.argv.index("--n") + 1]) if "--n" in sys.argv else 300


def build_onnx(path):
    """BERT encoder + mean pooling + L2 normalisation for one sequence (batch 1, no padding)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = load_weights(model_dir)
    inits, nodes = [], []

    def init(name, arr):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out

    def dense(x, prefix, out):
        m = node("MatMul", [x, init(prefix + ".wT", w[prefix + ".weight"].T)], out + "_mm")
        return node("Add", [m, init(prefix + ".b", w[prefix + ".bias"])], out)

    def layernorm(x, prefix, out):
        return node("LayerNormalization", [x, init(prefix + ".g", w[prefix + ".weight"]), init(prefix + ".beta", w[prefix + ".bias"])], out, axis=-1, epsilon=1e-12)

    d = H // NH
    init("heads_shape", np.array([0, 0, NH, d], dtype=np.int64))
    init("merge_shape", np.array([0, 0, H], dtype=np.int64))
    init("scale", np.array(1 / np.sqrt(d), dtype=np.float32))
    init("sqrt2", np.array(np.sqrt(2), dtype=np.float32))
    init("one", np.array(1, dtype=np.float32))
    init("half", np.array(0.5, dtype=np.float32))
    init("zero_i", np.array([0], dtype=np.int64))
    init("one_i", np.array([1], dtype=np.int64))
    # Embeddings: word + position (0..T-1) + token type 0.
    we = node("Gather", [init("word_emb", w["embeddings.word_embeddings.weight"]), "input_ids"], "we")
    shape = node("Shape", ["input_ids"], "ids_shape")
    T = node("Gather", [shape, "one_i"], "T", axis=0)
    pos = node("Slice", [init("pos_emb", w["embeddings.position_embeddings.weight"]), "zero_i", T, "zero_i"], "pos")
    x = node("Add", [we, pos], "x_wp")
    x = node("Add", [x, init("type0", w["embeddings.token_type_embeddings.weight"][0])], "x_emb")
    x = layernorm(x, "embeddings.LayerNorm", "x0")
    for layer in range(LAYERS):
        L = f"encoder.layer.{layer}."
        heads = {}
        for part in ("query", "key", "value"):
            p = dense(x, L + "attention.self." + part, f"l{layer}_{part}")
            r = node("Reshape", [p, "heads_shape"], f"l{layer}_{part}_r")
            perm = [0, 2, 3, 1] if part == "key" else [0, 2, 1, 3]
            heads[part] = node("Transpose", [r], f"l{layer}_{part}_t", perm=perm)
        s = node("MatMul", [heads["query"], heads["key"]], f"l{layer}_s")
        s = node("Mul", [s, "scale"], f"l{layer}_ss")
        a = node("Softmax", [s], f"l{layer}_a", axis=-1)
        c = node("MatMul", [a, heads["value"]], f"l{layer}_c")
        c = node("Transpose", [c], f"l{layer}_ct", perm=[0, 2, 1, 3])
        c = node("Reshape", [c, "merge_shape"], f"l{layer}_cr")
        c = dense(c, L + "attention.output.dense", f"l{layer}_ao")
        x = layernorm(node("Add", [x, c], f"l{layer}_res1"), L + "attention.output.LayerNorm", f"l{layer}_x1")
        i = dense(x, L + "intermediate.dense", f"l{layer}_i")
        # Exact GELU: 0.5 x (1 + erf(x / sqrt 2)).
        e = node("Erf", [node("Div", [i, "sqrt2"], f"l{layer}_id")], f"l{layer}_erf")
        ge = node("Mul", [i, node("Add", [e, "one"], f"l{layer}_e1")], f"l{layer}_ge")
        g = node("Mul", [ge, "half"], f"l{layer}_g")
        o = dense(g, L + "output.dense", f"l{layer}_o")
        x = layernorm(node("Add", [x, o], f"l{layer}_res2"), L + "output.LayerNorm", f"l{layer}_x2")
    pooled = node("ReduceMean", [x, "one_i"], "pooled", keepdims=0)
    norm = node("LpNormalization", [pooled], "embedding", axis=-1, p=2)
    graph = helper.make_graph(
        nodes, "minilm", [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "T"])],
        [helper.make_tensor_value_info(norm, TensorProto.FLOAT, [1, H])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    onnx.save(model, path)


def stats(ms):
    ms = np.sort(np.array(ms))
    return f"p50 {np.percentile(ms, 50):.1f} ms, p99 {np.percentile(ms, 99):.1f} ms, mean {ms.mean():.1f} ms (n={len(ms)})"


tok = tokenizer(model_dir)
texts = [json.loads(line)["text"] for line in open(items_path) if line.strip()]
chars = sum(len(t) for t in texts)
ntok = sum(len(tok.encode(t, add_special_tokens=False).ids) for t in texts)
print(f"tokens per 10,000 characters of the dumped training texts: {10000 * ntok / chars:.0f}")
full = {}
for size in (128, 256):
    ws = [w for t in texts for w in windows(tok, t, size, 100)[0] if len(w) == size]
    full[size] = [ws[(i * 7919) % len(ws)] for i in range(N + 10)]
np_enc = Encoder(model_dir)
check = {size: np_enc.encode([full[size][0]])[0] for size in full}

runners = {"numpy": lambda ids: np_enc.encode([ids])}
try:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fp32 = os.path.join(work, "minilm.onnx")
    int8 = os.path.join(work, "minilm.int8.onnx")
    build_onnx(fp32)
    quantize_dynamic(fp32, int8, weight_type=QuantType.QInt8)
    for name, p in (("onnxruntime fp32", fp32), ("onnxruntime int8", int8)):
        o = ort.SessionOptions()
        o.intra_op_num_threads = 1
        o.inter_op_num_threads = 1
        o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(p, o, providers=["CPUExecutionProvider"])
        runners[name] = lambda ids, s=sess: s.run(None, {"input_ids": np.array([ids], dtype=np.int64)})[0]
        print(f"{name}: {os.path.getsize(p) / 1e6:.1f} MB")
except ImportError as e:
    print(f"onnxruntime not usable: {e}")

for name, run in runners.items():
    for size in (128, 256):
        v = run(full[size][0])[0]
        cos = float(v @ check[size])
        for ids in full[size][:10]:
            run(ids)
        ms = []
        for ids in full[size][10:]:
            t0 = time.perf_counter()
            run(ids)
            ms.append((time.perf_counter() - t0) * 1000)
        print(f"{name}, {size} tokens: {stats(ms)}; cosine to numpy {cos:.4f}; load {os.getloadavg()[0]:.2f}")
