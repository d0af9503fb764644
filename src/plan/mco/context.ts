/**
 * What one MutexRunConfig's round reads: the ClusterVersion's desired version, its target
 * pools and canary pool as observed, the nodes the target pools select, each node's standing
 * towards the run, and the MutexRules (their UpgradeGates) that gate its nodes.
 */
import { matchesSelector } from '../../observe/selector.js';
import type { ObservedNode, ObservedOpenShift, ObservedPool } from '../../observe/types.js';
import { mutexRunRecordKey } from '../../protocol/keys.js';
import type { DesiredState, MutexRunConfig, RolloutPolicy } from '../../spec/model.js';
import type { ClusterBudget } from '../budget.js';
import type { PlanBuilder } from '../builder.js';
import { compareNames } from '../order.js';
import type { OperationRef } from '../protocol.js';
import { standing, type Standing } from '../sequence/holder.js';
import type { SpecRef } from '../types.js';
import type { ClusterView } from '../view.js';

/** The Machine Config Operator's own keys on a node (foreign: drydock reads them only). */
export const MCO = {
  currentConfig: 'machineconfiguration.openshift.io/currentConfig',
  desiredConfig: 'machineconfiguration.openshift.io/desiredConfig',
  state: 'machineconfiguration.openshift.io/state',
  reason: 'machineconfiguration.openshift.io/reason',
  releaseVersion: 'machineconfiguration.openshift.io/release-image-version',
} as const;

/** The mutex operator's label per rule: a node that carries it is kept out of the canary pool. */
export const RULE_LABEL_DOMAIN = 'mutexrule.openshift-optional.skrzypek.io';

export interface McoContext {
  readonly desired: DesiredState;
  readonly run: MutexRunConfig;
  readonly spec: SpecRef;
  /** The version the nodes are upgraded to: ClusterVersion's spec.desiredUpdate.version. */
  readonly version: string;
  /** MutexRunConfig/<name>@<revision>-<version>: gate Jobs run once per node and version. */
  readonly operation: OperationRef;
  readonly now: number;
  readonly view: ClusterView;
  readonly b: PlanBuilder;
  readonly budget: ClusterBudget;
  readonly jobNamespace: string;
  /** The repository's default rollout: window, approval, canary, stopOnFailure, concurrency. */
  readonly rollout: RolloutPolicy;
  /** The target pools as observed, in the order the run names them. */
  readonly targets: readonly ObservedPool[];
  readonly canary: ObservedPool;
  /** The nodes the target pools select, by name. */
  readonly nodes: readonly ObservedNode[];
  /** The labels a waiting node carries, one per MutexRule of the run (key → ''). */
  readonly ruleLabels: Readonly<Record<string, string>>;
  readonly record: { readonly key: string; readonly value: string };
}

/** `mutexrule.openshift-optional.skrzypek.io/<rule>.<namespace>` for each rule of the run. */
export function ruleLabelsOf(run: MutexRunConfig): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rule of run.mutexRules) {
    const namespace = run.ruleNamespaces[rule] ?? 'default';
    out[`${RULE_LABEL_DOMAIN}/${rule}.${namespace}`] = '';
  }
  return out;
}

/** The pool names the run's MutexTargets list, each once, in the order written. */
export function targetPoolNames(desired: DesiredState, run: MutexRunConfig): string[] {
  const out: string[] = [];
  for (const name of run.mutexTargets)
    for (const pool of desired.mutexTargets.find((t) => t.name === name)?.machineConfigPools ?? [])
      if (!out.includes(pool)) out.push(pool);
  return out;
}

/** Why the run cannot be read from the cluster this round, or its pools and version. */
export type McoWorld =
  | { readonly ok: false; readonly reason: string }
  | {
      readonly ok: true;
      readonly version: string | undefined;
      readonly controlPlaneDone: boolean;
      readonly targets: readonly ObservedPool[];
      readonly canary: ObservedPool;
    };

/** The OpenShift objects the run needs, or what is missing, in words a person can act on. */
export function readWorld(desired: DesiredState, run: MutexRunConfig, os: ObservedOpenShift | undefined): McoWorld {
  if (os === undefined) return { ok: false, reason: 'the OpenShift objects are not observed yet' };
  if (os.unreadable !== undefined) return { ok: false, reason: os.unreadable };
  if (os.absent.length > 0)
    return {
      ok: false,
      reason:
        `the cluster has no ${os.absent.map((k) => (k === 'MachineConfigPool' ? 'MachineConfigPools' : k)).join(' and no ')} (it does not serve the kind): ` +
        'this is not an OpenShift cluster, or its CRDs are missing; point drydock at the OpenShift cluster, or remove the MutexRunConfig',
    };
  const cv = os.clusterVersion;
  if (cv === undefined) return { ok: false, reason: 'ClusterVersion "version" is not found' };
  const byName = new Map(os.pools.map((p) => [p.name, p] as const));
  const names = targetPoolNames(desired, run);
  const missing = [...names, run.canaryPool].filter((n) => !byName.has(n));
  if (missing.length > 0)
    return {
      ok: false,
      reason: `MachineConfigPool ${missing.join(', ')} not found; apply it with the cluster's manifests`,
    };
  const canary = byName.get(run.canaryPool) as ObservedPool;
  const targets = names.map((n) => byName.get(n) as ObservedPool);
  const version = cv.desiredVersion;
  const newest = cv.history[0];
  const controlPlaneDone = newest !== undefined && newest.version === version && newest.state === 'Completed';
  return { ok: true, version, controlPlaneDone, targets, canary };
}

/** The nodes any target pool selects, by name. */
export function targetNodes(view: ClusterView, targets: readonly ObservedPool[]): ObservedNode[] {
  return view.observed.nodes
    .filter((n) => targets.some((p) => p.nodeSelector !== undefined && matchesSelector(p.nodeSelector, n.labels)))
    .sort((a, b) => compareNames(a.name, b.name));
}

export function operationOf(run: MutexRunConfig, version: string): OperationRef {
  return { kind: 'MutexRunConfig', name: run.name, revision: `${run.revision}-${version}` };
}

export function recordOf(run: MutexRunConfig, version: string): { key: string; value: string } {
  return { key: mutexRunRecordKey(run.name), value: version };
}

/** A node's standing towards the run: its locks are the run's; done by its record of this version. */
export function standingOf(ctx: McoContext, node: ObservedNode): Standing {
  return standing(node, ctx.view.stateOf(node), {
    mine: (lock) => lock.kind === 'MutexRunConfig' && lock.name === ctx.run.name,
    current: (lock) => lock.revision === ctx.operation.revision,
    done: (n) => n.annotations[ctx.record.key] === ctx.record.value,
  });
}

/** Whether the node runs the version the run upgrades to (MCO's label). */
export function atVersion(node: ObservedNode, version: string): boolean {
  return node.labels[MCO.releaseVersion] === version;
}
