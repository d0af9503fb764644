import { strict as assert } from 'node:assert';
import { classifyPod } from '../../src/plan/drain.js';
import type { ObservedPod } from '../../src/observe/types.js';
import type { DrainOptions } from '../../src/spec/model.js';
import { pod } from './fixtures.js';

const defaults: DrainOptions = {
  enabled: true,
  force: false,
  ignoreDaemonSets: true,
  deleteEmptyDirData: false,
  onTimeout: 'halt',
};

describe('plan: what draining does with each pod', () => {
  const cases: [string, Partial<ObservedPod>, Partial<DrainOptions>, string][] = [
    ['a ReplicaSet pod is evicted', {}, {}, 'evict'],
    ['a mirror pod is left alone', { mirror: true, ownerKind: 'Node' }, {}, 'skip'],
    ['a DaemonSet pod is left alone with ignoreDaemonSets', { ownerKind: 'DaemonSet' }, {}, 'skip'],
    [
      'a DaemonSet pod blocks without ignoreDaemonSets',
      { ownerKind: 'DaemonSet' },
      { ignoreDaemonSets: false },
      'block',
    ],
    ['a terminating pod is waited for', { terminating: true }, {}, 'terminating'],
    ['emptyDir data blocks without deleteEmptyDirData', { hasEmptyDir: true }, {}, 'block'],
    ['emptyDir data is evicted with deleteEmptyDirData', { hasEmptyDir: true }, { deleteEmptyDirData: true }, 'evict'],
    ['a pod without controller blocks without force', { ownerKind: 'None' }, {}, 'block'],
    ['a pod without controller is deleted with force', { ownerKind: 'None' }, { force: true }, 'delete'],
    ['a finished pod without controller is evicted anyway', { ownerKind: 'None', phase: 'Succeeded' }, {}, 'evict'],
    [
      'a pod outside podSelector is left alone',
      { labels: { app: 'db' } },
      { podSelector: { matchLabels: { app: 'web' } } },
      'skip',
    ],
    [
      'a pod inside podSelector is evicted',
      { labels: { app: 'web' } },
      { podSelector: { matchLabels: { app: 'web' } } },
      'evict',
    ],
  ];
  for (const [name, p, options, expected] of cases) {
    it(name, () => assert.equal(classifyPod(pod('default', 'p', 'n', p), { ...defaults, ...options }).kind, expected));
  }

  it('a blocking pod says which option would let it go', () => {
    const d = classifyPod(pod('default', 'cache', 'n', { hasEmptyDir: true }), defaults);
    assert.deepEqual(d, {
      kind: 'block',
      reason:
        'pod default/cache uses emptyDir data that draining would delete; set rollout.drain.deleteEmptyDirData: true to allow it',
    });
  });
});
