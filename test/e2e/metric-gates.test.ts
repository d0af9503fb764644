/**
 * End to end, driven only by Git commits: metric gates from a real Prometheus and Alertmanager
 * on the real control plane. Prometheus scrapes gauges the test sets (test/support/prometheus.ts);
 * NodeOps over three sim workers, one node at a time, are held by an alert, pass a silenced
 * one, halt on a query past its threshold, and wait for a Prometheus that is stopped. What
 * drydock did is read from the API server (a watch on the Nodes), never from its logs.
 */
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import { usePrometheus } from '../support/prometheus.js';
import { ApiLog, replay } from './api-watch.js';
import {
  afterLeaderRounds,
  OPS_REPO_CONFIG,
  specDoc,
  startDrydockChild,
  startWorkerWorld,
  stopWorld,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

const WORKERS = ['workers-i-0001', 'workers-i-0002', 'workers-i-0003'];

/** A NodeOp over every worker, one node at a time, under `metricGates`. */
const nodeOp = (name: string, metricGates: Record<string, unknown>): string =>
  specDoc('NodeOp', name, {
    nodeSelector: { matchLabels: { 'sim.drydock.dev/group': 'workers' } },
    image: 'busybox:1.36',
    command: ['sh', '-c', 'echo patched'],
    cordon: true,
    rebootOnSuccess: false,
    backoffLimit: 0,
    concurrency: 1,
    stopOnFailure: true,
    rollout: { healthGate: { minReadySeconds: 0 }, metricGates },
  });

interface NodeChange {
  readonly at: number;
  readonly node: string;
  readonly lock?: string;
  readonly cordoned: boolean;
}

/** Each announced change of a worker: its lock (drydock.dev/operation) and whether it is cordoned. */
function changes(log: ApiLog): NodeChange[] {
  log.assertWhole();
  const out: NodeChange[] = [];
  replay(log.events, (e) => {
    const n = e.obj as {
      metadata?: { name?: string; annotations?: Record<string, string> };
      spec?: { unschedulable?: boolean };
    };
    const lock = n.metadata?.annotations?.['drydock.dev/operation'];
    out.push({
      at: e.at,
      node: n.metadata?.name ?? '',
      ...(lock !== undefined ? { lock } : {}),
      cordoned: n.spec?.unschedulable === true,
    });
  });
  return out;
}

/** Nodes `op` took (locked) after `since`, and nodes cordoned after `since` that it had not locked before. */
function startsAfter(log: ApiLog, op: string, since: number): { locked: string[]; cordoned: string[] } {
  const heldBefore = new Set<string>();
  const locked = new Set<string>();
  const cordoned = new Set<string>();
  const last = new Map<string, NodeChange>();
  for (const c of changes(log)) {
    const prev = last.get(c.node);
    last.set(c.node, c);
    const mine = c.lock?.startsWith(`NodeOp/${op}@`) === true;
    if (c.at <= since) {
      if (mine) heldBefore.add(c.node);
      continue;
    }
    if (mine && !prev?.lock?.startsWith(`NodeOp/${op}@`)) locked.add(c.node);
    if (c.cordoned && prev?.cordoned !== true && !heldBefore.has(c.node)) cordoned.add(c.node);
  }
  return { locked: [...locked], cordoned: [...cordoned] };
}

describe('e2e: metric gates from a real Prometheus and Alertmanager', function () {
  this.timeout(120_000);
  // Prometheus first: without its binaries the block is skipped before a control plane starts.
  const prom = usePrometheus();
  const cp = useControlPlane({ jobPods: 'host' });
  let sim: RunningSimCloud;
  let repo: FleetRepo;
  let drydock: DrydockChild | undefined;
  let args: string[] = [];
  const log = new ApiLog();
  const dirs: string[] = [];

  const status = async (op: string): Promise<string> => (await repo.statusFile(`status/NodeOp/${op}.yaml`)) ?? '';
  const done = async (op: string): Promise<string[]> => {
    const out: string[] = [];
    log.assertWhole();
    const latest = new Map<string, Record<string, string>>();
    replay(log.events, (e) => latest.set(e.obj.metadata?.name ?? '', e.obj.metadata?.annotations ?? {}));
    for (const [name, a] of latest)
      if (a[`nodeop.drydock.dev/${op}`] !== undefined && a['drydock.dev/operation'] === undefined) out.push(name);
    return out.sort();
  };

  before(async function () {
    this.timeout(120_000);
    await log.start(cp().adminKubeConfig(), { nodes: '/api/v1/nodes' });
    ({ sim, repo, drydock, args } = await startWorkerWorld(cp(), dirs, {
      name: 'metrics',
      size: 3,
      host: { rebootSeconds: 1, jobRunSeconds: 2 },
      files: { 'drydock.yaml': OPS_REPO_CONFIG, 'ops/.keep': '' },
    }));
  });

  after(async function () {
    this.timeout(30_000);
    log.stop();
    await stopWorld({ drydock, sim, repo, dirs });
  });

  it('an alert fired mid-rollout holds the next node; clearing it resumes', async () => {
    const op = 'alerted';
    await repo.push(
      { 'ops/alerted.yaml': nodeOp(op, { prometheus: prom().prometheus, alerts: [{ name: 'WorldUnwell' }] }) },
      'ops: a NodeOp under an alert gate',
    );
    await eventually(
      'the first node taken',
      async () => (await done(op)).length > 0 || startsAfter(log, op, 0).locked.length > 0,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    prom().set('world_unwell', 1);
    await prom().alertState('WorldUnwell', 'firing');
    await eventually(
      'drydock reports the hold',
      async () => /metric gate breached: alert WorldUnwell\{/.test(await status(op)),
      { timeoutMs: 30_000 },
    );
    const held = Date.now();
    // Held for a while: the node in flight may finish, no other starts.
    await new Promise((r) => setTimeout(r, 6000));
    assert.deepEqual(
      startsAfter(log, op, held),
      { locked: [], cordoned: [] },
      'nothing new taken or cordoned while the alert fires',
    );
    assert.ok((await done(op)).length < WORKERS.length, 'the rollout is not through');
    prom().set('world_unwell', 0);
    await prom().alertState('WorldUnwell', 'inactive');
    const cleared = Date.now();
    await eventually('every worker done', async () => (await done(op)).length === WORKERS.length, {
      timeoutMs: 45_000,
    });
    assert.ok(startsAfter(log, op, cleared).locked.length > 0, 'a node started once the alert cleared');
  });

  it('an alert silenced in Alertmanager does not hold', async () => {
    const op = 'silenced';
    const id = await prom().silence('WorldUnwell');
    prom().set('world_unwell', 1);
    await prom().alertState('WorldUnwell', 'firing');
    await repo.push(
      {
        'ops/silenced.yaml': nodeOp(op, {
          prometheus: prom().prometheus,
          alertmanager: prom().alertmanager,
          alerts: [{ name: 'WorldUnwell' }],
        }),
      },
      'ops: a NodeOp under a silenced alert',
    );
    await eventually('every worker done', async () => (await done(op)).length === WORKERS.length, {
      timeoutMs: 45_000,
    });
    assert.doesNotMatch(await status(op), /metric gate breached/);
    await prom().expire(id);
    prom().set('world_unwell', 0);
  });

  it('a PromQL threshold breached halts: no node is taken and the spec is Stalled; it outlasts the breach and a restart, and a resume Approval lets it go on', async function () {
    this.timeout(240_000);
    const op = 'halted';
    prom().set('world_errors', 1);
    await eventually('Prometheus has scraped the errors', async () => {
      const r = (await (await fetch(`${prom().prometheus}/api/v1/query?query=max(world_errors)`)).json()) as {
        data: { result: { value: [number, string] }[] };
      };
      return r.data.result[0]?.value[1] === '1';
    });
    const pushed = Date.now();
    await repo.push(
      {
        'ops/halted.yaml': nodeOp(op, {
          prometheus: prom().prometheus,
          onBreach: 'halt',
          queries: [{ name: 'errors', query: 'max(world_errors)', above: 0.5 }],
        }),
      },
      'ops: a NodeOp under a query gate that halts',
    );
    const text = await eventually(
      'drydock reports the halt',
      async () => {
        const s = await status(op);
        return /rollout halted: metric gate breached: query errors 1 > 0\.5/.test(s) ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.match(text, /type: Stalled\n\s+status: "True"/);
    assert.deepEqual(startsAfter(log, op, pushed).locked, []);

    // The breach clears and drydock is killed: the restarted one reads the halt back and keeps it.
    prom().set('world_errors', 0);
    await eventually('Prometheus has scraped the cleared errors', async () => {
      const r = (await (await fetch(`${prom().prometheus}/api/v1/query?query=max(world_errors)`)).json()) as {
        data: { result: { value: [number, string] }[] };
      };
      return r.data.result[0]?.value[1] === '0';
    });
    drydock?.kill('SIGKILL');
    await drydock?.exited;
    drydock = startDrydockChild(args);
    await afterLeaderRounds(drydock, 3);
    // The restarted drydock's own words: the halt it read back, no longer the live breach.
    const kept = await eventually(
      'the restarted drydock reports the halt it read back',
      async () => {
        const s = await status(op);
        return /rollout halted: metric gate breached: query errors 1 > 0\.5 since .*\(halted since /.test(s)
          ? s
          : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.deepEqual(startsAfter(log, op, pushed).locked, [], 'still halted after the restart and the clear');

    // The resume file the status names, merged as a person would: the rollout goes on, once on each node.
    const wanted = (parse(kept) as { approvalFile?: { path: string; content: string } }).approvalFile;
    assert.ok(wanted !== undefined, `the halted status names the file that resumes it:\n${kept}`);
    assert.match(wanted.path, /approvals\/halted-resume\.yaml$/);
    assert.match(wanted.content, /stage: resume/);
    await repo.push({ [wanted.path]: wanted.content }, 'approve: resume the halted NodeOp');
    await eventually(
      'every worker patched once',
      async () => {
        const patched = await done(op);
        assert.equal(
          patched.length,
          WORKERS.length,
          `patched ${patched.join(', ')}; the status says:\n${await status(op)}`,
        );
        return true;
      },
      { timeoutMs: 90_000 },
    );
    assert.deepEqual((await done(op)).sort(), [...WORKERS].sort());
    assert.doesNotMatch(await status(op), /rollout halted/);
  });

  it('Prometheus stopped is a wait, not a pass', async () => {
    const op = 'unreachable';
    await prom().stopPrometheus();
    const pushed = Date.now();
    await repo.push(
      {
        'ops/unreachable.yaml': nodeOp(op, {
          prometheus: prom().prometheus,
          timeout: '1s',
          alerts: [{ name: 'WorldUnwell' }],
        }),
      },
      'ops: a NodeOp whose Prometheus is down',
    );
    await eventually(
      'drydock reports Prometheus unreachable',
      async () => (await status(op)).includes(`Prometheus at ${prom().prometheus} unreachable`),
      { timeoutMs: 30_000 },
    );
    await new Promise((r) => setTimeout(r, 3000));
    assert.deepEqual(startsAfter(log, op, pushed), { locked: [], cordoned: [] });
    assert.deepEqual(await done(op), []);
  });
});
