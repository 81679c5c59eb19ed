/**
 * Builds the operator dashboard (web/) into dist/dashboard: one hashed JS and one hashed CSS
 * bundle, and an index.html naming them. Run by `npm run build`, which `npm run setup` runs.
 * No network: everything comes from node_modules.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const ROOT = path.resolve(__dirname, '..');
const OUT = path.join(ROOT, 'dist', 'dashboard');

async function main(): Promise<void> {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const result = await build({
    entryPoints: { app: path.join(ROOT, 'web', 'src', 'main.tsx') },
    outdir: OUT,
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    sourcemap: 'linked',
    format: 'esm',
    target: ['es2020'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    metafile: true,
    logLevel: 'warning',
    legalComments: 'linked',
  });
  const outputs = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
  const js = outputs.find((f) => f.endsWith('.js'));
  const css = outputs.find((f) => f.endsWith('.css'));
  if (!js || !css) throw new Error(`esbuild produced no JS or CSS bundle: ${outputs.join(', ')}`);
  writeFileSync(path.join(OUT, 'index.html'), `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Sentinel dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/${css}">
<script type="module" src="/dashboard/${js}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Sentinel dashboard needs JavaScript.</noscript>
</body>
</html>
`);
  process.stdout.write(`dashboard built into ${path.relative(ROOT, OUT)}: ${js}, ${css}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`dashboard build failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
