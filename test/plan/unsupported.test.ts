/**
 * The node-upgrade mutex operator's MutexTarget and MutexRunConfig are read but nothing drives
 * the Machine Config Operator's upgrade yet: each is reported as not acted on, with the pools
 * left ungated in words, never dropped in silence. The MutexRule a run names is still a gate.
 */
import { strict as assert } from 'node:assert';
import { notActedOn } from '../../src/plan/index.js';
import { notSupportedStatus } from '../../src/plan/unsupported.js';
import type { MutexRunConfig, MutexTarget } from '../../src/spec/model.js';
import { desired, upgradeGate } from './fixtures.js';

const MUTEX_API = 'openshift-optional.skrzypek.io/v1alpha1';

const target: MutexTarget = {
  kind: 'MutexTarget',
  name: 'storage-nodes',
  apiVersion: MUTEX_API,
  source: { file: 'mutex/target.yaml', line: 1, column: 1 },
  revision: 't1',
  machineConfigPools: ['worker', 'storage'],
};

const run: MutexRunConfig = {
  kind: 'MutexRunConfig',
  name: 'storage-upgrade',
  apiVersion: MUTEX_API,
  source: { file: 'mutex/run.yaml', line: 3, column: 1 },
  revision: 'r1',
  canaryPool: 'canary',
  mutexRules: ['storage-quiesce'],
  mutexTargets: ['storage-nodes'],
};

const rule = upgradeGate([{ kind: 'NodeImage' }, { kind: 'NodeOpUpgrade' }], {
  name: 'storage-quiesce',
  apiVersion: MUTEX_API,
  mutexRunConfigs: ['storage-upgrade'],
});

describe('not acted on: the mutex operator run', () => {
  const rows = notActedOn(desired({ upgradeGates: [rule], mutexTargets: [target], mutexRunConfigs: [run] }));

  it('reports the MutexRunConfig and the MutexTarget, where they are written, and not the MutexRule', () => {
    assert.deepEqual(
      rows.map((n) => [n.kind, n.name, n.what, n.revision, `${n.source.file}:${n.source.line}`]),
      [
        ['MutexRunConfig', 'storage-upgrade', 'MutexRunConfig', 'r1', 'mutex/run.yaml:3'],
        ['MutexTarget', 'storage-nodes', 'MutexTarget', 't1', 'mutex/target.yaml:1'],
      ],
    );
  });

  it("says the Machine Config Operator's upgrade of the pools is not gated, and what to do", () => {
    const [ofRun, ofTarget] = rows;
    assert.equal(
      ofRun?.consequence,
      "the Machine Config Operator's upgrade of 2 MachineConfigPools (storage, worker) is not gated yet: the pools are not paused, its MutexRules do not run before each node, and no node is admitted through canary pool canary",
    );
    assert.equal(
      ofTarget?.consequence,
      "the Machine Config Operator's upgrade of 2 MachineConfigPools (storage, worker) is not gated yet: their nodes are not upgraded one at a time",
    );
    for (const n of rows) assert.match(n.hint, /keep the node-upgrade mutex operator gating OpenShift upgrades/);
  });

  it('gives each a NotSupported status row', () => {
    const status = rows.map(notSupportedStatus);
    assert.deepEqual(
      status.map((s) => [s.spec.kind, s.phase, s.conditions[0]?.reason]),
      [
        ['MutexRunConfig', 'NotSupported', 'NotSupported'],
        ['MutexTarget', 'NotSupported', 'NotSupported'],
      ],
    );
    assert.match(
      status[0]?.waitingFor ?? '',
      /^a build of drydock that acts on MutexRunConfig; until then .* not gated yet/,
    );
  });
});
