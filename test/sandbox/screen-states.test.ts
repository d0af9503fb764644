/**
 * The screen's text for the states a newcomer meets, built from what the sandbox reads: the
 * status files as drydock writes them (renderStatusDocs) and Node objects as kubectl shows
 * them, put through the same readers (specViews, nodeViews) and drawn at a wide and a narrow
 * terminal.
 */
import { strict as assert } from 'node:assert';
import type { V1Node } from '@kubernetes/client-node';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import type { SpecStatus } from '../../src/plan/types.js';
import type { StatusReport } from '../../src/report/types.js';
import type { SpecKind } from '../../src/spec/model.js';
import { specStatus } from '../support/spec-status.js';
import { nodeViews, specViews } from '../../src/sandbox/snapshot.js';
import { renderChanges, renderView, wrap, type SandboxSnapshot } from '../../src/sandbox/view.js';

const NOW = '2026-11-26T15:02:05Z';
const UNTIL = '2026-11-26T15:04:05.000Z';

const spec = (o: Partial<SpecStatus> & { kind: SpecKind; name: string }): SpecStatus => {
  const { kind, name, ...rest } = o;
  return specStatus(kind, name, { progress: { done: 0, total: 6 }, ...rest });
};

/** The status branch's files for these specs, as the status writer renders them. */
function statusFiles(specs: SpecStatus[]): Map<string, string> {
  const report: StatusReport = { cluster: 'sandbox', sourceCommit: '2bdd232'.padEnd(40, '0'), specs };
  return new Map([...renderStatusDocs(report)].filter(([file]) => file.startsWith('status/')));
}

function node(name: string, annotations: Record<string, string>, o: { ready?: boolean; cordoned?: boolean } = {}) {
  return {
    metadata: {
      name,
      labels: { 'sim.drydock.dev/group': 'workers' },
      annotations: { 'sim.drydock.dev/image': 'registry.example/node-os:v1.0.0', ...annotations },
    },
    spec: { unschedulable: o.cordoned ?? false },
    status: { conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  } satisfies V1Node;
}

function screen(specs: SpecStatus[], nodes: V1Node[]): SandboxSnapshot {
  return {
    now: NOW,
    startedAt: '2026-11-26T15:00:00Z',
    headline: 'running: push a change to main and watch it roll out',
    steps: [],
    specs: specViews(statusFiles(specs)),
    nodes: nodeViews(nodes),
    nodesRead: true,
  };
}

const canarySoak = screen(
  [
    spec({
      kind: 'NodeImage',
      name: 'worker',
      progress: { done: 2, total: 6 },
      waitingFor: `canary wave soaking for 120s, until ${UNTIL}; the rest of the rollout waits for it`,
    }),
  ],
  [],
);

describe('the sandbox screen, from the status files and nodes it reads', () => {
  it('a canary soak: the time it ends read as a clock, whole at 200 columns and wrapped, not cut, at 80', () => {
    assert.deepEqual(renderView(canarySoak, 200).slice(2), [
      '  NodeImage/worker  [██████░░░░░░░░░░░░░░]  2/6  Progressing  waiting: canary wave soaking for 120s, until 15:04:05 UTC; the rest of the rollout waits for it',
    ]);
    assert.deepEqual(renderView(canarySoak, 80), [
      'drydock sandbox · up 2m5s · running: push a change to main and watch it roll out',
      '',
      '  NodeImage/worker  [██████░░░░░░░░░░░░░░]  2/6  Progressing  waiting: canary',
      '                                        wave soaking for 120s, until 15:04:05',
      '                                        UTC; the rest of the rollout waits for',
      '                                        it',
    ]);
  });

  it('an example operation beside a user rollout: the spec the person wrote, and a replaced node on its way out', () => {
    const snapshot = screen(
      [
        spec({ kind: 'NodeImage', name: 'worker', progress: { done: 1, total: 6 } }),
        spec({ kind: 'NodeOpUpgrade', name: 'edge-os', progress: { done: 0, total: 3 } }),
      ],
      [
        node(
          'workers-i-0003',
          {
            'drydock.dev/operation': 'NodeOp/edge-os@0123456789ab',
            'drydock.dev/phase': 'Rebooting',
            'drydock.dev/phase-since': '2026-11-26T15:01:50Z',
            'drydock.dev/job': 'kube-system/edge-os-workers-i-0003-0123456789',
          },
          { ready: false, cordoned: true },
        ),
        node('workers-i-0005', {
          'drydock.dev/operation': 'NodeImage/worker@v2',
          'drydock.dev/phase': 'Done',
          'drydock.dev/phase-since': '2026-11-26T15:01:05Z',
          'drydock.dev/replaced-by': 'i-0011',
        }),
      ],
    );
    assert.deepEqual(renderView(snapshot, 200).slice(5), [
      '  NODE            GROUP    IMAGE                            STATE              OPERATION              PHASE      SINCE  REASON',
      '  workers-i-0003  workers  registry.example/node-os:v1.0.0  NotReady,cordoned  NodeOpUpgrade/edge-os  Rebooting  15s    job kube-system/edge-os-workers-i-0003-0123456789',
      '  workers-i-0005  workers  registry.example/node-os:v1.0.0  Ready              NodeImage/worker       Replaced   1m0s   replaced by i-0011; leaves with its instance',
    ]);
    const before = { ...snapshot, nodes: [] };
    assert.deepEqual(renderChanges(before, snapshot).slice(0, 1), [
      '[2m5s] node workers-i-0003 joined (workers, registry.example/node-os:v1.0.0)',
    ]);
    const moved = { ...snapshot, nodes: snapshot.nodes.map((n) => ({ ...n, reason: 'x' })) };
    assert.match(renderChanges(snapshot, moved)[0] ?? '', /\(NodeOpUpgrade\/edge-os, job /);
  });

  it("a maintenance counts its node's pods, and says so", () => {
    const snapshot = screen(
      [spec({ kind: 'NodeMaintenance', name: 'workers-i-0002', phase: 'Succeeded', progress: { done: 2, total: 2 } })],
      [],
    );
    assert.deepEqual(renderView(snapshot, 200).slice(2), [
      '  NodeMaintenance/workers-i-0002  [████████████████████]  2/2 pods  Succeeded',
    ]);
  });

  it('no line is wider than the terminal and no word is cut, at any width', () => {
    for (const width of [40, 60, 80, 100, 120, 160, 200]) {
      for (const text of renderView(canarySoak, width)) assert.ok(text.length <= width, `${width}: ${text}`);
      const words = renderView(canarySoak, width).join(' ').split(/\s+/);
      for (const w of ['15:04:05', 'canary', 'NodeImage/worker', 'Progressing'])
        assert.ok(words.includes(w), `${width}: ${w}`);
    }
  });

  describe('wrap', () => {
    const cases: [string, string, number, number, string[]][] = [
      ['fits', 'a b c', 5, 2, ['a b c']],
      ['at the last space that fits', 'alpha beta gamma', 11, 2, ['alpha beta', '  gamma']],
      ['keeps the indentation of the first line', '    alpha beta', 10, 6, ['    alpha', '     beta']],
      ['breaks only a word wider than a line', 'abcdefghij', 4, 0, ['abcd', 'efgh', 'ij']],
    ];
    for (const [name, text, width, hang, want] of cases)
      it(name, () => assert.deepEqual(wrap(text, width, hang), want));
  });
});
