import { strict as assert } from 'node:assert';
import { ANNOTATIONS } from '../../src/observe/types.js';
import {
  at,
  cloudGroup,
  desired,
  instance,
  iso,
  node,
  nodeImage,
  observed,
  scalingGroup,
  workers,
} from './fixtures.js';
import { LOCK, runCases, V1, V2 } from './helpers.js';

const sg = scalingGroup('workers', 'workers');
const d = desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2)] });
const started = (extra: Record<string, string> = {}) => ({
  annotations: {
    [ANNOTATIONS.operation]: LOCK,
    [ANNOTATIONS.phase]: 'Pending',
    [ANNOTATIONS.phaseSince]: iso(0),
    ...extra,
  },
});
const progressOf = (p: { specs: readonly { spec: { kind: string }; progress: { done: number; total: number } }[] }) =>
  p.specs.find((s) => s.spec.kind === 'NodeImage')?.progress;

describe('plan: progress of a 6-node group is out of its 6 slots all through the rollout', () => {
  const surge = instance('workers', 'i-9', V2, 5);
  runCases([
    {
      name: 'a pending surge not yet claimed (targetSize 7) is not a slot',
      desired: d,
      observed: (() => {
        const w = workers(6, V1, (i) => (i === 0 ? started() : {}));
        return observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, [...w.instances, surge], 7)] });
      })(),
      now: at(10),
      check: (p) => assert.deepEqual(progressOf(p), { done: 0, total: 6 }),
    },
    {
      name: 'a joined pending surge not yet claimed is neither a slot nor done',
      desired: d,
      observed: (() => {
        const w = workers(6, V1, (i) => (i === 0 ? started() : {}));
        return observed({
          nodes: [...w.nodes, node('worker-9', surge.providerID, { readySince: 60 })],
          cloudGroups: [cloudGroup('workers', V2, [...w.instances, surge], 7)],
        });
      })(),
      now: at(90),
      check: (p) => assert.deepEqual(progressOf(p), { done: 0, total: 6 }),
    },
    {
      name: 'a claimed surge (targetSize 7) is not a slot',
      desired: d,
      observed: (() => {
        const w = workers(6, V1, (i) => (i === 0 ? started({ [ANNOTATIONS.replacedBy]: 'i-9' }) : {}));
        return observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, [...w.instances, surge], 7)] });
      })(),
      now: at(10),
      check: (p) => assert.deepEqual(progressOf(p), { done: 0, total: 6 }),
    },
    {
      name: 'after the old instance was removed, its replacement is a slot and done',
      desired: d,
      observed: (() => {
        const w = workers(6, V1);
        const rest = { instances: w.instances.slice(1), nodes: w.nodes.slice(1) };
        const repl = node('worker-9', surge.providerID, {
          readySince: 60,
          annotations: {
            [ANNOTATIONS.operation]: LOCK,
            [ANNOTATIONS.phase]: 'Done',
            [ANNOTATIONS.phaseSince]: iso(90),
            [ANNOTATIONS.replaces]: 'i-0',
          },
        });
        const gone = instance('workers', 'i-0', V1, -3600, 'terminating');
        return observed({
          nodes: [...rest.nodes, repl],
          cloudGroups: [cloudGroup('workers', V2, [...rest.instances, surge, gone], 6)],
        });
      })(),
      now: at(200),
      check: (p) => assert.deepEqual(progressOf(p), { done: 1, total: 6 }),
    },
  ]);
});

describe('plan: a replacement another operation reboots is done for the rollout, not joining', () => {
  // worker-0 and worker-1 were replaced by worker-8 and worker-9 (marked, on V2); a NodeOp holds
  // worker-9 and reboots it (NotReady). Four originals are left on V1.
  const sixOf = () => {
    const w = workers(4, V1, () => ({}));
    const marked = (i: number, o: { ready: boolean; lock?: string }) =>
      node(`worker-${i}`, instance('workers', `i-${i}`, V2).providerID, {
        ready: o.ready,
        annotations: {
          [ANNOTATIONS.replaces]: `i-${i - 8}`,
          ...(o.lock !== undefined
            ? { [ANNOTATIONS.operation]: o.lock, [ANNOTATIONS.phase]: 'Rebooting', [ANNOTATIONS.phaseSince]: iso(0) }
            : {}),
        },
      });
    return observed({
      nodes: [...w.nodes.slice(2), marked(8, { ready: true }), marked(9, { ready: false, lock: 'NodeOp/patch@r1' })],
      cloudGroups: [
        cloudGroup('workers', V2, [
          ...w.instances.slice(2),
          instance('workers', 'i-8', V2),
          instance('workers', 'i-9', V2),
        ]),
      ],
    });
  };
  runCases([
    {
      name: 'progress counts it, and its row says UpToDate and not Ready, held by the NodeOp',
      desired: d,
      observed: sixOf(),
      now: at(100),
      check: (p) => {
        assert.deepEqual(progressOf(p), { done: 2, total: 4 });
        const row = p.specs.find((s) => s.spec.kind === 'NodeImage')?.nodes.find((r) => r.node === 'worker-9');
        assert.equal(row?.phase, 'UpToDate');
        assert.equal(row?.message, 'not Ready (held by NodeOp/patch@r1)');
      },
    },
  ]);
});
