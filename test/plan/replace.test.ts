import { strict as assert } from 'node:assert';
import { ANNOTATIONS } from '../../src/observe/types.js';
import { nodeImageRecordKey } from '../../src/protocol/keys.js';
import {
  at,
  cloudGroup,
  desired,
  instance,
  iso,
  node,
  nodeImage,
  observed,
  pdb,
  pod,
  providerID,
  scalingGroup,
  workers,
} from './fixtures.js';
import { LOCK, nodeSteps, runCases, SPEC, V1, V2, waitCodes, bare } from './helpers.js';
import { plan } from '../../src/plan/index.js';
import { laneOf } from '../../src/execute/lanes.js';
import { annotationPairs } from '../../src/execute/execute.js';
import type { ObservedNode } from '../../src/observe/types.js';

const sg = scalingGroup('workers', 'workers');
const want = (rollout = {}) => desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2, rollout)] });
const ownActions = (p: Parameters<typeof bare>[0]) => bare(p).filter((a) => a.spec.kind === 'NodeImage');
const locked = (phase: string, since: number, extra: Record<string, string> = {}) => ({
  [ANNOTATIONS.operation]: LOCK,
  [ANNOTATIONS.phase]: phase,
  [ANNOTATIONS.phaseSince]: iso(since),
  ...extra,
});

/** worker-9 marked Done as worker-0's replacement. */
const MARKED = { [ANNOTATIONS.replaces]: 'i-0', [ANNOTATIONS.operation]: LOCK, [ANNOTATIONS.phase]: 'Done' };

/** The Done mark written on worker-9 at `t`, in its own lane (beside worker-0's cordon, not before it). */
const doneMark = (t: number) => ({
  kind: 'annotateNode',
  spec: SPEC,
  node: 'worker-9',
  annotations: {
    ...MARKED,
    [ANNOTATIONS.phaseSince]: iso(t),
    // The rollout's own record, which no other operation on the node writes over.
    [nodeImageRecordKey('workers')]: `workers-img:v2 ${iso(t)}`,
  },
});

/** worker-0..2 on V1; worker-0 started at t=0 with replacement i-9 (worker-9 once joined). */
function inFlight(
  o: {
    phase?: string;
    replacement?: 'none' | 'booting' | 'joined';
    readySince?: number;
    pods?: ReturnType<typeof pod>[];
    unschedulable?: boolean;
    extra?: Record<string, string>;
    rn?: Record<string, string>;
    /** The marked replacement's labels: by default the old node's, as its mark's round copied them. */
    rnLabels?: Record<string, string>;
  } = {},
) {
  const w = workers(3, V1, (i) =>
    i === 0
      ? {
          annotations: locked(o.phase ?? 'Pending', 0, {
            ...(o.replacement !== 'none' ? { [ANNOTATIONS.replacedBy]: 'i-9' } : {}),
            ...o.extra,
          }),
          labels: { pool: 'blue' },
          unschedulable: o.unschedulable ?? false,
        }
      : {},
  );
  const instances = [...w.instances];
  const nodes = [...w.nodes];
  if (o.replacement !== 'none') {
    instances.push(instance('workers', 'i-9', V2, 5));
    if (o.replacement === 'joined')
      nodes.push(
        node('worker-9', providerID('workers', 'i-9'), {
          readySince: o.readySince ?? 60,
          // A node cordoned for its drain has its replacement marked Done (unless a test says otherwise).
          annotations: o.rn ?? (o.phase !== undefined && o.phase !== 'Pending' ? MARKED : {}),
          ...(o.rn === undefined && o.phase !== undefined && o.phase !== 'Pending'
            ? { labels: o.rnLabels ?? { pool: 'blue' } }
            : {}),
        }),
      );
  }
  return observed({
    nodes,
    pods: o.pods ?? [],
    cloudGroups: [cloudGroup('workers', V2, instances, o.replacement === 'none' ? 3 : 4)],
  });
}

describe('plan: replace rollout steps', () => {
  runCases([
    {
      name: 'sets the group image first and does nothing else for that group',
      desired: want(),
      observed: observed({
        nodes: workers(2, V1).nodes,
        cloudGroups: [cloudGroup('workers', V1, workers(2, V1).instances)],
      }),
      now: at(0),
      check: (p) => assert.deepEqual(bare(p), [{ kind: 'setGroupImage', spec: SPEC, groupId: 'workers', image: V2 }]),
    },
    {
      name: 'starts the first node in order and surges one instance for it',
      desired: want(),
      observed: observed({
        nodes: workers(3, V1).nodes,
        cloudGroups: [cloudGroup('workers', V2, workers(3, V1).instances)],
      }),
      now: at(0),
      check: (p) => {
        assert.deepEqual(bare(p), [
          {
            kind: 'annotateNode',
            spec: SPEC,
            node: 'worker-0',
            // A Job a NodeOp left on the node is not this lock's (see "a node a NodeOp finished").
            annotations: { ...locked('Pending', 0), [ANNOTATIONS.job]: null, [ANNOTATIONS.jobMessage]: null },
          },
          { kind: 'surge', spec: SPEC, groupId: 'workers', count: 1, forNodes: ['worker-0'] },
        ]);
        assert.deepEqual(waitCodes(p), ['surge']);
      },
    },
    {
      name: 'a started node without a replacement gets one surged (none exists to claim)',
      desired: want(),
      observed: inFlight({ replacement: 'none' }),
      now: at(30),
      check: (p) =>
        assert.deepEqual(bare(p), [
          { kind: 'surge', spec: SPEC, groupId: 'workers', count: 1, forNodes: ['worker-0'] },
        ]),
    },
    {
      name: 'an orphan new instance younger than the lock is claimed',
      desired: want(),
      observed: (() => {
        const o = inFlight({ replacement: 'booting' });
        // Drop the claim: the instance exists but no node names it.
        const nodes = o.nodes.map((n) => (n.name === 'worker-0' ? { ...n, annotations: locked('Pending', 0) } : n));
        return { ...o, nodes };
      })(),
      now: at(30),
      check: (p) =>
        assert.deepEqual(bare(p), [
          { kind: 'annotateNode', spec: SPEC, node: 'worker-0', annotations: { [ANNOTATIONS.replacedBy]: 'i-9' } },
        ]),
    },
    {
      name: 'an older up-to-date node is never claimed as a replacement',
      desired: want(),
      observed: (() => {
        const w = workers(2, V1, (i) => (i === 0 ? { annotations: locked('Pending', 0) } : {}));
        const established = instance('workers', 'i-7', V2, -600);
        return observed({
          nodes: [...w.nodes, node('worker-7', established.providerID)],
          cloudGroups: [cloudGroup('workers', V2, [...w.instances, established])],
        });
      })(),
      now: at(30),
      check: (p) =>
        assert.deepEqual(bare(p), [
          { kind: 'surge', spec: SPEC, groupId: 'workers', count: 1, forNodes: ['worker-0'] },
        ]),
    },
    {
      name: 'waits for the replacement to join, until its join deadline',
      desired: want({ joinTimeoutSeconds: 600 }),
      observed: inFlight({ replacement: 'booting' }),
      now: at(100),
      check: (p) => {
        assert.deepEqual(bare(p), []);
        assert.deepEqual(p.waits[0], {
          spec: SPEC,
          code: 'join',
          node: 'worker-0',
          reason: `replacement i-9 of worker-0 has not joined and become Ready yet (gives up at ${iso(605)})`,
          until: iso(605),
        });
        assert.deepEqual(p.specs.find((s) => s.spec.name === 'workers')?.pending, [
          { groupId: 'workers', instanceId: 'i-9', providerID: 'sim://workers/i-9', goal: 'Join', deadline: iso(605) },
        ]);
        assert.equal(p.wakeAt, iso(605));
      },
    },
    {
      name: 'removes a replacement that did not join in time and counts a failure',
      desired: want({ joinTimeoutSeconds: 600 }),
      observed: inFlight({ replacement: 'booting' }),
      now: at(605),
      check: (p) => {
        assert.deepEqual(bare(p), [
          {
            kind: 'annotateNode',
            spec: SPEC,
            node: 'worker-0',
            annotations: {
              [ANNOTATIONS.replacedBy]: null,
              [ANNOTATIONS.failures]: '1',
              [ANNOTATIONS.phaseSince]: iso(605),
            },
          },
          { kind: 'removeInstance', spec: SPEC, groupId: 'workers', instanceId: 'i-9' },
        ]);
        assert.equal(p.specs.find((s) => s.spec.name === 'workers')?.failures, 1);
      },
    },
    {
      name: 'with stopOnFailure a join timeout fails the node and halts the rollout',
      desired: want({ joinTimeoutSeconds: 600, stopOnFailure: true }),
      observed: inFlight({ replacement: 'booting' }),
      now: at(605),
      check: (p) => {
        assert.deepEqual(bare(p)[0], {
          kind: 'annotateNode',
          spec: SPEC,
          node: 'worker-0',
          annotations: {
            [ANNOTATIONS.replacedBy]: null,
            [ANNOTATIONS.failures]: '1',
            [ANNOTATIONS.phaseSince]: iso(605),
            [ANNOTATIONS.phase]: 'Failed',
            [ANNOTATIONS.reason]: 'replacement i-9 did not join within 600s',
          },
        });
        const status = p.specs.find((s) => s.spec.name === 'workers');
        assert.equal(status?.phase, 'Halted');
        assert.deepEqual(waitCodes(p), ['halted']);
      },
    },
    {
      name: 'an unclaimed new instance past its join deadline (a removal cut short) is removed',
      desired: want({ joinTimeoutSeconds: 600 }),
      observed: (() => {
        const o = inFlight({ replacement: 'booting' });
        return {
          ...o,
          nodes: o.nodes.map((n) =>
            n.name === 'worker-0' ? { ...n, annotations: locked('Pending', 605, { [ANNOTATIONS.failures]: '1' }) } : n,
          ),
        };
      })(),
      now: at(610),
      check: (p) =>
        assert.deepEqual(bare(p), [
          { kind: 'removeInstance', spec: SPEC, groupId: 'workers', instanceId: 'i-9' },
          { kind: 'surge', spec: SPEC, groupId: 'workers', count: 1, forNodes: ['worker-0'] },
        ]),
    },
    {
      name: 'holds the health gate until the replacement was Ready for minReadySeconds',
      desired: want({ healthGate: { minReadySeconds: 60 } }),
      observed: inFlight({ replacement: 'joined', readySince: 100 }),
      now: at(130),
      check: (p) => {
        assert.deepEqual(bare(p), []);
        assert.deepEqual(p.waits[0], {
          spec: SPEC,
          code: 'health',
          node: 'worker-0',
          reason: 'replacement worker-9 of worker-0 must stay Ready for 60s (with its pods)',
          until: iso(160),
        });
      },
    },
    {
      name: 'after the health gate: copies labels, marks the replacement Done, cordons the old node',
      desired: want({ healthGate: { minReadySeconds: 60 } }),
      observed: inFlight({ replacement: 'joined', readySince: 100 }),
      now: at(160),
      check: (p) =>
        assert.deepEqual(bare(p), [
          { kind: 'copyLabels', spec: SPEC, from: 'worker-0', to: 'worker-9', labels: { pool: 'blue' } },
          doneMark(160),
          {
            kind: 'annotateNode',
            spec: SPEC,
            node: 'worker-0',
            annotations: { [ANNOTATIONS.phase]: 'Cordoned', [ANNOTATIONS.phaseSince]: iso(160) },
          },
          { kind: 'cordon', spec: SPEC, node: 'worker-0' },
        ]),
    },
    {
      name: 'after the health gate, with pods to move: the cordon with Draining in one patch, then the evictions, in one round',
      desired: want({ healthGate: { minReadySeconds: 60 } }),
      observed: inFlight({ replacement: 'joined', readySince: 100, pods: [pod('default', 'web-1', 'worker-0')] }),
      now: at(160),
      check: (p) => {
        const own = p.actions.filter((a) => 'node' in a && a.node === 'worker-0');
        assert.deepEqual(
          own.map((a) => a.kind),
          ['annotateNode', 'cordon', 'evict'],
        );
        const phases = own.flatMap((a) => (a.kind === 'annotateNode' ? [a.annotations[ANNOTATIONS.phase]] : []));
        assert.deepEqual(phases, ['Draining']);
        // The old node's lane (a failed write holds what follows it), but for the replacement's
        // Done mark, in its own lane beside it; the copied labels are the old node's step.
        const lanes = p.actions.map((a) => [a.kind, laneOf(a)]);
        assert.deepEqual(lanes.slice(0, 2), [
          ['copyLabels', 'worker-0'],
          ['annotateNode', 'worker-9'],
        ]);
        assert.ok(lanes.slice(2).every(([, lane]) => lane === 'worker-0'));
        // The cordon is written with Draining, in one patch (what the drain moves: evicted.test.ts).
        const pairs = [...annotationPairs(p.actions).values()].map((x) => [x.toggle, x.annotate]);
        const cordon = p.actions.findIndex((a) => a.kind === 'cordon');
        assert.deepEqual(pairs, [[cordon, cordon - 1]]);
        assert.ok(p.waits.some((w) => w.code === 'drain' && w.node === 'worker-0'));
      },
    },
    {
      // A NodeOp took the replacement once it was marked Done, and reboots it (NotReady past the
      // join timeout): the mark stands, the old node goes on, the NodeOp's lock is not written
      // over and the rebooting replacement is not taken for one that never joined.
      name: 'a marked replacement another operation took since is neither marked again nor removed',
      desired: want(),
      observed: (() => {
        const o = inFlight({
          replacement: 'joined',
          rn: {
            [ANNOTATIONS.replaces]: 'i-0',
            [ANNOTATIONS.operation]: 'NodeOp/patch@r1',
            [ANNOTATIONS.phase]: 'Rebooting',
          },
        });
        return { ...o, nodes: o.nodes.map((n) => (n.name === 'worker-9' ? { ...n, ready: false } : n)) };
      })(),
      now: at(700),
      // The NodeOp is not in this desired state, so it settles its node; the rollout's own actions are the test.
      check: (p) =>
        assert.deepEqual(ownActions(p), [
          {
            kind: 'annotateNode',
            spec: SPEC,
            node: 'worker-0',
            annotations: { [ANNOTATIONS.phase]: 'Cordoned', [ANNOTATIONS.phaseSince]: iso(700) },
          },
          { kind: 'cordon', spec: SPEC, node: 'worker-0' },
        ]),
    },
    {
      name: 'a replacement another operation took before it was marked waits for that operation',
      desired: want(),
      observed: inFlight({
        replacement: 'joined',
        rn: { [ANNOTATIONS.operation]: 'NodeOp/patch@r1', [ANNOTATIONS.phase]: 'Pending' },
      }),
      now: at(200),
      check: (p) => {
        assert.deepEqual(ownActions(p), []);
        assert.deepEqual(p.waits[0], {
          spec: SPEC,
          code: 'lock',
          node: 'worker-0',
          reason:
            'replacement worker-9 of worker-0 is held by NodeOp/patch@r1; it is checked and marked once that operation is done',
        });
      },
    },
    {
      name: 'PDB pre-flight: a PDB allowing 0 disruptions keeps the node uncordoned and is named',
      desired: want(),
      observed: {
        ...inFlight({
          replacement: 'joined',
          rn: { [ANNOTATIONS.replaces]: 'i-0', [ANNOTATIONS.operation]: LOCK, [ANNOTATIONS.phase]: 'Done' },
          pods: [pod('default', 'web-1', 'worker-0', { pdbs: ['default/web'] })],
        }),
        pdbs: [pdb('default', 'web', 0)],
      },
      now: at(200),
      check: (p) => {
        assert.deepEqual(bare(p), []);
        assert.deepEqual(p.waits[0], {
          spec: SPEC,
          code: 'pdb',
          node: 'worker-0',
          reason: 'worker-0 not cordoned: PDB default/web allows 0 disruptions (pod default/web-1 would be evicted)',
        });
      },
    },
    {
      name: 'pre-flight: DaemonSet pods block the drain unless ignoreDaemonSets, before any cordon',
      desired: want({
        drain: { enabled: true, force: false, ignoreDaemonSets: false, deleteEmptyDirData: false, onTimeout: 'halt' },
      }),
      observed: inFlight({
        replacement: 'joined',
        rn: { [ANNOTATIONS.replaces]: 'i-0', [ANNOTATIONS.operation]: LOCK, [ANNOTATIONS.phase]: 'Done' },
        pods: [pod('kube-system', 'proxy-a', 'worker-0', { ownerKind: 'DaemonSet', ownerName: 'proxy' })],
      }),
      now: at(200),
      check: (p) => {
        assert.deepEqual(bare(p), []);
        assert.equal(p.waits[0]?.code, 'drain');
        assert.match(p.waits[0]?.reason ?? '', /DaemonSet proxy; set rollout.drain.ignoreDaemonSets: true/);
      },
    },
    {
      name: 'a cordoned node moves to Draining and evicts what the drain options allow',
      desired: want(),
      observed: inFlight({
        phase: 'Cordoned',
        unschedulable: true,
        replacement: 'joined',
        pods: [
          pod('default', 'web-1', 'worker-0'),
          pod('kube-system', 'proxy-a', 'worker-0', { ownerKind: 'DaemonSet' }),
          pod('kube-system', 'static', 'worker-0', { mirror: true, ownerKind: 'Node' }),
          pod('default', 'leaving', 'worker-0', { terminating: true }),
        ],
      }),
      now: at(300),
      check: (p) => {
        assert.deepEqual(bare(p), [
          {
            kind: 'annotateNode',
            spec: SPEC,
            node: 'worker-0',
            annotations: { [ANNOTATIONS.phase]: 'Draining', [ANNOTATIONS.phaseSince]: iso(300) },
          },
          { kind: 'evict', spec: SPEC, node: 'worker-0', namespace: 'default', pod: 'web-1' },
        ]);
        assert.deepEqual(p.waits[0], {
          spec: SPEC,
          code: 'drain',
          node: 'worker-0',
          reason: 'draining worker-0: 2 pod(s) left',
        });
      },
    },
    {
      name: 'a drained node whose marked replacement lacks its labels (a stop between mark and copy): copied, then removed',
      desired: want(),
      observed: inFlight({ phase: 'Draining', unschedulable: true, replacement: 'joined', rnLabels: {} }),
      now: at(400),
      check: (p) => {
        assert.deepEqual(bare(p).slice(0, 3), [
          { kind: 'copyLabels', spec: SPEC, from: 'worker-0', to: 'worker-9', labels: { pool: 'blue' } },
          { kind: 'removeInstance', spec: SPEC, groupId: 'workers', instanceId: 'i-0', node: 'worker-0' },
          { kind: 'deleteNode', spec: SPEC, node: 'worker-0' },
        ]);
        // In the old node's lane, before its removal: a failed copy holds the removal (execute).
        assert.deepEqual(
          p.actions.slice(0, 2).map((a) => laneOf(a)),
          ['worker-0', 'worker-0'],
        );
      },
    },
    {
      name: 'a drained node: its instance and its Node are removed, and the next node takes its slot after them',
      desired: want(),
      observed: inFlight({
        phase: 'Draining',
        unschedulable: true,
        replacement: 'joined',
        pods: [pod('kube-system', 'proxy-a', 'worker-0', { ownerKind: 'DaemonSet' })],
      }),
      now: at(400),
      check: (p) =>
        // concurrency 1: worker-1 starts in worker-0's lane, so a failed removal holds its lock,
        // and its surge (a barrier) comes after the removal.
        assert.deepEqual(bare(p), [
          { kind: 'removeInstance', spec: SPEC, groupId: 'workers', instanceId: 'i-0', node: 'worker-0' },
          { kind: 'deleteNode', spec: SPEC, node: 'worker-0' },
          {
            kind: 'annotateNode',
            spec: SPEC,
            node: 'worker-1',
            forNode: 'worker-0',
            annotations: {
              [ANNOTATIONS.operation]: LOCK,
              [ANNOTATIONS.phase]: 'Pending',
              [ANNOTATIONS.phaseSince]: iso(400),
              [ANNOTATIONS.job]: null,
              [ANNOTATIONS.jobMessage]: null,
            },
          },
          { kind: 'surge', spec: SPEC, groupId: 'workers', count: 1, forNodes: ['worker-1'] },
        ]),
    },
    {
      // The Done mark goes out beside the old node's cordon: should it not land, the drain writes
      // it again, and the old instance waits for it.
      name: 'a drained node whose replacement has no Done mark: marked again, removed only once it is',
      desired: want(),
      observed: inFlight({
        phase: 'Draining',
        unschedulable: true,
        replacement: 'joined',
        rn: {},
        pods: [pod('kube-system', 'proxy-a', 'worker-0', { ownerKind: 'DaemonSet' })],
      }),
      now: at(400),
      check: (p) => assert.deepEqual(bare(p), [doneMark(400)]),
    },
    {
      name: 'a drained node whose unmarked replacement another operation holds stays until it can be marked',
      desired: want(),
      observed: inFlight({
        phase: 'Draining',
        unschedulable: true,
        replacement: 'joined',
        rn: { [ANNOTATIONS.operation]: 'NodeOp/patch@r1', [ANNOTATIONS.phase]: 'Pending' },
      }),
      now: at(400),
      check: (p) => {
        assert.deepEqual(ownActions(p), []);
        assert.deepEqual(p.waits[0], {
          spec: SPEC,
          code: 'lock',
          node: 'worker-0',
          reason:
            'replacement worker-9 of worker-0 is held by NodeOp/patch@r1; it is marked Done once that operation is done, and worker-0 stays until then',
        });
      },
    },
    {
      name: 'a node annotated Cordoned but still schedulable (crash between the two writes) is cordoned again',
      desired: want(),
      observed: inFlight({
        phase: 'Cordoned',
        unschedulable: false,
        replacement: 'joined',
        pods: [pod('default', 'web-1', 'worker-0')],
      }),
      now: at(300),
      check: (p) =>
        assert.deepEqual(bare(p).slice(0, 2), [
          { kind: 'cordon', spec: SPEC, node: 'worker-0' },
          {
            kind: 'annotateNode',
            spec: SPEC,
            node: 'worker-0',
            annotations: { [ANNOTATIONS.phase]: 'Draining', [ANNOTATIONS.phaseSince]: iso(300) },
          },
        ]),
    },
  ]);
});

describe('plan: drain timeouts', () => {
  const drain = (onTimeout: 'halt' | 'force' | 'skipNode') => ({
    drain: {
      enabled: true,
      force: false,
      ignoreDaemonSets: true,
      deleteEmptyDirData: false,
      timeoutSeconds: 300,
      onTimeout,
    },
  });
  const stuck = () =>
    inFlight({
      phase: 'Draining',
      unschedulable: true,
      replacement: 'joined',
      extra: { [ANNOTATIONS.cordoned]: 'true' },
      pods: [pod('default', 'web-1', 'worker-0', { pdbs: ['default/web'] })],
    });
  const reason = 'drain timed out after 300s with 1 pod(s) left (default/web-1)';
  runCases([
    {
      name: 'before the timeout: evict again, wake at the timeout',
      desired: want(drain('halt')),
      observed: stuck(),
      now: at(200),
      check: (p) => {
        assert.deepEqual(bare(p), [
          { kind: 'evict', spec: SPEC, node: 'worker-0', namespace: 'default', pod: 'web-1' },
        ]);
        assert.equal(p.wakeAt, iso(300));
      },
    },
    {
      name: 'halt: the node stays cordoned, Failed with a reason; the spec halts',
      desired: want(drain('halt')),
      observed: stuck(),
      now: at(300),
      check: (p) => {
        assert.deepEqual(bare(p), [
          {
            kind: 'annotateNode',
            spec: SPEC,
            node: 'worker-0',
            annotations: {
              [ANNOTATIONS.failures]: '1',
              [ANNOTATIONS.phaseSince]: iso(300),
              [ANNOTATIONS.phase]: 'Failed',
              [ANNOTATIONS.reason]: `halted: ${reason}; drain.onTimeout is halt`,
              // It halts the spec whatever stopOnFailure says: recorded, not re-derived.
              [ANNOTATIONS.halts]: 'true',
            },
          },
        ]);
        assert.equal(p.specs.find((s) => s.spec.name === 'workers')?.phase, 'Halted');
        assert.deepEqual(waitCodes(p), ['halted']);
      },
    },
    {
      name: 'past the timeout, but drydock began acting after the drain started: the timeout counts from then',
      desired: want(drain('halt')),
      observed: stuck(),
      now: at(5_000),
      // Down (or not the leader) from before the deadline until 4,900 s: no drydock evicted anything.
      options: { actingSince: at(4_900).getTime() },
      check: (p) => {
        assert.deepEqual(bare(p), [
          { kind: 'evict', spec: SPEC, node: 'worker-0', namespace: 'default', pod: 'web-1' },
        ]);
        assert.equal(p.wakeAt, iso(5_200));
        assert.notEqual(p.specs.find((s) => s.spec.name === 'workers')?.phase, 'Halted');
      },
    },
    {
      name: 'past the timeout counted from when drydock began acting: it halts as ever',
      desired: want(drain('halt')),
      observed: stuck(),
      now: at(5_200),
      options: { actingSince: at(4_900).getTime() },
      check: (p) => {
        assert.equal(p.specs.find((s) => s.spec.name === 'workers')?.phase, 'Halted');
        assert.deepEqual(waitCodes(p), ['halted']);
      },
    },
    {
      name: 'force: the remaining pods are deleted',
      desired: want(drain('force')),
      observed: stuck(),
      now: at(300),
      check: (p) =>
        assert.deepEqual(bare(p), [
          {
            kind: 'deletePod',
            spec: SPEC,
            node: 'worker-0',
            namespace: 'default',
            pod: 'web-1',
            reason: `${reason}; drain.onTimeout force`,
          },
        ]),
    },
    {
      name: 'skipNode: uncordoned, marked Skipped with a reason (no failure), the rollout moves on',
      desired: want(drain('skipNode')),
      observed: stuck(),
      now: at(300),
      check: (p) => {
        assert.deepEqual(bare(p).slice(0, 2), [
          { kind: 'uncordon', spec: SPEC, node: 'worker-0' },
          {
            kind: 'annotateNode',
            spec: SPEC,
            node: 'worker-0',
            annotations: {
              [ANNOTATIONS.cordoned]: null,
              [ANNOTATIONS.phaseSince]: iso(300),
              [ANNOTATIONS.phase]: 'Skipped',
              [ANNOTATIONS.reason]: `skipped: ${reason}`,
            },
          },
        ]);
        const status = p.specs.find((s) => s.spec.name === 'workers');
        assert.notEqual(status?.phase, 'Halted');
        assert.equal(status?.failures, 0);
      },
    },
    {
      name: 'a skipped node later: reported with its reason, no failure; the rollout goes on without it',
      desired: want({ ...drain('skipNode'), stopOnFailure: true }),
      observed: inFlight({
        phase: 'Skipped',
        replacement: 'joined',
        extra: { [ANNOTATIONS.reason]: `skipped: ${reason}` },
      }),
      now: at(400),
      check: (p) => {
        const status = p.specs.find((s) => s.spec.name === 'workers');
        assert.equal(status?.phase === 'Halted', false);
        assert.equal(status?.failures, 0);
        assert.equal(status?.nodes.find((r) => r.node === 'worker-0')?.message, `skipped: ${reason}`);
        assert.deepEqual(
          bare(p).map((a) => a.kind),
          ['annotateNode', 'surge'],
        );
      },
    },
  ]);
});

describe('plan: a node a NodeOp finished, then replaced', () => {
  // A done NodeOp node keeps its Job's name and message for its status row (nodeop/step.ts finishNode).
  const done = {
    'nodeop.drydock.dev/patch': 'r1',
    [ANNOTATIONS.job]: 'drydock-system/nodeop-patch-worker-0-r1',
    [ANNOTATIONS.jobMessage]: 'patched',
  };
  const world = (nodes: ObservedNode[], surged: boolean) => {
    const instances = [...workers(1, V1).instances, ...(surged ? [instance('workers', 'i-9', V2, 5)] : [])];
    return observed({ nodes, cloudGroups: [cloudGroup('workers', V2, instances)] });
  };

  it('is locked for its replacement, and the next round claims the instance surged for it', () => {
    const [w0] = workers(1, V1, () => ({ annotations: done })).nodes;
    assert.ok(w0 !== undefined);
    const first = plan(want(), world([w0], false), at(0));
    const lock = first.actions.find((a) => a.kind === 'annotateNode' && a.node === 'worker-0');
    assert.ok(lock?.kind === 'annotateNode');
    assert.equal(lock.annotations[ANNOTATIONS.operation], LOCK);
    assert.ok(first.actions.some((a) => a.kind === 'surge'));
    // The round after, as the lock left the node (a null removes a key), its surge booting.
    const annotations: Record<string, string> = { ...w0.annotations };
    for (const [k, v] of Object.entries(lock.annotations)) {
      if (v === null) delete annotations[k];
      else annotations[k] = v;
    }
    const next = plan(want(), world([{ ...w0, annotations }], true), at(10));
    const onNode = nodeSteps(next).actions.filter((a) => 'node' in a && a.node === 'worker-0');
    // Read as an in-place hold, it was released as a NodeImage no longer inPlace, and its surge orphaned.
    assert.deepEqual(
      onNode.map((a) => (a.kind === 'annotateNode' ? a.annotations : a.kind)),
      [{ [ANNOTATIONS.replacedBy]: 'i-9' }],
    );
    assert.ok(!next.actions.some((a) => a.kind === 'surge'));
  });
});
