"""Would the community's Sigma process-creation rules catch the script attacks the pipeline misses?
(issue 30, experiment, not shipped; README.md beside this file.)

  python sigma_probe.py SIGMA_RULES_DIR W MAX_LINES ROLES...     # W: dump.ts rows in W/all.jsonl

Rules: SigmaHQ rules/{windows,linux,macos}/process_creation, levels medium/high/critical, status
not deprecated/unsupported, and none whose file mentions atomic-red-team (the held-out attack
source; rules written from its tests would leak it). Each is converted to SQL by pySigma's sqlite
backend and run over one row per command line of each text: every non-empty line (first 300 per
text, MAX_LINES; comment lines skipped; identical rows stored once), Image/OriginalFileName from its first word (a bare word twice: as a System32 .exe and as
/usr/bin/word). A text is flagged when a rule matches one of its lines. Prints, per role, the
texts flagged (by level), and for the OR with the shipped verdict; writes W/sigma-hits.json
(text index -> rule ids) for the rules' own FPR on benign roles.
"""
import glob, json, re, sqlite3, sys
from collections import Counter, defaultdict
from sigma.collection import SigmaCollection
from sigma.backends.sqlite import sqliteBackend

RULES, W, MAX_LINES, ROLES = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
rules = []
for f in sorted(glob.glob(f"{RULES}/rules/*/process_creation/*.yml")):
    src = open(f, encoding="utf-8").read()
    if "atomic-red-team" in src.lower():
        continue
    try:
        c = SigmaCollection.from_yaml(src)
        r = c.rules[0]
        if str(r.status).lower().endswith(("deprecated", "unsupported")) or r.level is None or r.level.name.lower() not in ("medium", "high", "critical"):
            continue
        q = sqliteBackend().convert_rule(r)[0]
    except Exception:
        continue
    rules.append({"id": str(r.id), "title": r.title, "level": r.level.name.lower(), "sql": q})
print(len(rules), "rules", Counter(r["level"] for r in rules), flush=True)
fields = sorted({m for r in rules for m in re.findall(r"\b([A-Z][A-Za-z]+)\s*(?:LIKE|=|REGEXP|IN|IS)", r["sql"])} | {"CommandLine", "Image", "OriginalFileName"})

db = sqlite3.connect(":memory:")
db.execute(f"CREATE TABLE logs (text_id INTEGER, {', '.join(f'{c} TEXT DEFAULT NULL' for c in fields)})")
db.create_function("REGEXP", 2, lambda p, s: s is not None and re.search(p, s, re.I) is not None)


def first_word(line):
    m = re.match(r'\s*(?:@|&\s*)?(?:"([^"]+)"|\'([^\']+)\'|(\S+))', line)
    return (m.group(1) or m.group(2) or m.group(3)) if m else ""


rows = [json.loads(l) for l in open(f"{W}/all.jsonl")]
sel = [i for i, r in enumerate(rows) if r["role"] in ROLES]
uniq = {}
owners = []
COMMENT = re.compile(r"^(?:#|//|/\*|\*|REM\b|::|<#|')", re.I)
for i in sel:
    lines = [l.strip() for l in rows[i]["text"].splitlines() if l.strip() and not COMMENT.match(l.strip())][:MAX_LINES]
    for l in lines:
        l = l[:2000]
        w = first_word(l)
        base = re.split(r"[\\/]", w)[-1]
        if "\\" in w or "/" in w:
            images = [w]
        elif base.lower().endswith(".exe"):
            images = ["C:\\Windows\\System32\\" + base]
        else:
            images = ["C:\\Windows\\System32\\" + base + ".exe", "/usr/bin/" + base]
        for img in images:
            key = (l, img)
            if key not in uniq:
                uniq[key] = len(owners)
                owners.append(set())
            owners[uniq[key]].add(i)
db.executemany("INSERT INTO logs (text_id, CommandLine, Image, OriginalFileName) VALUES (?, ?, ?, ?)",
               ((n, l, img, re.split(r"[\\/]", img)[-1]) for (l, img), n in uniq.items()))
print(len(uniq), "distinct command-line rows from", len(sel), "texts", flush=True)

hits = defaultdict(list)
bad = 0
for r in rules:
    try:
        texts = set()
        for (n,) in db.execute(r["sql"].replace("SELECT * FROM logs WHERE", "SELECT text_id FROM logs WHERE", 1)):
            texts |= owners[n]
        for t in texts:
            hits[t].append(r["id"])
    except sqlite3.Error:
        bad += 1
print(bad, "rules failed in SQL", flush=True)
level = {r["id"]: r["level"] for r in rules}
for role in ROLES:
    idx = [i for i in sel if rows[i]["role"] == role]
    for lab in (1, 0):
        group = [i for i in idx if rows[i]["label"] == lab]
        if not group:
            continue
        sh = sum(1 for i in group if rows[i].get("shipped") == 1)
        for lv, names in (("medium+", ("medium", "high", "critical")), ("high+", ("high", "critical"))):
            sg = [i for i in group if any(level[h] in names for h in hits.get(i, []))]
            orr = sum(1 for i in group if rows[i].get("shipped") == 1 or i in set(sg))
            print(f"{role} {'attacks' if lab else 'benign'} ({len(group)}): shipped {sh}; sigma {lv} {len(sg)}; OR {orr} ({orr / len(group):.3f})")
json.dump({"rules": {r["id"]: [r["title"], r["level"]] for r in rules}, "hits": {str(k): v for k, v in hits.items()}}, open(f"{W}/sigma-hits-{'-'.join(ROLES)}.json", "w"))
