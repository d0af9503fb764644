/**
 * The OpenShift node-upgrade mutex operator's three kinds: a repository written as its users
 * write it loads; every reference of a MutexRunConfig is checked and a dangling one is refused
 * at its line (positions counted by hand from the inputs); each MutexRule's gate records the
 * runs that name it.
 */
import { strict as assert } from 'node:assert';
import path from 'node:path';
import { loadFromDirectory, loadFromSource, type DesiredState, type LoadResult } from '../../src/spec/index.js';
import { doc, memorySource, ROOT, type MemoryEntry } from './support.js';

const FIXTURE = path.join(ROOT, 'test/fixtures/seeds/mutex-operator');
const API = 'apiVersion: openshift-optional.skrzypek.io/v1alpha1\n';
const MUTEX_API = 'openshift-optional.skrzypek.io/v1alpha1';

function rule(name: string, namespace?: string): string {
  const ns = namespace === undefined ? '' : `  namespace: ${namespace}\n`;
  return `${API}kind: MutexRule\nmetadata:\n  name: ${name}\n${ns}spec:\n  jobName: ${name}\n  jobNamespace: mutex\n  jobSpec: {template: {}}\n  type: kubernetes\n`;
}

function target(name: string, pools: string, namespace?: string): string {
  const ns = namespace === undefined ? '' : `  namespace: ${namespace}\n`;
  return `${API}kind: MutexTarget\nmetadata:\n  name: ${name}\n${ns}spec:\n  machineConfigPools: [${pools}]\n`;
}

/**
 * A run in namespace mutex. Line 8 holds the canary's name (column 11), line 10 the rule's
 * name (column 13) and line 11 its namespace (column 18), line 13 the target's name and
 * line 14 its namespace.
 */
function run(opts: { ruleNs?: string | null; targetNs?: string | null; canary?: string } = {}): string {
  const ns = (v: string | null | undefined): string => (v === null ? '' : `\n      namespace: ${v ?? 'mutex'}`);
  return (
    `${API}kind: MutexRunConfig\nmetadata:\n  name: nightly\n  namespace: mutex\nspec:\n` +
    `  canary:\n    name: ${opts.canary ?? 'canary'}\n` +
    `  mutexRules:\n    - name: quiesce${ns(opts.ruleNs)}\n` +
    `  mutexTargets:\n    - name: storage${ns(opts.targetNs)}\n`
  );
}

async function load(files: Readonly<Record<string, MemoryEntry>>): Promise<LoadResult> {
  return loadFromSource(memorySource(files));
}

function desired(r: LoadResult): DesiredState {
  assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors, null, 2));
  return r.desired;
}

describe('spec loader: the node-upgrade mutex operator', () => {
  describe("a repository of the operator's kinds, as its users write them", () => {
    let d: DesiredState;
    before(async () => {
      d = desired(await loadFromDirectory(FIXTURE));
    });

    it('reads the MutexTarget and the MutexRunConfig as written', () => {
      assert.deepEqual(
        d.mutexTargets.map((t) => [t.name, t.apiVersion, t.machineConfigPools, t.source]),
        [['storage-nodes', MUTEX_API, ['worker', 'storage'], { file: 'target.yaml', line: 1, column: 1 }]],
      );
      assert.deepEqual(
        d.mutexRunConfigs.map((r) => [r.name, r.canaryPool, r.mutexRules, r.mutexTargets, r.source.file]),
        [['storage-upgrade', 'canary', ['storage-quiesce'], ['storage-nodes'], 'run.yaml']],
      );
    });

    it("makes the MutexRule an UpgradeGate of the run that names it, not of drydock's own upgrades", () => {
      assert.deepEqual(
        d.upgradeGates.map((g) => [g.name, g.appliesTo.targets, g.before[0]?.name, g.before[0]?.namespace, g.after]),
        [
          [
            'storage-quiesce',
            [{ kind: 'MutexRunConfig', name: 'storage-upgrade' }],
            'storage-quiesce',
            'node-upgrade-mutex-operator',
            [],
          ],
        ],
      );
      assert.deepEqual(d.upgradeGates[0]?.mutexRunConfigs, ['storage-upgrade']);
    });

    it('gives the gate a new revision when a run names it, and none when nothing does', async () => {
      const alone = desired(await loadFromSource(memorySource({ 'rule.yaml': rule('quiesce') })));
      const named = desired(
        await load({ 'rule.yaml': rule('quiesce'), 't.yaml': target('storage', 'worker'), 'r.yaml': run() }),
      );
      assert.equal(alone.upgradeGates[0]?.mutexRunConfigs, undefined);
      assert.deepEqual(named.upgradeGates[0]?.mutexRunConfigs, ['nightly']);
      assert.notEqual(named.upgradeGates[0]?.revision, alone.upgradeGates[0]?.revision);
    });

    it('lists every run that names a rule, sorted', async () => {
      const second = run().replace('name: nightly', 'name: adhoc');
      const r = desired(
        await load({
          'rule.yaml': rule('quiesce'),
          't.yaml': target('storage', 'worker'),
          'r.yaml': run(),
          's.yaml': second,
        }),
      );
      assert.deepEqual(r.upgradeGates[0]?.mutexRunConfigs, ['adhoc', 'nightly']);
    });

    it('accepts references whose namespace agrees, or that one side leaves out', async () => {
      for (const files of [
        { 'rule.yaml': rule('quiesce', 'mutex'), 't.yaml': target('storage', 'worker', 'mutex'), 'r.yaml': run() },
        { 'rule.yaml': rule('quiesce'), 't.yaml': target('storage', 'worker'), 'r.yaml': run() },
        {
          'rule.yaml': rule('quiesce', 'mutex'),
          't.yaml': target('storage', 'worker', 'mutex'),
          'r.yaml': run({ ruleNs: null, targetNs: null }),
        },
      ])
        desired(await load(files));
    });
  });

  describe('refuses, at its line', () => {
    const cases: readonly {
      name: string;
      files: Record<string, string>;
      expect: readonly [string, string, number, number];
      says: RegExp;
    }[] = [
      {
        name: 'a MutexRule the repository does not hold',
        files: { 't.yaml': target('storage', 'worker'), 'r.yaml': run(), 'o.yaml': rule('other') },
        expect: ['dangling-reference', 'r.yaml', 10, 13],
        says: /no MutexRule named "quiesce".*existing: other/,
      },
      {
        name: 'a MutexTarget the repository does not hold',
        files: { 'rule.yaml': rule('quiesce'), 'r.yaml': run() },
        expect: ['dangling-reference', 'r.yaml', 13, 13],
        says: /no MutexTarget named "storage".*there is none yet/,
      },
      {
        name: 'a drydock.dev UpgradeGate named like the MutexRule',
        files: {
          'g.yaml': doc('UpgradeGate', 'quiesce', 'appliesTo: {targets: [{kind: NodeImage}]}\nbefore: [{spec: {}}]'),
          't.yaml': target('storage', 'worker'),
          'r.yaml': run(),
        },
        expect: ['dangling-reference', 'r.yaml', 10, 13],
        says: /no MutexRule named "quiesce"/,
      },
      {
        name: 'a MutexRule in another namespace than the one written',
        files: { 'rule.yaml': rule('quiesce', 'other'), 't.yaml': target('storage', 'worker'), 'r.yaml': run() },
        expect: ['dangling-reference', 'r.yaml', 11, 18],
        says: /in namespace "mutex".*is in namespace "other" \(at rule\.yaml:1:1\)/,
      },
      {
        name: "a MutexTarget in another namespace than the run's own",
        files: {
          'rule.yaml': rule('quiesce'),
          't.yaml': target('storage', 'worker', 'other'),
          'r.yaml': run({ targetNs: null }),
        },
        expect: ['dangling-reference', 'r.yaml', 13, 13],
        says: /this MutexRunConfig's own/,
      },
      {
        name: "a canary pool that is one of the targets' pools",
        files: { 'rule.yaml': rule('quiesce'), 't.yaml': target('storage', 'worker, canary'), 'r.yaml': run() },
        expect: ['invalid-value', 'r.yaml', 8, 11],
        says: /also a pool of MutexTarget "storage"/,
      },
      {
        name: 'a MutexTarget without pools',
        files: { 't.yaml': target('storage', '') },
        expect: ['schema', 't.yaml', 6, 23],
        says: /fewer than 1 items/,
      },
      {
        name: 'a MutexRunConfig without targets',
        files: { 'r.yaml': run().replace(/ {2}mutexTargets:[\s\S]*$/, '') },
        expect: ['schema', 'r.yaml', 6, 1],
        says: /mutexTargets/,
      },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const r = await load(c.files);
        assert.equal(r.ok, false, 'expected findings');
        if (r.ok) return;
        const [code, file, line, column] = c.expect;
        const hit = r.errors.find((e) => e.code === code && e.file === file && e.line === line && e.column === column);
        assert.ok(
          hit,
          `no ${code} at ${file}:${line}:${column}; got:\n${r.errors.map((e) => `${e.file}:${e.line}:${e.column} ${e.code} ${e.message}`).join('\n')}`,
        );
        assert.match(`${hit.message} ${hit.hint}`, c.says);
      });
    }

    it('a reference to a MutexRule its schema refused only once, by the schema', async () => {
      const broken = rule('quiesce').replace('type: kubernetes', 'type: ansible');
      const r = await load({ 'rule.yaml': broken, 't.yaml': target('storage', 'worker'), 'r.yaml': run() });
      assert.equal(r.ok, false);
      if (!r.ok)
        assert.deepEqual(
          r.errors.map((e) => [e.code, e.file]),
          [['schema', 'rule.yaml']],
        );
    });
  });
});
