/**
 * How long each node took, read off versions of a spec's status file: from the first version
 * where it is in flight (its row's since) to the first where it is Done (its since, else the
 * version's time), or for a replacement, gone.
 */
import { strict as assert } from 'node:assert';
import type { NodeRow, SpecStatus } from '../../src/plan/types.js';
import { nodeTimings, type StatusVersion } from '../../src/report/status-timings.js';
import { iso } from '../plan/fixtures.js';

function status(kind: SpecStatus['spec']['kind'], nodes: NodeRow[], extra: Partial<SpecStatus> = {}): SpecStatus {
  return {
    spec: { kind, name: 'w' },
    revision: 'r1',
    phase: 'Progressing',
    progress: { done: 0, total: nodes.length },
    failures: 0,
    conditions: [],
    nodes,
    pending: [],
    ...extra,
  };
}
const v = (at: number, s: SpecStatus): StatusVersion => ({ at: iso(at), status: s });
const row = (node: string, phase: NodeRow['phase'], since?: number): NodeRow => ({
  node,
  phase,
  ...(since !== undefined ? { since: iso(since) } : {}),
});
const seconds = (versions: StatusVersion[]) => nodeTimings(versions).map((t) => [t.kind, t.node, t.seconds, t.doneAt]);

describe('status timings: observed per-node times from the status history', () => {
  it('a NodeOp node: from its first in-flight phase to the version where it is Done', () => {
    assert.deepEqual(
      seconds([
        v(0, status('NodeOp', [row('a', 'Pending'), row('b', 'Pending')])),
        v(5, status('NodeOp', [row('a', 'Updating', 3), row('b', 'Pending')])),
        v(40, status('NodeOp', [row('a', 'Rebooting', 30), row('b', 'Pending')])),
        // Done rows of a NodeOp carry no since: the version's time is the end.
        v(70, status('NodeOp', [row('a', 'Done'), row('b', 'Cordoned', 68)])),
        v(99, status('NodeOp', [row('a', 'Done'), row('b', 'Done')])),
      ]),
      [
        ['nodeOp', 'a', 67, iso(70)],
        ['nodeOp', 'b', 31, iso(99)],
      ],
    );
  });

  it('a replaced node: from the lock to the version where its row is gone; its replacement counts nothing', () => {
    assert.deepEqual(
      seconds([
        v(0, status('NodeImage', [row('old', 'Pending', 0)])),
        v(20, status('NodeImage', [row('old', 'Pending', 0), row('i-9', 'Joining', 2)])),
        v(30, status('NodeImage', [row('old', 'Draining', 29), row('new', 'Done', 28)])),
        v(45, status('NodeImage', [row('new', 'Done', 28)])),
      ]),
      [['replace', 'old', 45, iso(45)]],
    );
  });

  it('a Done row with since ends there; an inPlace NodeImage is its own kind', () => {
    assert.deepEqual(
      seconds([
        v(0, status('NodeImage', [row('a', 'Updating', 0)], { strategy: 'inPlace' })),
        v(90, status('NodeImage', [row('a', 'Done', 80)], { strategy: 'inPlace' })),
      ]),
      [['inPlace', 'a', 80, iso(80)]],
    );
  });

  it('what is not a finished node of this revision counts nothing', () => {
    const r2 = { revision: 'r2' };
    assert.deepEqual(
      seconds([
        // Failed or Skipped: no time of a node's step.
        v(0, status('NodeOp', [row('f', 'Updating', 0), row('s', 'Draining', 0)])),
        v(10, status('NodeOp', [row('f', 'Failed', 9), row('s', 'Skipped', 9)])),
        v(20, status('NodeOp', [row('f', 'Done'), row('s', 'Done')])),
        // In flight under r1, Done under r2: another rollout, not seen start.
        v(30, status('NodeOp', [row('x', 'Updating', 30)])),
        v(40, status('NodeOp', [row('x', 'Done')], r2)),
        // A NodeOp node that leaves the rows is not done.
        v(50, status('NodeOp', [row('y', 'Updating', 50)], r2)),
        v(60, status('NodeOp', [], r2)),
        v(70, status('NodeOp', [row('y', 'Done')], r2)),
        // A spec kind without node steps.
        v(80, status('NodeMaintenance', [row('m', 'Draining', 80)])),
        v(90, status('NodeMaintenance', [row('m', 'Done', 90)])),
      ]),
      [],
    );
  });
});
