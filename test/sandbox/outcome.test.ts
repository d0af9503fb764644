import { strict as assert } from 'node:assert';
import { parseDuration } from '../../src/cli/sandbox.js';
import { SandboxError } from '../../src/sandbox/errors.js';
import { instructions, outcomeReport, type SandboxOutcome } from '../../src/sandbox/index.js';

describe('drydock sandbox outcome', () => {
  const failed = (e: SandboxError): SandboxOutcome => ({ kind: 'failed', error: e });
  const cases: [string, SandboxOutcome, boolean, number, string[]][] = [
    ['stopped by Ctrl-C', { kind: 'stopped' }, false, 0, ['sandbox stopped; run it again to resume, or with --reset to start over']],
    [
      'scenario passed (the summary is already on screen)',
      { kind: 'scenario', summary: { commit: 'c', changes: [], durationMs: 1, nodesReplaced: 0, waves: 0 } },
      true,
      0,
      [],
    ],
    [
      'final checks failed',
      failed(new SandboxError('CheckFailed', 'NodeImage/worker is Halted: drain timed out', { step: 'the rollout', problems: ['NodeImage/worker Halted 2/6'], log: 'logs/drydock.log' })),
      true,
      1,
      ['scenario failed at step "the rollout": NodeImage/worker is Halted: drain timed out\n  - NodeImage/worker Halted 2/6\nread the log: logs/drydock.log'],
    ],
    [
      'rollout timed out',
      failed(new SandboxError('Timeout', 'the upgrade did not finish within 10m0s; waiting for x', { step: 'the rollout', waitingFor: 'x' })),
      true,
      1,
      ['scenario failed at step "the rollout": the upgrade did not finish within 10m0s; waiting for x'],
    ],
    [
      'a start-up step timed out',
      failed(new SandboxError('Timeout', 'timed out after 180s waiting for 9 nodes', { step: 'start the sim cloud', lastProblem: '4/9 nodes Ready', log: 'logs/sim-cloud.log' })),
      false,
      2,
      ['sandbox failed at step "start the sim cloud": timed out after 180s waiting for 9 nodes\nlast problem: 4/9 nodes Ready\nread the log: logs/sim-cloud.log'],
    ],
    ['a process died', failed(new SandboxError('ProcessExited', 'drydock exited with code 2 while the sandbox still needed it', { process: 'drydock' })), true, 2, [
      'scenario failed: drydock exited with code 2 while the sandbox still needed it',
    ]],
  ];
  for (const [name, outcome, scenario, code, lines] of cases) {
    it(name, () => assert.deepEqual(outcomeReport(outcome, scenario), { code, lines }));
  }

  describe('--timeout and --start-timeout', () => {
    const durations: [string, number | undefined][] = [
      ['10m', 600_000],
      ['90s', 90_000],
      ['90', 90_000],
      ['1h', 3_600_000],
      ['500ms', 500],
      ['0s', undefined],
      ['ten minutes', undefined],
      ['-5m', undefined],
    ];
    for (const [text, ms] of durations) it(`${text} → ${String(ms)}`, () => assert.equal(parseDuration(text), ms));
  });

  it('tells a person how to use the sandbox by hand', () => {
    assert.deepEqual(
      instructions({
        kubeconfig: 'state/control-plane/admin.kubeconfig',
        binDir: 'cache/bin',
        cloneUrl: 'http://sandbox:pw@127.0.0.1:4000/fleet.git',
        statusBranch: 'drydock/status',
        logs: 'state/logs',
        controlPlaneLogs: 'state/control-plane/logs',
        nodeImageFile: 'images/worker.yaml',
      }),
      [
        '',
        'The sandbox is up. In another terminal:',
        '  export KUBECONFIG=state/control-plane/admin.kubeconfig',
        '  export PATH=cache/bin:$PATH',
        '  kubectl get nodes -L sim.drydock.dev/image -L drydock.dev/phase',
        '  git clone http://sandbox:pw@127.0.0.1:4000/fleet.git && cd fleet',
        '  # change spec.image in images/worker.yaml, then:',
        '  git commit -am "Upgrade worker image" && git push',
        '  git fetch && git log origin/drydock/status',
        'Logs: state/logs (control plane: state/control-plane/logs)',
        'Stop: Ctrl-C (state is kept and a re-run resumes; --reset starts over)',
        '',
      ],
    );
  });
});
