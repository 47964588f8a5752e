// What the reference harnesses (mg_reference.mjs, dvonn_reference.mjs) share: running the oppidum
// binary, one process at a time or a pool of them, and a seeded random generator. Node.js 18 or
// later, no packages.

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

/**
 * A seeded generator (mulberry32): rng() and rng.next() are uniform in [0, 1); rng.int(n) is
 * 0..n-1, rng.pick(list) one element, rng.chance(p) true with probability p. The same seed gives
 * the same draws on every machine.
 */
export function seededRandom(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  next.next = next;
  next.int = (n) => Math.floor(next() * n);
  next.pick = (list) => list[Math.floor(next() * list.length)];
  next.chance = (p) => next() < p;
  return next;
}
