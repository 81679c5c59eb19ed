/**
 * Known-vulnerable embedded components. Recognises components with versions (JAR pom.properties,
 * MANIFEST.MF, bundled jar file names; OpenSSL / zlib / libcurl version strings in binaries) and
 * matches them against the bundled dataset datasets/cve/cves.json (refreshed from NVD files by
 * scan/cve-import.ts, `npm run cli -- cve refresh`).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { CveRecord, Engine, EngineContext, EngineOutput, Finding, ScanSubject, Severity } from '../types';
import { readZipEntries } from '../zip';

export const CVE_DATASET_PATH = path.resolve(__dirname, '../../../datasets/cve/cves.json');

export interface AffectedRange {
  component: string;
  versionStartIncluding?: string;
  versionStartExcluding?: string;
  versionEndIncluding?: string;
  versionEndExcluding?: string;
}

export interface CveEntry {
  id: string;
  description: string;
  cvss: number;
  references: string[];
  affected: AffectedRange[];
}

export interface CveDataset { generated?: string; source?: string; cves: CveEntry[] }

export interface Component {
  name: string;
  version: string;
  /** Where it was seen, e.g. "META-INF/maven/.../pom.properties" or "binary string". */
  evidence: string;
}

// ---- version ordering -------------------------------------------------------------------------

const PRE_RELEASE: Record<string, number> = { snapshot: -6, alpha: -5, a: -5, beta: -4, b: -4, milestone: -3, m: -3, rc: -2, cr: -2, pre: -2 };
const FINAL = new Set(['final', 'ga', 'release']);

type Token = number | string;

function tokens(v: string): Token[] {
  const out: Token[] = [];
  for (const part of v.toLowerCase().split(/[.\-_+]/)) {
    for (const m of part.matchAll(/\d+|[a-z]+/g)) out.push(/^\d/.test(m[0]) ? Number(m[0]) : m[0]);
  }
  return out.filter((t) => !(typeof t === 'string' && FINAL.has(t)));
}

/** Weight of a token compared against "nothing here": pre-release words sort before the release. */
function vsMissing(t: Token): number {
  if (typeof t === 'number') return t === 0 ? 0 : 1;
  return t in PRE_RELEASE ? -1 : 1;
}

/** Compares versions like 2.0-beta9 < 2.0 < 2.14.1 and OpenSSL's 1.0.1 < 1.0.1f < 1.0.1g. */
export function compareVersions(a: string, b: string): number {
  const ta = tokens(a);
  const tb = tokens(b);
  for (let i = 0; i < Math.max(ta.length, tb.length); i++) {
    const x = ta[i];
    const y = tb[i];
    if (x === undefined) { const w = vsMissing(y as Token); if (w) return -w; continue; }
    if (y === undefined) { const w = vsMissing(x); if (w) return w; continue; }
    if (typeof x === 'number' && typeof y === 'number') { if (x !== y) return x < y ? -1 : 1; continue; }
    if (typeof x === 'string' && typeof y === 'string') {
      const px = PRE_RELEASE[x];
      const py = PRE_RELEASE[y];
      if (px !== undefined || py !== undefined) {
        if ((px ?? 0) !== (py ?? 0)) return (px ?? 0) < (py ?? 0) ? -1 : 1;
        continue;
      }
      if (x !== y) return x < y ? -1 : 1;
      continue;
    }
    // number vs word: a pre-release word sorts first, a letter suffix (1.0.1f) after the number.
    const word = (typeof x === 'string' ? x : y) as string;
    const wordFirst = word in PRE_RELEASE;
    return (typeof x === 'string') === wordFirst ? -1 : 1;
  }
  return 0;
}

export function inRange(version: string, r: AffectedRange): boolean {
  if (r.versionStartIncluding && compareVersions(version, r.versionStartIncluding) < 0) return false;
  if (r.versionStartExcluding && compareVersions(version, r.versionStartExcluding) <= 0) return false;
  if (r.versionEndIncluding && compareVersions(version, r.versionEndIncluding) > 0) return false;
  if (r.versionEndExcluding && compareVersions(version, r.versionEndExcluding) >= 0) return false;
  return true;
}

// ---- component recognition --------------------------------------------------------------------

/** MANIFEST.MF titles / bundle names that identify a component. */
const MANIFEST_NAMES: Array<[RegExp, string]> = [
  [/^(org\.apache\.logging\.log4j\.core|Apache Log4j Core|log4j-core)$/i, 'log4j-core'],
  [/^(org\.apache\.commons\.commons-text|org\.apache\.commons\.text|Apache Commons Text|commons-text)$/i, 'commons-text'],
  [/^(org\.springframework\.core|spring-core)$/i, 'spring-core'],
  [/^(org\.springframework\.beans|spring-beans)$/i, 'spring-beans'],
  [/^(org\.springframework\.web\.servlet|spring-webmvc)$/i, 'spring-webmvc'],
  [/^(org\.yaml\.snakeyaml|SnakeYAML|snakeyaml)$/i, 'snakeyaml'],
];

function parseProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([\w.\-]+)\s*[=:]\s*(.*?)\s*$/.exec(line);
    if (m && !line.trimStart().startsWith('#')) out.set(m[1], m[2]);
  }
  return out;
}

function parseManifest(text: string): Map<string, string> {
  // Continuation lines start with one space.
  return parseProperties(text.replace(/\r?\n /g, ''));
}

const JAR_NAME = /(?:^|\/)([a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*)-(\d+(?:\.\d+)+(?:[.-](?:[a-z]+\d*|\d+))*)\.jar$/i;

export async function jarComponents(content: Buffer, entryNames?: string[]): Promise<Component[]> {
  const found: Component[] = [];
  const entries = await readZipEntries(
    content,
    (n) => /^META-INF\/maven\/[^/]+\/[^/]+\/pom\.properties$/.test(n) || n === 'META-INF/MANIFEST.MF',
    64 * 1024,
    500,
  );
  for (const [name, data] of entries) {
    const text = data.toString('utf8');
    if (name.endsWith('pom.properties')) {
      const p = parseProperties(text);
      const artifact = p.get('artifactId') ?? name.split('/')[3];
      const version = p.get('version');
      if (artifact && version) found.push({ name: artifact, version, evidence: name });
    } else {
      const m = parseManifest(text);
      const version = m.get('Implementation-Version') ?? m.get('Bundle-Version');
      const title = [m.get('Bundle-SymbolicName')?.split(';')[0], m.get('Implementation-Title'), m.get('Automatic-Module-Name')];
      const hit = MANIFEST_NAMES.find(([re]) => title.some((t) => t && re.test(t.trim())));
      if (hit && version) found.push({ name: hit[1], version, evidence: name });
    }
  }
  for (const n of entryNames ?? []) {
    const m = JAR_NAME.exec(n);
    if (m) found.push({ name: m[1].toLowerCase(), version: m[2], evidence: n });
  }
  return found;
}

/** Version strings compiled into binaries: anchor with indexOf, then a strict pattern. */
const BINARY_PATTERNS: Array<{ anchor: string; re: RegExp; component: string }> = [
  // OPENSSL_VERSION_TEXT: "OpenSSL 1.0.1f 6 Jan 2014"
  { anchor: 'OpenSSL ', re: /^OpenSSL (\d+\.\d+\.\d+[a-z]{0,2})\s+\d{1,2} [A-Z][a-z]{2} \d{4}/, component: 'openssl' },
  // zlib's copyright strings: " inflate 1.2.11 Copyright 1995-2017 Mark Adler "
  { anchor: 'flate ', re: /^flate (\d+\.\d+\.\d+(?:\.\d+)?) Copyright \d{4}/, component: 'zlib' },
  { anchor: 'libcurl/', re: /^libcurl\/(\d+\.\d+\.\d+)/, component: 'curl' },
];

export function binaryComponents(content: Buffer, maxHitsPerPattern = 20): Component[] {
  const found: Component[] = [];
  for (const p of BINARY_PATTERNS) {
    const anchor = Buffer.from(p.anchor, 'latin1');
    let at = content.indexOf(anchor);
    let hits = 0;
    while (at >= 0 && hits < maxHitsPerPattern) {
      const m = p.re.exec(content.toString('latin1', at, Math.min(content.length, at + 80)));
      if (m) {
        found.push({ name: p.component, version: m[1], evidence: 'version string in binary' });
        hits++;
      }
      at = content.indexOf(anchor, at + anchor.length);
    }
  }
  return found;
}

// ---- dataset ----------------------------------------------------------------------------------

let cached: { path: string; data: CveDataset } | null = null;

export function loadCveDataset(file = CVE_DATASET_PATH): CveDataset {
  if (cached && cached.path === file) return cached.data;
  const data = JSON.parse(readFileSync(file, 'utf8')) as CveDataset;
  if (!Array.isArray(data.cves)) throw new Error(`${file}: no "cves" array`);
  cached = { path: file, data };
  return data;
}

/** The dataset file changed (a refresh): the next scan reads it again. */
export function forgetCveDataset(): void {
  cached = null;
}

export function matchComponents(components: Component[], dataset: CveDataset): Array<{ component: Component; cve: CveEntry }> {
  const out: Array<{ component: Component; cve: CveEntry }> = [];
  const seen = new Set<string>();
  for (const c of components) {
    for (const cve of dataset.cves) {
      const key = `${cve.id}|${c.name}|${c.version}`;
      if (seen.has(key)) continue;
      if (cve.affected.some((r) => r.component === c.name && inRange(c.version, r))) {
        seen.add(key);
        out.push({ component: c, cve });
      }
    }
  }
  return out;
}

export function severityForCvss(cvss: number): Severity {
  return cvss >= 9 ? 'high' : cvss >= 7 ? 'medium' : cvss >= 4 ? 'low' : 'info';
}

const ZIP_TYPES = new Set(['jar', 'apk', 'zip']);

export function createCveEngine(options: { datasetPath?: string } = {}): Engine {
  return {
    name: 'cve',
    async scan(subject: ScanSubject, _ctx: EngineContext): Promise<EngineOutput> {
      const dataset = loadCveDataset(options.datasetPath);
      let components: Component[];
      if (ZIP_TYPES.has(subject.fileType)) {
        const listing = await subject.file.zipListing();
        components = await jarComponents(subject.content, listing?.names);
      } else {
        components = binaryComponents(subject.content);
      }
      const unique = [...new Map(components.map((c) => [`${c.name}@${c.version}`, c])).values()];
      const matches = matchComponents(unique, dataset);
      const findings: Finding[] = matches.map(({ component, cve }) => {
        const record: CveRecord = {
          id: cve.id, description: cve.description, cvss: cve.cvss, references: cve.references,
          component: `${component.name} ${component.version}`,
        };
        return {
          id: `cve.${cve.id}`,
          name: `${cve.id} (${component.name} ${component.version})`,
          severity: severityForCvss(cve.cvss),
          confidence: component.evidence === 'version string in binary' ? 0.6 : 0.85,
          category: 'vulnerability',
          description: `${component.name} ${component.version} is affected by ${cve.id} (CVSS ${cve.cvss}).`,
          excerpt: component.evidence,
          cve: record,
        };
      });
      return {
        findings,
        report: { cve: { components: unique.map((c) => ({ name: c.name, version: c.version, evidence: c.evidence })) } },
      };
    },
  };
}
