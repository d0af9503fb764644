/**
 * The MutexRunConfig kind over the procedure's states: detect the upgrade, pause the target
 * pools, label the nodes, keep them out of the canary pool, admit one, its MutexRule's Job
 * before, wait for the Machine Config Operator, Degraded → Failed with MCO's reason, the
 * cleanup Job, unpause at the end; and a world that stops the executor between any two
 * actions runs each rule Job once per node and version.
 */
import { strict as assert } from 'node:assert';
import type { ObservedJob, ObservedNode, ObservedOpenShift, ObservedPool } from '../../src/observe/types.js';
import { plan, type Action, type Plan } from '../../src/plan/index.js';
import { gateJobName } from '../../src/protocol/jobs.js';
import type { DesiredState, MutexRunConfig, MutexTarget } from '../../src/spec/model.js';
import { config, desired, node, observed, policy, upgradeGate } from './fixtures.js';

const API = 'openshift-optional.skrzypek.io/v1alpha1';
const NOW = new Date('2024-06-01T12:00:00Z');
const LABEL = 'mutexrule.openshift-optional.skrzypek.io/backup.mutex';
const VERSION = 'machineconfiguration.openshift.io/release-image-version';
const LOCK = 'MutexRunConfig/workers-upgrade@r1-4.16.4';

const target: MutexTarget = {
  kind: 'MutexTarget',
  name: 'workers',
  apiVersion: API,
  source: { file: 'mutex.yaml', line: 1, column: 1 },
  revision: 't1',
  machineConfigPools: ['worker'],
};
const run: MutexRunConfig = {
  kind: 'MutexRunConfig',
  name: 'workers-upgrade',
  apiVersion: API,
  source: { file: 'mutex.yaml', line: 9, column: 1 },
  revision: 'r1',
  canaryPool: 'canary',
  mutexRules: ['backup'],
  mutexTargets: ['workers'],
  ruleNamespaces: { backup: 'mutex' },
};
const rule = upgradeGate([{ kind: 'MutexRunConfig', name: 'workers-upgrade' }], {
  name: 'backup',
  apiVersion: API,
  mutexRunConfigs: ['workers-upgrade'],
});

function want(o: { stopOnFailure?: boolean } = {}): DesiredState {
  const c = config();
  const rollout = { ...policy(), stopOnFailure: o.stopOnFailure ?? false };
  return desired({
    config: { ...c, defaults: { rollout } },
    upgradeGates: [rule],
    mutexTargets: [target],
    mutexRunConfigs: [run],
  });
}

const WORKER = { 'node-role.kubernetes.io/worker': '' };

function pool(name: string, o: Partial<ObservedPool> = {}): ObservedPool {
  return {
    name,
    annotations: {},
    paused: false,
    nodeSelector: { matchLabels: WORKER },
    degraded: false,
    updated: true,
    ...o,
  };
}

const CANARY_READY = pool('canary', {
  nodeSelector: { matchLabels: WORKER, matchExpressions: [{ key: LABEL, operator: 'DoesNotExist' }] },
});
const PAUSED_WORKER = pool('worker', {
  paused: true,
  annotations: { 'drydock.dev/paused-by': 'MutexRunConfig/workers-upgrade' },
});

function openshift(pools: ObservedPool[], o: { completed?: boolean } = {}): ObservedOpenShift {
  return {
    clusterVersion: {
      desiredVersion: '4.16.4',
      history: [{ state: o.completed === false ? 'Partial' : 'Completed', version: '4.16.4' }],
    },
    pools,
    absent: [],
  };
}

function worker(
  name: string,
  o: { version?: string; labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): ObservedNode {
  return node(name, `sim://w/${name}`, {
    labels: { ...WORKER, [VERSION]: o.version ?? '4.15.9', ...o.labels },
    ...(o.annotations !== undefined ? { annotations: o.annotations } : {}),
  });
}

const OP = { kind: 'MutexRunConfig', name: 'workers-upgrade', revision: 'r1-4.16.4' };
function gateJob(nodeName: string, step: 'before' | 'after', o: Partial<ObservedJob> = {}): ObservedJob {
  const name = gateJobName({
    operation: OP,
    gate: 'backup',
    step,
    index: 0,
    template: rule[step][0] ?? {},
    node: nodeName,
  });
  return { namespace: 'default', name, labels: {}, succeeded: true, failed: false, attempts: 1, ...o };
}

function held(phase: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'drydock.dev/operation': LOCK,
    'drydock.dev/phase': phase,
    'drydock.dev/phase-since': NOW.toISOString(),
    ...extra,
  };
}

function planWith(
  nodes: ObservedNode[],
  pools: ObservedPool[],
  o: { jobs?: ObservedJob[]; completed?: boolean; stopOnFailure?: boolean } = {},
): Plan {
  const os = openshift(pools, o);
  return plan(want(o), observed({ nodes, jobs: o.jobs ?? [], openshift: os }), NOW, { jobNamespace: 'default' });
}

function kinds(p: Plan): string[] {
  return p.actions.map((a) => `${a.kind} ${'node' in a ? a.node : 'pool' in a ? a.pool : ''}`);
}

const status = (p: Plan) => p.specs.find((s) => s.spec.kind === 'MutexRunConfig');

describe('MutexRunConfig: the OpenShift node upgrade through the MCO', () => {
  it('waits, naming what is missing, on a cluster without the OpenShift kinds', () => {
    const os: ObservedOpenShift = { pools: [], absent: ['ClusterVersion', 'MachineConfigPool'] };
    const p = plan(want(), observed({ nodes: [worker('w1')], openshift: os }), NOW, { jobNamespace: 'default' });
    assert.deepEqual(p.actions, []);
    assert.equal(status(p)?.phase, 'Waiting');
    assert.match(status(p)?.waitingFor ?? '', /the cluster has no ClusterVersion and no MachineConfigPools/);
    assert.match(status(p)?.waitingFor ?? '', /point drydock at the OpenShift cluster, or remove the MutexRunConfig/);
  });

  it('waits with what to do when the OpenShift kinds cannot be read', () => {
    const unreadable = 'cannot read MachineConfigPools: 403 Forbidden; grant drydock list and watch';
    const os: ObservedOpenShift = { pools: [], absent: [], unreadable };
    const p = plan(want(), observed({ nodes: [worker('w1')], openshift: os }), NOW, { jobNamespace: 'default' });
    assert.deepEqual(p.actions, []);
    assert.equal(status(p)?.phase, 'Waiting');
    assert.equal(status(p)?.waitingFor, unreadable);
  });

  it('does nothing while every target node runs the desired version', () => {
    const p = planWith([worker('w1', { version: '4.16.4' })], [pool('worker'), pool('canary')]);
    assert.deepEqual(p.actions, []);
    assert.equal(status(p)?.phase, 'Complete');
  });

  it('detects the upgrade and pauses the target pool first, nothing else', () => {
    const p = planWith([worker('w1'), worker('w2')], [pool('worker'), pool('canary')]);
    assert.deepEqual(kinds(p), ['patchPool worker']);
    assert.equal((p.actions[0] as Extract<Action, { kind: 'patchPool' }>).paused, true);
  });

  it('labels every node still to do once the pool is seen paused', () => {
    const p = planWith([worker('w1'), worker('w2')], [PAUSED_WORKER, pool('canary')]);
    assert.deepEqual(kinds(p), ['labelNode w1', 'labelNode w2']);
    assert.deepEqual((p.actions[0] as Extract<Action, { kind: 'labelNode' }>).labels, { [LABEL]: '' });
  });

  it('then makes the canary pool leave labelled nodes out, keeping its own selector', () => {
    const nodes = [worker('w1', { labels: { [LABEL]: '' } }), worker('w2', { labels: { [LABEL]: '' } })];
    const p = planWith(nodes, [PAUSED_WORKER, pool('canary')]);
    assert.deepEqual(kinds(p), ['patchPool canary']);
    assert.deepEqual((p.actions[0] as Extract<Action, { kind: 'patchPool' }>).nodeSelector, {
      matchLabels: WORKER,
      matchExpressions: [{ key: LABEL, operator: 'DoesNotExist' }],
    });
  });

  it('waits for the control plane to complete the version before admitting a worker', () => {
    const nodes = [worker('w1', { labels: { [LABEL]: '' } })];
    const p = planWith(nodes, [PAUSED_WORKER, CANARY_READY], { completed: false });
    assert.deepEqual(p.actions, []);
    assert.match(status(p)?.waitingFor ?? '', /control plane is not at 4\.16\.4/);
  });

  it('locks one node at a time (Pending), the others wait', () => {
    const nodes = [worker('w1', { labels: { [LABEL]: '' } }), worker('w2', { labels: { [LABEL]: '' } })];
    const p = planWith(nodes, [PAUSED_WORKER, CANARY_READY]);
    assert.deepEqual(kinds(p), ['annotateNode w1']);
    const a = p.actions[0] as Extract<Action, { kind: 'annotateNode' }>;
    assert.equal(a.annotations['drydock.dev/operation'], LOCK);
    assert.equal(a.annotations['drydock.dev/phase'], 'Pending');
  });

  it("runs the MutexRule's Job before, labels kept, while the node is Pending", () => {
    const nodes = [worker('w1', { labels: { [LABEL]: '' }, annotations: held('Pending') })];
    const p = planWith(nodes, [PAUSED_WORKER, CANARY_READY]);
    assert.deepEqual(kinds(p), ['createGateJob w1']);
    const running = planWith(nodes, [PAUSED_WORKER, CANARY_READY], {
      jobs: [gateJob('w1', 'before', { succeeded: false })],
    });
    assert.deepEqual(running.actions, []);
  });

  it('admits the node once its Job passed: Updating recorded first, then the rule label off', () => {
    const nodes = [worker('w1', { labels: { [LABEL]: '' }, annotations: held('Pending') })];
    const p = planWith(nodes, [PAUSED_WORKER, CANARY_READY], { jobs: [gateJob('w1', 'before')] });
    assert.deepEqual(kinds(p), ['annotateNode w1', 'labelNode w1']);
    assert.equal(
      (p.actions[0] as Extract<Action, { kind: 'annotateNode' }>).annotations['drydock.dev/phase'],
      'Updating',
    );
    assert.deepEqual((p.actions[1] as Extract<Action, { kind: 'labelNode' }>).labels, { [LABEL]: null });
  });

  it('waits for MCO: Done with currentConfig == desiredConfig and the version label', () => {
    const working = held('Updating', {
      'machineconfiguration.openshift.io/state': 'Working',
      'machineconfiguration.openshift.io/currentConfig': 'rendered-old',
      'machineconfiguration.openshift.io/desiredConfig': 'rendered-new',
    });
    const p = planWith([worker('w1', { annotations: working })], [PAUSED_WORKER, CANARY_READY]);
    assert.deepEqual(p.actions, []);
    assert.ok(p.waits.some((w) => w.code === 'mco' && w.node === 'w1'));
    const configDone = held('Updating', {
      'machineconfiguration.openshift.io/state': 'Done',
      'machineconfiguration.openshift.io/currentConfig': 'rendered-new',
      'machineconfiguration.openshift.io/desiredConfig': 'rendered-new',
    });
    const labelBehind = planWith([worker('w1', { annotations: configDone })], [PAUSED_WORKER, CANARY_READY]);
    assert.deepEqual(labelBehind.actions, []);
    const done = planWith(
      [worker('w1', { annotations: configDone, version: '4.16.4' })],
      [PAUSED_WORKER, CANARY_READY],
    );
    assert.deepEqual(kinds(done), ['annotateNode w1']);
    assert.equal(
      (done.actions[0] as Extract<Action, { kind: 'annotateNode' }>).annotations['drydock.dev/phase'],
      'Verifying',
    );
  });

  it("fails a node MCO reports Degraded, with MCO's reason, and stopOnFailure halts", () => {
    const degraded = held('Updating', {
      'machineconfiguration.openshift.io/state': 'Degraded',
      'machineconfiguration.openshift.io/reason': 'failed to drain node: timed out',
    });
    const nodes = [worker('w1', { annotations: degraded }), worker('w2', { labels: { [LABEL]: '' } })];
    const p = planWith(nodes, [PAUSED_WORKER, CANARY_READY], { stopOnFailure: true });
    assert.deepEqual(kinds(p), ['annotateNode w1']);
    const a = p.actions[0] as Extract<Action, { kind: 'annotateNode' }>;
    assert.equal(a.annotations['drydock.dev/phase'], 'Failed');
    assert.match(a.annotations['drydock.dev/reason'] ?? '', /Degraded: failed to drain node: timed out/);
    assert.equal(status(p)?.phase, 'Halted');
    assert.match(status(p)?.lastError ?? '', /failed to drain node: timed out/);
  });

  it('runs the cleanup Job once the node is Ready at the version, then records it done and lets it go', () => {
    const nodes = [worker('w1', { version: '4.16.4', annotations: held('Verifying') })];
    const p = planWith(nodes, [PAUSED_WORKER, CANARY_READY]);
    assert.deepEqual(kinds(p), ['createGateJob w1']);
    assert.equal((p.actions[0] as Extract<Action, { kind: 'createGateJob' }>).step, 'after');
    const passed = planWith(nodes, [PAUSED_WORKER, CANARY_READY], { jobs: [gateJob('w1', 'after')] });
    const done = passed.actions.find((a) => a.kind === 'annotateNode') as Extract<Action, { kind: 'annotateNode' }>;
    assert.equal(done.annotations['drydock.dev/operation'], null);
    assert.equal(done.annotations['mutexrun.drydock.dev/workers-upgrade'], '4.16.4');
  });

  it('unpauses the pool it paused and removes leftover labels at the end', () => {
    const nodes = [worker('w1', { version: '4.16.4', labels: { [LABEL]: '' } }), worker('w2', { version: '4.16.4' })];
    const p = planWith(nodes, [PAUSED_WORKER, CANARY_READY]);
    assert.deepEqual(kinds(p), ['patchPool worker', 'labelNode w1']);
    assert.equal((p.actions[0] as Extract<Action, { kind: 'patchPool' }>).paused, false);
  });

  it('never unpauses a pool a person paused', () => {
    const p = planWith([worker('w1', { version: '4.16.4' })], [pool('worker', { paused: true }), CANARY_READY]);
    assert.deepEqual(p.actions, []);
  });
});

/** A cluster that applies a prefix of each round's actions (drydock killed after `k`) and plays MCO. */
class World {
  nodes = new Map<string, ObservedNode>();
  pools = new Map<string, ObservedPool>();
  jobs = new Map<string, ObservedJob>();
  created: string[] = [];
  inCanaryAtOnce = 0;

  constructor(names: string[]) {
    for (const n of names) this.nodes.set(n, worker(n));
    this.pools.set('worker', pool('worker'));
    this.pools.set('canary', pool('canary'));
  }

  plan(): Plan {
    return planWith([...this.nodes.values()], [...this.pools.values()], { jobs: [...this.jobs.values()] });
  }

  apply(a: Action): void {
    const n = 'node' in a && a.node !== undefined ? this.nodes.get(a.node) : undefined;
    if (a.kind === 'annotateNode' && n !== undefined) {
      const annotations = { ...n.annotations };
      for (const [k, v] of Object.entries(a.annotations)) {
        if (v === null) delete annotations[k];
        else annotations[k] = v;
      }
      this.nodes.set(n.name, { ...n, annotations });
    } else if (a.kind === 'labelNode' && n !== undefined) {
      const labels = { ...n.labels };
      for (const [k, v] of Object.entries(a.labels)) {
        if (v === null) delete labels[k];
        else labels[k] = v;
      }
      this.nodes.set(n.name, { ...n, labels });
    } else if (a.kind === 'patchPool') {
      const p = this.pools.get(a.pool) as ObservedPool;
      const annotations = { ...p.annotations };
      if (a.paused === true) annotations['drydock.dev/paused-by'] = `MutexRunConfig/${a.spec.name}`;
      if (a.paused === false) delete annotations['drydock.dev/paused-by'];
      this.pools.set(a.pool, {
        ...p,
        annotations,
        paused: a.paused ?? p.paused,
        nodeSelector: a.nodeSelector ?? p.nodeSelector,
      });
    } else if (a.kind === 'createGateJob') {
      const job = gateJob(a.node, a.step);
      assert.ok(!this.jobs.has(job.name), `Job ${job.name} made twice`);
      this.jobs.set(job.name, job);
      this.created.push(`${a.node} ${a.step}`);
    } else if (a.kind === 'deleteJob') {
      this.jobs.delete(a.name);
    }
  }

  /** MCO: a node the unpaused canary pool selects is brought to the version at once. */
  mco(): void {
    const canary = this.pools.get('canary') as ObservedPool;
    let inCanary = 0;
    for (const n of this.nodes.values()) {
      const selected =
        !canary.paused && (canary.nodeSelector?.matchExpressions ?? []).length > 0 && !(LABEL in n.labels);
      if (!selected || n.labels[VERSION] === '4.16.4') continue;
      inCanary++;
      const annotations = {
        ...n.annotations,
        'machineconfiguration.openshift.io/state': 'Done',
        'machineconfiguration.openshift.io/currentConfig': 'rendered-new',
        'machineconfiguration.openshift.io/desiredConfig': 'rendered-new',
      };
      this.nodes.set(n.name, { ...n, annotations, labels: { ...n.labels, [VERSION]: '4.16.4' } });
    }
    this.inCanaryAtOnce = Math.max(this.inCanaryAtOnce, inCanary);
  }
}

describe('MutexRunConfig: killed between any two actions', () => {
  for (const cut of [0, 1, 2, 3]) {
    it(`resumes after stopping ${cut === 0 ? 'at no action' : `after action ${cut} of a round`}, each rule Job once per node`, () => {
      const world = new World(['w1', 'w2', 'w3']);
      let round = 0;
      for (; round < 80; round++) {
        const p = world.plan();
        if (p.actions.length === 0 && status(p)?.phase === 'Complete') break;
        // Every few rounds drydock is killed after `cut` actions: the rest are lost.
        const take = cut > 0 && round % 3 === 1 ? p.actions.slice(0, cut) : p.actions;
        for (const a of take) world.apply(a);
        world.mco();
      }
      assert.ok(round < 80, 'the run completes');
      assert.deepEqual([...world.created].sort(), [
        'w1 after',
        'w1 before',
        'w2 after',
        'w2 before',
        'w3 after',
        'w3 before',
      ]);
      assert.equal(world.inCanaryAtOnce, 1, 'never two nodes in the canary pool');
      assert.equal(world.pools.get('worker')?.paused, false, 'the pool is unpaused at the end');
      for (const n of world.nodes.values()) assert.ok(!(LABEL in n.labels), `${n.name} keeps no rule label`);
    });
  }
});
