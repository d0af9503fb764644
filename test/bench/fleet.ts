/**
 * The time a fleet's cluster takes to decide its start gate, with 2, 20 and 200 simulated
 * clusters' status branches in one repository (a local one: the reads, the parsing and the
 * decision, without the network). Each branch holds 20 status commits, the last 10 saying
 * NodeImage/worker Complete at the same revision, so the cold read also walks back to date it.
 *
 *   cold: a new drydock reads every branch (tip, files, the walk back) and decides;
 *   idle: the next round, no branch moved: one ref per cluster, reports from the cache;
 *   one:  one cluster wrote a new status commit since.
 *
 * Besides the times, it counts what a round reads: ref reads (one per cluster, whatever
 * moved) and reports parsed (only the branches whose tip moved). `DRYDOCK_BENCH_FLEET` sets
 * the sizes (default 2,20,200).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { admit, type FleetPlan } from '../../src/plan/fleet.js';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import { FleetStatusReader } from '../../src/source/fleet-status.js';
import { GitSource } from '../../src/source/git-source.js';
import { specStatus } from '../support/spec-status.js';
import { recordFigures, sizesFrom, type Figure } from './results.js';

const SIZES = [2, 20, 200] as const;
const HISTORY = 20;
const REV = 'a1b2c3d4e5f60718';
const T0 = Date.parse('2026-03-01T10:00:00Z') / 1000;

function statusFiles(phase: 'Progressing' | 'Complete', eta: number): ReadonlyMap<string, string> {
  return renderStatusDocs({
    cluster: 'c',
    specs: [specStatus('NodeImage', 'worker', { revision: REV, phase, eta: new Date(eta * 1000).toISOString() })],
  });
}

/** `git fast-import` input: each cluster's branch with HISTORY commits, a minute apart. */
function importScript(clusters: number): string {
  const out: string[] = [];
  for (let c = 0; c < clusters; c++) {
    for (let k = 0; k < HISTORY; k++) {
      const at = T0 + k * 60;
      out.push(`commit refs/heads/drydock/status-c${c}`, `committer drydock <d@example.org> ${at} +0000`);
      const msg = `status of c${c}\n\nDrydock-Cluster: c${c}\n`;
      out.push(`data ${Buffer.byteLength(msg)}`, msg);
      if (k === 0) out.push('deleteall');
      for (const [file, text] of statusFiles(k < HISTORY / 2 ? 'Progressing' : 'Complete', at))
        out.push(`M 100644 inline ${file}`, `data ${Buffer.byteLength(text)}`, text);
      out.push('');
    }
  }
  return out.join('\n');
}

function git(dir: string, args: readonly string[], input?: string): void {
  const r = spawnSync('git', args, { cwd: dir, input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

interface Round {
  readonly ms: number;
  /** Status branch tips read (one ref each). */
  readonly refReads: number;
  /** Reports parsed (a tip not seen before). */
  readonly parsed: number;
}

interface Measured {
  readonly cold: Round;
  /** Median of IDLE_ROUNDS rounds in which no branch moved. */
  readonly idle: Round;
  readonly one: Round;
  readonly open: boolean;
}

const IDLE_ROUNDS = 5;

async function measure(clusters: number): Promise<Measured> {
  const dir = mkdtempSync(path.join(tmpdir(), 'drydock-bench-fleet-'));
  try {
    git(dir, ['init', '-q', '--bare']);
    git(dir, ['fast-import', '--quiet'], importScript(clusters));
    const names = Array.from({ length: clusters }, (_, i) => `c${i}`);
    // Every simulated cluster is in the stage before the one deciding.
    const fleet: FleetPlan = {
      staleAfterMs: Number.MAX_SAFE_INTEGER,
      stages: [
        { name: 'early', clusters: names, soakMs: 60_000, approval: false, tolerate: 0 },
        { name: 'late', clusters: ['me'], soakMs: 0, approval: false, tolerate: 0 },
      ],
    };
    const members = names.map((c) => ({ cluster: c, branch: `drydock/status-${c}` }));
    const source = new GitSource({ repo: dir });
    // Counts the ref reads: the one thing a round costs per cluster when no branch moved.
    let refReads = 0;
    const readTip = source.readBranchTip.bind(source);
    source.readBranchTip = (branch: string) => {
      refReads += 1;
      return readTip(branch);
    };
    const reader = new FleetStatusReader(source);
    let open = false;
    const round = async (): Promise<Round> => {
      const [reads, parsed] = [refReads, reader.parsed];
      const t = performance.now();
      const reports = await reader.read(members);
      const input = { fleet, change: { spec: { kind: 'NodeImage', name: 'worker' } as const, revision: REV } };
      open = admit({ ...input, reports, approvals: [], now: (T0 + 3600) * 1000 }, 'me').open;
      return { ms: performance.now() - t, refReads: refReads - reads, parsed: reader.parsed - parsed };
    };
    const cold = await round();
    const idles: Round[] = [];
    for (let i = 0; i < IDLE_ROUNDS; i++) idles.push(await round());
    const idle = [...idles].sort((a, b) => a.ms - b.ms)[Math.floor(IDLE_ROUNDS / 2)] as Round;
    const at = T0 + HISTORY * 60;
    const script = [
      'commit refs/heads/drydock/status-c0',
      `committer drydock <d@example.org> ${at} +0000`,
      'data 5',
      'beat',
      'from refs/heads/drydock/status-c0^0',
      ...[...statusFiles('Complete', at)].flatMap(([f, text]) => [
        `M 100644 inline ${f}`,
        `data ${Buffer.byteLength(text)}`,
        text,
      ]),
      '',
    ].join('\n');
    git(dir, ['fast-import', '--quiet', '--force'], script);
    const one = await round();
    return { cold, idle, one, open };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const COMMAND = 'npx tsc -p . && node dist/test/bench/fleet.js';

function figures(n: number, r: Measured): Figure[] {
  const size = `${n} clusters' status branches of ${HISTORY} commits each, all in the stage before; local repository`;
  const f = (id: string, what: string, value: number, unit: string, target: number | null): Figure => ({
    id: `fleet.${id}@${n}`,
    what,
    value,
    unit,
    target,
    size,
    command: COMMAND,
  });
  return [
    f('coldMs', "first round: read every branch's tip and files, date each Complete, decide", r.cold.ms, 'ms', null),
    f('idleMs', `next round, no branch moved: decide (median of ${IDLE_ROUNDS})`, r.idle.ms, 'ms', null),
    f('oneMovedMs', 'next round, one branch moved: decide', r.one.ms, 'ms', null),
    f(
      'idleRefReadsPerCluster',
      'ref reads per cluster in a round where no branch moved',
      r.idle.refReads / n,
      'reads',
      1,
    ),
    f('idleParsed', 'reports parsed in a round where no branch moved', r.idle.parsed, 'reports', 0),
    f('oneMovedParsed', 'reports parsed in a round where one branch moved', r.one.parsed, 'reports', 1),
  ];
}

export async function run(): Promise<void> {
  for (const n of sizesFrom('DRYDOCK_BENCH_FLEET', SIZES)) {
    const r = await measure(n);
    if (!r.open)
      throw new Error(`fleet bench @${n}: the gate stayed closed; the simulated reports do not pass the stage`);
    console.log(
      `fleet decide @${n} clusters: cold ${r.cold.ms.toFixed(0)} ms, idle round ${r.idle.ms.toFixed(1)} ms, one branch moved ${r.one.ms.toFixed(1)} ms`,
    );
    recordFigures(figures(n, r));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
