"""The pre-registered reading of the Sigma probe (README.md). Aggregates only.

  python sigma_eval.py W [ENC_DIR]

W holds all.jsonl and sigma-hits-{val,bval,heldout,bfresh2,bheld}.json (sigma_probe.py);
ENC_DIR, optional, the encoder experiment's W (meta.json, local-scores.npz) for the diagnostic.
"""
import json, sys
from collections import Counter, defaultdict

W = sys.argv[1]
ENC = sys.argv[2] if len(sys.argv) > 2 else None
rows = [json.loads(l) for l in open(f"{W}/all.jsonl")]
H = {role: json.load(open(f"{W}/sigma-hits-{role}.json")) for role in ("val", "bval", "heldout", "bfresh2", "bheld")}
rules = H["val"]["rules"]
ARTEFACTS = {"Execution Of Non-Existing File", "Execution of Suspicious File Type Extension"}
drop = {rid for rid, (title, _) in rules.items() if title in ARTEFACTS}
for role in ("val", "bval"):
    for k, v in H[role]["hits"].items():
        if rows[int(k)]["label"] == 0:
            drop |= set(v)
kept = set(rules) - drop
print(f"{len(rules)} rules, {len(drop)} dropped on val/bval, {len(kept)} kept "
      f"({Counter(rules[r][1] for r in kept)})")

enc = {}
if ENC:
    import numpy as np
    meta = json.load(open(f"{ENC}/meta.json"))
    L = np.load(f"{ENC}/local-scores.npz")
    # the encoder experiment's rows are dev (data.npz order) and local (bench.npz order); match by role order
    dev = meta["dev"]
    order = defaultdict(list)
    for i, r in enumerate(rows):
        order[r["role"]].append(i)
    held = [j for j, r in enumerate(dev) if r["role"] == "heldout"]
    for j, i in zip(held, order["heldout"]):
        enc[i] = float(L["heldout"][j]) >= 6.8
    loc = meta["local"]
    for role in ("bfresh2", "bheld"):
        js = [j for j, r in enumerate(loc) if r["role"] == role]
        for j, i in zip(js, order[role]):
            enc[i] = float(L["bench"][j]) >= 6.8


def fired(role, i, levels):
    return any(h in kept and rules[h][1] in levels for h in H[role]["hits"].get(str(i), []))


for role in ("val", "heldout", "bfresh2", "bheld"):
    idx = [i for i, r in enumerate(rows) if r["role"] == role]
    for lab in (1, 0):
        g = [i for i in idx if rows[i]["label"] == lab]
        if not g:
            continue
        sh = sum(rows[i]["shipped"] == 1 for i in g)
        line = f"{role} {'attacks' if lab else 'benign'} ({len(g)}): shipped {sh} ({sh / len(g):.4f})"
        for name, lv in (("medium+", ("medium", "high", "critical")), ("high+", ("high", "critical"))):
            s = [i for i in g if fired(role, i, lv)]
            o = [i for i in g if rows[i]["shipped"] == 1 or fired(role, i, lv)]
            line += f"; sigma {name} {len(s)}, OR {len(o)} ({len(o) / len(g):.4f})"
            if enc and role != "val":
                oe = [i for i in g if rows[i]["shipped"] == 1 or fired(role, i, lv) or enc.get(i, False)]
                line += f", OR+encoder {len(oe)} ({len(oe) / len(g):.4f})"
        print(line)
        if role != "val":
            per = defaultdict(lambda: [0, 0])
            for i in g:
                k = rows[i].get("language") or rows[i]["source"]
                per[k][0] += 1
                per[k][1] += int(rows[i]["shipped"] == 1 or fired(role, i, ("medium", "high", "critical")))
            print("    OR medium+ by " + ("language" if lab == 0 and role != "heldout" else "source") + ": " + ", ".join(f"{k} {v[1]}/{v[0]}" for k, v in sorted(per.items())))
    if role in ("bfresh2", "bheld"):
        c = Counter(rules[h][0] for i in idx for h in set(H[role]["hits"].get(str(i), [])) if h in kept)
        print("    kept rules firing on", role, dict(c.most_common(8)))
