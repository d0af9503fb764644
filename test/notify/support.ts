/** Status fixtures for the notification tests: a spec's status as the planner would publish it. */
import type { NodeRow, SpecStatus, Wait } from '../../src/plan/types.js';
import type { StatusSnapshot } from '../../src/service/status.js';

export function spec(
  name: string,
  phase: SpecStatus['phase'],
  nodes: readonly [string, NodeRow['phase']][],
  over: Partial<SpecStatus> = {},
): SpecStatus {
  const rows = nodes.map(([node, p]): NodeRow => ({ node, phase: p }));
  return {
    spec: { kind: 'NodeImage', name },
    revision: 'rev1',
    phase,
    progress: { done: rows.filter((r) => r.phase === 'Done' || r.phase === 'UpToDate').length, total: rows.length },
    failures: rows.filter((r) => r.phase === 'Failed').length,
    conditions: [],
    nodes: rows,
    pending: [],
    ...over,
  };
}

export function snapshot(specs: readonly SpecStatus[], waits: readonly Wait[] = []): StatusSnapshot {
  return { cluster: 'prod', sourceCommit: 'abc123', loadErrors: [], specs, waits, problems: [] };
}

export const approvalWait = (name: string, stage: 'start' | 'afterCanary'): Wait => ({
  spec: { kind: 'NodeImage', name },
  code: 'approval',
  reason: 'approval needed',
  approval: {
    stage,
    path: `approvals/${name}-${stage}.yaml`,
    target: { kind: 'NodeImage', name, revision: 'rev1', image: 'os:v2' },
  },
});
