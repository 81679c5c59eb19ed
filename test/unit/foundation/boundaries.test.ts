/**
 * Two house rules checked by reading the sources (issue 18): only src/config.ts (and the
 * local-stack launcher, for its children's environment) reads `process.env`; outside src/http/,
 * only routes.ts and schemas.ts files (and the entry point that starts the server) import from
 * it, so the rules of a capability never depend on the HTTP layer.
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

/** `process.env` reads and the relative import targets of one file's text. */
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
  file.startsWith('src/http/') || /\/(routes|schemas)\.ts$/.test(file) || file === 'src/main.ts';
const intoHttp = (target: string): boolean => target === 'src/http' || target.startsWith('src/http/');

function breaches(files: Array<[string, string]>): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    const { envReads, imports } = scan(file, text);
    if (envReads > 0 && !mayReadEnv(file)) out.push(`${file} reads process.env`);
    for (const t of imports) if (intoHttp(t) && !mayImportHttp(file)) out.push(`${file} imports ${t}`);
  }
  return out;
}

test('the real tree keeps both rules', () => {
  const files = sourceFiles();
  expect(files.length).toBeGreaterThan(100);
  expect(breaches(files.map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8')]))).toEqual([]);
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
