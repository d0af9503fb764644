/**
 * The status branch written by the StatusWriter, read back as the nodes drydock saw done: the
 * history walk finds each node's first in-flight row and the commit where it is done, and reads
 * no further back than it is told.
 */
import { strict as assert } from 'node:assert';
import type { NodeRow, SpecStatus } from '../../src/plan/types.js';
import { GitSource, StatusWriter } from '../../src/source/index.js';
import { observedNodeTimings, readStatusHistory } from '../../src/source/status-history.js';
import { nodeTimings } from '../../src/report/status-timings.js';
import { TEST_USER } from '../support/git-server.js';
import { specStatus } from '../support/spec-status.js';
import { at, iso } from '../plan/fixtures.js';
import { createFixture, type Fixture } from './fixture.js';

const row = (node: string, phase: NodeRow['phase'], since?: number): NodeRow => ({
  node,
  phase,
  ...(since !== undefined ? { since: iso(since) } : {}),
});

/** Four rounds: a NodeOp node taken at 8 s and done at 70 s; a replaced node taken at 5 s and gone at 70 s. */
const rounds: Array<[number, SpecStatus[]]> = [
  [0, [specStatus('NodeOp', 'patch', { nodes: [row('a', 'Pending')] }), specStatus('NodeImage', 'worker')]],
  [
    10,
    [
      specStatus('NodeOp', 'patch', { nodes: [row('a', 'Updating', 8)] }),
      specStatus('NodeImage', 'worker', { nodes: [row('old', 'Pending', 5)] }),
    ],
  ],
  [
    40,
    [
      specStatus('NodeOp', 'patch', { nodes: [row('a', 'Rebooting', 35)] }),
      specStatus('NodeImage', 'worker', { nodes: [row('old', 'Draining', 38), row('new', 'Done', 30)] }),
    ],
  ],
  [
    70,
    [
      specStatus('NodeOp', 'patch', { nodes: [row('a', 'Done')] }),
      specStatus('NodeImage', 'worker', { nodes: [row('new', 'Done', 30)] }),
    ],
  ],
];

describe('status history: the nodes drydock saw done, read off the status branch', function () {
  this.timeout(30_000);
  let fx: Fixture;
  let source: GitSource;
  beforeEach(async () => {
    fx = await createFixture();
    await fx.commit({ 'drydock.yaml': 'cluster: prod-eu\n' }, 1);
    source = new GitSource({ repo: fx.url, credentials: TEST_USER, cacheRoot: fx.cacheRoot, retries: 0 });
    let now = at(0);
    const writer = new StatusWriter({ source, cluster: 'prod-eu', now: () => now, retryDelayMs: 5 });
    for (const [seconds, specs] of rounds) {
      now = at(seconds);
      await writer.write({ cluster: 'prod-eu', sourceCommit: 'a'.repeat(40), specs });
    }
  });
  afterEach(async () => {
    await fx.close();
  });

  it('each node from its first in-flight row to the commit where it is done (or, replaced, gone)', async () => {
    const got = await observedNodeTimings(source, 'drydock/status');
    assert.deepEqual(
      got.map((t) => [`${t.spec.kind}/${t.spec.name}`, t.kind, t.node, t.seconds, t.doneAt]),
      [
        ['NodeImage/worker', 'replace', 'old', 65, iso(70)],
        ['NodeOp/patch', 'nodeOp', 'a', 62, iso(70)],
      ],
    );
  });

  it('reads no further back than it is told: two commits see the NodeOp node only from its reboot', async () => {
    const tip = await source.readBranchTip('drydock/status');
    const history = await readStatusHistory(source, tip, 2);
    const op = history.get('status/NodeOp/patch.yaml') ?? assert.fail('no NodeOp file');
    assert.deepEqual(
      op.map((v) => v.at),
      [iso(40), iso(70)],
    );
    assert.deepEqual(
      nodeTimings(op).map((t) => [t.node, t.seconds]),
      [['a', 35]],
    );
  });
});
