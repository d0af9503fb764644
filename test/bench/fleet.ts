/**
 * The time a fleet's cluster takes to decide its start gate, with 2, 20 and 200 simulated
 * clusters' status branches in one repository (a local one: the reads, the parsing and the
 * decision, without the network). Each branch holds 20 status commits, the last 10 saying
 * NodeImage/worker Complete at the same revision, so the cold read also walks back to date it.
 *
 *   cold: a new drydock reads every branch (tip, files, the walk back) and decides;
 *   idle: the next round, no branch moved: one ref per cluster, reports from the cache;
 *   one:  one cluster wrote a new status commit since.
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

async function measure(clusters: number): Promise<{ cold: number; idle: number; one: number; open: boolean }> {
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
    const reader = new FleetStatusReader(new GitSource({ repo: dir }));
    const decide = async (): Promise<boolean> => {
      const reports = await reader.read(members);
      const input = { fleet, change: { spec: { kind: 'NodeImage', name: 'worker' } as const, revision: REV } };
      return admit({ ...input, reports, approvals: [], now: (T0 + 3600) * 1000 }, 'me').open;
    };
    let t = performance.now();
    const open = await decide();
    const cold = performance.now() - t;
    t = performance.now();
    await decide();
    const idle = performance.now() - t;
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
    t = performance.now();
    await decide();
    const one = performance.now() - t;
    return { cold, idle, one, open };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  for (const n of SIZES) {
    const r = await measure(n);
    console.log(
      `fleet decide @${n} clusters: cold ${r.cold.toFixed(0)} ms, idle round ${r.idle.toFixed(1)} ms, one branch moved ${r.one.toFixed(1)} ms (gate ${r.open ? 'open' : 'closed'})`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
