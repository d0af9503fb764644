/** The simulated Machine Config Operator's decisions, from the objects alone: render, node controller, daemon, pool status. */
import assert from 'node:assert/strict';
import type { V1Node } from '@kubernetes/client-node';
import { DEFAULT_MCO, type SimMcoConfig } from '../../src/cloud/sim/config.js';
import {
  decideMco,
  maxUnavailableOf,
  MCO_KEYS,
  poolOf,
  poolStatus,
  renderedConfigName,
  type ClusterVersion,
  type MachineConfigPool,
  type McoStep,
} from '../../src/sim-host/mco-decide.js';
import { toEvict } from '../../src/sim-host/mco.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const OLD = 'rendered-worker-old';
const NEW = 'rendered-worker-new';
const WORKER = { matchLabels: { 'node-role.kubernetes.io/worker': '' } };

function node(
  name: string,
  o: {
    current?: string;
    desired?: string;
    state?: string;
    unschedulable?: boolean;
    ready?: boolean;
    bootID?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  } = {},
): V1Node {
  const current = 'current' in o ? o.current : OLD;
  const annotations: Record<string, string> = { ...o.annotations };
  if (current !== undefined) {
    annotations[MCO_KEYS.currentConfig] = current;
    annotations[MCO_KEYS.desiredConfig] = o.desired ?? current;
    annotations[MCO_KEYS.state] = o.state ?? 'Done';
  }
  return {
    metadata: { name, labels: { 'node-role.kubernetes.io/worker': '', ...o.labels }, annotations },
    spec: { unschedulable: o.unschedulable ?? false },
    status: {
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
      nodeInfo: { bootID: o.bootID ?? `boot-${name}` } as never,
    },
  };
}
const pool = (name: string, spec: MachineConfigPool['spec'] = {}): MachineConfigPool => ({
  metadata: { name, generation: 1 },
  spec: { nodeSelector: WORKER, configuration: { name: NEW }, ...spec },
});
const decide = (w: {
  pools: MachineConfigPool[];
  nodes: V1Node[];
  cv?: ClusterVersion[];
  config?: Partial<SimMcoConfig>;
}) =>
  decideMco({
    pools: w.pools,
    nodes: w.nodes,
    clusterVersions: w.cv ?? [],
    config: { ...DEFAULT_MCO, enabled: true, ...w.config },
    rebootSeconds: 5,
    now: T0,
  });
const nodeSteps = (steps: McoStep[]) =>
  steps.flatMap((s) => ('node' in s ? [[s.kind, s.node] as [string, string]] : []));

describe('sim MCO', () => {
  describe('render', () => {
    it('names every pool, paused or not, after the desired release', () => {
      const cv: ClusterVersion = { metadata: { name: 'version' }, spec: { desiredUpdate: { version: '4.15.2' } } };
      const { steps } = decide({ pools: [pool('worker'), pool('canary', { paused: true })], nodes: [], cv: [cv] });
      const renders = steps.filter((s) => s.kind === 'render');
      assert.deepEqual(
        renders.map((s) => [s.pool, s.config]),
        [
          ['worker', renderedConfigName('worker', '4.15.2')],
          ['canary', renderedConfigName('canary', '4.15.2')],
        ],
      );
      assert.match(renderedConfigName('worker', '4.15.2'), /^rendered-worker-[0-9a-f]{32}$/);
      assert.notEqual(renderedConfigName('worker', '4.15.2'), renderedConfigName('worker', '4.15.3'));
    });

    it('records the release in ClusterVersion status once, Completed in history', () => {
      const cv: ClusterVersion = {
        metadata: { name: 'version', generation: 2 },
        spec: { desiredUpdate: { version: '4.15.2' } },
        status: { desired: { version: '4.15.1' }, history: [{ state: 'Completed', version: '4.15.1' }] },
      };
      const step = decide({ pools: [], nodes: [], cv: [cv] }).steps.find((s) => s.kind === 'clusterVersion');
      assert.ok(step?.kind === 'clusterVersion');
      assert.equal(step.status.desired.version, '4.15.2');
      assert.deepEqual(
        step.status.history.map((h) => (h as { version: string; state: string }).version),
        ['4.15.2', '4.15.1'],
      );
      const done = { ...cv, status: { ...cv.status, desired: { version: '4.15.2' } } };
      assert.equal(
        decide({ pools: [], nodes: [], cv: [done] }).steps.some((s) => s.kind === 'clusterVersion'),
        false,
      );
    });

    it('with controlPlaneSeconds: Partial first, no pool rendered, then Completed and the pools rendered', () => {
      const cv: ClusterVersion = {
        metadata: { name: 'version' },
        spec: { desiredUpdate: { version: '4.15.2' } },
        status: { desired: { version: '4.15.1' }, history: [{ state: 'Completed', version: '4.15.1' }] },
      };
      const config = { controlPlaneSeconds: 30 };
      // The pool's own status is written either way: only the release's steps are looked at.
      const releaseSteps = (steps: McoStep[]) =>
        steps.filter((s) => s.kind === 'clusterVersion' || s.kind === 'render');
      const first = decide({ pools: [pool('worker')], nodes: [], cv: [cv], config });
      assert.deepEqual(
        releaseSteps(first.steps).map((s) => s.kind),
        ['clusterVersion'],
      );
      assert.equal(first.nextAt, T0 + 30_000);
      const step = first.steps[0];
      assert.ok(step?.kind === 'clusterVersion');
      const partial: ClusterVersion = { ...cv, status: step.status };
      // The CRD requires completionTime: null while Partial, as OpenShift writes it.
      assert.equal((partial.status?.history?.[0] as { completionTime?: unknown }).completionTime, null);
      assert.deepEqual(
        partial.status?.history?.map((h) => [h.version, h.state]),
        [
          ['4.15.2', 'Partial'],
          ['4.15.1', 'Completed'],
        ],
      );
      const at = (now: number) =>
        decideMco({
          pools: [pool('worker')],
          nodes: [],
          clusterVersions: [partial],
          config: { ...DEFAULT_MCO, enabled: true, ...config },
          rebootSeconds: 5,
          now,
        });
      const waiting = at(T0 + 10_000);
      assert.deepEqual(releaseSteps(waiting.steps), [], 'the control plane is not there yet: nothing rendered');
      assert.equal(waiting.nextAt, T0 + 30_000);
      const later = at(T0 + 30_000).steps.find((s) => s.kind === 'clusterVersion');
      assert.ok(later?.kind === 'clusterVersion');
      assert.deepEqual(
        later.status.history.map((h) => [(h as { version: string }).version, (h as { state: string }).state]),
        [
          ['4.15.2', 'Completed'],
          ['4.15.1', 'Completed'],
        ],
      );
      const completed: ClusterVersion = { ...cv, status: later.status };
      assert.deepEqual(
        releaseSteps(decide({ pools: [pool('worker')], nodes: [], cv: [completed], config }).steps).map((s) => s.kind),
        ['render'],
      );
    });
  });

  describe('node controller', () => {
    it('hands the rendered config to one node at a time by default, in name order', () => {
      const { steps } = decide({ pools: [pool('worker')], nodes: [node('w3'), node('w1'), node('w2')] });
      assert.deepEqual(nodeSteps(steps), [['setDesired', 'w1']]);
    });

    it('hands it to up to maxUnavailable nodes, counting those already unavailable', () => {
      const nodes = [node('w1', { desired: NEW }), node('w2'), node('w3'), node('w4', { ready: false })];
      const { steps } = decide({ pools: [pool('worker', { maxUnavailable: 3 })], nodes });
      assert.deepEqual(
        steps.filter((s) => s.kind === 'setDesired').map((s) => 'node' in s && s.node),
        ['w2'],
        'w1 updating and w4 NotReady leave room for one',
      );
    });

    it('reads maxUnavailable as a count or a percentage, at least 1', () => {
      assert.equal(maxUnavailableOf(pool('p'), 10), 1);
      assert.equal(maxUnavailableOf(pool('p', { maxUnavailable: 2 }), 10), 2);
      assert.equal(maxUnavailableOf(pool('p', { maxUnavailable: '25%' }), 10), 2);
      assert.equal(maxUnavailableOf(pool('p', { maxUnavailable: '5%' }), 10), 1);
    });

    it('leaves a paused pool alone, and says so in its status', () => {
      const p = pool('worker', { paused: true });
      const { steps } = decide({ pools: [p], nodes: [node('w1'), node('w2')] });
      assert.deepEqual(nodeSteps(steps), []);
      const updating = poolStatus(p, NEW, [node('w1')], T0)?.conditions?.find((c) => c.type === 'Updating');
      assert.equal(updating?.status, 'False');
      assert.match(updating?.message ?? '', /Pool is paused; will not update to rendered-worker-new/);
    });

    it('holds the rollout while a node of the pool is Degraded', () => {
      const nodes = [
        node('w1', { desired: NEW, state: 'Degraded', labels: { [MCO_KEYS.degrade]: 'true' } }),
        node('w2'),
      ];
      assert.deepEqual(nodeSteps(decide({ pools: [pool('worker')], nodes }).steps), []);
    });

    it('adopts a node that joined without a config at the pool’s rendered config and release', () => {
      const cv: ClusterVersion = { metadata: { name: 'version' }, spec: { desiredUpdate: { version: '4.15.2' } } };
      const config = renderedConfigName('worker', '4.15.2');
      const { steps } = decide({
        pools: [pool('worker', { configuration: { name: config } })],
        nodes: [node('w1', { current: undefined })],
        cv: [cv],
      });
      const adopt = steps.find((s) => s.kind === 'adopt');
      assert.deepEqual(adopt && { ...adopt, key: undefined }, {
        kind: 'adopt',
        key: undefined,
        node: 'w1',
        config,
        version: '4.15.2',
      });
    });

    it('puts a node in a custom pool before worker, and in no pool when two custom pools claim it', () => {
      const canary = pool('canary', { nodeSelector: { matchLabels: { 'node-role.kubernetes.io/canary': '' } } });
      const other = pool('other', {
        nodeSelector: { matchExpressions: [{ key: 'node-role.kubernetes.io/canary', operator: 'Exists' }] },
      });
      const labelled = node('w1', { labels: { 'node-role.kubernetes.io/canary': '' } });
      assert.equal(poolOf(labelled, [pool('worker'), canary])?.metadata?.name, 'canary');
      assert.equal(poolOf(node('w2'), [pool('worker'), canary])?.metadata?.name, 'worker');
      assert.equal(poolOf(labelled, [pool('worker'), canary, other]), undefined);
    });
  });

  describe('daemon', () => {
    const one = (n: V1Node, config?: Partial<SimMcoConfig>, cv?: ClusterVersion[]) =>
      decide({
        pools: [pool('worker', { paused: true })],
        nodes: [n],
        ...(config ? { config } : {}),
        ...(cv ? { cv } : {}),
      }).steps.filter((s) => 'node' in s);

    it('goes Working and cordons, drains, reboots, then finishes: one step at a time', () => {
      assert.deepEqual(nodeSteps(one(node('w1', { desired: NEW }))), [['start', 'w1']]);
      const working = { desired: NEW, state: 'Working', unschedulable: true };
      assert.deepEqual(nodeSteps(one(node('w1', working))), [['drain', 'w1']]);
      const drained = { ...working, annotations: { [MCO_KEYS.drained]: NEW } };
      const reboot = one(node('w1', drained))[0];
      assert.ok(reboot?.kind === 'reboot');
      assert.equal(reboot.bootID, 'boot-w1');
      assert.equal(reboot.until, T0 + 5000);
      const down = { ...drained, annotations: { ...drained.annotations, [MCO_KEYS.rebootFrom]: 'boot-w1' } };
      assert.deepEqual(
        nodeSteps(
          one(node('w1', { ...down, annotations: { ...down.annotations, 'sim.drydock.dev/rebooting-until': 'x' } })),
        ),
        [],
        'waits while the host is down',
      );
      assert.deepEqual(
        nodeSteps(one(node('w1', down))),
        [['reboot', 'w1']],
        'same bootID: the reboot did not happen yet',
      );
      assert.deepEqual(
        nodeSteps(one(node('w1', { ...down, bootID: 'boot-2', ready: false }))),
        [],
        'back but not Ready',
      );
      assert.deepEqual(nodeSteps(one(node('w1', { ...down, bootID: 'boot-2' }))), [['finish', 'w1']]);
    });

    it('labels the finished node with the release its config was rendered from', () => {
      const cv: ClusterVersion = {
        metadata: { name: 'version' },
        spec: { desiredUpdate: { version: '4.15.2' } },
        status: { history: [{ version: '4.15.1' }] },
      };
      const [from, to] = [renderedConfigName('worker', '4.15.1'), renderedConfigName('worker', '4.15.2')];
      const annotations = { [MCO_KEYS.drained]: to, [MCO_KEYS.rebootFrom]: 'boot-1' };
      const n = node('w1', {
        current: from,
        desired: to,
        state: 'Working',
        unschedulable: true,
        bootID: 'boot-2',
        annotations,
      });
      const finish = one(n, undefined, [cv]).find((s) => s.kind === 'finish');
      assert.equal(finish?.kind === 'finish' && finish.version, '4.15.2');
    });

    it('applies a config of the same release in place: no cordon, no reboot', () => {
      const cv: ClusterVersion = { metadata: { name: 'version' }, spec: { desiredUpdate: { version: '4.15.2' } } };
      const canaryPool = pool('canary', { nodeSelector: { matchLabels: { canary: 'true' } }, paused: true });
      const n = node('w1', {
        current: renderedConfigName('canary', '4.15.2'),
        desired: renderedConfigName('worker', '4.15.2'),
      });
      const steps = decide({ pools: [pool('worker', { paused: true }), canaryPool], nodes: [n], cv: [cv] }).steps;
      assert.deepEqual(nodeSteps(steps), [['finish', 'w1']]);
    });

    it('goes Degraded with a reason on a node the config or a label marks, once', () => {
      const steps = one(node('w1', { desired: NEW }), { degradedNodes: ['w1'], degradedReason: 'disk on fire' });
      assert.ok(steps[0]?.kind === 'degrade');
      assert.equal(steps[0].reason, 'disk on fire (rendered-worker-new)');
      const labelled = node('w1', { desired: NEW, labels: { [MCO_KEYS.degrade]: 'true' } });
      assert.deepEqual(nodeSteps(one(labelled)), [['degrade', 'w1']]);
      const already = node('w1', { desired: NEW, state: 'Degraded', labels: { [MCO_KEYS.degrade]: 'true' } });
      assert.deepEqual(nodeSteps(one(already)), []);
    });

    it('leaves an up-to-date node alone', () => {
      assert.deepEqual(nodeSteps(one(node('w1', { current: NEW }))), []);
    });
  });

  describe('pool status', () => {
    it('counts machines and says Updating while nodes move, then Updated with the config', () => {
      const p = pool('worker');
      const moving = poolStatus(
        p,
        NEW,
        [node('w1', { current: NEW }), node('w2', { desired: NEW, state: 'Working' })],
        T0,
      );
      assert.deepEqual(
        [
          moving?.machineCount,
          moving?.updatedMachineCount,
          moving?.unavailableMachineCount,
          moving?.degradedMachineCount,
        ],
        [2, 1, 1, 0],
      );
      const cond = (s: typeof moving, t: string) => s?.conditions?.find((c) => c.type === t)?.status;
      assert.deepEqual(
        [cond(moving, 'Updated'), cond(moving, 'Updating'), cond(moving, 'Degraded')],
        ['False', 'True', 'False'],
      );
      assert.deepEqual(moving?.configuration, {});
      const done = poolStatus(p, NEW, [node('w1', { current: NEW }), node('w2', { current: NEW })], T0);
      assert.deepEqual([cond(done, 'Updated'), cond(done, 'Updating')], ['True', 'False']);
      assert.deepEqual(done?.configuration, { name: NEW });
      assert.equal(
        poolStatus({ ...p, status: done }, NEW, [node('w1', { current: NEW }), node('w2', { current: NEW })], T0 + 1),
        undefined,
      );
    });

    it('is Degraded with the node’s reason', () => {
      const n = node('w1', { desired: NEW, state: 'Degraded', annotations: { [MCO_KEYS.reason]: 'boom' } });
      const s = poolStatus(pool('worker'), NEW, [n], T0);
      const degraded = s?.conditions?.find((c) => c.type === 'Degraded');
      assert.equal(degraded?.status, 'True');
      assert.equal(degraded?.message, 'Node w1 is reporting: "boom"');
      assert.equal(s?.degradedMachineCount, 1);
    });
  });

  it('drains what a drain evicts: not DaemonSet, static or finished pods', () => {
    const pod = (o: object) => ({ metadata: { name: 'p', ...o }, status: { phase: 'Running' } });
    assert.equal(toEvict(pod({})), true);
    assert.equal(
      toEvict(pod({ ownerReferences: [{ kind: 'DaemonSet', name: 'd', apiVersion: 'apps/v1', uid: 'u' }] })),
      false,
    );
    assert.equal(toEvict(pod({ annotations: { 'kubernetes.io/config.mirror': 'x' } })), false);
    assert.equal(toEvict({ metadata: { name: 'p' }, status: { phase: 'Succeeded' } }), false);
  });
});
