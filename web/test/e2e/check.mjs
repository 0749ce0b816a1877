/*
 * What the browser tests share besides the browser (browser.mjs): a failed check
 * (CheckError, assert, eq), the --server URL of the tests that run against a real
 * ripple-server, and records posted to it as the webhook sends them.
 */
import { parseArgs } from 'node:util';

export class CheckError extends Error {}

export const assert = (ok, msg) => {
  if (!ok) throw new CheckError(msg);
};

export const eq = (a, b, what) =>
  assert(a === b, `${what}: expected ${JSON.stringify(b)}, got ${JSON.stringify(a)}`);

/* The --server URL (no trailing slash); usage and exit 2 without one. */
export function serverArg(script) {
  const { values: opt } = parseArgs({ options: { server: { type: 'string' } } });
  if (!opt.server) {
    process.stderr.write(`usage: ${script} --server URL\n`);
    process.exit(2);
  }
  return opt.server.replace(/\/$/, '');
}

/* POST body (JSON) to base/v1/what; a CheckError unless the server takes it. */
export async function post(base, what, body) {
  const res = await fetch(`${base}/v1/${what}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new CheckError(`POST /v1/${what}: ${res.status} ${await res.text()}`);
}
