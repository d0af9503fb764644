/**
 * Seed-format manifests load into the same model as the same intent written in drydock.dev,
 * apart from apiVersion and source position (and so, by design, with the same revision).
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadFromDirectory, type DesiredState, type LoadResult, type UpgradeGate } from '../../src/spec/index.js';
import { ROOT } from './support.js';

const FIXTURES = path.join(ROOT, 'test/fixtures/seeds');

function withoutOrigin(d: DesiredState): unknown {
  // A gate's Job namespaces are compared by name: where each is written differs by format.
  const jobNamespaces = (s: object) =>
    'writtenJobNamespaces' in s ? (s as UpgradeGate).writtenJobNamespaces?.map((w) => w.name) : undefined;
  const strip = (list: readonly object[]): unknown[] =>
    list.map((s) => ({
      ...s,
      apiVersion: undefined,
      source: undefined,
      writtenNamespace: undefined,
      writtenJobNamespaces: jobNamespaces(s),
    }));
  const { config: _config, ...lists } = d;
  return Object.fromEntries(Object.entries(lists).map(([k, v]) => [k, strip(v as object[])]));
}

function desired(r: LoadResult): DesiredState {
  assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors, null, 2));
  return r.desired;
}

describe('spec loader: seed formats', () => {
  let seed: DesiredState;
  let drydock: DesiredState;
  before(async () => {
    seed = desired(await loadFromDirectory(path.join(FIXTURES, 'seed')));
    drydock = desired(await loadFromDirectory(path.join(FIXTURES, 'drydock')));
  });

  it('load to the same model as their drydock.dev equivalents', () => {
    assert.deepEqual(withoutOrigin(seed), withoutOrigin(drydock));
  });

  it('keep the apiVersion they were written in', () => {
    assert.deepEqual(
      [
        ...new Set(
          [seed.nodeImages, seed.scalingGroups, seed.nodeOps, seed.nodeMaintenances, seed.upgradeGates]
            .flat()
            .map((s) => s.apiVersion),
        ),
      ].sort(),
      [
        'nodemaintenance.kubevirt.io/v1beta1',
        'nodemaintenance.medik8s.io/v1beta1',
        'openshift-optional.skrzypek.io/v1alpha1',
        'operator.kairos.io/v1alpha1',
        'update.edgeless.systems/v1alpha1',
      ],
    );
  });

  it('infer the provider of Constellation ScalingGroups from the groupId', () => {
    assert.deepEqual(
      seed.scalingGroups.map((g) => [g.name, g.provider, g.role]),
      [
        ['constellation-control-plane-q4w1', 'azure', 'control-plane'],
        ['constellation-worker-x7k2', 'gcp', 'worker'],
      ],
    );
  });

  it('read a plain groupId in a Constellation ScalingGroup as the AWS Auto Scaling group Constellation on AWS writes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'drydock-seed-aws-'));
    try {
      writeFileSync(
        path.join(dir, 'constellation.yaml'),
        [
          'apiVersion: update.edgeless.systems/v1alpha1',
          'kind: NodeImage',
          'metadata: {name: constellation-os}',
          'spec: {image: ami-0123456789abcdef0}',
          '---',
          'apiVersion: update.edgeless.systems/v1alpha1',
          'kind: ScalingGroup',
          'metadata: {name: worker}',
          'spec: {nodeImage: constellation-os, groupId: constell-worker-x7k2, role: Worker}',
          '',
        ].join('\n'),
      );
      const d = desired(await loadFromDirectory(dir));
      assert.deepEqual(
        d.scalingGroups.map((g) => [g.name, g.provider, g.groupId]),
        [['worker', 'aws', 'constell-worker-x7k2']],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fill Kairos' defaults", () => {
    const minimal = seed.nodeOps.find((o) => o.name === 'minimal');
    assert.deepEqual(
      minimal && [
        minimal.image,
        minimal.hostMountPath,
        minimal.cordon,
        minimal.drain.enabled,
        minimal.drain.ignoreDaemonSets,
        minimal.rebootOnSuccess,
        minimal.backoffLimit,
        minimal.concurrency,
        minimal.stopOnFailure,
        minimal.followNewNodes,
      ],
      ['busybox:latest', '/host', false, false, true, false, 6, 0, false, false],
    );
    const upgrade = seed.nodeOpUpgrades[0];
    assert.deepEqual(upgrade && [upgrade.upgradeActive, upgrade.upgradeRecovery, upgrade.force], [true, false, false]);
  });

  it('generate the NodeOp of a NodeOpUpgrade', () => {
    const op = seed.nodeOps.find((o) => o.generatedBy === 'NodeOpUpgrade/kairos-upgrade');
    assert.ok(op);
    assert.equal(op.name, 'kairos-upgrade');
    assert.equal(op.image, 'quay.io/kairos/ubuntu:24.04-standard-amd64-generic-v3.5.0-k3sv1.33.1-k3s1');
    assert.deepEqual(
      [op.cordon, op.drain.enabled, op.rebootOnSuccess, op.concurrency, op.stopOnFailure, op.hostMountPath],
      [true, true, true, 1, true, '/host'],
    );
    assert.deepEqual(op.command.slice(0, 2), ['/bin/sh', '-c']);
    assert.match(op.command[2] ?? '', /kairos-agent upgrade --source dir:\//);
    assert.doesNotMatch(op.command[2] ?? '', /--recovery/);
  });

  it('turn a MutexRule into an UpgradeGate: jobSpec before, cleanUpJobSpec after, job name and namespace kept', () => {
    const gate = seed.upgradeGates[0];
    assert.ok(gate);
    assert.deepEqual(gate.appliesTo.targets, [{ kind: 'NodeImage' }, { kind: 'NodeOpUpgrade' }]);
    assert.deepEqual(
      [gate.before[0]?.name, gate.before[0]?.namespace, gate.after[0]?.name],
      ['backup-etcd', 'node-upgrade-mutex-operator', 'backup-etcd-cleanup'],
    );
  });

  it('report seed positions inside multi-document files exactly', () => {
    const sg = seed.scalingGroups.find((g) => g.name === 'constellation-control-plane-q4w1');
    assert.deepEqual(sg?.source, { file: 'constellation.yaml', line: 29, column: 1 });
    const op = seed.nodeOps.find((o) => o.name === 'minimal');
    assert.deepEqual(op?.source, { file: 'kairos.yaml', line: 26, column: 1 });
  });
});
