import { strict as assert } from 'node:assert';
import {
  bottlerocketProblems,
  bottlerocketSpecYaml,
  bottlerocketSummaryLines,
} from '../../src/sandbox/scenario-bottlerocket.js';
import { NodeOpLedger, type NodeOpObservation, type OperationObject } from '../../src/sandbox/scenario-nodeop.js';
import type { NodeView } from '../../src/sandbox/view.js';
import { loadFromSource } from '../../src/spec/index.js';
import { memorySource } from '../spec/support.js';

const COMMIT = '1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b';
const HOSTS = ['bottlerocket-i-0001', 'bottlerocket-i-0002'];
const NEW = 'Bottlerocket OS 1.20.3 (aws-k8s-1.30)';
const OLD = 'Bottlerocket OS 1.19.2 (aws-k8s-1.30)';

function node(name: string, extra: Partial<NodeView> = {}): NodeView {
  return { name, group: 'bottlerocket', ready: true, unschedulable: false, osImage: NEW, ...extra };
}
function object(name: string, node: string, kind: 'Job' | 'Pod', step: string): OperationObject {
  return { uid: `uid-${name}`, kind, name, node, step, succeeded: true, failed: false };
}
const good: NodeOpObservation = {
  nodes: [node(HOSTS[0]!, { phase: 'Done' }), node(HOSTS[1]!)],
  specs: [{ kind: 'NodeImage', name: 'sandbox-bottlerocket', phase: 'Complete', done: 2, total: 2 }],
  statusSource: '1a2b3c4',
  objects: HOSTS.flatMap((h, i) => [object(`u${i}`, h, 'Job', 'operation'), object(`r${i}`, h, 'Pod', 'reboot')]),
  boots: new Map(HOSTS.map((h) => [h, [`${h}-a`, `${h}-b`]])),
};

describe('sandbox bottlerocket scenario checks', () => {
  const cases: [string, NodeOpObservation, string[]][] = [
    ['every host updated once, rebooted once, on the new version', good, []],
    [
      'a host that came back on its old version (drydock Complete or not, its OS says otherwise)',
      { ...good, nodes: [node(HOSTS[0]!), node(HOSTS[1]!, { osImage: OLD })] },
      [`node ${HOSTS[1]} reports osImage ${JSON.stringify(OLD)}, expected ${JSON.stringify(NEW)}`],
    ],
    [
      'an update Job created twice, a reboot missing',
      {
        ...good,
        objects: [...good.objects.filter((o) => o.name !== 'r1'), object('u0b', HOSTS[0]!, 'Job', 'operation')],
        boots: new Map([...good.boots, [HOSTS[1]!, ['x']]]),
      },
      [
        `node ${HOSTS[0]} had 2 operation Jobs, expected 1`,
        `node ${HOSTS[1]} had 0 reboot pods, expected 1`,
        `node ${HOSTS[1]} rebooted 0 times, expected once`,
      ],
    ],
    [
      'the NodeImage short of its hosts, a Job on a worker',
      {
        ...good,
        specs: [{ kind: 'NodeImage', name: 'sandbox-bottlerocket', phase: 'Complete', done: 1, total: 1 }],
        objects: [...good.objects, object('w', 'workers-i-0001', 'Job', 'operation')],
      },
      [
        'NodeImage/sandbox-bottlerocket is Complete 1/1 on the status branch, expected Complete 2/2',
        'Job w ran on workers-i-0001, which is no Bottlerocket host',
      ],
    ],
  ];
  for (const [title, observed, expected] of cases) {
    it(title, () => assert.deepEqual(bottlerocketProblems(HOSTS, COMMIT, NEW, observed), expected));
  }

  it('counts the hosts the NodeImage holds, not a NodeOp', () => {
    const ledger = new NodeOpLedger([], 'NodeImage/sandbox-bottlerocket');
    const held = { operation: 'NodeImage/sandbox-bottlerocket', phase: 'Rebooting' };
    ledger.observeNodes([node('a', held), node('b', { operation: 'NodeOp/other' })]);
    assert.equal(ledger.maxInFlight, 1);
  });

  it('pushes a NodeImage drydock accepts: in place through the Bottlerocket updater, pinned, on the group', async () => {
    const r = await loadFromSource(memorySource({ 'images/sandbox-bottlerocket.yaml': bottlerocketSpecYaml('br') }));
    assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
    const image = r.desired.nodeImages.find((i) => i.name === 'sandbox-bottlerocket');
    assert.ok(image);
    assert.equal(image.image, '1.20.3');
    assert.equal(image.strategy, 'inPlace');
    assert.equal(image.inPlace?.updater, 'bottlerocket');
    assert.deepEqual(image.nodeSelector, { matchLabels: { 'sim.drydock.dev/group': 'br' } });
  });

  it('says what it updated, from and to what, and how long it took', () => {
    assert.deepEqual(
      bottlerocketSummaryLines({ commit: COMMIT, durationMs: 65_000, hosts: 2, from: '1.19.2', to: '1.20.3' }),
      [
        'bottlerocket complete in 1m5s: NodeImage/sandbox-bottlerocket updated 2 Bottlerocket hosts in place from 1.19.2 to 1.20.3, one update Job and one reboot each, every host reporting 1.20.3 (commit 1a2b3c4)',
      ],
    );
  });
});
