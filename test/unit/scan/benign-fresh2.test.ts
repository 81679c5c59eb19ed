import {
  BENIGN_MANIFEST, corpusSplit, exclusion, exclusionFor, FRESH_MANIFEST, FRESH_RULES, freshDebianList, freshManifest, freshPackages, manifestOf,
  readBenignManifest, upstreamKey, type BenignPackage, type DebianMeta, type Unit,
} from '../../../scripts/build-benign-corpus';

// The corpus builder imports the detection builder, which reads parquet (an ES module Jest cannot load); not used here.
jest.mock('hyparquet', () => ({}));

const pkg = (name: string, shas: string[], split: BenignPackage['split']): BenignPackage => ({
  ecosystem: 'debian', name, version: '1', licence: 'MIT', split, files: shas.map((sha, i) => [`f${i}.sh`, sha, 'shell']),
});
const unit = (name: string, shas: string[]): Unit => ({
  ecosystem: 'debian', name, version: '1', licence: 'MIT', files: shas.map((sha, i) => ({ rel: `f${i}.sh`, sha, lang: 'shell', content: Buffer.from(sha) })),
});

describe('build-benign-corpus: the fresh2 split', () => {
  // A small Debian: every package in section admin (a fresh2 family), so whatever is not excluded is picked.
  const main = [pkg('python3-requests', ['sha-main'], 'heldout')];
  const fresh = [pkg('fresh-admin', ['sha-fresh'], 'fresh')];
  const read = (file?: string): BenignPackage[] => (file === BENIGN_MANIFEST ? main : file === FRESH_MANIFEST ? fresh : []);
  const admin = (source: string, depends = 'libc6'): DebianMeta => ({ section: 'admin', source, depends });
  const meta = new Map<string, DebianMeta>([
    ['requests-admin', admin('requests-admin')], // only part of its name is a main package's: kept
    ['node-requests', admin('node-requests')], // upstream name `requests`, as main's python3-requests
    ['fresh-admin', admin('fresh-src')], // in the fresh manifest
    ['fresh-admin-helpers', admin('fresh-src')], // built from the same source as a fresh package
    ['git', admin('git')], // fresh's rule names it: a fresh pick, whether or not its manifest holds it
    ['new-admin', admin('new-admin')],
    ['new-admin-dev', admin('new-admin')], // -dev packages are never sampled
  ]);
  const all = [...meta.keys()].sort();

  it('picks nothing the main corpus, the fresh manifest, the fresh picks or their Debian sources hold', () => {
    const picked = freshDebianList(all, exclusionFor('fresh2', all, meta, read), FRESH_RULES.fresh2, meta);
    expect(picked).toEqual(['new-admin', 'requests-admin']);
  });

  it('reads the families by Section and Depends, not by name alone', () => {
    const m = new Map<string, DebianMeta>([
      ['some-php-app', { section: 'web', source: 'some-php-app', depends: 'php-common, libjs-jquery' }],
      ['some-c-app', { section: 'web', source: 'some-c-app', depends: 'libc6 (>= 2.34)' }],
      ['some-daemon', { section: 'web', source: 'some-daemon', depends: 'adduser, lsb-base (>= 3.0-6)' }],
    ]);
    const ex = exclusion([], [], new Map());
    expect(freshDebianList([...m.keys()], ex, FRESH_RULES.fresh2, m)).toEqual(['some-daemon', 'some-php-app']);
  });

  it('drops excluded units and texts, texts repeated inside the set, and keeps at most maxFiles a package', () => {
    const ex = exclusionFor('fresh2', all, meta, read);
    const many = Array.from({ length: FRESH_RULES.fresh2.maxFiles + 5 }, (_, i) => `sha-many-${i}`);
    const out = freshPackages([
      unit('fresh-admin-helpers', ['sha-sibling']),
      unit('new-admin', ['sha-main', 'sha-fresh', 'sha-new-1']),
      unit('requests-admin', ['sha-new-1', 'sha-new-2']),
      unit('zz-big', many),
    ], ex, 'fresh2');
    expect(out.slice(0, 2).map((p) => [p.name, p.split, p.files.map(([, sha]) => sha)])).toEqual([
      ['new-admin', 'fresh2', ['sha-new-1']],
      ['requests-admin', 'fresh2', ['sha-new-2']],
    ]);
    expect(out[2].files).toHaveLength(FRESH_RULES.fresh2.maxFiles);
    // The same files whatever the units' order: the cap follows a salted hash of the texts.
    const again = freshPackages([unit('zz-big', [...many].reverse())], ex, 'fresh2');
    expect(new Set(again[0].files.map(([, sha]) => sha))).toEqual(new Set(out[2].files.map(([, sha]) => sha)));
  });

  it('the bench reads fresh2 from its own manifest and refuses splits there are not', () => {
    expect(corpusSplit('fresh2')).toBe('fresh2');
    expect(manifestOf('fresh2')).toBe(freshManifest('fresh2'));
    expect(manifestOf('heldout')).toBe(BENIGN_MANIFEST);
    expect(() => corpusSplit('fresh3')).toThrow(/--split fresh3: expected one of train, validation, heldout, fresh, fresh2/);
  });

  // The committed manifests themselves: nothing of the main corpus or of fresh is in fresh2.
  it('the committed fresh2 manifest shares no package, upstream name or text with the main or the fresh manifest', () => {
    const fresh2 = readBenignManifest(freshManifest('fresh2'));
    expect(fresh2.length).toBeGreaterThan(0);
    const { names, texts } = exclusion([...readBenignManifest(BENIGN_MANIFEST), ...readBenignManifest(FRESH_MANIFEST)], []);
    expect(fresh2.filter((p) => names.has(p.name) || names.has(upstreamKey(p.name))).map((p) => p.name)).toEqual([]);
    expect(fresh2.flatMap((p) => p.files).filter(([, sha]) => texts.has(sha))).toEqual([]);
    expect(new Set(fresh2.map((p) => p.split))).toEqual(new Set(['fresh2']));
    const shas = fresh2.flatMap((p) => p.files.map(([, sha]) => sha));
    expect(new Set(shas).size).toBe(shas.length);
    expect(Math.max(...fresh2.map((p) => p.files.length))).toBeLessThanOrEqual(FRESH_RULES.fresh2.maxFiles);
  });
});
