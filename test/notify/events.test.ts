/**
 * Event derivation, as a table: a sequence of published snapshots and the events each one
 * yields given what was sent before it (every yielded event counts as sent for the next).
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { eventId, newEvents } from '../../src/notify/events.js';
import { boundIds } from '../../src/notify/sent-log.js';
import type { StatusSnapshot } from '../../src/service/status.js';
import { approvalWait, snapshot, spec } from './support.js';

interface Case {
  readonly name: string;
  readonly steps: readonly StatusSnapshot[];
  /** Per step, `type` or `type:node` of each event yielded. */
  readonly expect: readonly (readonly string[])[];
}

const cases: readonly Case[] = [
  {
    name: 'a rollout: started once, complete once, nothing for the rounds between',
    steps: [
      snapshot([
        spec('w', 'Pending', [
          ['a', 'Outdated'],
          ['b', 'Outdated'],
        ]),
      ]),
      snapshot([
        spec('w', 'Progressing', [
          ['a', 'Draining'],
          ['b', 'Outdated'],
        ]),
      ]),
      snapshot([
        spec('w', 'Progressing', [
          ['a', 'Done'],
          ['b', 'Cordoned'],
        ]),
      ]),
      snapshot([
        spec('w', 'Progressing', [
          ['a', 'Done'],
          ['b', 'Done'],
        ]),
      ]),
      snapshot([
        spec('w', 'Complete', [
          ['a', 'UpToDate'],
          ['b', 'UpToDate'],
        ]),
      ]),
      snapshot([
        spec('w', 'Complete', [
          ['a', 'UpToDate'],
          ['b', 'UpToDate'],
        ]),
      ]),
    ],
    expect: [[], ['started'], [], [], ['complete'], []],
  },
  {
    name: 'a spec already at its revision: no start, so no completion either',
    steps: [snapshot([spec('w', 'Complete', [['a', 'UpToDate']])])],
    expect: [[]],
  },
  {
    name: 'a failed node, then the halt it causes; each once, per node',
    steps: [
      snapshot([
        spec('w', 'Progressing', [
          ['a', 'Updating'],
          ['b', 'Outdated'],
        ]),
      ]),
      snapshot([
        spec('w', 'Progressing', [
          ['a', 'Failed'],
          ['b', 'Outdated'],
        ]),
      ]),
      snapshot([
        spec(
          'w',
          'Halted',
          [
            ['a', 'Failed'],
            ['b', 'Outdated'],
          ],
          { waitingFor: 'halted: node a failed' },
        ),
      ]),
      snapshot([
        spec('w', 'Halted', [
          ['a', 'Failed'],
          ['b', 'Failed'],
        ]),
      ]),
    ],
    expect: [['started'], ['nodeFailed:a'], ['halted'], ['nodeFailed:b']],
  },
  {
    name: 'approvals: once per stage, not again when the wait comes back',
    steps: [
      snapshot([spec('w', 'Waiting', [['a', 'Outdated']])], [approvalWait('w', 'start')]),
      snapshot([spec('w', 'Waiting', [['a', 'Outdated']])]),
      snapshot([spec('w', 'Waiting', [['a', 'Outdated']])], [approvalWait('w', 'start')]),
      snapshot([spec('w', 'Waiting', [['a', 'Done']])], [approvalWait('w', 'afterCanary')]),
    ],
    expect: [['approval'], [], [], ['started', 'approval']],
  },
  {
    name: 'a new revision is a new rollout',
    steps: [
      snapshot([spec('w', 'Progressing', [['a', 'Draining']])]),
      snapshot([spec('w', 'Progressing', [['a', 'Draining']], { revision: 'rev2' })]),
      snapshot([spec('w', 'Complete', [['a', 'Done']], { revision: 'rev2' })]),
    ],
    expect: [['started'], ['started'], ['complete']],
  },
  {
    name: 'two specs apart',
    steps: [
      snapshot([spec('w', 'Progressing', [['a', 'Cordoned']]), spec('c', 'Pending', [['x', 'Outdated']])]),
      snapshot([spec('w', 'Complete', [['a', 'Done']]), spec('c', 'Progressing', [['x', 'Draining']])]),
    ],
    expect: [['started'], ['complete', 'started']],
  },
];

describe('notifications: events from status transitions', () => {
  for (const c of cases) {
    it(c.name, () => {
      const sent = new Set<string>();
      const got = c.steps.map((s) => {
        const events = newEvents(s, sent);
        for (const e of events) sent.add(e.id);
        return events.map((e) => (e.node !== undefined ? `${e.type}:${e.node}` : e.type));
      });
      assert.deepEqual(got, c.expect);
    });
  }

  it('an event id is spec, revision, event and node, hashed', () => {
    const want = createHash('sha256').update('NodeImage/w\nrev1\nnodeFailed\na').digest('hex').slice(0, 24);
    assert.equal(eventId({ kind: 'NodeImage', name: 'w' }, 'rev1', 'nodeFailed', 'a'), want);
    const [e] = newEvents(snapshot([spec('w', 'Progressing', [['a', 'Failed']])]), new Set(['x'])).filter(
      (x) => x.type === 'nodeFailed',
    );
    assert.equal(e?.id, want);
  });

  it('a restart with the sent-log sends what the log lacks and nothing it has', () => {
    const s = snapshot([spec('w', 'Complete', [['a', 'Done']])]);
    const started = eventId({ kind: 'NodeImage', name: 'w' }, 'rev1', 'started');
    // The completion was written to the status branch, then the process died before sending it.
    assert.deepEqual(
      newEvents(s, new Set([started])).map((e) => e.type),
      ['complete'],
    );
  });
});

describe('notifications: the sent-log bound', () => {
  it('keeps every id the status shows, then the newest others', () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    assert.deepEqual(boundIds(ids, new Set(['a', 'b']), 4), ['a', 'b', 'e', 'f']);
    assert.deepEqual(boundIds(ids, new Set(), 10), ids);
  });
});
