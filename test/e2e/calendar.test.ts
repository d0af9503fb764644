/**
 * End to end, driven only by Git commits: the shared calendar on an in-place kind (NodeOps
 * without reboot over three workers), on the real control plane with the sim hosts playing the
 * Job pods. What happened is read from the API server (node records and phases) and from the
 * status branch, never from drydock's logs.
 * - afterCanary approval: the canary node goes alone, the rest wait; an approval naming another
 *   revision does not unblock them, the one naming this revision does, and its author is recorded.
 * - A MaintenanceWindow that closes mid-rollout: the node in flight finishes, no new node starts,
 *   status says when the window opens again (in its zone and in UTC).
 * - A health gate that times out: the node fails, stopOnFailure halts, status says why.
 */
import assert from 'node:assert/strict';
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { parse, stringify } from 'yaml';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import { ANNOTATIONS, nodeOpRecordKey } from '../../src/protocol/keys.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import { notifyWebhook, specDoc, startWorkerWorld, stopWorld, type DrydockChild, type FleetRepo } from './world.js';

const WORKERS = 'sim.drydock.dev/group=workers';
/** Seconds a Job pod runs on a sim host: long enough to commit while a node is in flight. */
const JOB_SECONDS = 4;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function workers(kc: KubeConfig): Promise<V1Node[]> {
  return (await kc.makeApiClient(CoreV1Api).listNode({ labelSelector: WORKERS })).items;
}

/** The workers that carry NodeOp `op`'s record (its Job succeeded there), sorted. */
async function records(kc: KubeConfig, op: string): Promise<string[]> {
  return (await workers(kc))
    .filter((n) => n.metadata?.annotations?.[nodeOpRecordKey(op)] !== undefined)
    .map((n) => n.metadata?.name ?? '')
    .sort();
}

/** The workers an operation holds right now (a drydock phase other than Done), by name. */
async function inFlight(kc: KubeConfig): Promise<Map<string, string>> {
  const held = new Map<string, string>();
  for (const n of await workers(kc)) {
    const phase = n.metadata?.annotations?.[ANNOTATIONS.phase];
    if (phase !== undefined && phase !== 'Done') held.set(n.metadata?.name ?? '', phase);
  }
  return held;
}

/** A NodeOp over every worker, one node at a time, halting on a failure. */
const nodeOp = (name: string, rollout: Record<string, unknown>): string =>
  specDoc('NodeOp', name, {
    nodeSelector: { matchLabels: { 'sim.drydock.dev/group': 'workers' } },
    image: 'busybox:1.36',
    command: ['sh', '-c', 'true'],
    cordon: true,
    rebootOnSuccess: false,
    backoffLimit: 0,
    concurrency: 1,
    stopOnFailure: true,
    rollout: { healthGate: { minReadySeconds: 1, timeout: '30s' }, ...rollout },
  });

interface OpStatus {
  revision?: string;
  sourceCommit?: string;
  phase?: string;
  progress?: { done: number; total: number };
  waitingFor?: string;
  lastError?: string;
  approvals?: { stage: string; name: string; approvedBy?: { name: string; email: string; commit: string } }[];
  nodes?: { node: string; phase: string }[];
  approvalFile?: { path: string; content: string };
}

describe('e2e: one calendar for in-place kinds', function () {
  this.timeout(180_000);
  const cp = useControlPlane({ jobPods: 'host' });
  let sim: RunningSimCloud;
  let repo: FleetRepo;
  let drydock: DrydockChild | undefined;
  let url = '';
  const dirs: string[] = [];

  /** The status document of NodeOp `name`, parsed, once `ok` holds for it. */
  const statusWhen = (
    what: string,
    name: string,
    ok: (s: OpStatus) => boolean,
    timeoutMs = 60_000,
  ): Promise<OpStatus> =>
    eventually(
      what,
      async () => {
        const text = await repo.statusFile(`status/NodeOp/${name}.yaml`);
        const s = text === undefined ? undefined : (parse(text) as OpStatus);
        return s !== undefined && ok(s) ? s : undefined;
      },
      { timeoutMs, intervalMs: 200 },
    );

  /** Commits `files` and tells drydock at once; resolves to the commit id. */
  const commit = async (files: Record<string, string | null>, message: string): Promise<string> => {
    const id = await repo.push(files, message);
    await notifyWebhook(url);
    return id;
  };

  before(async function () {
    this.timeout(120_000);
    const repoConfig = stringify({
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'RepoConfig',
      cluster: 'e2e',
      budget: { maxUnavailable: 2 },
      paths: ['ops', 'approvals'],
      statusBranch: 'drydock/status',
    });
    ({ sim, repo, drydock, url } = await startWorkerWorld(cp(), dirs, {
      name: 'calendar',
      size: 3,
      host: { rebootSeconds: 1, jobRunSeconds: JOB_SECONDS },
      files: { 'drydock.yaml': repoConfig, 'ops/.keep': '', 'approvals/.keep': '' },
    }));
  });

  after(async function () {
    this.timeout(30_000);
    await stopWorld({ drydock, sim, repo, dirs });
  });

  it('afterCanary: the rest waits; an approval of another revision does not count, the right one does and names its author', async () => {
    const kc = cp().adminKubeConfig();
    await commit(
      {
        'ops/patch.yaml': nodeOp('patch', {
          canary: { nodes: 1, soak: '1s' },
          approval: { required: 'afterCanary' },
        }),
      },
      'ops: patch the workers, canary first',
    );
    const waiting = await statusWhen('the rest waiting for the afterCanary approval', 'patch', (s) =>
      /approval needed \(after the canary wave\)/.test(s.waitingFor ?? ''),
    );
    assert.equal((await records(kc, 'patch')).length, 1, 'only the canary node ran');
    const revision = waiting.revision;
    assert.ok(revision !== undefined && /^[0-9a-f]{16}$/.test(revision), 'status names the revision to approve');
    assert.match(waiting.waitingFor ?? '', new RegExp(`approvals/patch-after-canary\\.yaml .*revision ${revision}`));
    // The file the wait asks for, with its fields as the Approval schema spells them.
    const approval = (rev: string): string =>
      specDoc('Approval', 'patch-after-canary', {
        target: { kind: 'NodeOp', name: 'patch' },
        revision: rev,
        stage: 'afterCanary',
      });
    const other = revision.replace(/^./, (c) => (c === '0' ? '1' : '0'));

    const wrong = await commit({ 'approvals/patch-after-canary.yaml': approval(other) }, 'approve: another revision');
    const read = await statusWhen('the approval of another revision is read', 'patch', (s) => s.sourceCommit === wrong);
    assert.match(read.waitingFor ?? '', /approval needed \(after the canary wave\)/);
    assert.equal(read.approvals, undefined, 'an approval of another revision is not in force');
    await sleep(3000);
    assert.equal((await records(kc, 'patch')).length, 1, 'an approval of another revision unblocks nothing');
    assert.equal((await inFlight(kc)).size, 0, 'no node started after the approval of another revision');

    // The status file shows the exact file to merge; merged as shown, it is the right approval.
    const shown = waiting.approvalFile;
    assert.equal(shown?.path, 'approvals/patch-after-canary.yaml');
    assert.match(shown.content, new RegExp(`revision: ${revision}\n`));
    const right = await commit({ [shown.path]: shown.content }, 'approve: this revision, as status shows it');
    const complete = await statusWhen('every worker done', 'patch', (s) => s.phase === 'Complete', 90_000);
    assert.equal((await records(kc, 'patch')).length, 3);
    assert.deepEqual(
      (complete.approvals ?? []).map((a) => ({
        stage: a.stage,
        by: { name: a.approvedBy?.name, email: a.approvedBy?.email, commit: a.approvedBy?.commit },
      })),
      [{ stage: 'afterCanary', by: { name: 'Ada Lovelace', email: 'ada@example.com', commit: right } }],
      'the approver is the author of the commit that merged the right approval',
    );
  });

  it('a window that closes mid-rollout: the node in flight finishes, no new node starts, status names the next opening', async () => {
    const kc = cp().adminKubeConfig();
    // Asia/Tokyo has no daylight saving: 9 hours ahead of UTC all year, so the opening is checkable by hand.
    const window = (exclusions: unknown[]): string =>
      specDoc('MaintenanceWindow', 'always', {
        timeZone: 'Asia/Tokyo',
        schedules: [{ cron: '* * * * *', duration: '1h' }],
        exclusions,
      });
    await commit(
      { 'ops/window.yaml': window([]), 'ops/tune.yaml': nodeOp('tune', { window: 'always' }) },
      'ops: tune the workers inside the window',
    );
    const first = await eventually('a worker in flight', async () => [...(await inFlight(kc)).keys()][0], {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    assert.deepEqual(await records(kc, 'tune'), [], 'the window closes before any node finished');

    // A freeze from now until a whole minute two hours ahead: the window closes at once.
    const reopen = new Date(Math.ceil((Date.now() + 2 * 3600_000) / 60_000) * 60_000);
    const freeze = { start: new Date(Date.now() - 60_000).toISOString(), end: reopen.toISOString(), reason: 'freeze' };
    const frozen = await commit({ 'ops/window.yaml': window([freeze]) }, 'window: release freeze');
    const utc = reopen.toISOString().slice(0, 16).replace('T', ' ');
    const tokyo = new Date(reopen.getTime() + 9 * 3600_000).toISOString().slice(0, 16).replace('T', ' ');
    const waiting = await statusWhen(
      'the node in flight done and the window wait in status',
      'tune',
      (s) => s.sourceCommit === frozen && /waiting for window always/.test(s.waitingFor ?? ''),
    );
    assert.equal(waiting.waitingFor, `waiting for window always, opens ${tokyo} Asia/Tokyo (${utc} UTC)`);
    await eventually('the node in flight finished', async () => (await records(kc, 'tune')).includes(first), {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    await eventually('no node held', async () => (await inFlight(kc)).size === 0, { timeoutMs: 30_000 });
    await sleep(3000);
    assert.deepEqual(await records(kc, 'tune'), [first], 'only the node in flight ran; no new node started');
    assert.equal((await inFlight(kc)).size, 0, 'no node started after the window closed');
    // The status commit trails the node's Done round: wait for the one that counts it.
    const after = await statusWhen(
      'status counts the node done and still waits for the window',
      'tune',
      (s) => s.sourceCommit === frozen && s.progress?.done === 1,
    );
    assert.equal(after.waitingFor, waiting.waitingFor);
    assert.equal(after.progress?.done, 1);
  });

  it('a health gate that times out fails the node and stopOnFailure halts the rest, with the reason in status', async () => {
    const kc = cp().adminKubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    // A workload pod on every worker that is not Ready: whichever node goes first cannot pass its gate.
    for (const n of await workers(kc)) {
      const node = n.metadata?.name ?? '';
      await core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: `app-${node}` },
          spec: { nodeName: node, containers: [{ name: 'app', image: 'registry.example/app:1' }] },
        },
      });
    }
    await eventually(
      'the workload pods Running, then made not Ready',
      async () => {
        for (const n of await workers(kc)) {
          const name = `app-${n.metadata?.name ?? ''}`;
          const pod = await core.readNamespacedPodStatus({ name, namespace: 'default' });
          if (pod.status?.phase !== 'Running') return false;
          const conditions = (pod.status.conditions ?? []).map((c) =>
            c.type === 'Ready' || c.type === 'ContainersReady' ? { ...c, status: 'False', reason: 'Probe' } : c,
          );
          await core.replaceNamespacedPodStatus({
            name,
            namespace: 'default',
            body: { ...pod, status: { ...pod.status, conditions } },
          });
        }
        return true;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    await commit(
      { 'ops/check.yaml': nodeOp('check', { healthGate: { minReadySeconds: 1, timeout: '2s' } }) },
      'ops: check the workers, gate within 2s',
    );
    const halted = await statusWhen('the spec halted', 'check', (s) => s.phase === 'Halted', 90_000);
    const failed = (halted.nodes ?? []).filter((n) => n.phase === 'Failed').map((n) => n.node);
    assert.equal(failed.length, 1, 'one node failed');
    const node = failed[0] ?? '';
    assert.match(
      halted.lastError ?? '',
      new RegExp(`node ${node} did not pass the health gate within 2s \\(pod default/app-${node} is not Ready\\)`),
    );
    assert.match(halted.waitingFor ?? '', new RegExp(`stopOnFailure: node ${node} failed`));
    await sleep(3000);
    const others = (names: Iterable<string>): string[] => [...names].filter((n) => n !== node);
    assert.deepEqual(others(await records(kc, 'check')), [], 'no other node ran its Job');
    assert.deepEqual(others((await inFlight(kc)).keys()), [], 'no other node started after the halt');
  });
});
