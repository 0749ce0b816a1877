#!/usr/bin/env node
/*
 * Builds the dashboard: bundles src/main.js (and the CSS it imports) with esbuild into
 * DIR/assets/app-<hash>.js and .css (minified, each with a .map), src/boot.js (the
 * script that asks for a trace before the rest is evaluated) into boot-<hash>.js, and
 * writes DIR/index.html from src/index.html pointing at them. Output is deterministic: the same
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

/* One bundle of entry (app: the dashboard; boot: the script that starts a trace's request first). */
function bundle(entry, prefix, format) {
  return build({
    absWorkingDir: here,
    entryPoints: [entry],
    bundle: true,
    format,
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    minify: !values['no-minify'],
    sourcemap: 'linked',
    sourcesContent: true,
    legalComments: 'none',
    entryNames: `${prefix}-[hash]`,
    assetNames: 'asset-[hash]',
    /* Paths in source maps are relative to this, whatever --out is: same bytes anywhere. */
    outdir: join(here, 'dist', 'assets'),
    write: false,
    metafile: true,
    logLevel: 'warning',
  });
}

async function main() {
  const [app, boot] = await Promise.all([bundle('src/main.js', 'app', 'esm'),
    /* A classic script, first in the page: it runs as soon as it is in, where a module
     * would wait for the document to be parsed. */
    bundle('src/boot.js', 'boot', 'iife')]);
  await mkdir(assets, { recursive: true });
  await removeOldAssets();
  const names = {};
  const outputFiles = [...app.outputFiles, ...boot.outputFiles];
  for (const f of outputFiles) {
    const name = basename(f.path);
    await writeFile(join(assets, name), f.contents);
    if (name.endsWith('.js')) names[name.startsWith('boot-') ? 'boot' : 'js'] = name;
    if (name.endsWith('.css')) names.css = name;
  }
  if (!names.js || !names.css || !names.boot) throw new Error('esbuild made no .js, no .css or no boot .js');
  const html = (await readFile(join(here, 'src/index.html'), 'utf8'))
    .replace('%BOOT%', `assets/${names.boot}`)
    .replace('%JS%', `assets/${names.js}`)
    .replace('%CSS%', `assets/${names.css}`);
  if (/<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=/i.test(html)) throw new Error('index.html has an inline script or style (the CSP forbids them)');
  await writeFile(join(out, 'index.html'), html);
  const sizes = outputFiles.map((f) => `${relative(process.cwd(), join(assets, basename(f.path)))} ${f.contents.length} B`);
  process.stdout.write(`${sizes.join('\n')}\n${relative(process.cwd(), join(out, 'index.html'))}\n`);
}

/* Earlier builds' bundles (only the files this script makes). */
async function removeOldAssets() {
  for (const name of await readdir(assets)) {
    if (/^(app|asset|boot)-[A-Z0-9]+\.(js|css|map)$/i.test(name) || /\.(js|css)\.map$/.test(name)) await rm(join(assets, name));
  }
}

main().catch((e) => {
  process.stderr.write(`build: ${e.message}\n`);
  process.exit(1);
});
