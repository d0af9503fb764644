import assert from 'node:assert/strict';
import { CloudError, type CloudProvider } from '../../src/cloud/provider.js';
import { executeActions, type KubeApis } from '../../src/execute/index.js';
import type { Action, SpecRef } from '../../src/plan/types.js';
import { ApiException } from '@kubernetes/client-node';
import { plan } from '../../src/plan/index.js';
import type { ObservedJob } from '../../src/observe/types.js';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { at, desired, iso, node, observed } from '../plan/fixtures.js';
import { nodeOp } from '../plan/nodeop/fixtures.js';
import { recordingDeps } from './plan-actions.js';

const spec: SpecRef = { kind: 'NodeImage', name: 'worker' };

describe('execute: a failed step holds the rest of its node', () => {
  it('does not delete the Node of an instance the cloud refused to remove (the instance would be orphaned)', async () => {
    const removals: string[] = [];
    const cloud = {
      removeInstance: (groupId: string, id: string): Promise<void> => {
        removals.push(`${groupId}/${id}`);
        return Promise.reject(new CloudError('Throttled', 'rate exceeded', { retryAfterSeconds: 1 }));
      },
    } as unknown as CloudProvider;
    // No Kubernetes client: a deleteNode that ran anyway would fail with a TypeError, not be Deferred.
    const actions: Action[] = [
      { kind: 'removeInstance', spec, reason: 'test', groupId: 'workers', instanceId: 'i-1', node: 'n-1' },
      { kind: 'deleteNode', spec, reason: 'test', node: 'n-1' },
    ];
    const rs = await executeActions(actions, recordingDeps({} as KubeApis, cloud));
    assert.deepEqual(removals, ['workers/i-1']);
    assert.notEqual(rs[0]?.outcome.kind, 'done');
    assert.deepEqual(rs[1]?.outcome, {
      kind: 'transient',
      code: 'Deferred',
      reason: 'deleteNode n-1: deferred, an earlier step on node n-1 did not succeed',
    });
  });

  it('does not remove a node whose labels were not copied to its replacement (they would go with it)', async () => {
    const removals: string[] = [];
    const cloud = {
      removeInstance: (groupId: string, id: string): Promise<void> => {
        removals.push(`${groupId}/${id}`);
        return Promise.resolve();
      },
    } as unknown as CloudProvider;
    const kube = {
      core: {
        readNode: () => Promise.reject(new ApiException(503, 'unavailable', {}, {})),
        patchNode: () => Promise.reject(new ApiException(503, 'unavailable', {}, {})),
      },
    } as unknown as KubeApis;
    const actions: Action[] = [
      { kind: 'copyLabels', spec, reason: 'test', from: 'n-1', to: 'n-9', labels: { pool: 'blue' } },
      { kind: 'removeInstance', spec, reason: 'test', groupId: 'workers', instanceId: 'i-1', node: 'n-1' },
      { kind: 'deleteNode', spec, reason: 'test', node: 'n-1' },
    ];
    const rs = await executeActions(actions, recordingDeps(kube, cloud));
    assert.deepEqual(removals, []);
    assert.deepEqual(
      rs.map((r) => (r.outcome.kind === 'transient' ? r.outcome.code : r.outcome.kind)),
      ['HTTP503', 'Deferred', 'Deferred'],
    );
  });

  it('does not uncordon a node whose reboot pod, which could still reboot it, was not deleted', async () => {
    const calls: string[] = [];
    const kube = {
      core: {
        deleteNamespacedPod: (r: { name: string }) => {
          calls.push(`delete pod ${r.name}`);
          return Promise.reject(new ApiException(503, 'unavailable', {}, {}));
        },
        readNode: () => {
          calls.push('read node');
          return Promise.resolve({ metadata: { name: 'n-1', annotations: {} }, spec: {} });
        },
        patchNode: () => {
          calls.push('patch node');
          return Promise.resolve({});
        },
      },
    } as unknown as KubeApis;
    const actions: Action[] = [
      {
        kind: 'deleteRebootPod',
        spec,
        reason: 'test',
        node: 'n-1',
        namespace: 'drydock-system',
        name: 'reboot-n-1-b-1',
      },
      { kind: 'uncordon', spec, reason: 'test', node: 'n-1' },
      { kind: 'annotateNode', spec, reason: 'test', node: 'n-1', annotations: { [ANNOTATIONS.phase]: 'Failed' } },
    ];
    const rs = await executeActions(actions, recordingDeps(kube));
    assert.deepEqual(calls, ['delete pod reboot-n-1-b-1']);
    assert.deepEqual(
      rs.map((r) => (r.outcome.kind === 'transient' ? r.outcome.code : r.outcome.kind)),
      ['HTTP503', 'Deferred', 'Deferred'],
    );
  });
});

/**
 * A replace round in which worker-0 is replaced and worker-1 starts on its slot (the planner's
 * own actions for it: test/plan/replace.test.ts, "a drained node"), run against a cloud and an
 * API server that answer as told. A surge never outruns the removal that made room for it, nor
 * comes for a node whose lock was not written.
 */
describe('execute: a surge waits for the removal and the lock it follows', () => {
  const lock: Action = {
    kind: 'annotateNode',
    spec,
    reason: 'test',
    node: 'worker-1',
    annotations: { [ANNOTATIONS.operation]: 'NodeImage/worker@r1', [ANNOTATIONS.phase]: 'Pending' },
  };
  const surge: Action = { kind: 'surge', spec, reason: 'test', groupId: 'workers', count: 1, forNodes: ['worker-1'] };
  const handOver: Action[] = [
    { kind: 'removeInstance', spec, reason: 'test', groupId: 'workers', instanceId: 'i-0', node: 'worker-0' },
    { kind: 'deleteNode', spec, reason: 'test', node: 'worker-0' },
    { ...lock, forNode: 'worker-0' },
    surge,
  ];

  async function execute(
    actions: readonly Action[],
    answers: { removal: 'ok' | 'fails'; patch: 'ok' | 'fails' },
  ): Promise<{ calls: string[]; outcomes: string[] }> {
    const calls: string[] = [];
    const cloud = {
      removeInstance: (groupId: string, id: string): Promise<void> => {
        calls.push(`remove ${groupId}/${id}`);
        return answers.removal === 'ok'
          ? Promise.resolve()
          : Promise.reject(new CloudError('Throttled', 'rate exceeded', { retryAfterSeconds: 1 }));
      },
      addCapacity: (groupId: string, count: number): Promise<void> => {
        calls.push(`surge ${groupId} +${count}`);
        return Promise.resolve();
      },
    } as unknown as CloudProvider;
    const kube = {
      core: {
        deleteNode: (r: { name: string }) => {
          calls.push(`delete node ${r.name}`);
          return Promise.resolve({});
        },
        readNode: (r: { name: string }) => Promise.resolve({ metadata: { name: r.name, annotations: {} }, spec: {} }),
        patchNode: (r: { name: string }) => {
          calls.push(`patch ${r.name}`);
          return answers.patch === 'ok'
            ? Promise.resolve({})
            : Promise.reject(new ApiException(503, 'unavailable', {}, {}));
        },
      },
    } as unknown as KubeApis;
    const rs = await executeActions(actions, recordingDeps(kube, cloud));
    return { calls, outcomes: rs.map((r) => `${r.action.kind} ${r.outcome.kind}`) };
  }

  it('the removal, the Node, the next lock and its surge, in that order', async () => {
    const { calls } = await execute(handOver, { removal: 'ok', patch: 'ok' });
    assert.deepEqual(calls, ['remove workers/i-0', 'delete node worker-0', 'patch worker-1', 'surge workers +1']);
  });

  it('a refused removal holds the lock started on its slot, and the group gets no new instance', async () => {
    const { calls, outcomes } = await execute(handOver, { removal: 'fails', patch: 'ok' });
    assert.deepEqual(calls, ['remove workers/i-0']);
    assert.deepEqual(outcomes, [
      'removeInstance waiting',
      'deleteNode transient',
      'annotateNode transient',
      'surge transient',
    ]);
  });

  it('a lock that was not written gets no surge', async () => {
    const { calls, outcomes } = await execute([lock, surge], { removal: 'ok', patch: 'fails' });
    assert.deepEqual(calls, ['patch worker-1']);
    assert.deepEqual(outcomes, ['annotateNode transient', 'surge transient']);
  });
});

/**
 * A NodeOp node's round that writes its phase and makes what the phase is for, planned by the
 * planner and run against an API server whose node patch answers as told: the Job beside
 * Updating (its own record, by its fixed name), the reboot pod beside Rebooting (its own record
 * of the boot it reboots from).
 */
describe('execute: a NodeOp phase and its call in the same round', () => {
  const NS = 'drydock-system';
  const drain = { enabled: true, force: false, ignoreDaemonSets: true, deleteEmptyDirData: true, onTimeout: 'halt' };
  const lock = { [ANNOTATIONS.operation]: 'NodeOp/patch@r1', [ANNOTATIONS.phaseSince]: iso(-10) };
  const done: ObservedJob = {
    namespace: NS,
    name: 'nodeop-patch-worker-0-r1',
    labels: {},
    succeeded: true,
    failed: false,
    attempts: 1,
  };
  const rounds = {
    'Draining, drained: Updating, then the Job': plan(
      desired({ nodeOps: [nodeOp('patch', { cordon: true, drain: drain as never })] }),
      observed({
        nodes: [
          node('worker-0', 'sim://g/worker-0', {
            unschedulable: true,
            annotations: { ...lock, [ANNOTATIONS.phase]: 'Draining', [ANNOTATIONS.cordoned]: 'true' },
          }),
        ],
      }),
      at(0),
      { jobNamespace: NS },
    ),
    'Updating, Job succeeded: Rebooting, then the reboot pod': plan(
      desired({ nodeOps: [nodeOp('patch', { rebootOnSuccess: true })] }),
      observed({
        nodes: [
          {
            ...node('worker-0', 'sim://g/worker-0', { annotations: { ...lock, [ANNOTATIONS.phase]: 'Updating' } }),
            bootID: 'b-1',
          },
        ],
        jobs: [done],
      }),
      at(0),
      { jobNamespace: NS, rebootTimeoutSeconds: 600 },
    ),
  };

  /**
   * Runs the round's actions; says which calls reached the API server, in order. `patch` answers
   * every node patch, or each in turn; `bodies` collects what each patch set.
   */
  async function execute(
    actions: readonly Action[],
    patch: 'ok' | 'fails' | readonly ('ok' | 'fails')[],
    bodies: unknown[] = [],
  ): Promise<[string[], string[]]> {
    const calls: string[] = [];
    const answers = typeof patch === 'string' ? undefined : [...patch];
    const kube = {
      core: {
        readNode: (r: { name: string }) => Promise.resolve({ metadata: { name: r.name, annotations: {} }, spec: {} }),
        patchNode: (r: { name: string; body: unknown }) => {
          calls.push(`patch ${r.name}`);
          bodies.push(r.body);
          const answer = answers === undefined ? patch : (answers.shift() ?? 'ok');
          return answer === 'ok' ? Promise.resolve({}) : Promise.reject(new ApiException(503, 'unavailable', {}, {}));
        },
        createNamespacedPod: (r: { body: { metadata?: { name?: string } } }) => {
          calls.push(`create pod ${r.body.metadata?.name ?? ''}`);
          return Promise.resolve(r.body);
        },
      },
      batch: {
        createNamespacedJob: (r: { body: { metadata?: { name?: string } } }) => {
          calls.push(`create job ${r.body.metadata?.name ?? ''}`);
          return Promise.resolve(r.body);
        },
      },
    } as unknown as KubeApis;
    const rs = await executeActions(actions, recordingDeps(kube));
    return [calls, rs.map((r) => (r.outcome.kind === 'transient' ? r.outcome.code : r.outcome.kind))];
  }

  const made = {
    'Draining, drained: Updating, then the Job': { kind: 'createNodeJob', call: 'create job nodeop-patch-worker-0-r1' },
    'Updating, Job succeeded: Rebooting, then the reboot pod': {
      kind: 'createRebootPod',
      call: 'create pod reboot-worker-0-b-1',
    },
  };
  for (const [round, p] of Object.entries(rounds)) {
    const { kind, call } = made[round as keyof typeof made];

    it(`${round}: the call starts beside its phase, made while the phase patch has not answered`, async () => {
      assert.deepEqual(
        p.actions.map((a) => `${a.kind}${a.beside === true ? ' beside' : ''}`),
        ['annotateNode', `${kind} beside`],
      );
      const calls: string[] = [];
      let callMade: () => void = () => undefined;
      const answered = new Promise<void>((resolve) => (callMade = resolve));
      const create = (r: { body: { metadata?: { name?: string } } }) => {
        calls.push(`${call.split(' ').slice(0, 2).join(' ')} ${r.body.metadata?.name ?? ''}`);
        callMade();
        return Promise.resolve(r.body);
      };
      const kube = {
        core: {
          // The patch answers only once the call is made: a call that waited for it would never come.
          patchNode: async (r: { name: string }) => {
            calls.push(`patch ${r.name}`);
            await answered;
            calls.push(`patched ${r.name}`);
            return {};
          },
          createNamespacedPod: create,
        },
        batch: { createNamespacedJob: create },
      } as unknown as KubeApis;
      const rs = await executeActions(p.actions, recordingDeps(kube));
      assert.deepEqual(calls, ['patch worker-0', call, 'patched worker-0']);
      assert.deepEqual(
        rs.map((r) => r.outcome.kind),
        ['done', 'done'],
      );
    });

    it(`${round}: a failed phase write does not hold the call, its own record (the next round writes the phase)`, async () => {
      const [calls, outcomes] = await execute(p.actions, 'fails');
      assert.deepEqual([...calls].sort(), [call, 'patch worker-0']);
      assert.deepEqual(outcomes, ['HTTP503', 'done']);
    });
  }

  describe('Pending without a drain: the cordon with Updating, then the Job', () => {
    const p = plan(
      desired({ nodeOps: [nodeOp('patch', { cordon: true })] }),
      observed({
        nodes: [node('worker-0', 'sim://g/worker-0', { annotations: { ...lock, [ANNOTATIONS.phase]: 'Pending' } })],
      }),
      at(0),
      { jobNamespace: NS },
    );

    it('the Job follows the one patch of the cordon and its phase', async () => {
      assert.deepEqual(
        p.actions.map((a) => a.kind),
        ['cordon', 'annotateNode', 'createNodeJob'],
      );
      const [calls, outcomes] = await execute(p.actions, 'ok');
      assert.deepEqual(calls.slice(0, 1), ['patch worker-0']);
      assert.match(calls[1] ?? '', /^create job /);
      assert.deepEqual(outcomes, ['done', 'done', 'done']);
    });

    it('a failed cordon holds the Job (the next round plans it again)', async () => {
      const [calls, outcomes] = await execute(p.actions, 'fails');
      assert.deepEqual(calls, ['patch worker-0']);
      assert.deepEqual(outcomes, ['HTTP503', 'Deferred', 'Deferred']);
    });
  });

  describe('a free node: its lock, the cordon and Updating in one patch, then the Job, in one round', () => {
    const p = plan(
      desired({ nodeOps: [nodeOp('patch', { cordon: true })] }),
      observed({ nodes: [node('worker-0', 'sim://g/worker-0')] }),
      at(0),
      { jobNamespace: NS },
    );
    const phaseOf = (a: Action | undefined): string | undefined =>
      a?.kind === 'annotateNode' ? (a.annotations[ANNOTATIONS.phase] ?? undefined) : undefined;

    it('the lock rides in the patch of the cordon and the phase after it, and the Job follows that patch', async () => {
      assert.deepEqual(
        p.actions.map((a) => a.kind),
        ['annotateNode', 'cordon', 'annotateNode', 'createNodeJob'],
      );
      assert.deepEqual([phaseOf(p.actions[0]), phaseOf(p.actions[2])], ['Pending', 'Updating']);
      const bodies: unknown[] = [];
      const [calls, outcomes] = await execute(p.actions, 'ok', bodies);
      assert.deepEqual(calls.slice(0, 1), ['patch worker-0']);
      assert.match(calls[1] ?? '', /^create job /);
      assert.equal(calls.length, 2);
      assert.deepEqual(outcomes, ['done', 'done', 'done', 'done']);
      // One patch: the lock's operation, the cordon, and the phase after it (Pending never lands).
      const [patch] = bodies as { metadata?: { annotations?: Record<string, string> }; spec?: unknown }[];
      assert.deepEqual(patch?.spec, { unschedulable: true });
      assert.equal(patch?.metadata?.annotations?.[ANNOTATIONS.operation], 'NodeOp/patch@r1');
      assert.equal(patch?.metadata?.annotations?.[ANNOTATIONS.phase], 'Updating');
    });

    it('a failed patch holds the Job and leaves the node unlocked and uncordoned (the next round starts it again)', async () => {
      const [calls, outcomes] = await execute(p.actions, 'fails');
      assert.deepEqual(calls, ['patch worker-0']);
      assert.deepEqual(outcomes, ['HTTP503', 'Deferred', 'Deferred', 'Deferred']);
    });
  });

  describe("a node started on the slot a finished node hands over runs after that node's release", () => {
    const p = plan(
      desired({ nodeOps: [nodeOp('patch', { cordon: true, concurrency: 1 })] }),
      observed({
        nodes: [
          node('worker-0', 'sim://g/worker-0', { annotations: { ...lock, [ANNOTATIONS.phase]: 'Verifying' } }),
          node('worker-1', 'sim://g/worker-1'),
        ],
      }),
      at(0),
      { jobNamespace: NS },
    );

    it('the release, then the lock with the cordon and its phase, then the Job, one after another', async () => {
      assert.deepEqual(
        p.actions.map((a) => `${a.kind} ${'node' in a ? a.node : ''}`),
        [
          'annotateNode worker-0',
          'annotateNode worker-1',
          'cordon worker-1',
          'annotateNode worker-1',
          'createNodeJob worker-1',
        ],
      );
      const [calls, outcomes] = await execute(p.actions, 'ok');
      assert.deepEqual(calls.slice(0, 2), ['patch worker-0', 'patch worker-1']);
      assert.match(calls[2] ?? '', /^create job nodeop-patch-worker-1-/);
      assert.equal(calls.length, 3);
      assert.deepEqual(outcomes, ['done', 'done', 'done', 'done', 'done']);
    });

    it('a failed release holds the start: no second node is locked while the first still holds its slot', async () => {
      const [calls, outcomes] = await execute(p.actions, 'fails');
      assert.deepEqual(calls, ['patch worker-0']);
      assert.deepEqual(outcomes, ['HTTP503', 'Deferred', 'Deferred', 'Deferred', 'Deferred']);
    });
  });
});
