import assert from 'node:assert/strict';
import { blockers, isBlocked, renderPlan, summariseActions } from '../../src/report/plan-render.js';
import type { Plan, Wait, WaitCode } from '../../src/plan/types.js';

const spec = { kind: 'NodeImage', name: 'worker' } as const;
const plan: Plan = {
  actions: [
    { kind: 'setGroupImage', spec, reason: 'test', groupId: 'workers', image: 'img-v2' },
    { kind: 'cordon', spec, reason: 'test', node: 'w-1' },
    { kind: 'cordon', spec, reason: 'test', node: 'w-2' },
  ],
  waits: [
    { spec, node: 'w-3', code: 'pdb', reason: 'PDB default/web allows 0 disruptions' },
    { spec, code: 'window', reason: 'window weeknights opens 22:00 Europe/Berlin', until: '2024-01-01T21:00:00.000Z' },
  ],
  notes: [],
  specs: [
    {
      spec,
      revision: 'r1',
      phase: 'Progressing',
      progress: { done: 2, total: 6 },
      failures: 0,
      conditions: [],
      nodes: [],
      pending: [],
      waitingFor: 'PDB default/web allows 0 disruptions',
    },
  ],
  forecast: {
    waves: [
      {
        index: 1,
        spec,
        label: 'canary',
        nodes: ['w-1'],
        start: '2024-01-01T00:00:00.000Z',
        end: '2024-01-01T00:05:00.000Z',
      },
    ],
    eta: '2024-01-01T00:30:00.000Z',
  },
};
const ctx = { commit: '1a2b3c4d5e6f', cluster: 'prod', at: '2024-01-01T00:00:00.000Z' };

describe('plan rendering', () => {
  it('counts the next step by action kind', () => {
    assert.equal(summariseActions(plan.actions), '1 setGroupImage, 2 cordon');
    assert.equal(summariseActions([]), 'nothing');
  });

  const codes: [WaitCode, boolean][] = [
    ['approval', true],
    ['pdb', true],
    ['halted', true],
    ['paused', true],
    ['window', false],
    ['budget', false],
    ['soak', false],
    ['join', false],
  ];
  for (const [code, blocked] of codes) {
    it(`a ${code} wait ${blocked ? 'blocks' : 'does not block'} the plan`, () => {
      const w: Wait = { spec, code, reason: 'r' };
      assert.equal(isBlocked({ ...plan, waits: [w] }), blocked);
    });
  }

  it('markdown: summary table, waves, blockers, next step', () => {
    const md = renderPlan(plan, 'markdown', ctx);
    assert.match(md, /^### drydock plan — ⛔ blocked/);
    assert.ok(md.includes('| NodeImage/worker | Progressing | 2/6 | PDB default/web allows 0 disruptions |'));
    assert.ok(
      md.includes('| 1 | NodeImage/worker | canary | w-1 | 2024-01-01T00:00:00.000Z | 2024-01-01T00:05:00.000Z |'),
    );
    assert.ok(md.includes('- **pdb** NodeImage/worker (`w-3`): PDB default/web allows 0 disruptions'));
    assert.ok(!md.includes('**window**'), 'a window wait is not a blocker');
    assert.ok(md.includes('commit `1a2b3c4`'));
    assert.ok(md.includes('<summary>Next step: 1 setGroupImage, 2 cordon</summary>'));
  });

  it('markdown escapes table cells', () => {
    const md = renderPlan({ ...plan, specs: [{ ...plan.specs[0]!, waitingFor: 'a | b' }] }, 'markdown', ctx);
    assert.ok(md.includes('a \\| b'));
  });

  it('text: specs, waves, ETA and blockers', () => {
    const text = renderPlan(plan, 'text', ctx);
    assert.ok(text.includes('NodeImage/worker: Progressing, 2/6 nodes'));
    assert.ok(text.includes('1. NodeImage/worker canary: w-1'));
    assert.ok(text.includes('ETA: 2024-01-01T00:30:00.000Z'));
    assert.ok(text.includes('[pdb] NodeImage/worker w-3: PDB default/web allows 0 disruptions'));
    assert.ok(
      text.includes(
        '[window] NodeImage/worker: window weeknights opens 22:00 Europe/Berlin (until 2024-01-01T21:00:00.000Z)',
      ),
    );
  });

  it('each spec says the per-node time its waves took and where it came from, in every format', () => {
    const paced: Plan = {
      ...plan,
      forecast: {
        ...plan.forecast,
        paces: [{ spec, kind: 'replace', perNodeSeconds: 50, basis: 'observed', observed: 6, sameSpec: true }],
      },
    };
    const said = 'NodeImage/worker: 50s per node, from 6 observed nodes of this spec';
    assert.ok(renderPlan(paced, 'text', ctx).includes(`ETA: 2024-01-01T00:30:00.000Z\n  ${said}\n`));
    assert.ok(renderPlan(paced, 'markdown', ctx).includes(`- ${said}\n`));
    const j = JSON.parse(renderPlan(paced, 'json', ctx)) as { paces: unknown[] };
    assert.deepEqual(j.paces, paced.forecast.paces);
  });

  it('with budget.windows: every format says which cluster budget is in force and when the next starts', () => {
    const line =
      'every kind: 1 node (drydock.yaml budget.windows[0]); from 2024-01-01 22:00 UTC, 5 nodes (budget.windows[1])';
    const windowed: Plan = { ...plan, budget: [line] };
    assert.ok(renderPlan(windowed, 'text', ctx).includes(`Cluster budget:\n  ${line}\n`));
    assert.ok(renderPlan(windowed, 'markdown', ctx).includes(`#### Cluster budget\n\n- ${line}\n`));
    assert.deepEqual((JSON.parse(renderPlan(windowed, 'json', ctx)) as { budget: string[] }).budget, [line]);
    assert.ok(!renderPlan(plan, 'text', ctx).includes('Cluster budget'), 'nothing without windows');
  });

  it('json: machine-readable, with blocked and blockers', () => {
    const j = JSON.parse(renderPlan(plan, 'json', ctx)) as {
      blocked: boolean;
      blockers: Wait[];
      waves: unknown[];
      eta: string;
      commit: string;
    };
    assert.equal(j.blocked, true);
    assert.deepEqual(j.blockers, blockers(plan));
    assert.equal(j.waves.length, 1);
    assert.equal(j.eta, '2024-01-01T00:30:00.000Z');
    assert.equal(j.commit, '1a2b3c4d5e6f');
  });
});
