"""The pre-registered reading (README.md): threshold from bval (int8) and val benign (inner), then
held-out, fresh2 and benign held-out figures of shipped OR encoder. Aggregates only.

  python evaluate.py W SCORES.npz
"""
import json, sys
from collections import defaultdict
import numpy as np

W, SC = sys.argv[1], sys.argv[2]
meta = json.load(open(f"{W}/meta.json"))
dev, loc = meta["dev"], meta["local"]
S = np.load(SC)
L = np.load(f"{W}/local-scores.npz")
drole = np.array([r["role"] for r in dev]); dlab = np.array([r["label"] for r in dev]); dship = np.array([r["shipped"] for r in dev])
dsrc = np.array([r["source"] for r in dev])
lrole = np.array([r["role"] for r in loc]); lship = np.array([r["shipped"] for r in loc]); llang = np.array([r["language"] for r in loc])
bench = L["bench"]


def auc(s, y):
    order = np.argsort(s); r = np.empty(len(s)); r[order] = np.arange(1, len(s) + 1)
    p, n = (y == 1).sum(), (y == 0).sum()
    return (r[y == 1].sum() - p * (p + 1) / 2) / (p * n)


def lowest(ok, grid):
    for t in grid:
        if ok(t):
            return t
    return None


grid = np.round(np.arange(-10, 20.001, 0.05), 2)
for seed in (1, 2):
    if f"val_s{seed}" not in S.files:
        continue
    vs, hs = S[f"val_s{seed}"], S[f"heldout_s{seed}"]
    vb = (drole == "val") & (dlab == 0); va = (drole == "val") & (dlab == 1)
    hb = (drole == "heldout") & (dlab == 0); ha = (drole == "heldout") & (dlab == 1)
    print(f"== seed {seed}")
    print(f"AUC val (inner) {auc(vs[drole == 'val'], dlab[drole == 'val']):.4f}; heldout (torch) {auc(hs[drole == 'heldout'], dlab[drole == 'heldout']):.4f}")
    tb = lowest(lambda t: ((dship[vb] == 1) | (vs[vb] >= t)).mean() <= 0.02, grid)
    bv = lrole == "bval"
    ta = lowest(lambda t: ((lship[bv] == 1) | (bench[bv] >= t)).sum() <= 13, grid) if seed == 1 else None
    t = max(x for x in (ta, tb) if x is not None)
    print(f"threshold: bval rule {ta}, val-benign rule {tb} -> t = {t}")
    print(f"shipped alone: val attacks {dship[va].mean():.3f} ({dship[va].sum()}/{va.sum()}), val benign {dship[vb].mean():.4f}; heldout attacks {dship[ha].mean():.3f} ({dship[ha].sum()}/{ha.sum()}), admin {dship[hb].mean():.4f} ({dship[hb].sum()}/{hb.sum()})")
    orv = (dship == 1) | (vs >= t)
    print(f"OR val (inner, torch): attacks {orv[va].mean():.3f} ({orv[va].sum()}/{va.sum()}), benign {orv[vb].mean():.4f} ({orv[vb].sum()}/{vb.sum()})")
    for name, hsc in (("torch", hs), ("int8", L["heldout"] if seed == 1 else None)):
        if hsc is None:
            continue
        orh = (dship == 1) | (hsc >= t)
        print(f"OR heldout ({name}): attacks {orh[ha].mean():.3f} ({orh[ha].sum()}/{ha.sum()}), admin {orh[hb].mean():.4f} ({orh[hb].sum()}/{hb.sum()}); encoder alone attacks {(hsc[ha] >= t).mean():.3f}, admin {(hsc[hb] >= t).mean():.4f}")
        for s in sorted(set(dsrc[drole == "heldout"])):
            m = (drole == "heldout") & (dsrc == s)
            print(f"    {s:24s} shipped {dship[m].mean():.3f} OR {orh[m].mean():.3f} ({orh[m].sum()}/{m.sum()})")
    if seed != 1:
        continue
    for role in ("bval", "bfresh2", "bheld"):
        m = lrole == role
        orb = (lship == 1) | (bench >= t)
        print(f"OR {role}: {orb[m].sum()} of {m.sum()} ({100 * orb[m].mean():.3f}%), shipped alone {lship[m].sum()}, encoder alone {(bench[m] >= t).sum()}")
        per = defaultdict(lambda: [0, 0])
        for lang, f in zip(llang[m], orb[m]):
            per[lang][0] += 1; per[lang][1] += int(f)
        print("    " + ", ".join(f"{k} {v[1]}/{v[0]} ({100 * v[1] / v[0]:.2f}%)" for k, v in sorted(per.items())))
    for q in (0.5, 0.9, 0.99, 0.999):
        print(f"  bval encoder score quantile {q}: {np.quantile(bench[lrole == 'bval'], q):.2f}")
