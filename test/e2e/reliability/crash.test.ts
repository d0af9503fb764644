/**
 * Crash anywhere: drydock is killed with SIGKILL at seeded points — after the Nth mutating call
 * of each life, so between any two API calls of a node's sequence — over a replace rollout of
 * every worker, an in-place NodeOp with reboots, a NodeMaintenance (taken and ended), a NodeOp
 * under two replicas whose leader is the one killed, a Bottlerocket NodeImage to `latest`
 * (a release published once the first node resolved it), and an OpenShift upgrade that a
 * MutexRunConfig admits node by node into the canary pool of the simulated Machine Config
 * Operator. After each restart the work completes;
 * the invariant monitor (API server and cloud, not drydock's logs) finds no breach throughout.
 * The in-place NodeOp runs with notifications turned on (a local webhook receiver), its lives
 * also killed right before and after the sent-log's write: every event its status branch
 * implies arrives at least once, and nothing else (notify-watch.ts).
 *
 * Each rollout absorbs its scenario's share of the kills: every life of drydock gets a seeded
 * crash point until the rollout's own end condition holds, and is also killed right before and
 * right after the first call of each kind in KILLED_BY_KIND (rare calls the seeded points never
 * landed after, and the Bottlerocket updater's own). The OpenShift run has no seeded points: it
 * is killed by kind only, around its own kinds of call (KILLED_IN, NOT_BEFORE).
 * `npm test` runs that subset (about 10 seeded kill points over 10 workers); the full run (60
 * aimed at, 20 workers):
 *   DRYDOCK_RELIABILITY_KILLS=60 DRYDOCK_RELIABILITY_WORKERS=20 DRYDOCK_RELIABILITY_SEED=1 \
 *     npx mocha --no-config --timeout 0 --exit dist/test/e2e/reliability/crash.test.js
 * The exhaustive pass (no seeded counts: each life is killed right before and right after the
 * first call of a kind not yet killed at, so every kind of call of every scenario, and so every
 * step of a node's sequence, is interrupted on both sides; it fails if a kind a scenario made
 * was never killed after, so a new kind of call cannot slip by):
 *   DRYDOCK_RELIABILITY_EXHAUSTIVE=1 npx mocha --no-config --timeout 0 --exit dist/test/e2e/reliability/crash.test.js
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { parse } from 'yaml';
import { SeededRandom } from '../../../src/cloud/sim/random.js';
import { useControlPlane } from '../../support/control-plane.js';
import { IMAGE_V2 } from '../world.js';
import { checkEnd } from './monitor.js';
import {
  emptyCoverage,
  runWithKills,
  type CrashLoopOptions,
  type CrashLoopResult,
  type KillPoint,
  type KindCoverage,
} from './crash-loop.js';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { SimHttpProvider } from '../../../src/cloud/sim/http-client.js';
import type { MachineConfigPool } from '../../../src/sim-host/mco-decide.js';
import { CLUSTER_VERSION, completeControlPlane, MACHINE_CONFIG_POOL } from '../../support/openshift.js';
import { ApiLog } from '../api-watch.js';
import { SENT_LOG_KIND } from '../../../src/notify/sent-log.js';
import { NotifyWatch } from './notify-watch.js';
import { bottlerocketRecordKey } from '../../../src/protocol/keys.js';
import {
  AUTOSCALER,
  BOTTLEROCKET,
  bottlerocketDoc,
  bottlerocketDone,
  bottlerocketHosts,
  bottlerocketNodes,
  bottlerocketOs,
  gateDoc,
  initialFiles,
  JOB_NAMESPACE,
  labelNodes,
  labelTargets,
  MCO_RULE_LABEL,
  MCO_RUN,
  mcoDone,
  mcoFiles,
  mcoNodes,
  mcoPrepared,
  mostShortInCanary,
  nodeOpDoc,
  nodeOpDone,
  reliabilitySettings,
  replaceDone,
  ruleJobsLate,
  specDoc,
  startReliabilityWorld,
  workerImageDoc,
  workers,
  type ReliabilityWorld,
} from './scenario.js';

const settings = reliabilitySettings();
/**
 * The NodeMaintenance makes five mutating calls (lock and cordon in; uncordon and release out,
 * then its record's removal once the status branch holds the ending; a restart may repeat one):
 * it is killed after every one of them, so it takes about five of the kill points asked for.
 * The others are shared out by these weights.
 */
const MAINTENANCE_KILLS = 5;
const SHARES = { replace: 0.4, nodeop: 0.25, leader: 0.2, bottlerocket: 0.15 };
/** Mutating calls per node over a rollout with kills (measured with seed 1, 60 kill points), for the gaps. */
const CALLS_PER_NODE = { replace: 9, nodeop: 13, leader: 12, bottlerocket: 9 };
/** NodeOp targets as a share of the workers: 6 and 4 of the full run's 20, 3 and 2 of the subset's 10. */
const NODEOP_TARGETS = Math.round(settings.workers * 0.3);
const LEADER_TARGETS = Math.round(settings.workers * 0.2);
const BOTTLEROCKET_HOSTS = bottlerocketHosts(settings.workers);
/**
 * Kinds of call (callKind) the seeded points of the 60-point run never landed after, each made
 * once or once per node (the marks of nodes drained later, made at a rollout's start, with
 * them): outside the exhaustive pass every life is also killed right before and right after the
 * first call of each of these kinds, so `npm test` interrupts them all.
 */
const NEVER_SEEDED = [
  'setGroupImage',
  'scaleDeployment',
  'copyLabels',
  'deleteNode',
  'createGateJob',
  'markDrainPending',
];
/**
 * The Bottlerocket updater's own calls, each made once per node or once per rollout: its update
 * Job, the reboot through its API, and the patch that records the version `latest` resolved to
 * (which pins every later node). Killed right before and right after in every pass.
 */
const BOTTLEROCKET_CALLS = [
  'createBottlerocketUpdateJob',
  'createRebootPod:bottlerocketApi',
  'annotateNode:Rebooting:resolved',
];
/** The kinds every pass kills right before and right after, as crash-point.ts matches `only` (a kind or its prefix). */
const KILLED_BY_KIND = [...NEVER_SEEDED, ...BOTTLEROCKET_CALLS];
/**
 * The OpenShift run's own calls: its pool paused, the canary's nodeSelector, the pool unpaused;
 * its nodes labelled to wait and admitted by taking the labels off. Outside the exhaustive pass
 * the run is killed right after each of these and right before the admission and the unpause
 * only: each life costs seconds. Right before the pause nothing of the run has happened yet,
 * right before the first labelling is right after the pause, and right before the canary's
 * nodeSelector the nodes wait labelled, as after a labelling. Its rule Jobs are the gate Jobs
 * (createGateJob) the NodeOp scenario kills on both sides through the same code. The
 * exhaustive pass kills every kind of call the run makes on both sides, rule Jobs included.
 */
const MCO_CALLS = ['patchPool', 'labelNode'];
const MCO_NOT_BEFORE = ['patchPool:pause', 'labelNode:set', 'patchPool:nodeSelector'];
/** The kinds a scenario kills right before and right after outside the exhaustive pass. */
const KILLED_IN: Record<string, readonly string[]> = {
  mco: MCO_CALLS,
  // The NodeOp runs with notifications on: its lives are also killed around the sent-log's write.
  nodeop: [...KILLED_BY_KIND, SENT_LOG_KIND],
};
/** Outside the exhaustive pass: the kinds a scenario never kills right before. */
const NOT_BEFORE: Record<string, readonly string[]> = { mco: MCO_NOT_BEFORE };
const killedIn = (scenario: string): readonly string[] => KILLED_IN[scenario] ?? KILLED_BY_KIND;
const killedByKind = (scenario: string, kind: string): boolean =>
  killedIn(scenario).some((k) => kind === k || kind.startsWith(`${k}:`));
/** The kinds killed by kind each scenario reaches (it fails when one was not: the scenario changed). */
const RARE: Record<string, readonly string[]> = {
  replace: [
    'setGroupImage',
    'scaleDeployment:pause',
    'scaleDeployment:restore',
    'copyLabels',
    'deleteNode',
    'markDrainPending:set',
  ],
  nodeop: ['createGateJob:before', 'createGateJob:after', SENT_LOG_KIND],
  bottlerocket: BOTTLEROCKET_CALLS,
  mco: ['patchPool:pause', 'patchPool:nodeSelector', 'patchPool:unpause', 'labelNode:set', 'labelNode:remove'],
};
/**
 * The sim cloud deletes an instance's Node as it removes the instance (as a cloud's node
 * lifecycle controller does), so drydock's deleteNode right after finds it gone and changes
 * nothing: it is killed right before (after the removal), never after.
 */
const NEVER_MADE = new Set(['deleteNode']);

/**
 * Kills from outside, besides the crash points: the test's own SIGKILL at random instants of a
 * life, landing where drydock has no crash point (a status push, a Git fetch, a cache write).
 */
const OUTSIDE = { meanMs: 5_000, kills: 2 };

/** The mean gap between kills that gives a scenario its share (at least two) of the kill points. */
function gap(scenario: keyof typeof SHARES, nodes: number): number {
  const aimed = Math.max(2, Math.round(Math.max(0, settings.kills - MAINTENANCE_KILLS) * SHARES[scenario]));
  return Math.max(1, Math.floor((CALLS_PER_NODE[scenario] * nodes) / aimed));
}

describe('reliability: crash anywhere (SIGKILL at seeded points, invariants watched from outside)', function () {
  this.timeout(0);
  const cp = useControlPlane({ jobPods: 'host' });
  let w: ReliabilityWorld;
  let started = false;
  const rng = new SeededRandom(settings.seed);
  /** Set when the world starts: mocha loads every file first, so the file's load time is no start. */
  let began = 0;
  const killed: KillPoint[] = [];
  const calls = new Map<string, number>();
  const coverage = new Map<string, KindCoverage>();
  const coverageOf = (scenario: string): KindCoverage => {
    const c = coverage.get(scenario) ?? emptyCoverage();
    coverage.set(scenario, c);
    return c;
  };
  /**
   * The crash points of a scenario's lives: seeded around `gap` (none without one) plus the rare
   * kinds, or the exhaustive pass.
   */
  const crashes = (scenario: string, seededGap?: number): Pick<CrashLoopOptions, 'gap' | 'kinds' | 'coverage'> =>
    settings.exhaustive
      ? { kinds: { when: ['after', 'before'] }, coverage: coverageOf(scenario) }
      : {
          ...(seededGap !== undefined ? { gap: seededGap } : {}),
          kinds: { when: ['after', 'before'], only: killedIn(scenario), notBefore: NOT_BEFORE[scenario] ?? [] },
          coverage: coverageOf(scenario),
        };
  const record = (scenario: string, r: CrashLoopResult): void => {
    killed.push(...r.kills);
    calls.set(scenario, (calls.get(scenario) ?? 0) + r.calls);
  };
  const singleReplica = (): string[] => [...w.args, '--leader-elect', 'false'];

  before(async function () {
    this.timeout(240_000);
    began = Date.now();
    w = await startReliabilityWorld(cp(), settings.workers);
    started = true;
  });

  after(async function () {
    this.timeout(60_000);
    w?.monitor.stop();
    await w?.sim.stop();
    await w?.repo.close();
    for (const d of w?.dirs ?? []) rmSync(d, { recursive: true, force: true });
    // Skipped (unit-only runs, no control plane): there is nothing to report.
    if (started) process.stderr.write(`      (${summary()})\n`);
  });

  /** The figures docs/contributing/reliability.md reports: kill points per scenario and per kind of call, observations, violations, time. */
  function summary(): string {
    const tally = (when: KillPoint['when']): string => {
      const m = new Map<string, number>();
      for (const k of killed) if (k.when === when) m.set(k.kind, (m.get(k.kind) ?? 0) + 1);
      return [...m].map(([k, n]) => `${k} ×${n}`).join(', ');
    };
    const perScenario = [...calls].map(
      ([s, n]) => `${s} ${killed.filter((k) => k.scenario === s).length} kills in ${n} calls`,
    );
    return [
      `seed ${settings.seed}, ${settings.workers} workers: ${killed.length} kill points survived (${settings.kills} aimed at)`,
      perScenario.join('; '),
      `after ${tally('after')}`,
      `${killed.filter((k) => k.when === 'outside').length} from outside`,
      ...(settings.exhaustive ? [`before ${tally('before')}`] : []),
      [...coverage]
        .map(([sc, c]) => `${sc} made ${c.issued.size} kinds, killed after ${c.after.size}, before ${c.before.size}`)
        .join('; '),
      `${w?.monitor.checks ?? 0} observations checked, ${w?.monitor.violations.length ?? 0} violations`,
      `${Math.round((Date.now() - began) / 1000)} s`,
    ].join('; ');
  }

  async function assertEnd(reported?: ReadonlyMap<string, string>): Promise<void> {
    const end = await checkEnd(cp().adminKubeConfig(), w.sim, {
      groups: ['workers', BOTTLEROCKET.group, MCO_RUN.group],
      ...(reported ? { reported } : {}),
      autoscaler: AUTOSCALER,
    });
    assert.deepEqual([...w.monitor.violations, ...end], []);
  }

  it(`replace rollout of ${settings.workers} workers: killed at seeded points, completes with each node replaced once`, async () => {
    const kc = cp().adminKubeConfig();
    w.monitor.allowInstances('workers', settings.workers);
    const before = w.sim.cloud.inspectGroup('workers').nextInstance;
    // A label of the admin's on every worker: each replacement takes it over (copyLabels).
    await labelNodes(
      kc,
      (await workers(kc)).map((n) => n.name),
      'reliability-pool',
      'blue',
    );
    await w.repo.push({ 'specs/worker-image.yaml': workerImageDoc(IMAGE_V2) }, 'images: workers to v2');
    record(
      'replace',
      await runWithKills({
        scenario: 'replace',
        args: singleReplica(),
        replicas: 1,
        ...crashes('replace', gap('replace', settings.workers)),
        outside: OUTSIDE,
        rng,
        done: () => replaceDone(kc, w.repo, IMAGE_V2, settings.workers),
        timeoutMs: 600_000 + settings.kills * 30_000,
      }),
    );
    assert.equal(
      w.sim.cloud.inspectGroup('workers').nextInstance - before,
      settings.workers,
      'one new instance per worker',
    );
    assert.ok(
      (await workers(kc)).every((n) => n.labels['reliability-pool'] === 'blue'),
      'every replacement took over the label',
    );
    await assertEnd();
  });

  it('in-place NodeOp with reboots and an UpgradeGate, notifications on: each target runs each Job once and reboots once, every event arrives, whatever the kills', async () => {
    const kc = cp().adminKubeConfig();
    const targets = (await workers(kc)).slice(0, NODEOP_TARGETS).map((n) => n.name);
    await labelTargets(kc, targets, 'crash');
    // Receivers turned on with the rollout: the replace rollout before it is history.
    const notify = await NotifyWatch.start(w.repo.bare);
    w.dirs.push(notify.dir);
    const repoConfig = initialFiles()['drydock.yaml'] ?? '';
    try {
      await w.repo.push(
        {
          'drydock.yaml': notify.config(repoConfig),
          'specs/op-crash.yaml': nodeOpDoc('crash', 'crash'),
          'specs/gate-crash.yaml': gateDoc('check', 'crash'),
        },
        'ops: patch workers, reboot each, a check before and after; notify a webhook',
      );
      record(
        'nodeop',
        await runWithKills({
          scenario: 'nodeop',
          args: [...singleReplica(), ...notify.args],
          env: notify.env,
          replicas: 1,
          ...crashes('nodeop', gap('nodeop', NODEOP_TARGETS)),
          outside: OUTSIDE,
          rng,
          // Done once the completion arrived too: a life stopped before sending it would leave it to a next one.
          done: async () =>
            notify.received('NodeOp/crash', 'complete') && (await nodeOpDone(kc, w.repo, w.monitor, 'crash', targets)),
          timeoutMs: 600_000 + settings.kills * 30_000,
        }),
      );
      // From outside: every event the status branch implies arrived at least once, nothing else
      // did, each message links a status commit that shows its event, and no secret is in one.
      const seen = notify.check();
      assert.deepEqual(
        { missing: seen.missing, unexplained: seen.unexplained, unlinked: seen.unlinked, leaked: seen.leaked },
        { missing: [], unexplained: [], unlinked: [], leaked: 0 },
      );
      assert.ok(notify.received('NodeOp/crash', 'started'), 'the start arrived');
    } finally {
      await w.repo.push({ 'drydock.yaml': repoConfig }, 'notifications off');
      await notify.close();
    }
    for (const t of targets) {
      assert.equal(w.monitor.count('NodeOp.crash', t, 'operation'), 1, `${t}: one Job`);
      assert.equal(w.monitor.count('NodeOp.crash', t, 'before'), 1, `${t}: one gate before-Job`);
      assert.equal(w.monitor.count('NodeOp.crash', t, 'after'), 1, `${t}: one gate after-Job`);
      assert.equal(w.monitor.count('NodeOp.crash', t, 'reboot'), 1, `${t}: one reboot pod`);
      assert.equal(w.monitor.reboots.get(t), 1, `${t}: rebooted exactly once`);
    }
    await assertEnd();
  });

  it('NodeMaintenance taken and ended: killed at seeded points on the way in and out', async () => {
    const kc = cp().adminKubeConfig();
    const node = (await workers(kc)).at(-1)?.name ?? '';
    const file = 'specs/maintenance-disk.yaml';
    await w.repo.push(
      { [file]: specDoc('NodeMaintenance', 'disk', { nodeName: node, reason: 'replace disk' }) },
      'maintenance: take a worker',
    );
    const status = async (): Promise<{ phase?: string; nodeName?: string } | undefined> => {
      const text = await w.repo.statusFile('status/NodeMaintenance/disk.yaml');
      return text === undefined ? undefined : (parse(text) as { phase?: string; nodeName?: string });
    };
    record(
      'maintenance',
      await runWithKills({
        scenario: 'maintenance',
        args: singleReplica(),
        replicas: 1,
        ...crashes('maintenance', 1),
        rng,
        done: async () =>
          (await status())?.phase === 'Succeeded' &&
          (await workers(kc)).find((n) => n.name === node)?.unschedulable === true,
        timeoutMs: 300_000 + settings.kills * 10_000,
      }),
    );
    // Cordoned, and the status branch says why: the monitor's end check accepts it only so.
    const text = (await w.repo.statusFile('status/NodeMaintenance/disk.yaml')) ?? '';
    await assertEnd(new Map([[node, text]]));
    await w.repo.push({ [file]: null }, 'maintenance: done');
    record(
      'maintenance',
      await runWithKills({
        scenario: 'maintenance',
        args: singleReplica(),
        replicas: 1,
        ...crashes('maintenance', 1),
        rng,
        // Ended on the branch, and the node left as the maintenance found it: uncordoned, and
        // its record gone (a restart after the removal carries the ending from the branch).
        done: async () => {
          const all = await workers(kc);
          return (
            (await status())?.phase === 'Ended' &&
            all.every((n) => !n.unschedulable) &&
            all.find((n) => n.name === node)?.annotations['drydock.dev/maintenance'] === undefined
          );
        },
        timeoutMs: 300_000 + settings.kills * 10_000,
      }),
    );
    await assertEnd();
    // The ending outlives the restarts that followed the record's removal.
    assert.equal((await status())?.phase, 'Ended');
  });

  it('two replicas, the leader killed at seeded points: a NodeOp still runs once per node', async () => {
    const kc = cp().adminKubeConfig();
    const targets = (await workers(kc)).slice(NODEOP_TARGETS, NODEOP_TARGETS + LEADER_TARGETS).map((n) => n.name);
    await labelTargets(kc, targets, 'leader');
    await w.repo.push({ 'specs/op-leader.yaml': nodeOpDoc('leader', 'leader') }, 'ops: patch workers');
    record(
      'leader',
      await runWithKills({
        scenario: 'leader',
        args: w.args,
        replicas: 2,
        ...crashes('leader', gap('leader', LEADER_TARGETS)),
        rng,
        done: () => nodeOpDone(kc, w.repo, w.monitor, 'leader', targets),
        timeoutMs: 600_000 + settings.kills * 30_000,
      }),
    );
    for (const t of targets) {
      assert.equal(w.monitor.count('NodeOp.leader', t, 'operation'), 1, `${t}: one Job`);
      assert.equal(w.monitor.count('NodeOp.leader', t, 'reboot'), 1, `${t}: one reboot pod`);
      assert.equal(w.monitor.reboots.get(t), 1, `${t}: rebooted exactly once`);
    }
    await assertEnd();
  });

  it(`Bottlerocket to latest over ${BOTTLEROCKET_HOSTS} hosts, a release published once resolved: one update Job and one reboot each, the fleet on one version`, async () => {
    const kc = cp().adminKubeConfig();
    const key = bottlerocketRecordKey(BOTTLEROCKET.name);
    await w.repo.push({ 'specs/bottlerocket.yaml': bottlerocketDoc() }, 'images: Bottlerocket hosts to latest');
    // A newer release lands once the first node resolved latest, whichever life of drydock recorded it.
    let stop = false;
    const published = (async (): Promise<boolean> => {
      while (!stop) {
        const resolved = await bottlerocketNodes(kc).then(
          (ns) => ns.some((n) => n.annotations[key] !== undefined),
          () => false,
        );
        if (resolved) {
          await new SimHttpProvider(w.sim.url).publishBottlerocketRelease(BOTTLEROCKET.group, BOTTLEROCKET.later);
          return true;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      return false;
    })().catch(() => false);
    try {
      record(
        'bottlerocket',
        await runWithKills({
          scenario: 'bottlerocket',
          args: singleReplica(),
          replicas: 1,
          ...crashes('bottlerocket', gap('bottlerocket', BOTTLEROCKET_HOSTS)),
          rng,
          done: () => bottlerocketDone(kc, w.repo, BOTTLEROCKET.to),
          timeoutMs: 300_000 + settings.kills * 20_000,
        }),
      );
    } finally {
      stop = true;
    }
    assert.ok(await published, `${BOTTLEROCKET.later} was published during the rollout`);
    const hosts = await bottlerocketNodes(kc);
    assert.equal(hosts.length, BOTTLEROCKET_HOSTS);
    const resolvedOn = hosts.filter((n) => n.annotations[key] !== undefined);
    assert.equal(resolvedOn.length, 1, 'latest resolved once, on one node');
    assert.ok(resolvedOn[0]?.annotations[key]?.endsWith(` ${BOTTLEROCKET.to}`), `resolved to ${BOTTLEROCKET.to}`);
    for (const n of hosts) {
      assert.equal(n.osImage, bottlerocketOs(BOTTLEROCKET.to), `${n.name}: on the version resolved first`);
      assert.equal(
        w.monitor.count(`NodeImage.${BOTTLEROCKET.name}`, n.name, 'operation'),
        1,
        `${n.name}: one update Job`,
      );
      assert.equal(w.monitor.count(`NodeImage.${BOTTLEROCKET.name}`, n.name, 'reboot'), 1, `${n.name}: one reboot pod`);
      assert.equal(w.monitor.reboots.get(n.name), 1, `${n.name}: rebooted exactly once`);
    }
    await assertEnd();
  });

  it(`OpenShift upgrade of ${MCO_RUN.size} nodes through a MutexRunConfig: each rule Job once per node, one node at a time in the canary pool, pools unpaused and labels gone`, async () => {
    const kc = cp().adminKubeConfig();
    const custom = kc.makeApiClient(CustomObjectsApi);
    const log = new ApiLog();
    await log.start(kc, {
      nodes: '/api/v1/nodes',
      pools: `/apis/${MACHINE_CONFIG_POOL.group}/${MACHINE_CONFIG_POOL.version}/${MACHINE_CONFIG_POOL.plural}`,
      jobs: `/apis/batch/v1/namespaces/${JOB_NAMESPACE}/jobs`,
    });
    await w.repo.push(mcoFiles(), 'openshift: a MutexRule, MutexTarget and MutexRunConfig for the OpenShift nodes');
    await custom.patchClusterCustomObject(
      { ...CLUSTER_VERSION, name: 'version', body: { spec: { desiredUpdate: { version: MCO_RUN.to } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    // The control plane is done once drydock has paused the pool and labelled the nodes, whichever
    // life did it: an OpenShift control plane takes far longer than that.
    let stop = false;
    const controlPlane = (async (): Promise<boolean> => {
      while (!stop) {
        if (await mcoPrepared(kc).catch(() => false)) {
          await completeControlPlane(custom, MCO_RUN.to);
          return true;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      return false;
    })();
    try {
      record(
        'mco',
        await runWithKills({
          scenario: 'mco',
          args: singleReplica(),
          replicas: 1,
          ...crashes('mco'),
          rng,
          done: () => mcoDone(kc, w.repo),
          timeoutMs: 300_000 + settings.kills * 10_000,
        }),
      );
    } finally {
      stop = true;
      log.stop();
    }
    assert.ok(await controlPlane, 'the control plane finished once drydock was ready for it');
    const nodes = await mcoNodes(kc);
    assert.equal(nodes.length, MCO_RUN.size);
    for (const n of nodes) {
      assert.equal(w.monitor.count(`MutexRunConfig.${MCO_RUN.run}`, n.name, 'before'), 1, `${n.name}: one rule Job`);
      assert.equal(w.monitor.count(`MutexRunConfig.${MCO_RUN.run}`, n.name, 'after'), 1, `${n.name}: one cleanup Job`);
      assert.ok(!(MCO_RULE_LABEL in n.labels), `${n.name}: no rule label left`);
    }
    const pools = (await custom.listClusterCustomObject(MACHINE_CONFIG_POOL)) as { items: MachineConfigPool[] };
    assert.deepEqual(
      pools.items.filter((p) => p.spec?.paused === true).map((p) => p.metadata?.name),
      [],
      'no pool left paused',
    );
    log.assertWhole();
    assert.equal(mostShortInCanary(log.events), 1, 'never two nodes in the canary pool short of the new config');
    assert.deepEqual(
      ruleJobsLate(
        log.events,
        nodes.map((n) => n.name),
      ),
      [],
      'each rule Job before MCO was told to update its node',
    );
    await assertEnd();
  });

  it('survived kill points in every scenario, at least half of those aimed at', () => {
    for (const scenario of ['replace', 'nodeop', 'maintenance', 'leader', 'bottlerocket', 'mco'])
      assert.ok(
        killed.some((k) => k.scenario === scenario),
        `${scenario}: no kill point`,
      );
    assert.ok(
      killed.some((k) => k.when === 'outside'),
      'killed from outside at least once',
    );
    if (!settings.exhaustive)
      assert.ok(
        killed.length >= Math.ceil(settings.kills / 2),
        `${killed.length} kills, about ${settings.kills} aimed at`,
      );
    assert.deepEqual(w.monitor.violations, []);
  });

  it('killed right before and right after every kind of call each scenario made (outside the exhaustive pass: the rare ones)', () => {
    for (const [scenario, c] of coverage) {
      const uncovered = (side: Set<string>, kinds: Iterable<string>): string[] =>
        [...kinds].filter((k) => !side.has(k)).sort();
      const counted = (k: string): boolean => settings.exhaustive || killedByKind(scenario, k);
      const made = [...c.issued].filter(counted);
      assert.deepEqual(uncovered(c.after, made), [], `${scenario}: kinds made but never killed after`);
      const before = (k: string): boolean => settings.exhaustive || !(NOT_BEFORE[scenario] ?? []).includes(k);
      assert.deepEqual(uncovered(c.before, made.filter(before)), [], `${scenario}: kinds made but never killed before`);
      const rare = RARE[scenario] ?? [];
      assert.deepEqual(
        uncovered(c.before, rare.filter(before)),
        [],
        `${scenario}: rare kinds it should reach, never killed before`,
      );
      const madeRare = rare.filter((k) => !NEVER_MADE.has(k));
      assert.deepEqual(uncovered(c.issued, madeRare), [], `${scenario}: rare kinds it should make`);
    }
    assert.deepEqual([...coverage.keys()].sort(), [
      'bottlerocket',
      'leader',
      'maintenance',
      'mco',
      'nodeop',
      'replace',
    ]);
  });
});
