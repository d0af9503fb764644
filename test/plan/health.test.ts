/**
 * healthGate.timeout: a replacement that does not pass the health gate in time is removed and
 * counted as a failure of the node it was for; under stopOnFailure the rollout halts.
 */
import { strict as assert } from 'node:assert';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { plan } from '../../src/plan/index.js';
import type { RolloutPolicy } from '../../src/spec/model.js';
import { at, desired, iso, nodeImage, pod, scalingGroup } from './fixtures.js';
import { bare, replacementJoined, SPEC, V2 } from './helpers.js';

/** Node objects in the fixtures are created at -3600 s: a timeout of 3660 s ends at t=60. */
const TIMEOUT = 3660;

function world(podReady: boolean) {
  return replacementJoined({
    readySince: 10,
    pods: [pod('default', 'web-9', 'worker-9', { ready: podReady, readySince: iso(10) })],
  });
}

const want = (rollout: Partial<RolloutPolicy>) =>
  desired({ scalingGroups: [scalingGroup('workers', 'workers')], nodeImages: [nodeImage('workers', V2, rollout)] });

describe('plan: health gate timeout', () => {
  it('before the deadline the gate waits, naming the pod', () => {
    const p = plan(want({ healthGate: { minReadySeconds: 0, timeoutSeconds: TIMEOUT } }), world(false), at(59));
    assert.deepEqual(bare(p), []);
    assert.equal(p.waits[0]?.code, 'health');
    assert.match(p.waits[0]?.reason ?? '', /pod default\/web-9 is not Ready yet/);
  });

  it('past the deadline the replacement is removed and the old node counts a failure', () => {
    const p = plan(want({ healthGate: { minReadySeconds: 0, timeoutSeconds: TIMEOUT } }), world(false), at(60));
    assert.deepEqual(bare(p), [
      {
        kind: 'annotateNode',
        spec: SPEC,
        node: 'worker-0',
        annotations: { [ANNOTATIONS.replacedBy]: null, [ANNOTATIONS.failures]: '1', [ANNOTATIONS.phaseSince]: iso(60) },
      },
      { kind: 'removeInstance', spec: SPEC, groupId: 'workers', instanceId: 'i-9', node: 'worker-9' },
      { kind: 'deleteNode', spec: SPEC, node: 'worker-9' },
    ]);
    const status = p.specs.find((s) => s.spec.kind === 'NodeImage');
    assert.match(
      status?.lastError ?? '',
      /worker-0: replacement worker-9 did not pass the health gate within 3660s \(pod default\/web-9 is not Ready\)/,
    );
  });

  it('under stopOnFailure the node fails for good and the rollout halts', () => {
    const p = plan(
      want({ stopOnFailure: true, healthGate: { minReadySeconds: 0, timeoutSeconds: TIMEOUT } }),
      world(false),
      at(60),
    );
    const a = p.actions[0];
    assert.ok(a?.kind === 'annotateNode');
    assert.equal(a.annotations[ANNOTATIONS.phase], 'Failed');
    assert.match(String(a.annotations[ANNOTATIONS.reason]), /did not pass the health gate within 3660s/);
    assert.equal(p.specs.find((s) => s.spec.kind === 'NodeImage')?.phase, 'Halted');
  });

  it('a healthy replacement passes, whatever the deadline', () => {
    const p = plan(want({ healthGate: { minReadySeconds: 0, timeoutSeconds: TIMEOUT } }), world(true), at(600));
    assert.ok(
      p.actions.some(
        (a) => a.kind === 'annotateNode' && a.node === 'worker-9' && a.annotations[ANNOTATIONS.phase] === 'Done',
      ),
    );
    assert.ok(!p.actions.some((a) => a.kind === 'removeInstance'));
  });

  it('without a timeout the gate waits as long as it takes', () => {
    const p = plan(want({ healthGate: { minReadySeconds: 0 } }), world(false), at(100_000));
    assert.deepEqual(bare(p), []);
    assert.equal(p.waits[0]?.code, 'health');
  });
});
