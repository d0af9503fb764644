/**
 * One node of a MutexRunConfig, held by the run's lock, one step per round; each step is on
 * the node (drydock.dev/phase) before what it starts:
 *
 *   Pending    the MutexRules' Jobs run one after another (gates.ts; deterministic names, so a
 *              restart finds them); all passed → Updating, then the rule labels come off, which
 *              admits the node into the canary pool
 *   Updating   the Machine Config Operator cordons, drains, updates and reboots it; drydock
 *              waits for state Done with currentConfig == desiredConfig and the node's
 *              release-image-version at the version; Degraded → Failed with MCO's reason
 *   Verifying  Ready again, then the rules' cleanup Jobs; then the node is done: its record
 *              (mutexrun.drydock.dev/<run> = version) is written and the lock released
 *
 * drydock never cordons or drains these nodes: MCO's daemon does.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import { runGates, type GateResult, type GateStep } from '../gates.js';
import { failurePolicyOf, outcomeEffect, type FailurePolicy } from '../outcome.js';
import { HELD_ANNOTATIONS } from '../protocol.js';
import { atVersion, MCO, type McoContext } from './context.js';
import { setPhase } from '../sequence/phase.js';

export function failurePolicy(ctx: Pick<McoContext, 'rollout'>): FailurePolicy {
  return failurePolicyOf(ctx.rollout.stopOnFailure, ctx.rollout);
}

/** The rule labels the node still carries (admitting it takes them off). */
export function ruleLabelsOn(ctx: McoContext, node: ObservedNode): string[] {
  return Object.keys(ctx.ruleLabels).filter((k) => k in node.labels);
}

function admit(ctx: McoContext, node: ObservedNode): void {
  const left = ruleLabelsOn(ctx, node);
  if (left.length === 0) return;
  ctx.b.act({
    kind: 'labelNode',
    spec: ctx.spec,
    node: node.name,
    labels: Object.fromEntries(left.map((k) => [k, null])),
    reason: `admit node ${node.name} into canary pool ${ctx.canary.name}: the Machine Config Operator upgrades it`,
  });
}

/** Failed with the reason; the lock stays as the record (a person looks first). MCO keeps its cordon. */
export function failNode(ctx: McoContext, node: ObservedNode, why: string, job?: string): ObservedNode {
  const effect = outcomeEffect(failurePolicy(ctx), 'failed');
  const ending: Record<string, string> = {
    [ANNOTATIONS.reason]: why,
    ...(job !== undefined ? { [ANNOTATIONS.job]: job } : {}),
  };
  setPhase(ctx, node, effect.phase, `node ${node.name} failed: ${why}`, { ...ending, ...effect.annotations });
  return { ...node, annotations: { ...node.annotations, ...ending, [ANNOTATIONS.phase]: effect.phase } };
}

function gates(ctx: McoContext, node: ObservedNode, step: GateStep): GateResult {
  return runGates(
    {
      desired: ctx.desired,
      view: ctx.view,
      b: ctx.b,
      spec: ctx.spec,
      operation: ctx.operation,
      defaultNamespace: ctx.jobNamespace,
      node,
    },
    step,
  );
}

/** Moves a node the run holds one step; returns the node as it ends, if it fails. */
export function advance(ctx: McoContext, node: ObservedNode): ObservedNode | undefined {
  const phase = ctx.view.stateOf(node).phase;
  if (phase === 'Pending') return beforeJobs(ctx, node);
  if (phase === 'Verifying') return afterJobs(ctx, node);
  // Updating, or a phase nobody wrote: MCO's state decides (it is read, never assumed).
  return mcoStep(ctx, node);
}

function beforeJobs(ctx: McoContext, node: ObservedNode): ObservedNode | undefined {
  const gate = gates(ctx, node, 'before');
  if (gate.kind === 'waiting') return undefined;
  if (gate.kind === 'failed') return failNode(ctx, node, gate.reason, gate.job);
  if (!ctx.budget.canTakeDown()) {
    const until = ctx.budget.until;
    ctx.b.wait(ctx.spec, 'budget', ctx.budget.describe(), {
      node: node.name,
      ...(until !== undefined ? { until } : {}),
    });
    return undefined;
  }
  ctx.budget.takeDown();
  // The phase first: a restart between the two finds Updating and takes the labels off then.
  setPhase(ctx, node, 'Updating', `node ${node.name}: its MutexRules passed; the Machine Config Operator upgrades it`);
  admit(ctx, node);
  return undefined;
}

/** MCO's word on the node: Done at the version, Degraded, or still working. */
export function mcoState(
  node: ObservedNode,
  version: string,
): { kind: 'done' } | { kind: 'degraded'; reason: string } | { kind: 'working'; what: string } {
  const a = node.annotations;
  const state = a[MCO.state];
  if (state === 'Degraded') return { kind: 'degraded', reason: a[MCO.reason] ?? 'no reason given' };
  const current = a[MCO.currentConfig];
  if (state !== 'Done' || current === undefined || current !== a[MCO.desiredConfig])
    return {
      kind: 'working',
      what: `state ${state ?? 'unknown'}, config ${current ?? '?'} → ${a[MCO.desiredConfig] ?? '?'}`,
    };
  if (!atVersion(node, version))
    return {
      kind: 'working',
      what: `release-image-version ${node.labels[MCO.releaseVersion] ?? 'unset'}, not ${version} yet`,
    };
  return { kind: 'done' };
}

function mcoStep(ctx: McoContext, node: ObservedNode): ObservedNode | undefined {
  admit(ctx, node);
  const mco = mcoState(node, ctx.version);
  if (mco.kind === 'degraded')
    return failNode(ctx, node, `the Machine Config Operator reports node ${node.name} Degraded: ${mco.reason}`);
  if (mco.kind === 'working') {
    ctx.b.wait(ctx.spec, 'mco', `node ${node.name}: the Machine Config Operator is updating it (${mco.what})`, {
      node: node.name,
    });
    return undefined;
  }
  setPhase(ctx, node, 'Verifying', `node ${node.name} runs ${ctx.version}; its cleanup Jobs run next`);
  return undefined;
}

function afterJobs(ctx: McoContext, node: ObservedNode): ObservedNode | undefined {
  if (!node.ready) {
    ctx.b.wait(ctx.spec, 'health', `node ${node.name}: not Ready since its upgrade`, { node: node.name });
    return undefined;
  }
  const gate = gates(ctx, node, 'after');
  if (gate.kind === 'failed') return failNode(ctx, node, gate.reason, gate.job);
  if (gate.kind === 'passed') {
    const annotations = {
      ...HELD_ANNOTATIONS,
      [ctx.record.key]: ctx.record.value,
      [ANNOTATIONS.doneAt]: new Date(ctx.now).toISOString(),
    };
    const reason = `node ${node.name} runs ${ctx.version} and its cleanup Jobs succeeded`;
    ctx.b.act({ kind: 'annotateNode', spec: ctx.spec, node: node.name, annotations, reason });
  }
  return undefined;
}
