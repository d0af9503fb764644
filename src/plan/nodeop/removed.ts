/**
 * The finished Jobs and reboot pods of an operation no longer in Git. While the operation is in
 * Git, its Jobs are deleted once their outcome is recorded (step.ts' cleanUpJob, gates.ts'
 * cleanUpGateJobs) and its reboot pods once their node is done (cleanUpRebootPod);
 * once its file is gone nothing would ever look for them again: a released node no longer names
 * the operation, and its UpgradeGate before- and after-Jobs were only ever found through it.
 * So every finished Job drydock made for an operation that is gone is deleted, unless its node
 * is still held by that operation (settle() finishes that node's step and deletes its Job); so
 * is every reboot pod of such an operation whose node has left the boot it reboots.
 */
import { JOB_LABELS, labelValue, MANAGED_BY, operationLabel } from '../../protocol/jobs.js';
import { jobOutcomeRecorded } from '../protocol.js';
import type { DesiredState, SpecKind } from '../../spec/model.js';
import type { PlanBuilder } from '../builder.js';
import type { ClusterView } from '../view.js';

const SWEPT = new Set(['operation', 'before', 'after']);
/** The kinds whose Jobs carry an operation label (`Kind.name`). */
const KINDS: readonly SpecKind[] = ['NodeOpUpgrade', 'NodeOp', 'NodeImage'];

/** Every operation label a spec in Git may put on its Jobs. */
function liveLabels(desired: DesiredState): Set<string> {
  return new Set([
    ...desired.nodeOps.map((o) => operationLabel({ kind: 'NodeOp', name: o.name, revision: o.revision })),
    ...desired.nodeOpUpgrades.map((o) => operationLabel({ kind: 'NodeOpUpgrade', name: o.name, revision: o.revision })),
    ...desired.nodeImages.map((i) => operationLabel({ kind: 'NodeImage', name: i.name, revision: i.revision })),
  ]);
}

export function cleanUpRemovedJobs(desired: DesiredState, view: ClusterView, b: PlanBuilder): void {
  const live = liveLabels(desired);
  const heldBy = new Map<string, string>();
  for (const n of view.observed.nodes) {
    const { lock } = view.stateOf(n);
    const kind = KINDS.find((k) => k === lock?.kind);
    if (lock !== undefined && kind !== undefined)
      heldBy.set(labelValue(n.name), operationLabel({ kind, name: lock.name, revision: lock.revision }));
  }
  for (const job of view.observed.jobs) {
    const label = job.labels[JOB_LABELS.operation] ?? '';
    if (job.labels[JOB_LABELS.managedBy] !== MANAGED_BY || !SWEPT.has(job.labels[JOB_LABELS.step] ?? '')) continue;
    if (!jobOutcomeRecorded(job)) continue;
    if (label === '' || live.has(label)) continue;
    const node = job.labels[JOB_LABELS.node] ?? '';
    if (heldBy.get(node) === label) continue;
    const kind = KINDS.find((k) => label.startsWith(`${k}.`));
    if (kind === undefined) continue;
    b.act({
      kind: 'deleteJob',
      spec: { kind, name: label.slice(kind.length + 1) },
      node,
      namespace: job.namespace,
      name: job.name,
      reason: `its operation ${label} is no longer in Git and the Job's outcome is recorded (node ${node})`,
    });
  }
  // Reboot pods go with their node's clean-up (step.ts cleanUpRebootPod), once its reboot is over.
  const bootOf = new Map(view.observed.nodes.map((n) => [n.name, n.bootID]));
  for (const pod of view.observed.pods) {
    const label = pod.labels[JOB_LABELS.operation] ?? '';
    if (pod.labels[JOB_LABELS.managedBy] !== MANAGED_BY || pod.labels[JOB_LABELS.step] !== 'reboot') continue;
    if (pod.terminating || label === '' || live.has(label) || heldBy.get(labelValue(pod.nodeName)) === label) continue;
    // A reboot not over yet is left to the pod: only a reboot pod that reboots nothing is deleted.
    if (pod.rebootsFrom === undefined || bootOf.get(pod.nodeName) === pod.rebootsFrom) continue;
    const kind = KINDS.find((k) => label.startsWith(`${k}.`));
    if (kind === undefined) continue;
    b.act({
      kind: 'deleteRebootPod',
      spec: { kind, name: label.slice(kind.length + 1) },
      node: pod.nodeName,
      namespace: pod.namespace,
      name: pod.name,
      reason: `its operation ${label} is no longer in Git and node ${pod.nodeName} is past the boot it reboots`,
    });
  }
}
