import { mkdtempSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CVE_DATASET_PATH, compareVersions, createCveEngine, inRange, loadCveDataset } from '../../../src/scan/engines/cve';
import { fromNvd, refreshCveDataset } from '../../../src/scan/cve-import';
import { makeCorpus, makeJar, type Corpus } from '../../fixtures/scripts/make-corpus';
import { ctx, subjectOf } from './support/subject';

let corpus: Corpus;
beforeAll(async () => { corpus = await makeCorpus(path.join(os.tmpdir(), `scan-corpus-cve-${process.pid}`)); }, 120_000);
const engine = createCveEngine();
const scanFile = async (file: string) => engine.scan(await subjectOf(readFileSync(file), path.basename(file)), ctx());

describe('version ordering', () => {
  it.each([
    ['2.0-beta9', '2.0', -1], ['2.14.1', '2.15.0', -1], ['2.3.1', '2.3.1', 0], ['1.0.1f', '1.0.1g', -1],
    ['1.0.1', '1.0.1f', -1], ['1.0.2h', '1.0.2', 1], ['5.2.9.RELEASE', '5.2.9', 0], ['2.0-rc1', '2.0-beta9', 1], ['1.10.0', '1.9', 1],
  ] as const)('%s vs %s', (a, b, r) => expect(Math.sign(compareVersions(a, b))).toBe(r));
  it('ranges', () => {
    expect(inRange('2.14.1', { component: 'x', versionStartIncluding: '2.13.0', versionEndExcluding: '2.15.0' })).toBe(true);
    expect(inRange('2.15.0', { component: 'x', versionStartIncluding: '2.13.0', versionEndExcluding: '2.15.0' })).toBe(false);
    expect(inRange('1.2.12', { component: 'x', versionEndIncluding: '1.2.12' })).toBe(true);
  });
});

describe('dataset', () => {
  it('ships curated CVEs with ids, CVSS, references and ranges', () => {
    const d = loadCveDataset();
    const byId = new Map(d.cves.map((c) => [c.id, c]));
    expect(byId.get('CVE-2021-44228')?.cvss).toBe(10);
    expect(byId.get('CVE-2022-42889')?.cvss).toBe(9.8);
    expect(byId.get('CVE-2014-0160')?.cvss).toBe(7.5);
    for (const c of d.cves) {
      expect(c.id).toMatch(/^CVE-\d{4}-\d{4,}$/);
      expect(c.references[0]).toBe(`https://nvd.nist.gov/vuln/detail/${c.id}`);
      expect(c.affected.length).toBeGreaterThan(0);
    }
  });
});

describe('cve engine', () => {
  it('a JAR carrying log4j-core 2.14.1 reports CVE-2021-44228 with finding.cve filled', async () => {
    const out = await scanFile(corpus.files.log4jJar);
    const f = out.findings.find((x) => x.cve?.id === 'CVE-2021-44228');
    expect(f).toMatchObject({ severity: 'high', category: 'vulnerability' });
    expect(f?.cve).toMatchObject({ id: 'CVE-2021-44228', cvss: 10, component: 'log4j-core 2.14.1' });
    expect(f?.cve?.references.length).toBeGreaterThan(0);
  });
  it('log4j-core 2.17.1 is not reported', async () => {
    expect((await scanFile(corpus.files.log4jFixedJar)).findings).toEqual([]);
  });
  it('recognises a MANIFEST-only component', async () => {
    const jar = await makeJar({ group: 'x', id: 'unrelated', version: '1.0', title: 'Apache Commons Text' });
    // Manifest says commons-text 1.0? version is 1.0 -> below the 1.5 range start: no finding.
    expect((await engine.scan(await subjectOf(jar), ctx())).findings).toEqual([]);
    const vuln = await makeJar({ group: 'x', id: 'app', version: '1.9', title: 'Apache Commons Text' });
    expect((await engine.scan(await subjectOf(vuln), ctx())).findings.map((f) => f.cve?.id)).toContain('CVE-2022-42889');
  });
  it('recognises bundled jar file names (fat jars)', async () => {
    expect((await scanFile(corpus.files.fatJar)).findings.map((f) => f.cve?.id)).toContain('CVE-2022-42889');
  });
  it('finds OpenSSL and zlib version strings in binaries', async () => {
    const ids = (await scanFile(corpus.files.opensslBinary)).findings.map((f) => f.cve?.id);
    expect(ids).toEqual(expect.arrayContaining(['CVE-2014-0160', 'CVE-2016-2107', 'CVE-2018-25032', 'CVE-2022-37434']));
  });
  it('quiet on the machine\'s own binaries with current libraries', async () => {
    const out = await engine.scan(await subjectOf(readFileSync('/bin/ls')), ctx());
    expect(out.findings).toEqual([]);
  });
});

describe('refresh from NVD JSON 2.0', () => {
  const nvd = {
    vulnerabilities: [{
      cve: {
        id: 'CVE-2099-0001',
        descriptions: [{ lang: 'en', value: 'Test vulnerability in zlib.' }],
        metrics: { cvssMetricV31: [{ cvssData: { baseScore: 8.1 } }] },
        references: [{ url: 'https://nvd.nist.gov/vuln/detail/CVE-2099-0001' }],
        configurations: [{ nodes: [{ cpeMatch: [{ vulnerable: true, criteria: 'cpe:2.3:a:zlib:zlib:*:*:*:*:*:*:*:*', versionEndExcluding: '1.3.1' }] }] }],
      },
    }],
  };
  it('maps CPE matches to components and ranges', () => {
    expect(fromNvd(nvd)).toEqual([{ id: 'CVE-2099-0001', description: 'Test vulnerability in zlib.', cvss: 8.1, references: ['https://nvd.nist.gov/vuln/detail/CVE-2099-0001'], affected: [{ component: 'zlib', versionEndExcluding: '1.3.1' }] }]);
  });
  it('merges into a dataset file', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cve-'));
    const dataset = path.join(dir, 'cves.json');
    copyFileSync(CVE_DATASET_PATH, dataset);
    const before = loadCveDataset(dataset).cves.length;
    writeFileSync(path.join(dir, 'nvd.json'), JSON.stringify(nvd));
    expect(refreshCveDataset([path.join(dir, 'nvd.json')], dataset)).toEqual({ added: 1, updated: 0, total: before + 1 });
    expect(loadCveDataset(dataset).cves.some((c) => c.id === 'CVE-2099-0001')).toBe(true);
    // Not NVD, or not JSON: refused naming the file, the dataset untouched (an outside probe got exit 0 and zeros).
    const other = path.join(dir, 'other.json');
    writeFileSync(other, '{"foo":1}');
    expect(() => refreshCveDataset([other], dataset)).toThrow(`${other} is not an NVD CVE JSON 2.0 file (no "vulnerabilities" array); nothing was changed`);
    writeFileSync(other, '{foo');
    expect(() => refreshCveDataset([other], dataset)).toThrow(new RegExp(`^${other.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not JSON: `));
    expect(loadCveDataset(dataset).cves.length).toBe(before + 1);
  });
});
