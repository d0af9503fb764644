/**
 * The node-upgrade mutex operator's MutexTarget and MutexRunConfig are acted on (src/plan/mco/):
 * neither is reported as not acted on any more, and neither is the MutexRule a run names.
 */
import { strict as assert } from 'node:assert';
import { notActedOn } from '../../src/plan/index.js';
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
  ruleNamespaces: {},
};

const rule = upgradeGate([{ kind: 'NodeImage' }, { kind: 'NodeOpUpgrade' }], {
  name: 'storage-quiesce',
  apiVersion: MUTEX_API,
  mutexRunConfigs: ['storage-upgrade'],
});

describe('not acted on: the mutex operator run', () => {
  it('reports neither the MutexRunConfig, its MutexTarget, nor the MutexRule it names', () => {
    const rows = notActedOn(desired({ upgradeGates: [rule], mutexTargets: [target], mutexRunConfigs: [run] }));
    assert.deepEqual(
      rows.map((n) => `${n.kind}/${n.name}`),
      [],
    );
  });
});
