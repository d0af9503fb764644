/**
 * Faults, each during a replace rollout of 6 workers with the invariant monitor watching: the
 * API server restarted, etcd restarted, the Git server down (longer than the poll and retry
 * intervals), status pushes rejected repeatedly, 20 % cloud errors with throttling, boots that
 * never join, evictions refused by a PDB for a long while, and the clock jumping past a
 * maintenance window while drydock is down. Each ends with every node on the new image, the
 * status branch Complete for the pushed commit (nothing lost), and no invariant broken.
 *
 * The outages are scaled to what they must outlast, so the file fits `npm test`: the Git server
 * is down 30 s, thirty 1 s polls and three status-write backoffs (5, 10, 20 s), long enough
 * that every retry path gives up at least once and comes back; a PDB refuses evictions for
 * 15 s, several drain retries. `DRYDOCK_RELIABILITY_GIT_DOWN` and `DRYDOCK_RELIABILITY_PDB_HOLD`
 * stretch them (e.g. 3m, 2m); `DRYDOCK_RELIABILITY_SEED` seeds the cloud's faults.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AppsV1Api, CoreV1Api, PatchStrategy, PolicyV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { parseDuration } from '../../../src/duration.js';
import { eventually, useControlPlane } from '../../support/control-plane.js';
import { afterLeaderRounds, E2E_NAMESPACE, startDrydockChild, type DrydockChild } from '../world.js';
import { checkEnd } from './monitor.js';
import {
  AUTOSCALER,
  reliabilitySettings,
  replaceDone,
  specDoc,
  startReliabilityWorld,
  workerImageDoc,
  workers,
  type ReliabilityWorld,
} from './scenario.js';
import { startTcpGate, type TcpGate } from './tcp-gate.js';

const SIZE = 6;
const settings = reliabilitySettings();
const ms = (name: string, fallback: string): number => parseDuration(process.env[name] || fallback) ?? 0;
const GIT_DOWN_MS = ms('DRYDOCK_RELIABILITY_GIT_DOWN', '30s');
const PDB_HOLD_MS = ms('DRYDOCK_RELIABILITY_PDB_HOLD', '15s');
/** The sim cloud's label naming a node's group. */
const GROUP_LABEL = 'sim.drydock.dev/group';
/** The test's own finalizer, holding a web pod Terminating once it is evicted. */
const HOLD_FINALIZER = 'e2e.drydock.dev/hold';

describe('reliability: faults end in completion, nothing lost, invariants kept', function () {
  this.timeout(600_000);
  const cp = useControlPlane({ jobPods: 'host' });
  let w: ReliabilityWorld;
  let gate: TcpGate;
  let args: string[];
  let drydock: DrydockChild | undefined;
  let version = 1;

  async function restartDrydock(env: NodeJS.ProcessEnv = {}, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (drydock && drydock.proc.exitCode === null && drydock.proc.signalCode === null) {
      drydock.kill(signal);
      await drydock.exited;
    }
    drydock = startDrydockChild(args, env);
  }

  /** Pushes the next image; resolves to it and the commit. */
  async function nextImage(
    extra: Record<string, string> = {},
    rollout: Record<string, unknown> = {},
  ): Promise<{ image: string; commit: string }> {
    version += 1;
    const image = `registry.example/node-os:v${version}.0.0`;
    w.monitor.allowInstances('workers', SIZE);
    const commit = await w.repo.push(
      { 'specs/worker-image.yaml': workerImageDoc(image, rollout), ...extra },
      `images: workers to v${version}`,
    );
    return { image, commit };
  }

  async function onImage(image: string): Promise<number> {
    return (await workers(cp().adminKubeConfig())).filter((n) => n.image === image && n.ready).length;
  }

  /** Every node on `image`, the status branch Complete for `commit`, no invariant broken. */
  async function completes(image: string, commit: string, timeoutMs = 480_000): Promise<void> {
    const kc = cp().adminKubeConfig();
    await eventually(
      `every worker on ${image}, status Complete for ${commit.slice(0, 7)}`,
      async () => {
        const status = (await w.repo.statusFile('status/NodeImage/worker.yaml')) ?? '';
        return (await replaceDone(kc, w.repo, image, SIZE)) && status.includes(commit.slice(0, 7));
      },
      { timeoutMs, intervalMs: 1_000 },
    );
    const end = await checkEnd(kc, w.sim, { groups: ['workers'], autoscaler: AUTOSCALER });
    assert.deepEqual([...w.monitor.violations, ...end], []);
  }

  before(async function () {
    this.timeout(240_000);
    w = await startReliabilityWorld(cp(), SIZE);
    gate = await startTcpGate(w.repo.server.port);
    args = w.args.map((a) => (a === w.repo.url ? a.replace(w.repo.server.baseUrl, gate.url) : a));
    await restartDrydock();
  });

  after(async function () {
    this.timeout(60_000);
    if (drydock && drydock.proc.exitCode === null) {
      drydock.kill('SIGTERM');
      await drydock.exited;
    }
    w?.monitor.stop();
    await gate?.close();
    await w?.sim.stop();
    await w?.repo.close();
    for (const d of w?.dirs ?? []) rmSync(d, { recursive: true, force: true });
    process.stderr.write(
      `      (${w?.monitor.checks ?? 0} observations checked, ${w?.monitor.violations.length ?? 0} violations)\n`,
    );
  });

  for (const component of ['kube-apiserver', 'etcd'] as const) {
    it(`${component} restarted mid-rollout (down 5 s): the rollout completes`, async () => {
      const { image, commit } = await nextImage();
      await eventually('two workers replaced', async () => (await onImage(image)) >= 2, { timeoutMs: 120_000 });
      await cp().restartComponent(component, { hard: true, downMs: 5_000 });
      await completes(image, commit);
    });
  }

  it(`the Git server down ${GIT_DOWN_MS / 1000} s: the rollout goes on, the status catches up after`, async () => {
    const { image, commit } = await nextImage();
    await eventually('a worker replaced', async () => (await onImage(image)) >= 1, { timeoutMs: 120_000 });
    await gate.down();
    const downAt = Date.now();
    // Progress: instances created plus nodes on the new image (a wave takes longer than a poll).
    const progress = async (): Promise<number> =>
      w.sim.cloud.inspectGroup('workers').nextInstance + (await onImage(image));
    const before = await progress();
    await new Promise((r) => setTimeout(r, GIT_DOWN_MS));
    const during = await progress();
    await gate.up();
    assert.ok(
      during > before || (await onImage(image)) === SIZE,
      `the rollout went on while Git was down (${before} → ${during})`,
    );
    await completes(image, commit);
    process.stderr.write(`      (Git down ${Math.round((Date.now() - downAt) / 1000)} s including catch-up)\n`);
  });

  it('status pushes rejected repeatedly: the rollout completes, the report lands once they are accepted', async () => {
    const hooks = path.join(w.repo.bare, 'hooks');
    const flag = path.join(w.repo.bare, 'reject-status');
    const tries = path.join(w.repo.bare, 'rejected-status-pushes');
    writeFileSync(
      path.join(hooks, 'pre-receive'),
      `#!/bin/sh\nwhile read old new ref; do\n  if [ "$ref" = refs/heads/drydock/status ] && [ -e '${flag}' ]; then\n    echo x >> '${tries}'\n    echo 'status branch is read-only right now' >&2\n    exit 1\n  fi\ndone\n`,
    );
    chmodSync(path.join(hooks, 'pre-receive'), 0o755);
    writeFileSync(flag, '');
    try {
      const { image, commit } = await nextImage();
      await eventually('every worker on the new image', async () => (await onImage(image)) === SIZE, {
        timeoutMs: 240_000,
      });
      await eventually(
        'status pushes rejected at least 3 times',
        async () => existsSync(tries) && readFileSync(tries, 'utf8').split('\n').length > 3,
        { timeoutMs: 60_000 },
      );
      assert.ok(
        !((await w.repo.statusFile('status/NodeImage/worker.yaml')) ?? '').includes(commit.slice(0, 7)),
        'no status got through',
      );
      rmSync(flag);
      await completes(image, commit);
    } finally {
      rmSync(flag, { force: true });
    }
  });

  it('cloud errors at 20 % (half of them throttling): the rollout completes, each node replaced once', async () => {
    const faults = w.sim.cloud.faultSettings;
    await w.sim.cloud.configureFaults({
      ...faults,
      seed: settings.seed,
      throttleRate: 0.1,
      transientRate: 0.1,
      retryAfterSeconds: 1,
    });
    try {
      const first = w.sim.cloud.inspectGroup('workers').nextInstance;
      const { image, commit } = await nextImage();
      await completes(image, commit);
      assert.equal(w.sim.cloud.inspectGroup('workers').nextInstance - first, SIZE);
    } finally {
      await w.sim.cloud.configureFaults(faults);
    }
  });

  it('two boots that never join: removed, retried, no orphan instance', async () => {
    await w.sim.cloud.failNextBoots(2);
    const first = w.sim.cloud.inspectGroup('workers').nextInstance;
    // stopOnFailure (the default) would halt at the first boot that never joins, which status
    // explains; this case is about the retry: up to 3 attempts per node.
    const { image, commit } = await nextImage({}, { stopOnFailure: false });
    w.monitor.allowInstances('workers', SIZE + 2);
    await completes(image, commit);
    assert.equal(
      w.sim.cloud.inspectGroup('workers').nextInstance - first,
      SIZE + 2,
      'one more instance per failed boot',
    );
  });

  /**
   * The world's other worker groups (Bottlerocket hosts, OpenShift nodes) can hold every web pod,
   * and then replacing `workers` never meets the PDB: web is pinned to `workers` first.
   */
  async function webOnWorkers(): Promise<void> {
    const kc = cp().adminKubeConfig();
    await kc.makeApiClient(AppsV1Api).patchNamespacedDeployment({
      name: 'web',
      namespace: E2E_NAMESPACE,
      body: [{ op: 'add', path: '/spec/template/spec/nodeSelector', value: { [GROUP_LABEL]: 'workers' } }],
    });
    const onWorkers = new Set((await workers(kc)).map((n) => n.name));
    await eventually(
      'the 4 web pods Running on workers',
      async () => {
        const pods = await kc
          .makeApiClient(CoreV1Api)
          .listNamespacedPod({ namespace: E2E_NAMESPACE, labelSelector: 'app=web' });
        const where = pods.items.map((p) => `${p.metadata?.name} ${p.status?.phase} on ${p.spec?.nodeName}`);
        assert.ok(
          pods.items.length === 4 &&
            pods.items.every(
              (p) =>
                p.status?.phase === 'Running' &&
                !p.metadata?.deletionTimestamp &&
                // A pod of the template as patched (the old ones may sit on workers too, going).
                p.spec?.nodeSelector?.[GROUP_LABEL] === 'workers' &&
                onWorkers.has(p.spec?.nodeName ?? ''),
            ),
          `web pods: ${where.join(', ')}`,
        );
        return true;
      },
      { timeoutMs: 60_000 },
    );
  }

  /** Sets the web PDB's maxUnavailable: 0 refuses every eviction of a web pod. */
  async function pdbAllows(value: number): Promise<void> {
    await cp()
      .adminKubeConfig()
      .makeApiClient(PolicyV1Api)
      .patchNamespacedPodDisruptionBudget({
        name: 'web',
        namespace: E2E_NAMESPACE,
        body: [{ op: 'replace', path: '/spec/maxUnavailable', value }],
      });
  }

  const webPods = async () =>
    (
      await cp()
        .adminKubeConfig()
        .makeApiClient(CoreV1Api)
        .listNamespacedPod({ namespace: E2E_NAMESPACE, labelSelector: 'app=web' })
    ).items;

  /** The nodes a web pod runs on now; `terminating`: only those of pods being deleted. */
  async function webPodNodes(terminating: boolean): Promise<Set<string>> {
    const pods = (await webPods()).filter((p) => !terminating || p.metadata?.deletionTimestamp !== undefined);
    return new Set(pods.map((p) => p.spec?.nodeName ?? ''));
  }

  /**
   * Puts a finalizer on every web pod (`true`), or takes it off every one: a held pod, once
   * evicted, stays Terminating on its node, and the node's drain waits for it.
   */
  async function holdWebPods(hold: boolean): Promise<void> {
    const core = cp().adminKubeConfig().makeApiClient(CoreV1Api);
    for (const p of await webPods()) {
      const name = p.metadata?.name ?? '';
      const held = (p.metadata?.finalizers ?? []).includes(HOLD_FINALIZER);
      if (held === hold) continue;
      const finalizers = hold
        ? [...(p.metadata?.finalizers ?? []), HOLD_FINALIZER]
        : (p.metadata?.finalizers ?? []).filter((f) => f !== HOLD_FINALIZER);
      // A pod deleted since the list needs nothing.
      await core
        .patchNamespacedPod(
          { name, namespace: E2E_NAMESPACE, body: { metadata: { finalizers } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        )
        .catch((err: unknown) => {
          if ((err as { code?: number }).code !== 404) throw err;
        });
    }
  }

  it(`evictions refused by a PDB for ${PDB_HOLD_MS / 1000} s: status names the PDB, then the rollout completes`, async () => {
    await webOnWorkers();
    await pdbAllows(0);
    try {
      const { image, commit } = await nextImage();
      await eventually(
        'the status branch names the PDB',
        async () => {
          const status = (await w.repo.statusFile('status/NodeImage/worker.yaml')) ?? '';
          assert.ok(status.includes(`PDB ${E2E_NAMESPACE}/web`), `the status says:\n${status}`);
          return true;
        },
        { timeoutMs: 120_000 },
      );
      await new Promise((r) => setTimeout(r, PDB_HOLD_MS));
      await pdbAllows(1);
      await completes(image, commit);
    } finally {
      await pdbAllows(1);
    }
  });

  it('the clock jumps past a window while drydock is down: nothing starts outside it, an in-flight node finishes, the rest waits for the next', async () => {
    // A daily window 00:00–01:00 UTC; drydock's clock is moved around it with each restart.
    const now = Date.now();
    const midnight = Math.ceil(now / 86_400_000) * 86_400_000;
    const offset = (t: number): NodeJS.ProcessEnv => ({
      DRYDOCK_TEST_CLOCK_OFFSET: `${Math.round((t - now) / 1000)}s`,
    });
    await restartDrydock(offset(midnight - 30 * 60_000));
    const window = specDoc('MaintenanceWindow', 'nightly', {
      timeZone: 'UTC',
      schedules: [{ cron: '0 0 * * *', duration: '1h' }],
    });
    const { image, commit } = await nextImage({ 'specs/window.yaml': window }, { window: 'nightly' });
    const status = async (): Promise<string> => (await w.repo.statusFile('status/NodeImage/worker.yaml')) ?? '';
    await eventually(
      'waiting for the window, for this commit',
      async () => (await status()).includes(commit.slice(0, 7)) && /waiting for window nightly/.test(await status()),
      { timeoutMs: 60_000 },
    );
    assert.equal(await onImage(image), 0, 'nothing started before the window');
    // Killed; back after the window opened and closed.
    await restartDrydock(offset(midnight + 90 * 60_000), 'SIGKILL');
    assert.ok(drydock);
    await afterLeaderRounds(drydock);
    assert.equal(await onImage(image), 0, 'nothing started after the window closed');
    assert.ok(
      (await workers(cp().adminKubeConfig())).every(
        (n) => n.annotations['drydock.dev/operation'] === undefined || n.annotations['drydock.dev/phase'] === 'Done',
      ),
      'no node locked',
    );
    // Inside the next window: the first nodes start, and one is held mid-drain by a web pod
    // that stays Terminating (a finalizer); killed there, back after the window closed, 85
    // minutes on: past the drain's 10-minute timeout by the clock, though no drydock was
    // draining all that while.
    await webOnWorkers();
    await holdWebPods(true);
    try {
      await restartDrydock(offset(midnight + 86_400_000 + 5 * 60_000), 'SIGKILL');
      const held = await eventually(
        'a node in flight, held mid-drain by a Terminating pod',
        async () => {
          const draining = (await workers(cp().adminKubeConfig())).filter(
            (n) => n.unschedulable && n.annotations['drydock.dev/phase'] === 'Draining',
          );
          const terminating = await webPodNodes(true);
          return draining.find((n) => terminating.has(n.name))?.name;
        },
        { timeoutMs: 120_000, intervalMs: 100 },
      );
      await restartDrydock(offset(midnight + 86_400_000 + 90 * 60_000), 'SIGKILL');
      assert.ok(drydock);
      await afterLeaderRounds(drydock);
      const node = (await workers(cp().adminKubeConfig())).find((n) => n.name === held);
      assert.equal(
        node?.annotations['drydock.dev/phase'],
        'Draining',
        `${held} still draining, not ended by the clock`,
      );
      assert.ok(node?.unschedulable, `${held} still cordoned`);
    } finally {
      await holdWebPods(false);
    }
    await eventually(
      'the nodes in flight finished',
      async () => (await workers(cp().adminKubeConfig())).every((n) => !n.unschedulable),
      { timeoutMs: 120_000 },
    );
    const done = await onImage(image);
    assert.ok(drydock);
    await afterLeaderRounds(drydock);
    assert.equal(await onImage(image), done, 'no new node started outside the window');
    assert.ok(done < SIZE, `the rollout waits for the next window (${done} of ${SIZE} done)`);
    await eventually(
      'status says it waits for the window',
      async () => /waiting for window nightly/.test(await status()),
      { timeoutMs: 30_000 },
    );
    await restartDrydock(offset(midnight + 2 * 86_400_000 + 1_000), 'SIGKILL');
    await completes(image, commit);
    await restartDrydock();
  });
});
