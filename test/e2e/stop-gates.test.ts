/**
 * End to end, driven only by Git commits, on the real control plane with sim hosts playing the
 * Job pods: a failure budget that goes on after one failed node and halts at the second, a
 * pause commit that holds a rollout mid-way (nothing new cordoned, as a watch of the API server
 * saw it) until its removal resumes it, and budgets by window (built around now) that let three
 * nodes go at once where the other holds them to one.
 */
import assert from 'node:assert/strict';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import { ApiLog, cordonedNodes, replay } from './api-watch.js';
import { afterRounds, specDoc, startWorkerWorld, stopWorld, type DrydockChild, type FleetRepo } from './world.js';

const node = (i: number): string => `workers-i-${String(i).padStart(4, '0')}`;
/** The failure budget's nodes 1–4 (2 and 3 fail every Job); the pause's and the windows' 5–8. */
const BUDGET_NODES = [1, 2, 3, 4].map(node);
const LATER_NODES = [5, 6, 7, 8].map(node);

function config(budget: Record<string, unknown> = { maxUnavailable: 2 }): string {
  return stringify({
    apiVersion: 'drydock.dev/v1alpha1',
    kind: 'RepoConfig',
    cluster: 'e2e',
    budget,
    paths: ['ops'],
    statusBranch: 'drydock/status',
  });
}

function nodeOp(name: string, nodes: readonly string[], o: Record<string, unknown> = {}): string {
  return specDoc('NodeOp', name, {
    nodeSelector: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: nodes }] },
    image: 'busybox:1.36',
    command: ['sh', '-c', 'echo patched'],
    cordon: true,
    backoffLimit: 0,
    concurrency: 1,
    ...o,
  });
}

async function annotations(kc: KubeConfig): Promise<Map<string, Record<string, string>>> {
  const list = await kc.makeApiClient(CoreV1Api).listNode({ labelSelector: 'sim.drydock.dev/group=workers' });
  return new Map(list.items.map((n) => [n.metadata?.name ?? '', n.metadata?.annotations ?? {}]));
}

const doneBy = (a: Record<string, string> | undefined, op: string): boolean =>
  a?.[`nodeop.drydock.dev/${op}`] !== undefined && a['drydock.dev/operation'] === undefined;

/** The most nodes of `names` cordoned at once, at any change the API server announced between `from` and `to`. */
function maxCordoned(log: ApiLog, names: readonly string[], from = 0, to = Number.POSITIVE_INFINITY): number {
  log.assertWhole();
  let max = 0;
  replay(log.events, (e, state) => {
    if (e.source !== 'nodes' || e.at < from || e.at > to) return;
    const objs = [...(state.get('nodes')?.values() ?? [])].filter((o) => names.includes(o.metadata?.name ?? ''));
    max = Math.max(max, cordonedNodes(objs));
  });
  return max;
}

/** Nodes of `names` that became cordoned between `from` and `to` (were not before their event). */
function newlyCordoned(log: ApiLog, names: readonly string[], from: number, to: number): string[] {
  const out = new Set<string>();
  const was = new Map<string, boolean>();
  for (const e of log.events) {
    const name = e.obj.metadata?.name ?? '';
    if (e.source !== 'nodes' || !names.includes(name)) continue;
    const now = (e.obj as { spec?: { unschedulable?: boolean } }).spec?.unschedulable === true;
    if (now && was.get(name) !== true && e.at >= from && e.at <= to) out.add(name);
    was.set(name, now);
  }
  return [...out];
}

describe('e2e: a failure budget, a pause from Git and budgets by window', function () {
  this.timeout(240_000);
  const cp = useControlPlane({ jobPods: 'host' });
  let sim: RunningSimCloud;
  let repo: FleetRepo;
  let drydock: DrydockChild | undefined;
  const dirs: string[] = [];
  const log = new ApiLog();

  before(async function () {
    this.timeout(120_000);
    await log.start(cp().adminKubeConfig(), { nodes: '/api/v1/nodes' });
    ({ sim, repo, drydock } = await startWorkerWorld(cp(), dirs, {
      name: 'stop-gates',
      size: 8,
      host: { jobRunSeconds: 1, failJobsOnNodes: [node(2), node(3)] },
      files: { 'drydock.yaml': config(), 'ops/.keep': '' },
    }));
  });

  after(async function () {
    this.timeout(30_000);
    log.stop();
    await stopWorld({ drydock, sim, repo, dirs });
  });

  it('maxFailures 2 goes on after one failed node and halts at the second', async () => {
    const kc = cp().adminKubeConfig();
    await repo.push(
      { 'ops/budget.yaml': nodeOp('budget', BUDGET_NODES, { rollout: { maxFailures: 2, order: 'byName' } }) },
      'ops: patch four workers, halting at the second failure',
    );
    // The status and the nodes are read together: the status file may be written before a
    // patch of the same round lands.
    const { status, a } = await eventually(
      'budget halted',
      async () => {
        const s = await repo.statusFile('status/NodeOp/budget.yaml');
        const nodes = await annotations(kc);
        const failed = [node(2), node(3)].every((n) => nodes.get(n)?.['drydock.dev/phase'] === 'Failed');
        const halted = s !== undefined && /phase: Halted/.test(s) && s.includes('maxFailures 2: 2 nodes failed');
        return halted && failed ? { status: s, a: nodes } : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    assert.ok(doneBy(a.get(node(1)), 'budget'), `${node(1)} done`);
    assert.equal(a.get(node(2))?.['drydock.dev/phase'], 'Failed');
    // After the first failed node the rollout went on: the third started, and failed too.
    assert.equal(a.get(node(3))?.['drydock.dev/phase'], 'Failed');
    assert.equal(a.get(node(4))?.['drydock.dev/operation'], undefined, `${node(4)} never started`);
    assert.match(status, /failureBudget: "?2 of 2 failures allowed: the rollout halts now/);
    assert.match(status, /rollout halted: maxFailures 2: 2 nodes failed \(workers-i-0002, workers-i-0003\)/);
    // It stays halted: more rounds start nothing.
    assert.ok(drydock);
    await afterRounds(drydock);
    assert.equal((await annotations(kc)).get(node(4))?.['drydock.dev/operation'], undefined);
    assert.equal(newlyCordoned(log, [node(4)], 0, Date.now()).length, 0, `${node(4)} was never cordoned`);
  });

  it('a pause commit holds a rollout mid-way (the node in flight finishes, nothing new is cordoned) and its removal resumes it', async () => {
    const kc = cp().adminKubeConfig();
    const spec = nodeOp('slow', LATER_NODES, { rollout: { order: 'byName' } });
    await repo.push({ 'ops/slow.yaml': spec }, 'ops: patch four more workers, one at a time');
    await eventually('the first node done', async () => doneBy((await annotations(kc)).get(node(5)), 'slow'), {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    const pausedSpec = nodeOp('slow', LATER_NODES, { rollout: { order: 'byName' }, paused: true });
    const pauseCommit = await repo.push({ 'ops/slow.yaml': pausedSpec }, 'ops: pause the patch');
    const status = await eventually(
      'status says paused',
      async () => {
        const s = await repo.statusFile('status/NodeOp/slow.yaml');
        return s !== undefined && s.includes('paused by') ? s : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const heldFrom = Date.now();
    assert.ok(
      status.includes(`paused by Ada Lovelace <ada@example.com> since commit ${pauseCommit.slice(0, 7)} (spec.paused`),
      status,
    );
    // What was in flight when the pause came finishes its node; then nothing moves.
    await eventually(
      'nothing of slow in flight',
      async () =>
        [...(await annotations(kc)).values()].every((a) => !a['drydock.dev/operation']?.startsWith('NodeOp/slow@')),
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const atPause = await annotations(kc);
    const done = LATER_NODES.filter((n) => doneBy(atPause.get(n), 'slow'));
    assert.ok(done.length >= 1 && done.length < 4, `the pause came mid-way: done ${done.join(', ')}`);
    assert.ok(drydock);
    await afterRounds(drydock);
    const held = await annotations(kc);
    assert.deepEqual(
      LATER_NODES.filter((n) => doneBy(held.get(n), 'slow')),
      done,
      'no node done while paused',
    );
    const waiting = LATER_NODES.filter((n) => !done.includes(n));
    assert.deepEqual(newlyCordoned(log, waiting, heldFrom, Date.now()), [], 'nothing new cordoned while paused');

    await repo.push({ 'ops/slow.yaml': spec }, 'ops: resume the patch');
    await eventually(
      'every node done',
      async () => {
        const a = await annotations(kc);
        return LATER_NODES.every((n) => doneBy(a.get(n), 'slow'));
      },
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    // The nodes' annotations land before the status commit of the round that saw them: wait for the
    // status to report the rollout complete, then it must no longer say paused.
    const resumed = await eventually(
      'status says Complete',
      async () => {
        const s = await repo.statusFile('status/NodeOp/slow.yaml');
        return s !== undefined && /phase: Complete/.test(s) ? s : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    assert.ok(!resumed.includes('paused by'), `the status no longer says paused:\n${resumed}`);
  });

  it('budgets by window: the night budget of 3 lets three nodes go at once, the day budget of 1 holds them to one', async () => {
    const kc = cp().adminKubeConfig();
    // A window that opened a minute ago and lasts two hours: active now, whatever the time.
    const opened = new Date(Date.now() - 60_000);
    const schedule = `${opened.getUTCMinutes()} ${opened.getUTCHours()} * * *`;
    const window = (maxUnavailable: number) => ({ maxUnavailable, schedule, duration: '2h' });
    await repo.push(
      {
        'drydock.yaml': config({ maxUnavailable: 1, windows: [window(3)] }),
        'ops/night.yaml': nodeOp('night', LATER_NODES, { concurrency: 0 }),
      },
      'ops: a night budget of 3, and a patch of four workers all at once',
    );
    const nightFrom = Date.now();
    await eventually(
      'night done',
      async () => {
        const a = await annotations(kc);
        return LATER_NODES.every((n) => doneBy(a.get(n), 'night'));
      },
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    assert.equal(maxCordoned(log, LATER_NODES, nightFrom), 3, 'three at once under the night budget');
    await eventually(
      'the README has the cluster budget section',
      async () => /## Cluster budget/.test((await repo.statusFile('README.md')) ?? ''),
      { timeoutMs: 30_000, intervalMs: 200 },
    );

    await repo.push(
      {
        'drydock.yaml': config({ maxUnavailable: 5, windows: [window(1)] }),
        'ops/day.yaml': nodeOp('day', LATER_NODES, { concurrency: 0 }),
      },
      'ops: a day budget of 1, and the same patch again',
    );
    const dayFrom = Date.now();
    await eventually(
      'day done',
      async () => {
        const a = await annotations(kc);
        return LATER_NODES.every((n) => doneBy(a.get(n), 'day'));
      },
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    assert.equal(maxCordoned(log, LATER_NODES, dayFrom), 1, 'one at a time under the day budget');
    // The status commit may trail the nodes' annotations by a round.
    await eventually(
      'the README names the day budget',
      async () =>
        /every kind: 1 node \(drydock\.yaml budget\.windows\[0\]\)/.test((await repo.statusFile('README.md')) ?? ''),
      { timeoutMs: 30_000, intervalMs: 200 },
    );
  });
});
