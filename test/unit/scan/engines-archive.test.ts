import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { createArchiveEngine } from '../../../src/scan/engines/archive';
import { EICAR, makeCorpus, makeTar, makeZip, zeros, type Corpus } from '../../fixtures/scripts/make-corpus';
import { ctx, subjectOf } from './support/subject';

let corpus: Corpus;
beforeAll(async () => { corpus = await makeCorpus(path.join(os.tmpdir(), `scan-corpus-archive-${process.pid}`)); }, 120_000);

const engine = createArchiveEngine();
const scanFile = async (file: string, depth = 0) => engine.scan(await subjectOf(readFileSync(file), path.basename(file), depth), ctx());

describe('archive engine: extraction', () => {
  it('hands zip members back for analysis', async () => {
    const out = await scanFile(corpus.files.eicarZip);
    expect(out.findings).toEqual([]);
    expect(out.members?.map((m) => [m.path, m.content.toString()])).toEqual([['eicar.com', EICAR]]);
  });
  it('hands back a nested archive as a member (analyze recurses into it)', async () => {
    const out = await scanFile(corpus.files.eicarNested);
    expect(out.members?.map((m) => m.path)).toEqual(['readme.txt', 'inner/inner.zip']);
  });
  it('extracts tar and gzip', async () => {
    const gz = await scanFile(corpus.files.eicarTarGz);
    expect(gz.members?.map((m) => m.path)).toEqual(['eicar.tar']);
    const tarOut = await engine.scan(await subjectOf(gz.members![0].content, 'eicar.tar', 1), ctx());
    expect(tarOut.members?.map((m) => m.path)).toEqual(['docs/eicar.com', 'docs/a.txt']);
  });
  it('7z / RAR are reported as not extracted', async () => {
    const out = await engine.scan(await subjectOf(Buffer.concat([Buffer.from('377abcaf271c0004', 'hex'), Buffer.alloc(64)])), ctx());
    expect(out.findings[0]).toMatchObject({ id: 'archive.not_extracted', severity: 'low' });
    expect(out.members).toBeUndefined();
  });
});

describe('archive engine: limits end as findings', () => {
  it('zip bomb (300 MB of zeros) -> bomb finding without inflating it', async () => {
    const before = process.memoryUsage().rss;
    const out = await scanFile(corpus.files.zipBomb);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
    expect(out.findings).toEqual([expect.objectContaining({ id: 'archive.bomb', severity: 'high' })]);
    expect(out.members?.map((m) => m.path)).toEqual(['readme.txt']);
  });
  it('a bomb with lying declared sizes is stopped by the streaming byte cap', async () => {
    const bomb = await makeZip([{ name: 'z.bin', data: zeros(64 * 1024 * 1024) }]);
    // Patch the central directory's uncompressed size to look harmless.
    const cd = bomb.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    bomb.writeUInt32LE(1000, cd + 24);
    const out = await engine.scan(await subjectOf(bomb, 'lying.zip'), ctx());
    expect(out.findings.length).toBeGreaterThan(0);
    expect((out.members ?? []).reduce((s, m) => s + m.content.length, 0)).toBeLessThanOrEqual(1000);
  });
  it('gzip bomb -> ratio cap while streaming', async () => {
    const gz = zlib.gzipSync(Buffer.alloc(50 * 1024 * 1024));
    const out = await engine.scan(await subjectOf(gz, 'z.gz'), ctx());
    expect(out.findings[0]).toMatchObject({ id: 'archive.bomb' });
    expect(out.members).toEqual([]);
  });
  it('nesting deeper than the limit -> depth finding', async () => {
    const out = await engine.scan(await subjectOf(readFileSync(corpus.files.eicarZip), 'x.zip', 5), ctx());
    expect(out.findings[0]).toMatchObject({ id: 'archive.depth_limit', severity: 'high' });
    expect(out.members).toBeUndefined();
  });
  it('member count limit', async () => {
    const zip = await makeZip(Array.from({ length: 30 }, (_, i) => ({ name: `f${i}.txt`, data: Buffer.from(`file ${i}`) })));
    const out = await createArchiveEngine({ maxMembers: 10 }).scan(await subjectOf(zip), ctx());
    expect(out.members).toHaveLength(10);
    expect(out.findings[0]).toMatchObject({ id: 'archive.member_limit' });
  });
  it('total expanded size limit', async () => {
    const tarball = await makeTar([{ name: 'a.bin', data: Buffer.alloc(600_000, 1) }, { name: 'b.bin', data: Buffer.alloc(600_000, 2) }]);
    const out = await createArchiveEngine({ maxTotalBytes: 1_000_000 }).scan(await subjectOf(tarball), ctx());
    expect(out.members?.map((m) => m.path)).toEqual(['a.bin']);
    expect(out.findings[0]).toMatchObject({ id: 'archive.size_limit' });
  });
  it('encrypted members are flagged', async () => {
    const out = await scanFile(corpus.files.encrypted);
    expect(out.findings[0]).toMatchObject({ id: 'archive.encrypted_member', severity: 'medium', excerpt: 'invoice.exe' });
  });
  it('a damaged zip is a finding, not a crash', async () => {
    const zip = await makeZip([{ name: 'a.txt', data: Buffer.from('hello') }]);
    const out = await engine.scan({ ...(await subjectOf(zip)), content: zip.subarray(0, zip.length - 30) }, ctx());
    expect(out.findings[0]).toMatchObject({ id: 'archive.damaged' });
  });
});
