/**
 * Which nodes a MutexRule gates, as the node-upgrade mutex operator scopes it. The operator's
 * MutexRule has no field of its own that scopes it: a MutexRunConfig that names it runs it
 * before each node of that run's target pools, and for nothing else. drydock reads that from
 * the runs that name the rule (the spec loader links them); a rule no run names keeps
 * drydock's own meaning, a gate around every NodeImage and NodeOpUpgrade. The rules are loaded
 * from the operator's own YAML here, so the table checks the loader's link and the planner's
 * gates together: the MCO kind's Pending node, a NodeOpUpgrade's node, an inPlace NodeImage's
 * node and a plain NodeOp's node, each given the rules that gate it, every rule Job told its
 * rule's name (the operator's MUTEX_RULE).
 */
import { strict as assert } from 'node:assert';
import type { ObservedJob, ObservedNode, ObservedOpenShift, ObservedPool } from '../../src/observe/types.js';
import { plan, type Action } from '../../src/plan/index.js';
import { gateJobName } from '../../src/protocol/jobs.js';
import { loadFromSource, type DesiredState } from '../../src/spec/index.js';
import { memorySource } from '../spec/support.js';
import { config, node, nodeImage, observed, policy } from './fixtures.js';
import { nodeOp } from './nodeop/fixtures.js';

const API = 'apiVersion: openshift-optional.skrzypek.io/v1alpha1\n';
const VERSION = 'machineconfiguration.openshift.io/release-image-version';
const WORKER = { 'node-role.kubernetes.io/worker': '' };
const STORAGE = { 'node-role.kubernetes.io/storage': '' };

function rule(name: string): string {
  return (
    `${API}kind: MutexRule\nmetadata:\n  name: ${name}\n  namespace: mutex\nspec:\n  jobName: ${name}\n` +
    `  jobNamespace: mutex\n  jobSpec: {template: {}}\n  type: kubernetes\n`
  );
}

function target(name: string, pool: string): string {
  return `${API}kind: MutexTarget\nmetadata:\n  name: ${name}\n  namespace: mutex\nspec:\n  machineConfigPools: [${pool}]\n`;
}

function run(name: string, rules: string[], targets: string[]): string {
  const list = (names: string[]) => names.map((n) => `\n    - name: ${n}`).join('');
  return (
    `${API}kind: MutexRunConfig\nmetadata:\n  name: ${name}\n  namespace: mutex\nspec:\n` +
    `  canary:\n    name: canary\n  mutexRules:${list(rules)}\n  mutexTargets:${list(targets)}\n`
  );
}

async function load(files: Record<string, string>): Promise<DesiredState> {
  const r = await loadFromSource(memorySource(files));
  assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
  return r.desired;
}

const pool = (name: string, labels: Record<string, string>, paused = false): ObservedPool => ({
  name,
  annotations: {},
  paused,
  nodeSelector: { matchLabels: labels },
  degraded: false,
  updated: true,
});

const OPENSHIFT: ObservedOpenShift = {
  clusterVersion: { desiredVersion: '4.16.4', history: [{ state: 'Completed', version: '4.16.4' }] },
  pools: [pool('worker', WORKER, true), pool('storage', STORAGE, true), pool('canary', WORKER)],
  absent: [],
};

/** The operation holding a node, Pending: its before-Jobs (the gates) run first. */
type Holder = 'run nightly' | 'run weekly' | 'NodeOpUpgrade' | 'NodeImage inPlace' | 'NodeOp';

const op = nodeOp('edge', { cordon: true, generatedBy: 'NodeOpUpgrade/edge' });
const plain = nodeOp('patch', { cordon: true });
const image = { ...nodeImage('edge', 'os-v2', { concurrency: 1 }), strategy: 'inPlace' as const };

function lockOf(d: DesiredState, holder: Holder): string {
  const revisionOf = (name: string) => d.mutexRunConfigs.find((r) => r.name === name)?.revision ?? '?';
  if (holder === 'run nightly') return `MutexRunConfig/nightly@${revisionOf('nightly')}-4.16.4`;
  if (holder === 'run weekly') return `MutexRunConfig/weekly@${revisionOf('weekly')}-4.16.4`;
  if (holder === 'NodeOpUpgrade') return 'NodeOp/edge@r1';
  if (holder === 'NodeOp') return 'NodeOp/patch@r1';
  return `NodeImage/edge@${image.revision}`;
}

/** The gates whose before-Job the plan starts for a node held Pending by `holder`. */
function gatesRun(d: DesiredState, holder: Holder): string[] {
  // worker nodes for nightly, the NodeOps and the NodeImage; a storage node for weekly.
  const labels = holder === 'run weekly' ? STORAGE : WORKER;
  const held: ObservedNode = node('n1', 'sim://g/n1', {
    labels: { ...labels, [VERSION]: '4.15.9' },
    annotations: { 'drydock.dev/operation': lockOf(d, holder), 'drydock.dev/phase': 'Pending' },
  });
  const want: DesiredState = {
    ...d,
    config: { ...config(10), defaults: { rollout: policy() } },
    nodeOps: holder === 'NodeOpUpgrade' ? [op] : holder === 'NodeOp' ? [plain] : [],
    nodeImages: holder === 'NodeImage inPlace' ? [image] : [],
  };
  // One before-Job at a time: each round's is seen succeeded by the next, until none starts.
  const jobs: ObservedJob[] = [];
  const out: string[] = [];
  for (let round = 0; round < 5; round++) {
    const p = plan(want, observed({ nodes: [held], jobs, openshift: OPENSHIFT }), new Date(), {
      jobNamespace: 'drydock-system',
    });
    const a = p.actions.find((x): x is Extract<Action, { kind: 'createGateJob' }> => x.kind === 'createGateJob');
    if (a === undefined) return out;
    // Every rule Job is told its rule's name, as the operator's MUTEX_RULE.
    assert.equal(a.mutexRule, a.gate, `${a.gate}: MUTEX_RULE`);
    out.push(a.gate);
    const name = gateJobName({ ...a, node: held.name });
    const namespace = a.template.namespace ?? a.defaultNamespace;
    jobs.push({ namespace, name, labels: {}, succeeded: true, failed: false, attempts: 1 });
  }
  throw new Error(`gate Jobs never end: ${out.join(', ')}`);
}

const NIGHTLY = {
  'quiesce.yaml': rule('quiesce'),
  'workers.yaml': target('workers', 'worker'),
  'nightly.yaml': run('nightly', ['quiesce'], ['workers']),
};
const TWO_RUNS = {
  ...NIGHTLY,
  'snapshot.yaml': rule('snapshot'),
  'storage.yaml': target('storage-nodes', 'storage'),
  'weekly.yaml': run('weekly', ['snapshot'], ['storage-nodes']),
};
const SHARED = { ...TWO_RUNS, 'weekly.yaml': run('weekly', ['quiesce', 'snapshot'], ['storage-nodes']) };
const UNNAMED = { 'quiesce.yaml': rule('quiesce') };

const cases: { name: string; files: Record<string, string>; holder: Holder; gates: string[] }[] = [
  { name: "a rule a run names gates that run's node", files: NIGHTLY, holder: 'run nightly', gates: ['quiesce'] },
  { name: 'a rule a run names does not gate a NodeOpUpgrade', files: NIGHTLY, holder: 'NodeOpUpgrade', gates: [] },
  { name: 'nor an inPlace NodeImage', files: NIGHTLY, holder: 'NodeImage inPlace', gates: [] },
  { name: "a run's node gets its own run's rules only", files: TWO_RUNS, holder: 'run nightly', gates: ['quiesce'] },
  { name: "the other run's node gets the other's", files: TWO_RUNS, holder: 'run weekly', gates: ['snapshot'] },
  {
    name: 'a rule two runs name gates the nodes of both, in name order',
    files: SHARED,
    holder: 'run weekly',
    gates: ['quiesce', 'snapshot'],
  },
  { name: 'a rule no run names gates a NodeOpUpgrade', files: UNNAMED, holder: 'NodeOpUpgrade', gates: ['quiesce'] },
  { name: 'and an inPlace NodeImage', files: UNNAMED, holder: 'NodeImage inPlace', gates: ['quiesce'] },
  { name: 'but not a plain NodeOp', files: UNNAMED, holder: 'NodeOp', gates: [] },
];

describe("MutexRule scope: the runs that name it, as the mutex operator's", () => {
  for (const c of cases)
    it(c.name, async () => {
      assert.deepEqual(gatesRun(await load(c.files), c.holder), c.gates);
    });

  it("a rule no run names does not gate a run's node", async () => {
    const files = { ...TWO_RUNS, 'other.yaml': rule('other') };
    assert.deepEqual(gatesRun(await load(files), 'run nightly'), ['quiesce']);
  });
});
