// Running the oppidum binary from the reference harnesses (mg_reference.mjs, dvonn_reference.mjs):
// one process at a time, or a pool of them. Node.js 18 or later, no packages.

import { spawn } from 'node:child_process';

/** Runs `binary args` with `input` on standard input; resolves to { rc, stdout, stderr }. */
export function runBinary(binary, args, input = '') {
  return new Promise((resolve) => {
    const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', (e) => resolve({ rc: -1, stdout: '', stderr: String(e) }));
    child.on('close', (rc) =>
      resolve({ rc, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/** Runs `tasks` (functions returning promises) with at most `jobs` at once; results in order. */
export async function runPool(tasks, jobs) {
  const results = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const k = next++;
      results[k] = await tasks[k]();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, tasks.length)) }, worker));
  return results;
}
