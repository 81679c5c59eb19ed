/**
 * The store seam, checked from the outside by reading the sources: only stores (`<capability>/store/*.ts`),
 * storage/ and the local-stack launcher know a database driver; everything else reaches a store
 * through an interface its capability declares (records.ts), so each engine is a set of stores,
 * not a change to services. The composition root (src/services.ts) is the one
 * module outside the stores that names the store classes.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../../..');
/** Application code: what runs in the service's processes. */
const SOURCE_DIRS = ['src', 'activities', 'temporal', 'workflows'];
const COMPOSITION_ROOT = 'src/services.ts';

const isStore = (file: string): boolean => /^src\/[^/]+\/store\/[\w-]+\.ts$/.test(file);
const mayUseDriver = (file: string): boolean => isStore(file) || file.startsWith('src/storage/') || file.startsWith('src/stack/');
const isDriver = (spec: string): boolean => spec === 'mongodb' || spec.startsWith('mongodb/') || spec === 'better-sqlite3';

/** A relative import's target, as a repository path with `.ts` (index files are not used for stores). */
function resolve(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  return path.posix.join(path.posix.dirname(from), spec) + '.ts';
}

interface ImportOf { spec: string; typeOnly: boolean; names: string[] }

function importsOf(sf: ts.SourceFile): ImportOf[] {
  const out: ImportOf[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      // `import type {…}`, or every specifier marked `type`; a bare `import 'x'` runs the module.
      const typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      const names = [...(clause?.name ? [clause.name.text] : []), ...(named ?? []).map((e) => (e.propertyName ?? e.name).text)];
      out.push({ spec: node.moduleSpecifier.text, typeOnly, names });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      out.push({ spec: node.moduleSpecifier.text, typeOnly: node.isTypeOnly, names: (named ?? []).map((e) => (e.propertyName ?? e.name).text) });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      out.push({ spec: node.moduleReference.expression.text, typeOnly: node.isTypeOnly, names: [] });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push({ spec: node.argument.literal.text, typeOnly: true, names: [] });
    } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0])
      && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) {
      out.push({ spec: node.arguments[0].text, typeOnly: false, names: [] });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function identifiersOf(sf: ts.SourceFile): Set<string> {
  const ids = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) ids.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return ids;
}

/** Every breach of the seam in these files (repository path → source text). */
export function seamViolations(files: ReadonlyMap<string, string>): string[] {
  const parsed = new Map([...files].map(([file, text]) => [file, ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true)]));
  const storeClasses = new Map<string, string>();
  const out: string[] = [];
  for (const [file, sf] of parsed) {
    if (!isStore(file)) continue;
    for (const st of sf.statements) {
      if (!ts.isClassDeclaration(st) || !st.name || !st.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
      storeClasses.set(st.name.text, file);
      if (!st.heritageClauses?.some((h) => h.token === ts.SyntaxKind.ImplementsKeyword)) {
        out.push(`${file}: store class ${st.name.text} implements no interface of the service it serves`);
      }
    }
  }
  for (const [file, sf] of parsed) {
    const exempt = isStore(file) || file === COMPOSITION_ROOT;
    for (const imp of importsOf(sf)) {
      if (isDriver(imp.spec) && !mayUseDriver(file)) out.push(`${file}: imports a database driver ('${imp.spec}')`);
      const target = resolve(file, imp.spec);
      if (!exempt && target && isStore(target) && !imp.typeOnly) out.push(`${file}: value import from store module ${target}`);
    }
    if (!exempt) {
      const ids = identifiersOf(sf);
      for (const [cls, where] of storeClasses) if (ids.has(cls)) out.push(`${file}: names the store class ${cls} (${where})`);
    }
    if (!file.startsWith('src/storage/') && !file.startsWith('src/stack/')) {
      const visit = (node: ts.Node): void => {
        if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && ['MongoClient', 'GridFSBucket'].includes(node.expression.text)) {
          out.push(`${file}: opens its own ${node.expression.text} (storage/ hands them in)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(sf);
    }
  }
  return out;
}

function sourceTree(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.ts')) files.set(rel, fs.readFileSync(path.join(ROOT, rel), 'utf8'));
    }
  };
  for (const d of SOURCE_DIRS) walk(d);
  return files;
}

describe('store seam', () => {
  test('the application code keeps it', () => {
    const files = sourceTree();
    // The check must have read the real tree: the service layer, the composition root and the stores.
    expect(files.has(COMPOSITION_ROOT)).toBe(true);
    expect([...files.keys()].filter(isStore).length).toBeGreaterThanOrEqual(10);
    expect([...files.keys()].filter((f) => f.endsWith('/service.ts')).length).toBeGreaterThanOrEqual(10);
    expect(seamViolations(files)).toEqual([]);
  });

  describe('each rule catches its breach', () => {
    const store = `import { Collection, Db } from 'mongodb';
      import type { ThingRecords } from '../service';
      export interface ThingDoc { _id: string }
      export const THING_LIMIT = 3;
      export class ThingStore implements ThingRecords {
        constructor(private readonly db: Db) {}
        find(id: string) { return this.db.collection<ThingDoc>('things').findOne({ _id: id }); }
      }`;
    const service = `import type { ThingDoc } from './records';
      export interface ThingRecords { find(id: string): Promise<ThingDoc | null> }
      export class ThingService { constructor(private readonly things: ThingRecords) {} }`;
    const root = `import { ThingStore } from './thing/store/mongo';\nexport const things = (db: never) => new ThingStore(db);`;
    const base: Array<[string, string]> = [['src/thing/store/mongo.ts', store], ['src/thing/service.ts', service], [COMPOSITION_ROOT, root]];
    const check = (extra: Array<[string, string]>) => seamViolations(new Map([...base, ...extra]));

    test('a well-formed room passes', () => {
      expect(check([])).toEqual([]);
    });

    test.each([
      ['a type-only driver import in a service', `import type { Filter } from 'mongodb';`, /imports a database driver/],
      ['a driver value import in a route', `import { ObjectId } from 'mongodb';`, /imports a database driver/],
      ['an inline import type of the driver', `export type F = import('mongodb').Filter<unknown>;`, /imports a database driver/],
      ['a require of the driver', `const m = require('mongodb');`, /imports a database driver/],
      ['a store class as a type', `import type { ThingStore } from './records';\nexport let s: ThingStore;`, /names the store class ThingStore/],
      ['a store class under an alias', `import type { ThingStore as T } from './records';\nexport let s: T;`, /names the store class ThingStore/],
      ['a store class through an inline import type', `export let s: import('./store/mongo').ThingStore;`, /names the store class ThingStore/],
      ['a value import from a store module', `import { THING_LIMIT } from './store/mongo';`, /value import from store module src\/thing\/store\/mongo\.ts/],
      ['a mixed import from a store module', `import { THING_LIMIT, type ThingDoc } from './store/mongo';`, /value import from store module/],
      ['a bucket opened outside storage/', `import type { Db } from '../storage/mongo';\nexport const b = (db: Db) => new GridFSBucket(db);`, /opens its own GridFSBucket/],
    ])('%s', (_what, text, expected) => {
      const found = check([['src/thing/routes.ts', text]]);
      expect(found).toEqual([expect.stringMatching(expected)]);
    });

    test('a store class that implements no service interface', () => {
      const bare = store.replace(' implements ThingRecords', '');
      expect(seamViolations(new Map([...base, ['src/thing/store/mongo.ts', bare]]))).toEqual([expect.stringMatching(/ThingStore implements no interface/)]);
    });

    test('a store that opens its own client', () => {
      const opening = store.replace('constructor(private readonly db: Db) {}', `private readonly db = new MongoClient('mongodb://x').db('y');`);
      expect(seamViolations(new Map([...base, ['src/thing/store/mongo.ts', opening]]))).toEqual([expect.stringMatching(/opens its own MongoClient/)]);
    });

    test('storage/ and the stack launcher may use the driver; a store-named file elsewhere may not', () => {
      expect(check([['src/storage/extra.ts', `import { MongoClient } from 'mongodb';\nexport const c = new MongoClient('mongodb://x');`]])).toEqual([]);
      expect(check([['src/stack/extra.ts', `import { MongoClient } from 'mongodb';`]])).toEqual([]);
      expect(check([['activities/store.ts', `import { MongoClient } from 'mongodb';`]])).toEqual([expect.stringMatching(/activities\/store\.ts: imports a database driver/)]);
    });
  });
});
