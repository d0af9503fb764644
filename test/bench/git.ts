/**
 * Git source benchmarks, against git http-backend on loopback:
 * - incremental fetch of one new commit on a repository of 10,000 commits and 2,000 files,
 *   as a ratio to native `git fetch` of the same repository in the same run (target ≤ 1.5);
 * - webhook receipt → the new commit loaded by the real spec loader (target ≤ 1 s).
 *
 * The repository is generated with `git fast-import`: the first commit holds examples-repo/
 * under specs/ and 2,000 small files under data/; each further commit changes one data file.
 */
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { startGitServer } from '../../src/sandbox/git-server.js';
import { coalesce, GitSource, Sync, webhookPlugin } from '../../src/source/index.js';
import { tempDir } from '../support/git-server.js';

const COMMITS = 10_000;
const FILES = 2_000;
const ROUNDS = 7;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface BenchResult {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly target: number;
  /** value ÷ target: at most 1 meets the target. */
  readonly ratio: number;
}

/** Runs a command; resolves to stdout. Asynchronous: the Git server answers from this process. */
function sh(cmd: string, args: readonly string[], opts: { cwd?: string; input?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out.trim()) : reject(new Error(`${cmd} ${args.join(' ')}: ${err}`)),
    );
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

function listFiles(dir: string, prefix = ''): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const name of readdirSync(dir).sort()) {
    const abs = path.join(dir, name);
    const rel = prefix ? `${prefix}/${name}` : name;
    if (statSync(abs).isDirectory()) out.push(...listFiles(abs, rel));
    else out.push([rel, readFileSync(abs, 'utf8')]);
  }
  return out;
}

function data(text: string): string {
  return `data ${Buffer.byteLength(text)}\n${text}\n`;
}

function filler(i: number, version: number): string {
  return `# data file ${i}\nversion: ${version}\n${'padding line for a realistic file size\n'.repeat(5)}`;
}

/** A fast-import stream of `count` commits on main, continuing from `from` (or a new history). */
function history(start: number, count: number, from?: string): string {
  const parts: string[] = [];
  for (let n = start; n < start + count; n++) {
    const when = `${1704067200 + n * 60} +0000`;
    parts.push(
      'commit refs/heads/main\n',
      `author Bench <bench@example.com> ${when}\n`,
      `committer Bench <bench@example.com> ${when}\n`,
      data(`change ${n}`),
    );
    if (n === start && from) parts.push(`from ${from}\n`);
    if (n === 0) {
      for (const [rel, text] of listFiles(path.join(root, 'examples-repo')))
        parts.push(`M 100644 inline specs/${rel}\n`, data(text));
      for (let i = 0; i < FILES; i++)
        parts.push(`M 100644 inline data/${String(i).padStart(4, '0')}.yaml\n`, data(filler(i, 0)));
    } else {
      const i = n % FILES;
      parts.push(`M 100644 inline data/${String(i).padStart(4, '0')}.yaml\n`, data(filler(i, n)));
    }
  }
  return parts.join('');
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

export async function run(): Promise<BenchResult[]> {
  const work = tempDir('drydock-bench-git-');
  // Anonymous: native git would otherwise pay a 401 round trip that drydock (credentials sent
  // up front) does not, and the comparison is about fetching.
  const server = await startGitServer({ root: path.join(work.dir, 'srv') });
  const results: BenchResult[] = [];
  try {
    const bare = server.createBareRepo('big.git', 'main');
    let t = performance.now();
    await sh('git', ['fast-import', '--quiet'], { cwd: bare, input: history(0, COMMITS) });
    await sh('git', ['repack', '-adq'], { cwd: bare });
    console.log(`generated ${COMMITS} commits, ${FILES} data files in ${Math.round(performance.now() - t)} ms`);
    const url = server.repoUrl('big.git');

    const nativeDir = path.join(work.dir, 'native.git');
    t = performance.now();
    await sh('git', ['clone', '-q', '--bare', '--single-branch', '--branch', 'main', url, nativeDir]);
    console.log(`native clone: ${Math.round(performance.now() - t)} ms`);
    const source = new GitSource({ repo: url, branch: 'main', path: 'specs', cacheRoot: path.join(work.dir, 'cache') });
    t = performance.now();
    await source.fetch();
    console.log(`drydock first fetch (full clone into the cache): ${Math.round(performance.now() - t)} ms`);

    let next = COMMITS;
    let tip = await sh('git', ['rev-parse', 'main'], { cwd: bare });
    const addCommit = async (): Promise<string> => {
      await sh('git', ['fast-import', '--quiet'], { cwd: bare, input: history(next, 1, tip) });
      next += 1;
      tip = await sh('git', ['rev-parse', 'main'], { cwd: bare });
      return tip;
    };

    // Alternate which side fetches first, so neither profits from a warmer server.
    const native: number[] = [];
    const ours: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const want = await addCommit();
      const nativeFetch = (): Promise<number> =>
        timed(() => sh('git', ['fetch', '-q', 'origin', 'main'], { cwd: nativeDir }));
      const ourFetch = async (): Promise<number> => {
        let got = '';
        const ms = await timed(async () => {
          got = (await source.fetch()).commit;
        });
        if (got !== want) throw new Error(`drydock fetched ${got}, expected ${want}`);
        return ms;
      };
      if (r % 2 === 0) {
        native.push(await nativeFetch());
        ours.push(await ourFetch());
      } else {
        ours.push(await ourFetch());
        native.push(await nativeFetch());
      }
    }
    const ratio = median(ours) / median(native);
    console.log(
      `incremental fetch, one new commit: drydock median ${median(ours).toFixed(1)} ms, native git fetch median ${median(native).toFixed(1)} ms`,
    );
    console.log(
      `  drydock runs: ${ours.map((x) => x.toFixed(0)).join(', ')} ms; native runs: ${native.map((x) => x.toFixed(0)).join(', ')} ms`,
    );
    results.push({
      name: 'incremental fetch ÷ native git fetch',
      value: ratio,
      unit: '×',
      target: 1.5,
      ratio: ratio / 1.5,
    });

    // Webhook receipt → the new commit loaded by the real loader (specs/ = examples-repo).
    const secret = 'bench-secret';
    const sync = new Sync({ source });
    const first = await sync.run();
    if (first.kind !== 'applied' && first.kind !== 'unchanged')
      throw new Error(`examples-repo did not load: ${first.kind}`);
    const runner = coalesce(async () => {
      await sync.run();
    });
    let pending: Promise<void> = Promise.resolve();
    const app = Fastify();
    await app.register(webhookPlugin, {
      secret,
      trigger: () => {
        pending = runner.trigger();
      },
    });
    const body = Buffer.from(JSON.stringify({ ref: 'refs/heads/main' }));
    const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    const latencies: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const want = await addCommit();
      const ms = await timed(async () => {
        const res = await app.inject({
          method: 'POST',
          url: '/webhook',
          headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
          payload: body,
        });
        if (res.statusCode !== 202) throw new Error(`webhook answered ${res.statusCode}`);
        await pending;
      });
      if (sync.commits.newest?.commit !== want || !sync.commits.newest.load.ok)
        throw new Error(`webhook did not load ${want}`);
      latencies.push(ms);
    }
    await app.close();
    const latency = median(latencies);
    console.log(
      `webhook → new commit loaded: median ${latency.toFixed(1)} ms (runs: ${latencies.map((x) => x.toFixed(0)).join(', ')} ms)`,
    );
    results.push({ name: 'webhook → commit loaded', value: latency, unit: 'ms', target: 1000, ratio: latency / 1000 });
  } finally {
    await server.stop();
    work.remove();
  }
  for (const r of results)
    console.log(`${r.name}: ${r.value.toFixed(2)} ${r.unit} (target ≤ ${r.target}; ratio ${r.ratio.toFixed(2)})`);
  return results;
}

// Run directly: node dist/test/bench/git.js
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await run();
