/**
 * End to end, driven only by Git commits: a Bottlerocket NodeImage (strategy inPlace, updater
 * bottlerocket) on the real control plane, whose sim hosts play Bottlerocket (they stage what
 * the update Job asks the update API for, and boot it on the reboot the API is asked for).
 * Budget, Jobs, reboot pods and reboots are read from watches on the API server (api-watch.ts),
 * never from drydock's logs; versions from what the nodes report in status.nodeInfo.osImage.
 * The tests run in order on one fleet: 1.19.2 → 1.20.3 (pinned) → latest (1.21.0, while
 * 1.21.1 is published) → 1.21.1 on a node that boots back into its old version.
 */
import assert from 'node:assert/strict';
import { CoreV1Api, type KubeConfig, type V1Job, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { SimHttpProvider } from '../../src/cloud/sim/http-client.js';
import { BOTTLEROCKET_UPDATE_ENV } from '../../src/execute/jobs/bottlerocket-update.js';
import { JOB_NAME_LABEL } from '../../src/protocol/job-outcome.js';
import { ANNOTATIONS, bottlerocketRecordKey, JOB_LABELS } from '../../src/protocol/keys.js';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import { ApiLog, replay, type Announced } from './api-watch.js';
import {
  OPS_REPO_CONFIG,
  specDoc,
  startWorkerWorld,
  stopWorld,
  viewNode,
  type DrydockChild,
  type FleetRepo,
  type NodeView,
} from './world.js';

const NS = 'drydock-system';
const BUDGET = 2;
const VARIANT = 'aws-k8s-1.30';
const os = (version: string): string => `Bottlerocket OS ${version} (${VARIANT})`;
/** The node whose new partition fails to boot: Bottlerocket falls back to the old one. */
const FALLS_BACK = 'workers-i-0001';
/** The rest of the group: the fleet the first two tests update. */
const FLEET = ['workers-i-0002', 'workers-i-0003', 'workers-i-0004', 'workers-i-0005', 'workers-i-0006'];
const GROUP = {
  image: `bottlerocket-${VARIANT}`,
  bottlerocket: {
    version: '1.19.2',
    variant: VARIANT,
    available: ['1.19.2', '1.20.3', '1.21.0'],
    faults: [{ kind: 'bootsOldVersion', nodes: [FALLS_BACK] }],
  },
};

function bottlerocketDoc(name: string, image: string, nodes: readonly string[], concurrency: number): string {
  return specDoc('NodeImage', name, {
    image,
    strategy: 'inPlace',
    inPlace: { updater: 'bottlerocket' },
    nodeSelector: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: nodes }] },
    rollout: { concurrency, stopOnFailure: true, drain: { enabled: false }, healthGate: { minReadySeconds: 1 } },
  });
}

interface Status {
  phase?: string;
  progress?: { done: number; total: number };
  resolvedImage?: string;
  lastError?: string;
  waitingFor?: string;
}

async function statusOf(repo: FleetRepo, name: string): Promise<Status> {
  return (parse((await repo.statusFile(`status/NodeImage/${name}.yaml`)) ?? '{}') ?? {}) as Status;
}

async function groupNodes(kc: KubeConfig): Promise<Map<string, NodeView & { osImage: string; bootID: string }>> {
  const list = await kc.makeApiClient(CoreV1Api).listNode({ labelSelector: 'sim.drydock.dev/group=workers' });
  return new Map(
    list.items.map((n) => [
      n.metadata?.name ?? '',
      { ...viewNode(n), osImage: n.status?.nodeInfo?.osImage ?? '', bootID: n.status?.nodeInfo?.bootID ?? '' },
    ]),
  );
}

/** Drydock's Jobs and reboot pods (ADDED, by uid) of NodeImage `name`, per node and step, from `from` on. */
function created(events: readonly Announced[], name: string, from: number): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const e of events.slice(from)) {
    const l = e.obj.metadata?.labels ?? {};
    if (e.type !== 'ADDED' || l[JOB_LABELS.managedBy] !== 'drydock' || l[JOB_LABELS.operation] !== `NodeImage.${name}`)
      continue;
    // A Job's own pods carry the Job's labels too: pods count only as reboot pods.
    if (e.source === 'pod' && l[JOB_LABELS.step] !== 'reboot') continue;
    const key = `${l[JOB_LABELS.node]} ${l[JOB_LABELS.step]}`;
    out.set(key, (out.get(key) ?? new Set()).add(e.obj.metadata?.uid ?? ''));
  }
  return out;
}

/** bootID changes per node announced from event `from` on. */
function reboots(events: readonly Announced[], from: number): Map<string, number> {
  const last = new Map<string, string>();
  const out = new Map<string, number>();
  events.forEach((e, i) => {
    if (e.source !== 'node') return;
    const name = e.obj.metadata?.name ?? '';
    const boot = (e.obj as V1Node).status?.nodeInfo?.bootID ?? '';
    const was = last.get(name);
    if (i >= from && was !== undefined && boot !== '' && was !== boot) out.set(name, (out.get(name) ?? 0) + 1);
    if (boot !== '') last.set(name, boot);
  });
  return out;
}

/** The most nodes of the group unavailable at once (cordoned, or not Ready) over the whole log. */
function mostUnavailable(events: readonly Announced[]): { most: number; at: string } {
  let most = 0;
  let at = '';
  replay(events, (e, state) => {
    if (e.source !== 'node') return;
    const down = [...(state.get('node')?.values() ?? [])]
      .map((n) => viewNode(n as V1Node))
      .filter((n) => n.group === 'workers' && (n.unschedulable || !n.ready))
      .map((n) => n.name);
    if (down.length > most) [most, at] = [down.length, down.join(', ')];
  });
  return { most, at };
}

/** The version each node's update Job of NodeImage `name` was given, and when its Job first succeeded. */
function updateJobs(
  events: readonly Announced[],
  name: string,
): Map<string, { version: string; succeededAt?: number }> {
  const out = new Map<string, { version: string; succeededAt?: number }>();
  /** The node of each update Job, by the Job's name. */
  const nodeOf = new Map<string, string>();
  const succeeded = (node: string, at: number): void => {
    const was = out.get(node);
    if (was !== undefined && was.succeededAt === undefined) out.set(node, { ...was, succeededAt: at });
  };
  for (const e of events) {
    const l = e.obj.metadata?.labels ?? {};
    if (e.source === 'pod') {
      // The Job's pod ending Succeeded is the Job's success, as drydock reads it (job-outcome.ts).
      const node = nodeOf.get(l[JOB_NAME_LABEL] ?? '');
      if (node !== undefined && (e.obj as V1Pod).status?.phase === 'Succeeded') succeeded(node, e.at);
      continue;
    }
    if (e.source !== 'job' || l[JOB_LABELS.operation] !== `NodeImage.${name}`) continue;
    const job = e.obj as V1Job;
    const env = job.spec?.template.spec?.containers.flatMap((c) => c.env ?? []) ?? [];
    const version = env.find((v) => v.name === BOTTLEROCKET_UPDATE_ENV.version)?.value ?? '';
    const node = l[JOB_LABELS.node] ?? '';
    nodeOf.set(job.metadata?.name ?? '', node);
    if (!out.has(node)) out.set(node, { version });
    if ((job.status?.succeeded ?? 0) > 0) succeeded(node, e.at);
  }
  return out;
}

describe('e2e: Bottlerocket in place on the real control plane', function () {
  this.timeout(240_000);
  const cp = useControlPlane({ jobPods: 'host' });
  let sim: RunningSimCloud | undefined;
  let repo: FleetRepo | undefined;
  let drydock: DrydockChild | undefined;
  const dirs: string[] = [];
  const log = new ApiLog();

  before(async function () {
    this.timeout(120_000);
    ({ sim, repo, drydock } = await startWorkerWorld(cp(), dirs, {
      name: 'bottlerocket',
      size: 6,
      group: GROUP,
      host: { rebootSeconds: 2, jobRunSeconds: 1 },
      files: { 'drydock.yaml': OPS_REPO_CONFIG, 'ops/.keep': '' },
    }));
    await log.start(cp().adminKubeConfig(), {
      node: '/api/v1/nodes',
      job: `/apis/batch/v1/namespaces/${NS}/jobs`,
      pod: `/api/v1/namespaces/${NS}/pods`,
    });
  });

  after(async function () {
    this.timeout(30_000);
    log.stop();
    await stopWorld({ drydock, sim, repo, dirs });
  });

  it(`pinned 1.20.3 over ${FLEET.length} nodes, budget ${BUDGET}: each node staged once, rebooted once, reports 1.20.3`, async () => {
    assert.ok(repo);
    const kc = cp().adminKubeConfig();
    const from = log.events.length;
    // Concurrency above the budget: the cluster budget is what holds the rollout to two at a time.
    await repo.push(
      { 'ops/pinned.yaml': bottlerocketDoc('pinned', '1.20.3', FLEET, FLEET.length) },
      'images: Bottlerocket 1.20.3',
    );
    await eventually(
      'every fleet node on 1.20.3, released, status Complete',
      async () => {
        const ns = await groupNodes(kc);
        const on = FLEET.filter((f) => {
          const n = ns.get(f);
          return n?.osImage === os('1.20.3') && n.annotations[ANNOTATIONS.operation] === undefined && !n.unschedulable;
        });
        return on.length === FLEET.length && (await statusOf(repo!, 'pinned')).phase === 'Complete';
      },
      { timeoutMs: 150_000, intervalMs: 300 },
    );
    const { most, at } = mostUnavailable(log.events);
    assert.equal(most, BUDGET, `at most ${BUDGET} nodes unavailable at once, and the budget was reached (${at})`);
    const made = created(log.events, 'pinned', from);
    const booted = reboots(log.events, from);
    const ns = await groupNodes(kc);
    for (const f of FLEET) {
      assert.equal(made.get(`${f} operation`)?.size, 1, `${f}: one update Job`);
      assert.equal(made.get(`${f} reboot`)?.size, 1, `${f}: one reboot pod`);
      assert.equal(booted.get(f), 1, `${f}: rebooted once`);
      assert.equal(ns.get(f)?.annotations[ANNOTATIONS.image], '1.20.3', `${f}: recorded`);
    }
    assert.equal(ns.get(FALLS_BACK)?.osImage, os('1.19.2'), 'the node not selected is untouched');
    assert.equal(booted.get(FALLS_BACK), undefined);
    const s = await statusOf(repo, 'pinned');
    assert.deepEqual(s.progress, { done: FLEET.length, total: FLEET.length });
    assert.equal(s.resolvedImage, '1.20.3');
  });

  it('latest, with a newer release published once the first node resolved it: the fleet ends on the version resolved first', async () => {
    assert.ok(repo && sim);
    const kc = cp().adminKubeConfig();
    const from = log.events.length;
    const key = bottlerocketRecordKey('latest');
    await repo.push(
      { 'ops/pinned.yaml': null, 'ops/latest.yaml': bottlerocketDoc('latest', 'latest', FLEET, FLEET.length) },
      'images: Bottlerocket latest',
    );
    const resolvedOn = await eventually(
      'the first node resolved latest',
      async () => [...(await groupNodes(kc)).values()].find((n) => n.annotations[key] !== undefined),
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    await new SimHttpProvider(sim.url).publishBottlerocketRelease('workers', '1.21.1');
    const publishedAt = Date.now();
    assert.equal(resolvedOn.name, FLEET[0], 'the first node by name resolves it');
    assert.match(resolvedOn.annotations[key] ?? '', / 1\.21\.0$/, 'the newest above 1.20.3 when it ran');
    await eventually(
      'every fleet node on 1.21.0, released, status Complete',
      async () => {
        const ns = await groupNodes(kc);
        const on = FLEET.filter((f) => {
          const n = ns.get(f);
          return n?.osImage === os('1.21.0') && n.annotations[ANNOTATIONS.operation] === undefined;
        });
        return on.length === FLEET.length && (await statusOf(repo!, 'latest')).phase === 'Complete';
      },
      { timeoutMs: 150_000, intervalMs: 300 },
    );
    assert.ok(sim.cloud.bottlerocketGroups().get('workers')?.available.includes('1.21.1'), '1.21.1 was offered');
    const jobs = updateJobs(log.events.slice(from), 'latest');
    assert.deepEqual(
      FLEET.map((f) => [f, jobs.get(f)?.version]),
      FLEET.map((f, i) => [f, i === 0 ? 'latest' : '1.21.0']),
      'only the first Job ran unpinned',
    );
    for (const f of FLEET.slice(1))
      assert.ok((jobs.get(f)?.succeededAt ?? 0) > publishedAt, `${f}: its Job ran while 1.21.1 was offered`);
    const made = created(log.events, 'latest', from);
    const booted = reboots(log.events, from);
    for (const f of FLEET) {
      assert.equal(made.get(`${f} operation`)?.size, 1, `${f}: one update Job`);
      assert.equal(booted.get(f), 1, `${f}: rebooted once`);
    }
    const s = await statusOf(repo, 'latest');
    assert.equal(s.resolvedImage, '1.21.0');
    assert.deepEqual(s.progress, { done: FLEET.length, total: FLEET.length });
    assert.ok(mostUnavailable(log.events).most <= BUDGET);
  });

  it('a node that boots back into its old version: Failed with both versions named, the rollout halted', async () => {
    assert.ok(repo && sim);
    const kc = cp().adminKubeConfig();
    const from = log.events.length;
    const all = [FALLS_BACK, ...FLEET];
    await new SimHttpProvider(sim.url).publishBottlerocketRelease('workers', '1.21.1');
    const before = await groupNodes(kc);
    await repo.push(
      { 'ops/latest.yaml': null, 'ops/fallback.yaml': bottlerocketDoc('fallback', '1.21.1', all, 1) },
      'images: Bottlerocket 1.21.1',
    );
    const halted = await eventually(
      'fallback halted',
      async () => {
        const s = await statusOf(repo!, 'fallback');
        return s.phase === 'Halted' ? s : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 300 },
    );
    const ns = await groupNodes(kc);
    const failed = ns.get(FALLS_BACK);
    assert.equal(failed?.annotations[ANNOTATIONS.phase], 'Failed');
    assert.equal(failed?.osImage, os('1.19.2'), 'it reports the version it fell back to');
    assert.equal(failed?.unschedulable, false, 'uncordoned');
    const reason = failed?.annotations[ANNOTATIONS.reason] ?? '';
    assert.match(reason, /Bottlerocket 1\.19\.2, not the target 1\.21\.1/);
    const text = `${halted.lastError ?? ''} ${halted.waitingFor ?? ''}`;
    assert.ok(text.includes('1.19.2') && text.includes('1.21.1'), `status names both versions: ${text}`);
    assert.match(halted.waitingFor ?? '', /stopOnFailure/);
    const made = created(log.events, 'fallback', from);
    assert.equal(made.get(`${FALLS_BACK} operation`)?.size, 1, 'one update Job');
    assert.equal(made.get(`${FALLS_BACK} reboot`)?.size, 1, 'one reboot pod');
    assert.equal(reboots(log.events, from).get(FALLS_BACK), 1, 'rebooted once');
    for (const f of FLEET) {
      assert.equal(made.get(`${f} operation`), undefined, `${f}: never started`);
      assert.equal(ns.get(f)?.annotations[ANNOTATIONS.operation], undefined, `${f}: not locked`);
      assert.equal(ns.get(f)?.osImage, before.get(f)?.osImage, `${f}: on the version it ran`);
    }
  });
});
