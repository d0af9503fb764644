/**
 * openshift-optional.skrzypek.io/v1alpha1, the OpenShift node-upgrade mutex operator's kinds.
 *
 * A MutexRule → an UpgradeGate. The operator runs it before each node of an OpenShift upgrade
 * (its MutexRunConfig picks the pools); in drydock the upgrades are NodeImages and
 * NodeOpUpgrades, so the gate applies to every one of them. jobSpec runs before a node is
 * touched, cleanUpJobSpec after it is done; jobName and jobNamespace are kept.
 *
 * MutexTarget and MutexRunConfig are kept as written (names resolved, nothing else) for the
 * planner's MCO kind (src/plan/mco/); once the whole repository has loaded, each MutexRule's
 * gate records the runs that name it and applies to them instead (linkMutexRuns).
 */
import type { MutexRuleDocument } from '../generated/mutex-rule.schema.js';
import type { MutexRunConfigDocument } from '../generated/mutex-run-config.schema.js';
import type { MutexTargetDocument } from '../generated/mutex-target.schema.js';
import type { MutexRunConfig, MutexTarget, Spec, UpgradeGate } from '../model.js';
import { revisionOf } from '../revision.js';
import type { NormaliseContext } from './context.js';
import { meta, raw } from './meta.js';

export const MUTEX_API = 'openshift-optional.skrzypek.io/v1alpha1';

export function xMutexRule(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<MutexRuleDocument>(ctx.doc);
  const gate: UpgradeGate = {
    ...meta(ctx.doc, 'UpgradeGate'),
    appliesTo: { targets: [{ kind: 'NodeImage' }, { kind: 'NodeOpUpgrade' }] },
    before: [{ name: spec.jobName, namespace: spec.jobNamespace, spec: spec.jobSpec }],
    after:
      spec.cleanUpJobSpec !== undefined
        ? [{ name: `${spec.jobName}-cleanup`, namespace: spec.jobNamespace, spec: spec.cleanUpJobSpec }]
        : [],
    writtenJobNamespaces: [{ name: spec.jobNamespace, at: ctx.doc.locate(['spec', 'jobNamespace']) }],
  };
  return [gate];
}

export function xMutexTarget(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<MutexTargetDocument>(ctx.doc);
  const target: MutexTarget = { ...meta(ctx.doc, 'MutexTarget'), machineConfigPools: [...spec.machineConfigPools] };
  return [target];
}

/** References keep their names only: names are unique per kind, and the loader checks namespaces. */
export function xMutexRunConfig(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<MutexRunConfigDocument>(ctx.doc);
  const own = (ctx.doc.value['metadata'] as { namespace?: string } | undefined)?.namespace;
  const ruleNamespaces: Record<string, string> = {};
  for (const r of spec.mutexRules) {
    const namespace = r.namespace ?? own;
    if (namespace !== undefined) ruleNamespaces[r.name] = namespace;
  }
  const run: MutexRunConfig = {
    ...meta(ctx.doc, 'MutexRunConfig'),
    canaryPool: spec.canary.name,
    mutexRules: spec.mutexRules.map((r) => r.name),
    mutexTargets: spec.mutexTargets.map((t) => t.name),
    ruleNamespaces,
  };
  return [run];
}

/** Whether an UpgradeGate was written as a MutexRule. */
export function isMutexRule(s: Spec): s is UpgradeGate {
  return s.kind === 'UpgradeGate' && s.apiVersion === MUTEX_API;
}

/**
 * The specs with each MutexRule's gate carrying the MutexRunConfigs that name it (and a
 * revision to match). Runs only on a repository whose references all resolved.
 */
export function linkMutexRuns(specs: readonly Spec[]): Spec[] {
  const runsOf = new Map<string, string[]>();
  for (const s of specs) {
    if (s.kind !== 'MutexRunConfig') continue;
    for (const rule of new Set(s.mutexRules)) runsOf.set(rule, [...(runsOf.get(rule) ?? []), s.name]);
  }
  return specs.map((s) => {
    const runs = runsOf.get(s.name);
    if (!isMutexRule(s) || runs === undefined) return s;
    // A rule a run names gates that run's nodes (the Machine Config Operator's upgrade), not
    // drydock's own operations: the operator runs it only for its runs.
    const sorted = [...runs].sort();
    const targets = sorted.map((name) => ({ kind: 'MutexRunConfig' as const, name }));
    const linked: UpgradeGate = { ...s, appliesTo: { targets }, mutexRunConfigs: sorted, revision: '' };
    return { ...linked, revision: revisionOf(linked) };
  });
}
