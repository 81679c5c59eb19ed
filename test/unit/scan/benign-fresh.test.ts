import {
  BENIGN_MANIFEST, exclusion, FRESH_MANIFEST, freshDebianList, freshPackages, readBenignManifest, scriptLanguage, upstreamKey, type BenignPackage, type Unit,
} from '../../../scripts/build-benign-corpus';

// The corpus builder imports the detection builder, which reads parquet (an ES module Jest cannot load); not used here.
jest.mock('hyparquet', () => ({}));

const unit = (ecosystem: Unit['ecosystem'], name: string, texts: string[]): Unit => ({
  ecosystem, name, version: '1', licence: 'MIT', files: texts.map((t, i) => ({ rel: `f${i}.sh`, sha: t, lang: 'shell', content: Buffer.from(t) })),
});

describe('build-benign-corpus: the fresh split', () => {
  const main: BenignPackage[] = [
    { ecosystem: 'debian', name: 'python3-requests', version: '1', licence: 'MIT', split: 'heldout', files: [['a.py', 'sha-main-1', 'python']] },
    { ecosystem: 'debian', name: 'libwww-perl', version: '1', licence: 'GPL', split: 'train', files: [['b.pm', 'sha-main-2', 'perl']] },
  ];

  it('reads upstream names through the Debian prefixes', () => {
    expect(upstreamKey('python3-requests')).toBe('requests');
    expect(upstreamKey('node-requests')).toBe('requests');
    expect(upstreamKey('libwww-perl')).toBe('www');
    expect(upstreamKey('php-Twig')).toBe('twig');
    expect(upstreamKey('zope.interface')).toBe('zope-interface');
  });

  it('picks no Debian package whose name or upstream name the main corpus or its picks hold', () => {
    const taken = exclusion(main, ['node-picked-by-main']);
    const all = ['python3-requests', 'node-requests', 'php-requests', 'libwww-perl', 'python3-www', 'node-picked-by-main', 'python3-picked-by-main', 'python3-new', 'libnew-thing-perl', 'git', 'python3-new-dev'];
    const picked = freshDebianList(all, taken);
    expect(picked).toEqual(expect.arrayContaining(['python3-new', 'libnew-thing-perl', 'git']));
    for (const gone of ['python3-requests', 'node-requests', 'php-requests', 'libwww-perl', 'python3-www', 'node-picked-by-main', 'python3-picked-by-main', 'python3-new-dev']) expect(picked).not.toContain(gone);
  });

  it('drops units named like the main corpus, texts the main manifest holds and texts repeated inside the fresh set', () => {
    const out = freshPackages([
      unit('pypi', 'requests', ['sha-new-0']),
      unit('debian', 'python3-new', ['sha-main-1', 'sha-new-1', 'sha-new-2']),
      unit('debian', 'python3-other', ['sha-new-2', 'sha-new-3']),
      unit('debian', 'python3-only-old', ['sha-main-2']),
    ], exclusion(main, []), 'fresh');
    expect(out.map((p) => [p.name, p.split, p.files.map(([, sha]) => sha)])).toEqual([
      ['python3-new', 'fresh', ['sha-new-1', 'sha-new-2']],
      ['python3-other', 'fresh', ['sha-new-3']],
    ]);
  });

  // The committed manifests themselves: nothing of the main corpus is in the fresh split.
  it('the committed fresh manifest shares no package, upstream name or text with the main manifest', () => {
    const mainPkgs = readBenignManifest(BENIGN_MANIFEST);
    const fresh = readBenignManifest(FRESH_MANIFEST);
    expect(fresh.length).toBeGreaterThan(0);
    const { names: taken, texts } = exclusion(mainPkgs, []);
    expect(fresh.filter((p) => taken.has(p.name) || taken.has(upstreamKey(p.name))).map((p) => p.name)).toEqual([]);
    expect(fresh.flatMap((p) => p.files).filter(([, sha]) => texts.has(sha))).toEqual([]);
    expect(new Set(fresh.map((p) => p.split))).toEqual(new Set(['fresh']));
    const shas = fresh.flatMap((p) => p.files.map(([, sha]) => sha));
    expect(new Set(shas).size).toBe(shas.length);
  });
});

describe('build-benign-corpus: scriptLanguage', () => {
  it('reads only its own extensions, never the object prototype', () => {
    expect(scriptLanguage('sage/cython_debug_info_sage.matrix.constructor', Buffer.from('<?xml version="1.0"?>\n'))).toBeUndefined();
    expect(scriptLanguage('x.toString', Buffer.from('plain text\n'))).toBeUndefined();
    expect(scriptLanguage('tool.ps1', Buffer.from('Get-Item .\n'))).toBe('powershell');
  });
});
