/**
 * UpgradeGates (and MutexRules) for every operation kind: per node, the gates that apply to
 * it, their `before` Jobs run one after another before the node is cordoned and their `after`
 * Jobs once it is done. Progress is read from the Jobs themselves: each has a deterministic
 * name (gate, step, position, node, operation, revision), so a restarted drydock finds the
 * Job it made instead of making a second, and a gate Job is deleted only once no step of the
 * node will look at it again (its outcome is then on the node: the phase moved on, or Failed
 * with the Job's name).
 */
import type { ObservedJob, ObservedNode } from '../observe/types.js';
import { matchesSelector } from '../observe/selector.js';
import {
  gateJobName,
  JOB_LABELS,
  labelValue,
  MANAGED_BY,
  operationLabel,
  type OperationRef,
} from '../protocol/jobs.js';
import type { DesiredState, JobTemplate, UpgradeGate } from '../spec/model.js';
import { isMutexRule } from '../spec/normalise/mutex.js';
import type { PlanBuilder } from './builder.js';
import { compareStrings } from './order.js';
import { jobOutcomeRecorded, type NodeState } from './protocol.js';
import type { SpecRef } from './types.js';
import type { ClusterView } from './view.js';

export type GateStep = 'before' | 'after';

/** One gate Job a node must pass, in the order they run. */
export interface GateJob {
  readonly gate: string;
  readonly step: GateStep;
  readonly index: number;
  readonly template: JobTemplate;
  readonly namespace: string;
  readonly name: string;
  /** The gate was written as a MutexRule of this name (MUTEX_RULE in its Jobs' environment). */
  readonly mutexRule?: string;
}

/** What the gates of one step say for a node this round. */
export type GateResult =
  | { readonly kind: 'passed' }
  | { readonly kind: 'waiting' }
  | { readonly kind: 'failed'; readonly reason: string; readonly job: string };

export interface GateInput {
  readonly desired: DesiredState;
  readonly view: ClusterView;
  readonly b: PlanBuilder;
  /** The spec a gate's appliesTo names (a NodeOpUpgrade for its generated NodeOp). */
  readonly spec: SpecRef;
  /** The operation the Jobs run for: their names and labels. */
  readonly operation: OperationRef;
  readonly defaultNamespace: string;
  readonly node: ObservedNode;
  /** replace: the node taking this one's place, in the Jobs' environment. */
  readonly replacement?: string;
}

/** The gates that apply to `spec` on `node`, by name. */
export function gatesFor(desired: DesiredState, spec: SpecRef, node: ObservedNode): UpgradeGate[] {
  return desired.upgradeGates
    .filter(
      (g) =>
        g.appliesTo.targets.some((t) => t.kind === spec.kind && (t.name === undefined || t.name === spec.name)) &&
        (g.appliesTo.nodeSelector === undefined || matchesSelector(g.appliesTo.nodeSelector, node.labels)),
    )
    .sort((x, y) => compareStrings(x.name, y.name));
}

/** Every Job of `step` for the node, gate by gate, each gate's Jobs in the order written. */
export function gateJobs(input: Omit<GateInput, 'b' | 'view'>, step: GateStep): GateJob[] {
  const out: GateJob[] = [];
  for (const gate of gatesFor(input.desired, input.spec, input.node)) {
    (step === 'before' ? gate.before : gate.after).forEach((template, index) => {
      const name = gateJobName({
        operation: input.operation,
        gate: gate.name,
        step,
        index,
        template,
        node: input.node.name,
      });
      out.push({
        gate: gate.name,
        step,
        index,
        template,
        namespace: template.namespace ?? input.defaultNamespace,
        name,
        ...(isMutexRule(gate) ? { mutexRule: gate.name } : {}),
      });
    });
  }
  return out;
}

function failure(j: GateJob, observed: ObservedJob): string {
  const why = observed.failureReason !== undefined ? ` (${observed.failureReason})` : '';
  const message = observed.message !== undefined ? `: ${observed.message}` : '';
  return `UpgradeGate ${j.gate} ${j.step}-Job ${j.namespace}/${j.name} failed after ${observed.attempts} attempt(s)${why}${message}`;
}

/**
 * Walks the node's `step` Jobs in order: the first one not observed is created, one running
 * is waited for, one failed fails the gate; passed once every one succeeded.
 */
export function runGates(input: GateInput, step: GateStep): GateResult {
  const { b, spec, node } = input;
  const jobs = gateJobs(input, step);
  for (const [i, j] of jobs.entries()) {
    const ref = `${j.namespace}/${j.name}`;
    const observed = input.view.jobByKey.get(ref);
    const what = `UpgradeGate ${j.gate} ${step}-Job ${i + 1}/${jobs.length} (${ref})`;
    if (observed === undefined) {
      b.act({
        kind: 'createGateJob',
        spec,
        node: node.name,
        operation: input.operation,
        gate: j.gate,
        step,
        index: j.index,
        template: j.template,
        defaultNamespace: input.defaultNamespace,
        ...(input.replacement !== undefined ? { replacement: input.replacement } : {}),
        ...(j.mutexRule !== undefined ? { mutexRule: j.mutexRule } : {}),
        reason: `${what} for node ${node.name}${step === 'before' ? ' must succeed before it is touched' : ' runs now it is done'}`,
      });
      b.wait(spec, 'gate', `node ${node.name}: ${what} starting`, { node: node.name });
      return { kind: 'waiting' };
    }
    if (observed.failed) return { kind: 'failed', reason: failure(j, observed), job: ref };
    if (!observed.succeeded) {
      b.wait(spec, 'gate', `node ${node.name}: ${what} running`, { node: node.name });
      return { kind: 'waiting' };
    }
  }
  return { kind: 'passed' };
}

/**
 * Deletes this operation's finished gate Jobs that no step will read again: a Job is kept
 * while its node is held by the same revision in the phase that reads its step
 * (`consults(state)`, of the node's state), and deleted otherwise (the node moved on, failed
 * with the Job named on it, was released, or is gone). A running Job is never deleted.
 */
export function cleanUpGateJobs(
  input: Pick<GateInput, 'b' | 'spec' | 'view' | 'operation'>,
  consults: (state: NodeState) => GateStep | undefined,
): void {
  const { view, operation } = input;
  const label = operationLabel(operation);
  let byLabel: Map<string, ObservedNode> | undefined;
  for (const job of view.observed.jobs) {
    const step = job.labels[JOB_LABELS.step];
    if (step !== 'before' && step !== 'after') continue;
    if (job.labels[JOB_LABELS.managedBy] !== MANAGED_BY || job.labels[JOB_LABELS.operation] !== label) continue;
    if (!jobOutcomeRecorded(job)) continue;
    byLabel ??= new Map(view.observed.nodes.map((n) => [labelValue(n.name), n] as const));
    const nodeLabel = job.labels[JOB_LABELS.node] ?? '';
    const node = byLabel.get(nodeLabel);
    if (node !== undefined && job.labels[JOB_LABELS.revision] === labelValue(operation.revision)) {
      const state = view.stateOf(node);
      const lock = state.lock;
      const ours =
        lock?.kind === operation.kind && lock.name === operation.name && lock.revision === operation.revision;
      if (ours && consults(state) === step) continue;
    }
    input.b.act({
      kind: 'deleteJob',
      spec: input.spec,
      node: node?.name ?? nodeLabel,
      namespace: job.namespace,
      name: job.name,
      reason: `UpgradeGate ${step}-Job's outcome is recorded (node ${node?.name ?? nodeLabel})`,
    });
  }
}
