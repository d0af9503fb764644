/**
 * One meaning of drain.onTimeout and failure handling for every kind (plan/outcome.ts): each
 * policy runs against each kind through the real planner, a node whose drain is past its
 * timeout with a pod a PDB holds, and every kind must come out the same.
 */
import { strict as assert } from 'node:assert';
import { plan, type Plan } from '../../src/plan/index.js';
import { ANNOTATIONS, nodeImageRecordKey } from '../../src/protocol/keys.js';
import type { DesiredState, DrainOptions, NodeImage } from '../../src/spec/model.js';
import type { ObservedNode, ObservedState } from '../../src/observe/types.js';
import {
  at,
  cloudGroup,
  desired,
  instance,
  iso,
  node,
  nodeImage,
  nodeMaintenance,
  observed,
  pdb,
  pod,
  providerID,
  workers,
} from './fixtures.js';
import { LOCK, V1, V2 } from './helpers.js';
import { nodeOp } from './nodeop/fixtures.js';
import { scalingGroup } from './fixtures.js';

type Policy = DrainOptions['onTimeout'];

const drainOf = (onTimeout: Policy): DrainOptions => ({
  enabled: true,
  force: false,
  ignoreDaemonSets: true,
  deleteEmptyDirData: true,
  timeoutSeconds: 300,
  onTimeout,
});

/** The node under test, Draining since t=0, cordoned by drydock, held by `lock`. */
function draining(lock: string, extra: Record<string, string> = {}): ObservedNode {
  const n = node('worker-0', providerID('workers', 'i-0'), {
    unschedulable: true,
    annotations: {
      [ANNOTATIONS.operation]: lock,
      [ANNOTATIONS.phase]: 'Draining',
      [ANNOTATIONS.phaseSince]: iso(0),
      [ANNOTATIONS.cordoned]: 'true',
      ...extra,
    },
  });
  return { ...n, bootID: 'boot-0' };
}

const stuckPod = pod('default', 'web-1', 'worker-0', { pdbs: ['default/web'] });

function world(nodes: ObservedNode[], parts: Partial<ObservedState> = {}): ObservedState {
  return observed({ nodes, pods: [stuckPod], pdbs: [pdb('default', 'web', 0)], ...parts });
}

interface Kind {
  readonly label: string;
  readonly make: (onTimeout: Policy, stopOnFailure: boolean) => { desired: DesiredState; observed: ObservedState };
}

const KINDS: readonly Kind[] = [
  {
    label: 'replace (NodeImage)',
    make: (onTimeout, stopOnFailure) => {
      const w = workers(2, V1);
      const rn = node('worker-9', providerID('workers', 'i-9'), {
        annotations: {
          [ANNOTATIONS.replaces]: 'i-0',
          [ANNOTATIONS.operation]: LOCK,
          [ANNOTATIONS.phase]: 'Done',
          [nodeImageRecordKey('workers')]: `workers-img:v2 ${iso(-60)}`,
        },
      });
      const image: NodeImage = nodeImage('workers', V2, { drain: drainOf(onTimeout), stopOnFailure });
      return {
        desired: desired({ scalingGroups: [scalingGroup('workers', 'workers')], nodeImages: [image] }),
        observed: world([draining(LOCK, { [ANNOTATIONS.replacedBy]: 'i-9' }), ...w.nodes.slice(1), rn], {
          cloudGroups: [cloudGroup('workers', V2, [...w.instances, instance('workers', 'i-9', V2, -120)], 3)],
        }),
      };
    },
  },
  {
    label: 'NodeOp',
    make: (onTimeout, stopOnFailure) => {
      const drain = drainOf(onTimeout);
      const op = nodeOp('patch', { cordon: true, drain, stopOnFailure, rollout: { ...nodeOp('x').rollout, drain } });
      return { desired: desired({ nodeOps: [op] }), observed: world([draining('NodeOp/patch@r1')]) };
    },
  },
  {
    label: 'NodeOpUpgrade',
    make: (onTimeout, stopOnFailure) => {
      const drain = drainOf(onTimeout);
      const op = nodeOp('os', {
        cordon: true,
        drain,
        stopOnFailure,
        generatedBy: 'NodeOpUpgrade/os',
        rollout: { ...nodeOp('x').rollout, drain },
      });
      return { desired: desired({ nodeOps: [op] }), observed: world([draining('NodeOp/os@r1')]) };
    },
  },
  {
    label: 'NodeMaintenance',
    make: (onTimeout) => ({
      desired: desired({ nodeMaintenances: [nodeMaintenance('disk', 'worker-0', 'disk swap', drainOf(onTimeout))] }),
      observed: world([draining('NodeMaintenance/disk@m-disk')]),
    }),
  },
];

/** What a kind did with the node, in the terms outcome.ts decides. */
interface Seen {
  readonly uncordoned: boolean;
  readonly phase: string | null | undefined;
  readonly deleted: string[];
  readonly halted: boolean;
  readonly failures: number;
}

function seen(p: Plan): Seen {
  let phase: string | null | undefined;
  for (const a of p.actions)
    if (a.kind === 'annotateNode' && a.node === 'worker-0' && ANNOTATIONS.phase in a.annotations)
      phase = a.annotations[ANNOTATIONS.phase];
  const status = p.specs.find((s) => s.spec.kind !== 'AutoscalingStrategy');
  return {
    uncordoned: p.actions.some((a) => a.kind === 'uncordon' && a.node === 'worker-0'),
    phase,
    deleted: p.actions.flatMap((a) => (a.kind === 'deletePod' ? [`${a.namespace}/${a.pod}`] : [])),
    halted: p.waits.some((w) => w.code === 'halted'),
    failures: status?.spec.kind === 'NodeMaintenance' ? (phase === 'Failed' ? 1 : 0) : (status?.failures ?? 0),
  };
}

/** The one meaning, whatever the kind and whatever stopOnFailure says. */
const EXPECTED: Readonly<Record<Policy, Seen>> = {
  halt: { uncordoned: false, phase: 'Failed', deleted: [], halted: true, failures: 1 },
  force: { uncordoned: false, phase: undefined, deleted: ['default/web-1'], halted: false, failures: 0 },
  skipNode: { uncordoned: true, phase: 'Skipped', deleted: [], halted: false, failures: 0 },
};

describe('plan: drain.onTimeout means the same for every kind', () => {
  for (const policy of ['halt', 'force', 'skipNode'] as const)
    for (const stopOnFailure of [false, true])
      for (const kind of KINDS)
        it(`${policy}, stopOnFailure ${stopOnFailure}: ${kind.label}`, () => {
          const w = kind.make(policy, stopOnFailure);
          const p = plan(w.desired, w.observed, at(300), { jobNamespace: 'drydock-system' });
          assert.deepEqual(seen(p), EXPECTED[policy]);
        });

  it('before the timeout every kind evicts and wakes at the timeout', () => {
    for (const kind of KINDS) {
      const w = kind.make('halt', false);
      const p = plan(w.desired, w.observed, at(200), { jobNamespace: 'drydock-system' });
      assert.deepEqual(seen(p), { uncordoned: false, phase: undefined, deleted: [], halted: false, failures: 0 });
    }
  });

  // Time no drydock was acting (down, or not the leader) is no time spent draining: a deadline
  // that passed then ends no drain unheard, for every kind and every policy.
  for (const policy of ['halt', 'force', 'skipNode'] as const)
    it(`${policy}: past the deadline, drydock acting only since 100 s ago: every kind keeps draining; 300 s after, ${policy} as ever`, () => {
      for (const kind of KINDS) {
        const w = kind.make(policy, false);
        const back = plan(w.desired, w.observed, at(900), {
          jobNamespace: 'drydock-system',
          actingSince: at(800).getTime(),
        });
        assert.deepEqual(
          seen(back),
          { uncordoned: false, phase: undefined, deleted: [], halted: false, failures: 0 },
          kind.label,
        );
        // Its PDB allows no disruption: it waits on it, by name, as before the deadline.
        assert.ok(
          back.waits.some((w) => w.code === 'pdb' && w.reason.includes('default/web')),
          `${kind.label}: ${back.waits.map((w) => w.code).join(', ')}`,
        );
        const later = plan(w.desired, w.observed, at(1_100), {
          jobNamespace: 'drydock-system',
          actingSince: at(800).getTime(),
        });
        assert.deepEqual(seen(later), EXPECTED[policy], kind.label);
      }
    });
});

describe('plan: a node left as the policy said, the rounds after', () => {
  const after = (
    kind: Kind,
    policy: Policy,
    stopOnFailure: boolean,
    phase: 'Failed' | 'Skipped',
    personUncordoned = false,
  ): Plan => {
    const w = kind.make(policy, stopOnFailure);
    const nodes = w.observed.nodes.map((n) =>
      n.name !== 'worker-0'
        ? n
        : {
            ...n,
            unschedulable: phase === 'Failed' && !personUncordoned,
            annotations: {
              ...n.annotations,
              [ANNOTATIONS.phase]: phase,
              [ANNOTATIONS.reason]: `${phase === 'Failed' ? 'halted' : 'skipped'}: drain timed out`,
              ...(phase === 'Failed' ? { [ANNOTATIONS.halts]: 'true' } : {}),
              ...(phase === 'Skipped' ? { [ANNOTATIONS.cordoned]: '' } : {}),
            },
          },
    );
    return plan(w.desired, { ...w.observed, nodes }, at(400), { jobNamespace: 'drydock-system' });
  };
  for (const kind of KINDS) {
    it(`halted: ${kind.label} stays halted and the node cordoned, whatever stopOnFailure says`, () => {
      const p = after(kind, 'halt', false, 'Failed');
      assert.ok(p.waits.some((w) => w.code === 'halted'));
      assert.ok(!p.actions.some((a) => a.kind === 'uncordon' || a.kind === 'cordon'));
    });
    // Catches drydock.dev/halts not read back: without stopOnFailure and with the node no longer
    // cordoned, the mark is all that says the drain halted. (A NodeMaintenance halts no spec.)
    if (kind.label !== 'NodeMaintenance')
      it(`halted: ${kind.label} stays halted after a person uncordons the node, by its drydock.dev/halts`, () => {
        const p = after(kind, 'halt', false, 'Failed', true);
        assert.ok(
          p.waits.some((w) => w.code === 'halted'),
          p.waits.map((w) => w.code).join(', '),
        );
        assert.ok(!p.actions.some((a) => a.kind === 'cordon' && a.node === 'worker-0'));
      });
    it(`skipped: ${kind.label} does not halt, take the node again or count a failure, under stopOnFailure`, () => {
      const p = after(kind, 'skipNode', true, 'Skipped');
      assert.deepEqual(
        p.waits.filter((w) => w.node === 'worker-0').map((w) => w.code),
        ['skipped'],
      );
      assert.ok(!p.waits.some((w) => w.code === 'halted'));
      // Nothing but a record of it (a NodeMaintenance's status and reason): no cordon, lock or phase.
      for (const a of p.actions.filter((x) => 'node' in x && x.node === 'worker-0')) {
        assert.equal(a.kind, 'annotateNode');
        if (a.kind === 'annotateNode')
          for (const key of [ANNOTATIONS.phase, ANNOTATIONS.operation, ANNOTATIONS.cordoned])
            assert.ok(!(key in a.annotations), key);
      }
    });
  }
});
