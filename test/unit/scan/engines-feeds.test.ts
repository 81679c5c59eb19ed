import { createHash } from 'node:crypto';
import { createFeedEngine, loadFeedFiles, memoryFeedLookup, parseAbuseChCsv, parseFeed, parsePlainHashList } from '../../../src/scan/engines/feeds';
import { runEngine } from '../../../src/scan/runner';
import { EICAR } from '../../fixtures/scripts/make-corpus';
import { ctx, subjectOf } from './support/subject';

const sha256 = createHash('sha256').update(EICAR).digest('hex');
const md5 = createHash('md5').update(EICAR).digest('hex');

const MALWAREBAZAAR = `################################################################
# MalwareBazaar full data dump (CSV)                           #
# Last updated: 2024-05-01 00:00:00 UTC                        #
################################################################
# "first_seen_utc","sha256_hash","md5_hash","sha1_hash","reporter","file_name","file_type_guess","mime_type","signature","clamav","vtpercent","imphash","ssdeep","tlsh"
"2024-05-01 00:01:02", "${sha256}", "${md5}", "3395856ce81f2b7382dee72602f798b642f14140", "abuse_ch", "eicar.com", "com", "text/plain", "EICAR-Test", "Eicar-Test-Signature", "n/a", "n/a", "3:a+JraNvsgzsVqSwHq9:tJuOgzsko", "n/a"
"2024-05-01 00:02:03", "0000000000000000000000000000000000000000000000000000000000000001", "00000000000000000000000000000001", "0000000000000000000000000000000000000001", "someone", "x.exe", "exe", "application/x-dosexec", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a"
`;

describe('threat feed loader', () => {
  it('parses plain hash lists (comments, names, mixed algorithms)', () => {
    const e = parsePlainHashList(`# comment\n${sha256}\n${md5.toUpperCase()}  EICAR\nnot-a-hash\n\n3395856ce81f2b7382dee72602f798b642f14140,Family X\n`, 'list');
    expect(e).toEqual([
      { hash: sha256, algo: 'sha256', source: 'list' },
      { hash: md5, algo: 'md5', source: 'list', name: 'EICAR' },
      { hash: '3395856ce81f2b7382dee72602f798b642f14140', algo: 'sha1', source: 'list', name: 'Family X' },
    ]);
  });
  it('parses the MalwareBazaar CSV export (header in a comment, ", " separators, n/a values)', () => {
    const e = parseAbuseChCsv(MALWAREBAZAAR, 'malwarebazaar');
    expect(e).toHaveLength(6);
    expect(e[0]).toEqual({ hash: sha256, algo: 'sha256', source: 'malwarebazaar', name: 'EICAR-Test' });
    expect(e[1]).toMatchObject({ hash: md5, algo: 'md5' });
    expect(e[3]).toEqual({ hash: '0000000000000000000000000000000000000000000000000000000000000001', algo: 'sha256', source: 'malwarebazaar' });
  });
  it('parses ThreatFox-style CSV rows with ioc_type/ioc_value', () => {
    const csv = `# "first_seen_utc","ioc_id","ioc_value","ioc_type","threat_type","fk_malware","malware_alias","malware_printable"\n"2024-01-01 00:00:00", "1", "${sha256}", "sha256_hash", "payload", "win.x", "", "Family Y"\n"2024-01-01 00:00:00", "2", "1.2.3.4:80", "ip:port", "botnet_cc", "win.x", "", "Family Y"\n`;
    expect(parseFeed(csv, 'threatfox')).toEqual([{ hash: sha256, algo: 'sha256', source: 'threatfox', name: 'Family Y' }]);
  });
  it('parseFeed picks the format from the content', () => {
    expect(parseFeed(MALWAREBAZAAR, 'a')).toHaveLength(6);
    expect(parseFeed(`${sha256}\n`, 'b')).toHaveLength(1);
  });
});

describe('threat_feed engine', () => {
  it('a hit is a critical finding naming the feed', async () => {
    const engine = createFeedEngine(memoryFeedLookup(parseAbuseChCsv(MALWAREBAZAAR, 'malwarebazaar')));
    const out = await engine.scan(await subjectOf(Buffer.from(EICAR)), ctx());
    expect(out.findings.length).toBeGreaterThanOrEqual(1);
    expect(out.findings[0]).toMatchObject({ severity: 'critical', name: 'EICAR-Test', category: 'malware' });
  });
  it('quiet when the hash is not listed', async () => {
    const engine = createFeedEngine(memoryFeedLookup(parsePlainHashList(`${sha256}\n`, 'x')));
    expect((await engine.scan(await subjectOf(Buffer.from('benign')), ctx())).findings).toEqual([]);
  });
  it('unavailable (not clean) when no store is configured', async () => {
    const r = await runEngine(createFeedEngine(undefined), await subjectOf(Buffer.from('x')), 1000);
    expect(r.status).toBe('unavailable');
  });
});

// Found by an outside probe: a file with no hashes loaded "successfully" with zeros.
test('loadFeedFiles refuses a file that holds no hash, naming it, and loads nothing from it', async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'feeds-'));
  try {
    const notes = path.join(dir, 'notes.txt');
    writeFileSync(notes, 'remember to rotate the keys\n# not a hash\n');
    const upserts: unknown[] = [];
    const sink = { upsert: async (entries: unknown[]) => { upserts.push(entries); return { upserted: entries.length, modified: 0 }; } };
    await expect(loadFeedFiles(sink, [notes])).rejects.toThrow(`${notes} holds no SHA-256, SHA-1 or MD5 hash (one per line, or abuse.ch CSV); nothing was loaded from it`);
    expect(upserts).toEqual([]);
    const good = path.join(dir, 'good.txt');
    writeFileSync(good, `${'a'.repeat(64)}\n`);
    await expect(loadFeedFiles(sink, [good])).resolves.toMatchObject({ parsed: 1, upserted: 1 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
