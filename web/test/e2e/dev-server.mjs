#!/usr/bin/env node
/*
 * A development stand-in for ripple-server's static file serving: serves a build
 * directory (index.html, assets/*) with the headers the contract gives (the CSP above
 * all, so a violation shows here first) and passes /v1/*, /healthz and /readyz on to a
 * real ripple-server, so the dashboard talks to its API same-origin as in production.
 *
 *   node test/e2e/dev-server.mjs --dir dist --api http://127.0.0.1:7480 [--listen 127.0.0.1:0]
 *
 * Prints "listening http://HOST:PORT" on stdout.
 */
import http from 'node:http';
import { readFile, readdir } from 'node:fs/promises';
import { join, extname, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({ options: {
  dir: { type: 'string', default: 'dist' },
  api: { type: 'string' },
  listen: { type: 'string', default: '127.0.0.1:0' },
} });

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.map': 'application/json', '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon',
  '.woff2': 'font/woff2', '.txt': 'text/plain; charset=utf-8' };
const SECURITY = {
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; style-src 'self'",
  'X-Content-Type-Options': 'nosniff', 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'no-referrer',
};

/* Files present at start, in memory, as ripple-server does. */
async function loadFiles(dir) {
  const files = new Map();
  files.set('/index.html', await readFile(join(dir, 'index.html')));
  for (const name of await readdir(join(dir, 'assets'))) files.set(`/assets/${name}`, await readFile(join(dir, 'assets', name)));
  return files;
}

function proxy(req, res) {
  const target = new URL(req.url, opt.api);
  const up = http.request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  up.on('error', () => {
    res.destroy();
  });
  req.pipe(up);
}

async function main() {
  const files = await loadFiles(resolve(opt.dir));
  const server = http.createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (opt.api && (path.startsWith('/v1/') || path === '/healthz' || path === '/readyz')) return proxy(req, res);
    const key = path === '/' ? '/index.html' : path;
    const body = files.get(key);
    if (!body) {
      res.writeHead(404, { 'Content-Type': 'application/json', ...SECURITY });
      return res.end('{"error":"no such file"}');
    }
    const cache = key === '/index.html' ? 'no-cache' : 'public, max-age=31536000, immutable';
    res.writeHead(200, { 'Content-Type': TYPES[extname(key)] ?? 'application/octet-stream', 'Cache-Control': cache, ...SECURITY });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  const [host, port] = opt.listen.split(/:(?=\d+$)/);
  server.listen(Number(port), host, () => {
    const a = server.address();
    process.stdout.write(`listening http://${a.address}:${a.port}\n`);
  });
}

main().catch((e) => {
  process.stderr.write(`dev-server: ${e.message}\n`);
  process.exit(1);
});
