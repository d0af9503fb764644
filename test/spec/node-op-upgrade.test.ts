/**
 * A NodeOpUpgrade generates its NodeOp the way the Kairos operator does: always cordon and
 * drain, reboot when the active partition is upgraded, the upgrade script by upgradeActive,
 * upgradeRecovery and force, canary by concurrency 1 + stopOnFailure. The script itself is run
 * with /bin/sh, with mount and kairos-agent replaced by stubs that record their arguments.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadFromSource, type DesiredState, type NodeOp } from '../../src/spec/index.js';
import { KAIROS_UP_TO_DATE, kairosUpgradeCommand } from '../../src/spec/normalise/node-op.js';
import { memorySource } from './support.js';

async function generated(
  spec: string,
  apiVersion = 'operator.kairos.io/v1alpha1',
): Promise<{ desired: DesiredState; op: NodeOp }> {
  const text = `apiVersion: ${apiVersion}\nkind: NodeOpUpgrade\nmetadata:\n  name: upgrade\nspec:\n  image: quay.io/kairos/ubuntu:v3.5.0\n${spec}`;
  const r = await loadFromSource(memorySource({ 'ops/upgrade.yaml': text }));
  assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
  const op = r.desired.nodeOps.find((o) => o.generatedBy === 'NodeOpUpgrade/upgrade');
  assert.ok(op, 'a NodeOp is generated');
  return { desired: r.desired, op };
}

const RECOVERY =
  "kairos-agent upgrade --recovery --source dir:/ --exclude-path '/etc/hostname' --exclude-path '/etc/hosts'";
const ACTIVE = "kairos-agent upgrade --source dir:/ --exclude-path '/etc/hostname' --exclude-path '/etc/hosts'";

describe('NodeOpUpgrade → NodeOp (Kairos semantics)', () => {
  const table: Array<[string, string, { agent: string[]; versionCheck: boolean; reboot: boolean }]> = [
    ['defaults: active only, skip when up to date, reboot', '', { agent: [ACTIVE], versionCheck: true, reboot: true }],
    [
      'recovery only: no version check, no reboot',
      '  upgradeActive: false\n  upgradeRecovery: true\n',
      { agent: [RECOVERY], versionCheck: false, reboot: false },
    ],
    [
      'recovery and active: recovery first, then active, reboot',
      '  upgradeRecovery: true\n',
      { agent: [RECOVERY, ACTIVE], versionCheck: false, reboot: true },
    ],
    [
      'neither: active all the same, but no reboot',
      '  upgradeActive: false\n',
      { agent: [ACTIVE], versionCheck: true, reboot: false },
    ],
    ['force: no version check', '  force: true\n', { agent: [ACTIVE], versionCheck: false, reboot: true }],
  ];
  for (const [name, spec, want] of table) {
    it(name, async () => {
      const { op } = await generated(spec);
      const script = op.command[2] ?? '';
      assert.deepEqual(op.command.slice(0, 2), ['/bin/sh', '-c']);
      assert.deepEqual(
        script.split('\n').filter((l) => l.startsWith('kairos-agent')),
        want.agent,
      );
      assert.equal(/CURRENT=\$\(get_version '\/host\/etc\/kairos-release'\)/.test(script), want.versionCheck);
      assert.equal(op.rebootOnSuccess, want.reboot);
      assert.deepEqual(
        [op.cordon, op.drain.enabled, op.hostMountPath, op.image],
        [true, true, '/host', 'quay.io/kairos/ubuntu:v3.5.0'],
      );
    });
  }

  it('canary: concurrency 1 and stopOnFailure go to the NodeOp and its rollout', async () => {
    const { op } = await generated(
      '  concurrency: 1\n  stopOnFailure: true\n  nodeSelector:\n    matchLabels:\n      kairos.io/managed: "true"\n  imagePullSecrets:\n    - name: regcred\n',
    );
    assert.deepEqual(
      [op.concurrency, op.stopOnFailure, op.rollout.concurrency, op.rollout.stopOnFailure],
      [1, true, 1, true],
    );
    assert.deepEqual(op.nodeSelector, { matchLabels: { 'kairos.io/managed': 'true' } });
    assert.deepEqual(op.imagePullSecrets, ['regcred']);
  });

  it('is the same NodeOp, with the same revision, from either format', async () => {
    const spec = '  concurrency: 2\n  force: true\n';
    const a = (await generated(spec)).op;
    const b = (await generated(spec, 'drydock.dev/v1alpha1')).op;
    assert.equal(a.revision, b.revision);
    assert.notEqual(a.revision, '');
    assert.notEqual(
      a.revision,
      (await generated('  concurrency: 2\n')).op.revision,
      'force changes the script, so the revision',
    );
  });
});

describe('the generated upgrade script, run', () => {
  let dir: string;
  let log: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'drydock-kairos-'));
    log = path.join(dir, 'calls.log');
    const bin = path.join(dir, 'bin');
    mkdirSync(bin);
    for (const tool of ['mount', 'kairos-agent']) {
      const stub = path.join(bin, tool);
      writeFileSync(stub, `#!/bin/sh\necho "${tool} $*" >> '${log}'\n`);
      chmodSync(stub, 0o755);
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function run(command: string[], host: string): string[] {
    writeFileSync(log, '');
    execFileSync(command[0] ?? '', command.slice(1), {
      env: { PATH: `${path.join(dir, 'bin')}:/usr/bin:/bin` },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    return readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l.replaceAll(host, '<host>'));
  }

  it("binds the host's /dev and /run, then upgrades, excluding the pod's hostname and hosts files", () => {
    const host = path.join(dir, 'host');
    mkdirSync(path.join(host, 'etc'), { recursive: true });
    // The host reports a version, the image (this machine's /etc) none: unknown never counts as equal.
    writeFileSync(
      path.join(host, 'etc/kairos-release'),
      'KAIROS_VERSION=v3.4.0\nKAIROS_SOFTWARE_VERSION_PREFIX=k3s\nKAIROS_SOFTWARE_VERSION=v1.33\n',
    );
    const calls = run(kairosUpgradeCommand({ force: false, upgradeActive: true, upgradeRecovery: true }, host), host);
    assert.deepEqual(calls, [
      'mount --rbind <host>/dev /dev',
      'mount --rbind <host>/run /run',
      'kairos-agent upgrade --recovery --source dir:/ --exclude-path /etc/hostname --exclude-path /etc/hosts',
      'kairos-agent upgrade --source dir:/ --exclude-path /etc/hostname --exclude-path /etc/hosts',
    ]);
    const checked = run(
      kairosUpgradeCommand({ force: false, upgradeActive: true, upgradeRecovery: false }, host),
      host,
    );
    assert.equal(checked.length, 3, 'an unknown target version does not skip the upgrade');
  });

  it('names the skip the way the planner recognises it', () => {
    const script =
      kairosUpgradeCommand({ force: false, upgradeActive: true, upgradeRecovery: false }, '/host')[2] ?? '';
    const line = script.split('\n').find((l) => l.includes('/dev/termination-log')) ?? '';
    const message = /echo "([^"]*)" > \/dev\/termination-log/.exec(line)?.[1]?.replace('${TARGET}', 'v3.5.0') ?? '';
    assert.match(message, KAIROS_UP_TO_DATE);
  });
});
