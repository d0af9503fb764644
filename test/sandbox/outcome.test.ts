import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDuration } from '../../src/cli/sandbox.js';
import { scenarioStateDir } from '../../src/sandbox/layout.js';
import { SandboxError } from '../../src/sandbox/errors.js';
import { instructions, nextVersion, outcomeReport, type SandboxOutcome } from '../../src/sandbox/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('drydock sandbox outcome', () => {
  const failed = (e: SandboxError): SandboxOutcome => ({ kind: 'failed', error: e });
  const cases: [string, SandboxOutcome, boolean, number, string[]][] = [
    [
      'stopped by Ctrl-C',
      { kind: 'stopped' },
      false,
      0,
      ['sandbox stopped; run it again to resume, or with --reset to start over'],
    ],
    [
      'scenario passed (the summary is already on screen)',
      { kind: 'scenario', summary: { commit: 'c', changes: [], durationMs: 1, nodesReplaced: 0, waves: 0 } },
      true,
      0,
      [],
    ],
    [
      'final checks failed',
      failed(
        new SandboxError('CheckFailed', 'NodeImage/worker is Halted: drain timed out', {
          step: 'the rollout',
          problems: ['NodeImage/worker Halted 2/6'],
          log: 'logs/drydock.log',
        }),
      ),
      true,
      1,
      [
        'scenario failed at step "the rollout": NodeImage/worker is Halted: drain timed out\n  - NodeImage/worker Halted 2/6\nread the log: logs/drydock.log',
      ],
    ],
    [
      'rollout timed out',
      failed(
        new SandboxError('Timeout', 'the upgrade did not finish within 10m0s; waiting for x', {
          step: 'the rollout',
          waitingFor: 'x',
        }),
      ),
      true,
      1,
      ['scenario failed at step "the rollout": the upgrade did not finish within 10m0s; waiting for x'],
    ],
    [
      'a start-up step timed out',
      failed(
        new SandboxError('Timeout', 'timed out after 180s waiting for 9 nodes', {
          step: 'start the sim cloud',
          lastProblem: '4/9 nodes Ready',
          log: 'logs/sim-cloud.log',
        }),
      ),
      false,
      2,
      [
        'sandbox failed at step "start the sim cloud": timed out after 180s waiting for 9 nodes\nlast problem: 4/9 nodes Ready\nread the log: logs/sim-cloud.log',
      ],
    ],
    [
      'a process died',
      failed(
        new SandboxError('ProcessExited', 'drydock exited with code 2 while the sandbox still needed it', {
          process: 'drydock',
        }),
      ),
      true,
      2,
      ['scenario failed: drydock exited with code 2 while the sandbox still needed it'],
    ],
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

  it('the how-to edits the image to the next version', () => {
    const cases: [string, string | undefined][] = [
      ['registry.example/node-os:v1.0.0', 'registry.example/node-os:v1.0.1'],
      ['registry.example/node-os:1.9', 'registry.example/node-os:1.10'],
      ['registry.example/node-os:v2-rc', 'registry.example/node-os:v3-rc'],
      ['registry.example/node-os:latest', undefined],
      ['registry.example:5000/node-os:latest', undefined],
      ['registry.example:5000/node-os', undefined],
    ];
    for (const [image, next] of cases) assert.equal(nextVersion(image), next, image);
  });

  it('docs/getting-started.md shows the commands the sandbox prints, line for line', () => {
    const page = readFileSync(path.join(root, 'docs/getting-started.md'), 'utf8');
    const block = /It prints how to use it by hand:\n\n```sh\n([\s\S]*?)```/.exec(page)?.[1];
    assert.ok(block !== undefined, 'docs/getting-started.md has no sandbox how-to block');
    const printed = instructions({
      kubeconfig: '.state/sandbox/control-plane/admin.kubeconfig',
      binDir: '~/.cache/drydock/k8s-1.36.3/bin',
      drydockDir: '.state/sandbox/bin',
      cloneUrl: 'http://sandbox:<password>@127.0.0.1:<port>/fleet.git',
      cloudUrl: 'http://127.0.0.1:<port>',
      statusBranch: 'drydock/status',
      logs: 'state/logs',
      controlPlaneLogs: 'state/control-plane/logs',
      nodeImageFile: 'images/worker.yaml',
      image: 'registry.example/node-os:v1.0.0',
    })
      .filter((l) => l.startsWith('  '))
      .map((l) => l.slice(2));
    assert.deepEqual(block.trimEnd().split('\n'), printed);
  });

  describe('a scenario runs in its own state directory unless told otherwise', () => {
    const cases: [string, Parameters<typeof scenarioStateDir>[0], ReturnType<typeof scenarioStateDir>][] = [
      [
        'no scenario: the directory given or the default, as it is',
        { stateDir: '.state/sandbox', reset: false },
        { stateDir: '.state/sandbox', reset: false },
      ],
      [
        'scenario at the default: its own directory, emptied first',
        { stateDir: '.state/sandbox', reset: false, scenario: 'upgrade' },
        { stateDir: path.join('.state', 'scenario-upgrade'), reset: true },
      ],
      [
        'scenario with --state-dir: that directory, as told',
        { stateDir: 'mine', stateDirGiven: true, reset: false, scenario: 'upgrade' },
        { stateDir: 'mine', reset: false },
      ],
    ];
    for (const [name, flags, expected] of cases) it(name, () => assert.deepEqual(scenarioStateDir(flags), expected));
  });
});
