/**
 * `npm run mutation [-- <id>…]`: the mutation check of the planner. Each mutant of mutants.ts is
 * planted in the compiled planner (dist/src/plan/), the planner's tests run against it in a child
 * mocha (bail at the first failure), and the file is put back byte for byte. A mutant the tests
 * pass is a survivor: a realistic bug nothing would catch. Exits non-zero when one survives, when
 * a find text no longer matches (or matches twice), or when a mutant is not valid JavaScript.
 *
 *   npm run mutation                     every mutant, after one clean run of the tests
 *   npm run mutation -- <id> [<id>…]     only these
 *   npm run mutation -- --check          only that every find matches once and parses
 *   npm run mutation -- --list           the ids and their bugs
 *
 * A planted file is recorded in dist/.mutant.json before it is written; a run stopped by a signal
 * puts it back at once, and a run killed outright is put right by the next one, at its start.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MUTANTS, type Mutant } from './mutants.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PLAN = path.join(ROOT, 'dist/src/plan');
const JOURNAL = path.join(ROOT, 'dist/.mutant.json');
const MOCHA = path.join(ROOT, 'node_modules/mocha/bin/mocha.js');
const TESTS = 'dist/test/plan/**/*.test.js';
/** A mutant's run may take this many times the clean run (a planted endless loop is cut off). */
const TIMEOUT_FACTOR = 4;
const MIN_TIMEOUT_MS = 120_000;

type Result =
  | { readonly kind: 'killed'; readonly by: string; readonly test?: string }
  | { readonly kind: 'timeout' | 'survived' }
  | { readonly kind: 'stale' | 'invalid'; readonly detail: string };

interface MochaRun {
  readonly code: number | null;
  readonly timedOut: boolean;
  readonly ms: number;
  readonly failure?: { readonly file: string; readonly test: string };
  readonly stderr: string;
}

/** The file planted now, with its original bytes. */
let planted: { readonly file: string; readonly original: Buffer } | undefined;
let child: ReturnType<typeof spawn> | undefined;

function restore(): void {
  if (planted === undefined) return;
  const { file, original } = planted;
  writeFileSync(file, original);
  if (!readFileSync(file).equals(original)) throw new Error(`${file} was not restored byte for byte`);
  rmSync(JOURNAL, { force: true });
  planted = undefined;
}

/** A run killed outright left its mutant in place: put the file back before anything else. */
function recoverJournal(): void {
  if (!existsSync(JOURNAL)) return;
  const entry = JSON.parse(readFileSync(JOURNAL, 'utf8')) as { file: string; original: string };
  planted = { file: entry.file, original: Buffer.from(entry.original, 'base64') };
  restore();
  console.log(`restored ${path.relative(ROOT, entry.file)}, left planted by an interrupted run`);
}

function plant(m: Mutant): Result | undefined {
  const file = path.join(PLAN, m.file);
  if (!existsSync(file)) return { kind: 'stale', detail: `dist/src/plan/${m.file} does not exist` };
  const original = readFileSync(file);
  const text = original.toString('utf8');
  const count = text.split(m.find).length - 1;
  if (count !== 1) return { kind: 'stale', detail: `find text occurs ${count} times in dist/src/plan/${m.file}` };
  writeFileSync(JOURNAL, JSON.stringify({ file, original: original.toString('base64') }));
  planted = { file, original };
  writeFileSync(
    file,
    text.replace(m.find, () => m.replace),
  );
  const check = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
  if (check.status !== 0) return { kind: 'invalid', detail: check.stderr.trim().split('\n').slice(0, 5).join(' ') };
  return undefined;
}

/** The test file a failure came from, as its source: dist/test/x.test.js → test/x.test.ts. */
function sourceOf(file: string): string {
  return path.relative(path.join(ROOT, 'dist'), file).replace(/\.js$/, '.ts').split(path.sep).join('/');
}

function firstFailure(report: string): MochaRun['failure'] {
  if (!existsSync(report)) return undefined;
  const json = JSON.parse(readFileSync(report, 'utf8')) as { failures?: { file?: string; fullTitle?: string }[] };
  const f = json.failures?.[0];
  return f === undefined ? undefined : { file: f.file ? sourceOf(f.file) : '?', test: f.fullTitle ?? '?' };
}

/** The planner's tests, in a child mocha that stops at the first failure. */
function runTests(timeoutMs: number): Promise<MochaRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'drydock-mutation-'));
  const report = path.join(dir, 'report.json');
  const args = [MOCHA, '--bail', '--reporter', 'json', '--reporter-option', `output=${report}`, TESTS];
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    child = proc;
    let stderr = '';
    proc.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4000);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killChild();
    }, timeoutMs);
    proc.on('error', reject);
    proc.on('close', (code) => {
      clearTimeout(timer);
      child = undefined;
      const failure = firstFailure(report);
      rmSync(dir, { recursive: true, force: true });
      const ms = performance.now() - started;
      resolve({ code, timedOut, ms, stderr, ...(failure !== undefined ? { failure } : {}) });
    });
  });
}

function killChild(): void {
  if (child?.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

async function runMutant(m: Mutant, timeoutMs: number): Promise<Result> {
  try {
    const problem = plant(m);
    if (problem !== undefined) return problem;
    const run = await runTests(timeoutMs);
    if (run.timedOut) return { kind: 'timeout' };
    if (run.code === 0) return { kind: 'survived' };
    if (run.failure !== undefined) return { kind: 'killed', by: run.failure.file, test: run.failure.test };
    return { kind: 'killed', by: `mocha exited ${String(run.code)} before a test failed` };
  } finally {
    restore();
  }
}

function verdict(r: Result): string {
  switch (r.kind) {
    case 'killed':
      return `killed by ${r.by}${r.test !== undefined ? ` (${r.test})` : ''}`;
    case 'timeout':
      return 'killed: the tests ran past their time';
    case 'survived':
      return 'SURVIVED: no planner test fails';
    case 'stale':
      return `STALE: ${r.detail}`;
    case 'invalid':
      return `INVALID: ${r.detail}`;
  }
}

/** The mutants the arguments name (all when none), or undefined when one names no mutant. */
function chosen(args: readonly string[]): Mutant[] | undefined {
  const ids = args.filter((a) => !a.startsWith('--'));
  const unknown = [
    ...args.filter((a) => a.startsWith('--') && a !== '--check'),
    ...ids.filter((id) => !MUTANTS.some((m) => m.id === id)),
  ];
  if (unknown.length > 0) {
    console.log(`no mutant or option ${unknown.join(', ')}; npm run mutation -- --list names the mutants`);
    return undefined;
  }
  if (ids.length === 0) return [...MUTANTS];
  return MUTANTS.filter((m) => ids.includes(m.id));
}

function onSignal(signal: NodeJS.Signals): void {
  killChild();
  restore();
  console.log(`\nstopped by ${signal}; the planner is restored`);
  process.exit(130);
}

async function main(args: readonly string[]): Promise<number> {
  const ids = new Set(MUTANTS.map((m) => m.id));
  if (ids.size !== MUTANTS.length) throw new Error('two mutants share an id');
  if (args.includes('--list')) {
    for (const m of MUTANTS) console.log(`${m.id.padEnd(36)} ${m.bug}`);
    return 0;
  }
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);
  process.on('exit', restore);
  recoverJournal();
  const list = chosen(args);
  if (list === undefined) return 2;
  const began = performance.now();
  if (args.includes('--check')) return check(list);
  const results: [Mutant, Result, number][] = [];
  const clean = await runTests(30 * 60_000);
  if (clean.code !== 0) {
    const why = clean.failure ? `${clean.failure.file}: ${clean.failure.test}` : clean.stderr.trim();
    console.log(`the planner's tests fail without any mutant; fix them first (${why})`);
    return 1;
  }
  const timeoutMs = Math.max(MIN_TIMEOUT_MS, TIMEOUT_FACTOR * clean.ms);
  console.log(`clean run of the planner's tests: ${(clean.ms / 1000).toFixed(1)} s; ${list.length} mutant(s)\n`);
  for (const m of list) {
    const t = performance.now();
    const r = await runMutant(m, timeoutMs);
    const ms = performance.now() - t;
    results.push([m, r, ms]);
    console.log(`${m.id.padEnd(36)} ${(ms / 1000).toFixed(1).padStart(6)} s  ${verdict(r)}`);
  }
  return summary(results, performance.now() - began);
}

/** Plants and restores each mutant without running a test: does every find match once and parse? */
function check(list: readonly Mutant[]): number {
  let bad = 0;
  for (const m of list) {
    try {
      const problem = plant(m);
      if (problem === undefined) continue;
      bad++;
      console.log(`${m.id}: ${verdict(problem)}`);
    } finally {
      restore();
    }
  }
  console.log(`${list.length - bad} of ${list.length} mutant(s) match once and parse`);
  return bad > 0 ? 1 : 0;
}

function summary(results: readonly [Mutant, Result, number][], ms: number): number {
  const count = (k: Result['kind']): number => results.filter(([, r]) => r.kind === k).length;
  const killed = count('killed') + count('timeout');
  const bad = results.filter(([, r]) => r.kind !== 'killed' && r.kind !== 'timeout');
  console.log(
    `\n${killed} of ${results.length} killed, ${count('survived')} survived, ${count('stale') + count('invalid')} stale or invalid; ${(ms / 60_000).toFixed(1)} min`,
  );
  for (const [m, r] of bad) console.log(`  ${m.id}: ${m.bug}\n    ${verdict(r)}`);
  return bad.length > 0 ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
