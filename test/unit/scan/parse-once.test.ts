/**
 * The scan path does each thing once: a file's type is identified once per request, a PE or ELF
 * is parsed once and its printable strings extracted once, however many engines read them
 * (static_pe / static_elf, behavior, ml), and a ZIP's entries are listed once (identification and
 * the cve engine). The identifier, the parsers and the string pass are
 * wrapped in counting spies; two calls on the same bytes fail the test.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { analyze } from '../../../src/scan/analyze';
import { parseElf } from '../../../src/scan/engines/elf';
import { parsePe } from '../../../src/scan/engines/pe';
import { identify } from '../../../src/scan/filetype';
import { buildEngines, REGISTRY } from '../../../src/scan/registry';
import { scanStrings } from '../../../src/scan/static/strings';
import { listZipEntries } from '../../../src/scan/zip';
import { ScanService } from '../../../src/scan/service';
import type { ScanStore, ProfileDoc } from '../../../src/scan/records';
import type { ProfileService } from '../../../src/scan/profiles';
import type { LimitService } from '../../../src/limits/service';
import type { Logger } from '../../../src/log';
import type { AccountDoc } from '../../../src/accounts/records';
import { makeZip } from '../../fixtures/scripts/make-corpus';
import { ensureFixtures } from './static/helpers';

/** The module at `path` (from this file) with its export `name` wrapped in a counting spy. */
function mockWithSpy(path: string, name: string): Record<string, unknown> {
  const actual = jest.requireActual(path);
  return { ...actual, [name]: jest.fn(actual[name]) };
}
jest.mock('../../../src/scan/engines/pe', () => mockWithSpy('../../../src/scan/engines/pe', 'parsePe'));
jest.mock('../../../src/scan/engines/elf', () => mockWithSpy('../../../src/scan/engines/elf', 'parseElf'));
jest.mock('../../../src/scan/filetype', () => mockWithSpy('../../../src/scan/filetype', 'identify'));
jest.mock('../../../src/scan/zip', () => mockWithSpy('../../../src/scan/zip', 'listZipEntries'));
jest.mock('../../../src/scan/static/strings', () => mockWithSpy('../../../src/scan/static/strings', 'scanStrings'));

const spies = {
  parsePe: parsePe as jest.MockedFunction<typeof parsePe>,
  parseElf: parseElf as jest.MockedFunction<typeof parseElf>,
  identify: identify as jest.MockedFunction<typeof identify>,
  scanStrings: scanStrings as jest.MockedFunction<typeof scanStrings>,
  listZipEntries: listZipEntries as jest.MockedFunction<typeof listZipEntries>,
};

const digest = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** How many times each spy ran on each content (by digest). */
function callsByContent(): Record<keyof typeof spies, Record<string, number>> {
  const out = {} as Record<keyof typeof spies, Record<string, number>>;
  for (const [name, spy] of Object.entries(spies) as Array<[keyof typeof spies, jest.Mock]>) {
    out[name] = {};
    for (const [content] of spy.mock.calls as Array<[Uint8Array]>) out[name][digest(content)] = (out[name][digest(content)] ?? 0) + 1;
  }
  return out;
}

// Every engine that reads files without a service behind it, on the calling thread.
const engines = buildEngines({}, REGISTRY.filter((r) => !['clamav', 'threat_feed'].includes(r.engine)));
const dir = ensureFixtures();
const PE = readFileSync(path.join(dir, 'pe_injection.exe'));
const ELF = readFileSync(path.join(dir, 'elf_traits_dynamic'));

beforeEach(() => {
  for (const spy of Object.values(spies)) spy.mockClear();
});

describe('one identification, one parse, one string pass per file', () => {
  // An ELF is asked once whether it is a PE too: behavior and ml read "PE, else ELF".
  it.each([
    { kind: 'PE', content: PE, name: 'a.exe', engine: 'static_pe', pe: 1, elf: 0 },
    { kind: 'ELF', content: ELF, name: 'tool', engine: 'static_elf', pe: 1, elf: 1 },
  ])('$kind file: identified once, parsed once and its strings extracted once for $engine, behavior and ml', async ({ content, name, engine, pe, elf }) => {
    const r = await analyze({ content, name, scanType: 'file' }, { engines });
    for (const e of [engine, 'behavior', 'ml']) expect([e, r.engines[e]?.status]).toEqual([e, 'ok']);
    const calls = callsByContent();
    const once = { [digest(content)]: 1 };
    expect(calls.identify).toEqual(once);
    expect(calls.parsePe).toEqual(pe ? once : {});
    expect(calls.parseElf).toEqual(elf ? once : {});
    expect(calls.scanStrings).toEqual(once);
  });

  it('archive members: each member identified once and its PE or ELF parsed once; the zip listed once', async () => {
    const zip = await makeZip([{ name: 'bin/a.exe', data: PE }, { name: 'bin/tool', data: ELF }]);
    const r = await analyze({ content: zip, name: 'bundle.zip', scanType: 'file' }, { engines });
    expect((r.reports.members as Array<{ fileType: string }>).map((m) => m.fileType).sort()).toEqual(['elf', 'pe']);
    const calls = callsByContent();
    expect(calls.identify).toEqual({ [digest(zip)]: 1, [digest(PE)]: 1, [digest(ELF)]: 1 });
    expect(calls.parsePe).toEqual({ [digest(PE)]: 1, [digest(ELF)]: 1 });
    expect(calls.parseElf).toEqual({ [digest(ELF)]: 1 });
    expect(calls.scanStrings).toEqual({ [digest(PE)]: 1, [digest(ELF)]: 1 });
    expect(r.engines.cve.status).toBe('ok');
    expect(calls.listZipEntries).toEqual({ [digest(zip)]: 1 });
  });

  it('a request whose scan profile restricts types: the service identifies once and analyze() takes its answer', async () => {
    const profile: ProfileDoc = {
      _id: 'prof-1', accountId: 'acc-1', name: 'binaries', isDefault: true, allowedTypes: ['pe'], suppressedEngines: [], createdAt: new Date(0), updatedAt: new Date(0),
    };
    const store = { insertScan: jest.fn(async () => undefined) };
    const svc = new ScanService(
      store as unknown as ScanStore,
      { resolve: async () => profile } as unknown as ProfileService,
      { reserveScan: async () => true } as unknown as LimitService,
      { engines },
      undefined,
      { allowHosts: [], webhookTimeoutMs: 500 },
      { info: jest.fn(), warn: jest.fn(), error: jest.fn() } as unknown as Logger,
    );
    const account: AccountDoc = { _id: 'acc-1', name: 'acme', plan: 'pro', region: 'local', entityCount: 0, createdAt: new Date(0) };
    const out = await svc.scan({ account, requestId: 'r-1', content: PE, name: 'a.exe', scanType: 'file' });
    expect(out.kind === 'complete' && out.result.fileType).toBe('pe');
    expect(callsByContent().identify).toEqual({ [digest(PE)]: 1 });
    expect(store.insertScan).toHaveBeenCalledTimes(1);
  });
});
