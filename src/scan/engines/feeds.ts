/**
 * Threat-feed reputation: SHA-256 / MD5 / SHA-1 lookups through a FeedLookup (the stored one is
 * the FeedStore of scan/records.ts: table or collection `threat_feed_hashes`).
 * The loader reads the formats real feeds publish: plain hash lists (one hash per line, `#`
 * comments, optional name after the hash) and abuse.ch CSV exports (MalwareBazaar's
 * `"first_seen_utc", "sha256_hash", "md5_hash", "sha1_hash", ..., "signature", ...`).
 * A hit is a strong, independent signal: severity critical.
 */
import { BadRequestError } from '../../errors';
import { parse } from 'csv-parse/sync';
import type { Engine, EngineContext, EngineOutput, ScanSubject } from '../types';
import { EngineUnavailableError } from '../runner';

export type HashAlgo = 'sha256' | 'md5' | 'sha1';

export interface FeedEntry {
  hash: string;
  algo: HashAlgo;
  /** Malware family / signature name when the feed gives one. */
  name?: string;
  source: string;
}

export interface FeedHit { hash: string; algo: HashAlgo; name?: string; source: string }

export type FeedLookup = (hashes: { sha256: string; md5: string; sha1: string }) => Promise<FeedHit[]>;

const ALGO_BY_LENGTH: Record<number, HashAlgo> = { 64: 'sha256', 32: 'md5', 40: 'sha1' };

function algoOf(hash: string): HashAlgo | undefined {
  return /^[0-9a-f]+$/.test(hash) ? ALGO_BY_LENGTH[hash.length] : undefined;
}

/** Plain list: a hash per line, optionally followed by whitespace/`,`/`;` and a name. */
export function parsePlainHashList(text: string, source: string): FeedEntry[] {
  const out: FeedEntry[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith('//')) continue;
    const m = /^([0-9a-fA-F]{32}|[0-9a-fA-F]{40}|[0-9a-fA-F]{64})(?:[\s,;:]+(.+))?$/.exec(line);
    if (!m) continue;
    const hash = m[1].toLowerCase();
    const name = m[2]?.trim().replace(/^"|"$/g, '');
    out.push({ hash, algo: algoOf(hash) as HashAlgo, source, ...(name ? { name } : {}) });
  }
  return out;
}

const MALWAREBAZAAR_COLUMNS = [
  'first_seen_utc', 'sha256_hash', 'md5_hash', 'sha1_hash', 'reporter', 'file_name', 'file_type_guess',
  'mime_type', 'signature', 'clamav', 'vtpercent', 'imphash', 'ssdeep', 'tlsh',
];

const NAME_COLUMNS = ['signature', 'malware_printable', 'malware', 'threat', 'tags'];

/**
 * abuse.ch-style CSV. The header is the last `#` comment line that names columns (abuse.ch puts
 * it there); without one, MalwareBazaar's column order is assumed. ThreatFox rows
 * (ioc_type sha256_hash / md5_hash / sha1_hash, ioc_value) are understood as well.
 */
export function parseAbuseChCsv(text: string, source: string): FeedEntry[] {
  let columns = MALWAREBAZAAR_COLUMNS;
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith('#')) continue;
    const body = line.replace(/^#\s*/, '');
    if (/"?(sha256_hash|ioc_value)"?\s*,/.test(body)) {
      columns = (parse(body, { trim: true, relax_quotes: true }) as string[][])[0].map((c) => c.toLowerCase());
    }
  }
  const rows = parse(text, {
    comment: '#',
    trim: true,
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
  }) as string[][];
  const col = (name: string): number => columns.indexOf(name);
  const nameIdx = NAME_COLUMNS.map(col).find((i) => i >= 0) ?? -1;
  const out: FeedEntry[] = [];
  const clean = (v: string | undefined): string | undefined => {
    const s = v?.trim();
    return s && s.toLowerCase() !== 'n/a' && s.toLowerCase() !== 'null' ? s : undefined;
  };
  for (const row of rows) {
    const name = nameIdx >= 0 ? clean(row[nameIdx]) : undefined;
    const candidates: string[] = [];
    if (col('ioc_value') >= 0) {
      const type = clean(row[col('ioc_type')]) ?? '';
      if (/_hash$/.test(type)) candidates.push(row[col('ioc_value')]);
    } else {
      for (const c of ['sha256_hash', 'md5_hash', 'sha1_hash']) if (col(c) >= 0) candidates.push(row[col(c)]);
    }
    for (const c of candidates) {
      const hash = clean(c)?.toLowerCase();
      const algo = hash ? algoOf(hash) : undefined;
      if (hash && algo) out.push({ hash, algo, source, ...(name ? { name } : {}) });
    }
  }
  return out;
}

/** Picks the parser from content: CSV when the first data line has quoted/comma fields. */
export function parseFeed(text: string, source: string): FeedEntry[] {
  const firstData = text.split(/\r?\n/).find((l) => l.trim() && !l.trim().startsWith('#')) ?? '';
  const csv = /^"|","|",\s*"/.test(firstData.trim()) || /sha256_hash|ioc_value/.test(text.slice(0, 4096));
  return csv ? parseAbuseChCsv(text, source) : parsePlainHashList(text, source);
}

/** Lookup over an in-memory list (tests, or a feed file loaded without MongoDB). */
export function memoryFeedLookup(entries: FeedEntry[]): FeedLookup {
  const byHash = new Map(entries.map((e) => [e.hash, e]));
  return async (h) => [h.sha256, h.md5, h.sha1]
    .map((x) => byHash.get(x.toLowerCase()))
    .filter((e): e is FeedEntry => !!e)
    .map((e) => ({ hash: e.hash, algo: e.algo, source: e.source, ...(e.name ? { name: e.name } : {}) }));
}

export function createFeedEngine(lookup: FeedLookup | undefined): Engine {
  return {
    name: 'threat_feed',
    async scan(subject: ScanSubject, _ctx: EngineContext): Promise<EngineOutput> {
      if (!lookup) throw new EngineUnavailableError('no threat-feed store configured');
      const hits = await lookup({ sha256: subject.sha256, md5: subject.md5, sha1: subject.sha1 });
      return {
        findings: hits.map((h) => ({
          id: `feed.${h.source}.${h.algo}`,
          name: h.name ?? `Known malicious file (${h.source})`,
          severity: 'critical' as const,
          confidence: 0.95,
          category: 'malware',
          description: `The ${h.algo.toUpperCase()} hash is listed by threat feed "${h.source}"${h.name ? ` as ${h.name}` : ''}.`,
          excerpt: h.hash,
        })),
        report: { threatFeed: { checked: ['sha256', 'md5', 'sha1'], hits: hits.length } },
      };
    },
  };
}

/** Where loaded feed entries are kept. */
export interface FeedEntrySink {
  upsert(entries: FeedEntry[]): Promise<{ upserted: number; modified: number }>;
}

/** Reads feed files (plain lists or abuse.ch CSV; source = file name) and upserts them. */
export async function loadFeedFiles(sink: FeedEntrySink, files: string[]): Promise<{ parsed: number; upserted: number; modified: number }> {
  const { readFile } = await import('node:fs/promises');
  const path = await import('node:path');
  let parsed = 0;
  let upserted = 0;
  let modified = 0;
  for (const file of files) {
    const entries = parseFeed(await readFile(file, 'utf8'), path.basename(file).replace(/\.(csv|txt)$/i, ''));
    // A file with nothing usable is a mistake to report, not a success with zeros (an outside probe's notes.txt).
    if (entries.length === 0) throw new BadRequestError(`${file} holds no SHA-256, SHA-1 or MD5 hash (one per line, or abuse.ch CSV); nothing was loaded from it`);
    parsed += entries.length;
    const r = await sink.upsert(entries);
    upserted += r.upserted;
    modified += r.modified;
  }
  return { parsed, upserted, modified };
}
