/**
 * House rules checked by reading the sources (issues 18 and 33): only src/config.ts (and the
 * local-stack launcher, for its children's environment) reads `process.env`; outside src/http/,
 * only routes.ts and schemas.ts files (and the api role that starts the server) import from it,
 * so the rules of a capability never depend on the HTTP layer; under src/, only the Temporal
 * engines' connection and the worker role import from temporal/; a capability's routes take the
 * services they use, never the container (src/services.ts); and no modules import each other,
 * directly or in a loop, except the loops named in ALLOWED_LOOPS.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../../..');
const SOURCE_DIRS = ['src', 'activities', 'temporal', 'workflows'];

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.ts')) out.push(rel);
    }
  };
  for (const d of SOURCE_DIRS) if (fs.existsSync(path.join(ROOT, d))) walk(d);
  return out;
}

/** `process.env` reads and the relative import targets (type-only ones too) of one file's text. */
function scan(file: string, text: string): { envReads: number; imports: string[] } {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  let envReads = 0;
  const imports: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && node.name.text === 'env' && ts.isIdentifier(node.expression) && node.expression.text === 'process') envReads++;
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const spec = node.moduleSpecifier.text;
      if (spec.startsWith('.')) imports.push(path.posix.join(path.posix.dirname(file), spec));
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { envReads, imports };
}

const mayReadEnv = (file: string): boolean => file === 'src/config.ts' || file.startsWith('src/stack/');
const mayImportHttp = (file: string): boolean =>
  file.startsWith('src/http/') || /\/(routes|schemas)\.ts$/.test(file) || file === 'src/roles/api.ts';
const intoHttp = (target: string): boolean => target === 'src/http' || target.startsWith('src/http/');
const mayImportTemporal = (file: string): boolean => !file.startsWith('src/') || file === 'src/roles/engines.ts' || file === 'src/roles/worker.ts';
const intoTemporal = (target: string): boolean => target.startsWith('temporal/');
/** A capability's routes (src/<capability>/routes.ts); src/http/routes.ts hands each its services. */
const isCapabilityRoutes = (file: string): boolean => /^src\/(?!http\/)[^/]+\/routes\.ts$/.test(file);

function breaches(files: Array<[string, string]>): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    const { envReads, imports } = scan(file, text);
    if (envReads > 0 && !mayReadEnv(file)) out.push(`${file} reads process.env`);
    for (const t of imports) {
      if (intoHttp(t) && !mayImportHttp(file)) out.push(`${file} imports ${t}`);
      if (intoTemporal(t) && !mayImportTemporal(file)) out.push(`${file} imports ${t}`);
      if (t === 'src/services' && isCapabilityRoutes(file)) out.push(`${file} takes the services container`);
    }
  }
  return out;
}

/**
 * The loops kept, each a set of modules that reach one another. The scan types loop: `types.ts`
 * names the result shapes of schemas.ts and the shared parse of file-analysis.ts, whose parsers
 * report through those types. The payload loop: text.ts masks secrets with secrets.ts, which
 * reports its cost through text.ts's budget signal type. (Store interfaces live in each
 * capability's records.ts, which imports no service, so there is no store <-> service loop.)
 */
const ALLOWED_LOOPS: Record<string, string[]> = {
  'scan types': [
    'src/scan/engines/elf.ts', 'src/scan/engines/pe.ts', 'src/scan/file-analysis.ts', 'src/scan/schemas.ts',
    'src/scan/static/common.ts', 'src/scan/types.ts',
  ],
  'payload secrets': ['src/scan/engines/payload/secrets.ts', 'src/scan/engines/payload/text.ts'],
};

/** Import loops (strongly connected sets of two or more modules, each sorted) of the given files' relative imports. */
function importLoops(files: Array<[string, string]>): string[][] {
  const names = new Set(files.map(([f]) => f));
  const resolve = (t: string): string | undefined => [`${t}.ts`, `${t}/index.ts`].find((c) => names.has(c));
  const graph = new Map(files.map(([f, text]) => [f, scan(f, text).imports.map(resolve).filter((t): t is string => t !== undefined)]));
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const loop: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      loop.push(w);
    } while (w !== v);
    if (loop.length > 1) loops.push(loop.sort());
  };
  for (const f of graph.keys()) if (!index.has(f)) visit(f);
  return loops.sort((a, b) => a[0].localeCompare(b[0]));
}

/** Loops not in the allow-list, and allow-list entries that no longer match a loop (so it stays exact). */
function loopBreaches(files: Array<[string, string]>, allowed: Record<string, string[]>): string[] {
  const key = (l: string[]): string => [...l].sort().join(' ');
  const found = importLoops(files).map(key);
  const kept = new Set(Object.values(allowed).map(key));
  return [
    ...found.filter((l) => !kept.has(l)).map((l) => `import loop ${l}`),
    ...Object.entries(allowed).filter(([, l]) => !found.includes(key(l))).map(([name]) => `allowed loop "${name}" no longer exists as listed`),
  ];
}

const realTree = (): Array<[string, string]> => sourceFiles().map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8')]);

test('the real tree keeps every rule', () => {
  const files = realTree();
  expect(files.length).toBeGreaterThan(100);
  expect(breaches(files)).toEqual([]);
  expect(loopBreaches(files, ALLOWED_LOOPS)).toEqual([]);
});

test('each rule catches its breach, and comments or strings naming them do not count', () => {
  expect(breaches([
    ['src/scan/engines/clamav.ts', 'const host = process.env.CLAMD_HOST;'],
    ['src/flows/service.ts', "import { ajv } from '../http/schema';"],
    ['src/files/service.ts', "export { x } from '../http/route';"],
    ['src/config.ts', 'const p = process.env.PORT;'],
    ['src/stack/child.ts', 'spawn(c, a, { env: process.env });'],
    ['src/flows/routes.ts', "import { RouteDef } from '../http/route';"],
    ['src/messaging/schemas.ts', "import { ajv } from '../http/schema';"],
    ['src/limits/service.ts', "// clamav.ts used to read process.env\nconst s = 'process.env';"],
  ])).toEqual([
    'src/scan/engines/clamav.ts reads process.env',
    'src/flows/service.ts imports src/http/schema',
    'src/files/service.ts imports src/http/route',
  ]);
});

test('the temporal/ and container rules catch their breaches', () => {
  expect(breaches([
    ['src/flows/admission.ts', "import { RUN_TIMEOUT_MS } from '../../temporal/limits';"],
    ['src/scan/service.ts', "import type { X } from '../../temporal/engines/scans';"],
    ['src/files/routes.ts', "import type { Services } from '../services';"],
    ['src/roles/worker.ts', "import { startWorker } from '../../temporal/worker';"],
    ['src/roles/engines.ts', "import { temporalEngines } from '../../temporal/engines';"],
    ['workflows/flow.ts', "import { nodePolicy } from '../temporal/limits';"],
    ['src/http/routes.ts', "import type { Services } from '../services';"],
  ])).toEqual([
    'src/flows/admission.ts imports temporal/limits',
    'src/scan/service.ts imports temporal/engines/scans',
    'src/files/routes.ts takes the services container',
  ]);
});

test('a new import loop fails, direct or through a third module, and a stale allow-list entry fails', () => {
  const tree = realTree();
  // The real tree plus one edge: health.ts importing the api role, which (and whose app) imports health.ts.
  const direct = tree.map(([f, text]): [string, string] => [f, f === 'src/health.ts' ? `${text}\nimport type { ApiRole } from './roles/api';` : text]);
  expect(loopBreaches(direct, ALLOWED_LOOPS)).toEqual(['import loop src/health.ts src/http/app.ts src/roles/api.ts']);
  expect(loopBreaches([
    ['src/a.ts', "import { b } from './b';"],
    ['src/b.ts', "export { c } from './c';"],
    ['src/c.ts', "import type { A } from './a';"],
    ['src/d.ts', "import { a } from './a';"],
  ], {})).toEqual(['import loop src/a.ts src/b.ts src/c.ts']);
  expect(loopBreaches([['src/a.ts', ''], ['src/b.ts', "import { a } from './a';"]], { gone: ['src/a.ts', 'src/b.ts'] }))
    .toEqual(['allowed loop "gone" no longer exists as listed']);
});
