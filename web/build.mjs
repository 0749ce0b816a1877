#!/usr/bin/env node
/*
 * Builds the dashboard: bundles src/main.js (and the CSS it imports) with esbuild into
 * DIR/assets/app-<hash>.js and .css (minified, each with a .map), and writes
 * DIR/index.html from src/index.html pointing at them. Output is deterministic: the same
 * sources give the same bytes and names. ripple-server serves DIR (docs/dashboard.md).
 *
 *   node build.mjs --out DIR [--no-minify]
 *
 * --no-minify keeps names readable (for profiling); the default is what ships.
 */
import { build } from 'esbuild';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: {
  out: { type: 'string', default: join(here, 'dist') },
  'no-minify': { type: 'boolean', default: false },
} });
const out = resolve(values.out);
const assets = join(out, 'assets');

async function main() {
  const result = await build({
    absWorkingDir: here,
    entryPoints: ['src/main.js'],
    bundle: true,
    format: 'esm',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    minify: !values['no-minify'],
    sourcemap: 'linked',
    sourcesContent: true,
    legalComments: 'none',
    entryNames: 'app-[hash]',
    assetNames: 'asset-[hash]',
    /* Paths in source maps are relative to this, whatever --out is: same bytes anywhere. */
    outdir: join(here, 'dist', 'assets'),
    write: false,
    metafile: true,
    logLevel: 'warning',
  });
  await mkdir(assets, { recursive: true });
  await removeOldAssets();
  const names = {};
  for (const f of result.outputFiles) {
    const name = basename(f.path);
    await writeFile(join(assets, name), f.contents);
    if (name.endsWith('.js')) names.js = name;
    if (name.endsWith('.css')) names.css = name;
  }
  if (!names.js || !names.css) throw new Error('esbuild made no .js or no .css');
  const html = (await readFile(join(here, 'src/index.html'), 'utf8'))
    .replace('%JS%', `assets/${names.js}`)
    .replace('%CSS%', `assets/${names.css}`);
  if (/<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=/i.test(html)) throw new Error('index.html has an inline script or style (the CSP forbids them)');
  await writeFile(join(out, 'index.html'), html);
  const sizes = result.outputFiles.map((f) => `${relative(process.cwd(), join(assets, basename(f.path)))} ${f.contents.length} B`);
  process.stdout.write(`${sizes.join('\n')}\n${relative(process.cwd(), join(out, 'index.html'))}\n`);
}

/* Earlier builds' bundles (only the files this script makes). */
async function removeOldAssets() {
  for (const name of await readdir(assets)) {
    if (/^(app|asset)-[A-Z0-9]+\.(js|css|map)$/i.test(name) || /\.(js|css)\.map$/.test(name)) await rm(join(assets, name));
  }
}

main().catch((e) => {
  process.stderr.write(`build: ${e.message}\n`);
  process.exit(1);
});
