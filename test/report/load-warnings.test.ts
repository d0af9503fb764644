/** A loader warning (a listed path a commit emptied) reaches plan's output and the status report. */
import { strict as assert } from 'node:assert';
import type { Plan } from '../../src/plan/types.js';
import { renderPlan } from '../../src/report/plan-render.js';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import { reportFromSnapshot } from '../../src/service/source-adapter.js';
import { buildStatus } from '../../src/service/status.js';

const WARNING = {
  file: 'drydock.yaml',
  line: 4,
  column: 18,
  message: 'path "approvals" holds no files any more',
  hint: "remove it from drydock.yaml's paths if it is to stay empty",
};
const EMPTY: Plan = { actions: [], waits: [], notes: [], specs: [], forecast: { waves: [] } };
const CTX = { commit: 'c0ffee0', cluster: 'c', at: '2024-01-01T00:00:00.000Z', warnings: [WARNING] };

describe('loader warnings in plan and status', () => {
  it('plan prints them as warnings at their line, in every format', () => {
    assert.match(
      renderPlan(EMPTY, 'text', CTX),
      /^drydock\.yaml:4:18: warning: path "approvals" holds no files any more\n {2}hint: remove it/m,
    );
    assert.match(renderPlan(EMPTY, 'markdown', CTX), /#### Warnings\n\n- `drydock\.yaml:4:18`: path "approvals"/);
    const json = JSON.parse(renderPlan(EMPTY, 'json', CTX)) as { warnings: unknown[] };
    assert.deepEqual(json.warnings, [WARNING]);
  });

  it('the status report lists them among its notes', () => {
    const report = reportFromSnapshot(
      buildStatus({ cluster: 'c', loadWarnings: [{ ...WARNING, code: 'path-emptied' }] }),
    );
    assert.deepEqual(report.notes, [
      `drydock.yaml:4: warning: path "approvals" holds no files any more (remove it from drydock.yaml's paths if it is to stay empty)`,
    ]);
    assert.match(renderStatusDocs(report).get('README.md') ?? '', /holds no files any more/);
  });
});
