/**
 * The operation step of a Bottlerocket NodeImage: the update Job (assets/bottlerocket-update.sh)
 * stages the version through the node's update API and leaves the reboot to the reboot pod, so
 * the bootID is recorded before anything reboots. Its termination message decides the node:
 * "staged X (was Y)" → Rebooting; "already at X" → done without a reboot; a failure of the API
 * → Failed with the API's own words. With `latest`, the first node's Job resolves the version:
 * it is recorded on that node (bottlerocket.drydock.dev/<name>) in the same patch that records
 * the Job's outcome, and every later node's Job is pinned to it.
 */
import type { ObservedNode } from '../../observe/types.js';
import { bottlerocketUpdateResult } from '../../protocol/bottlerocket.js';
import { bottlerocketRecordKey } from '../../protocol/keys.js';
import { jobOf, type NodeOpContext } from './context.js';
import { enterRebooting, enterVerifying, failNode, jobFailed, messageOf, type Ended } from './step.js';

export function bottlerocketJobStep(ctx: NodeOpContext, node: ObservedNode): Ended | undefined {
  const { b, spec, settings } = ctx;
  const target = ctx.bottlerocket?.version;
  const { name, job } = jobOf(ctx, ctx.operation, node.name);
  const jobRef = `${settings.jobNamespace}/${name}`;
  if (job === undefined) {
    b.act({
      kind: 'createBottlerocketUpdateJob',
      spec,
      node: node.name,
      namespace: settings.jobNamespace,
      operation: ctx.operation,
      version: target ?? 'latest',
      taints: node.taints.map((t) => ({ ...t })),
      ...(settings.bottlerocketImage !== undefined ? { image: settings.bottlerocketImage } : {}),
      reason: `stage Bottlerocket ${target ?? 'latest'} on node ${node.name} through its update API`,
    });
    b.wait(spec, 'job', `node ${node.name}: Job ${jobRef} starting`, { node: node.name });
    return;
  }
  if (job.failed) return jobFailed(ctx, node, job, jobRef);
  if (!job.succeeded) {
    b.wait(spec, 'job', `node ${node.name}: Job ${jobRef} running`, { node: node.name });
    return;
  }
  const result = bottlerocketUpdateResult(job.message);
  if (result === undefined)
    return failNode(
      ctx,
      node,
      `Job ${jobRef} succeeded but does not say what it staged (${JSON.stringify(job.message ?? '')})`,
      jobRef,
      messageOf(job),
    );
  if (target !== undefined && result.version !== target)
    return failNode(ctx, node, `Job ${jobRef} put ${result.version} on the node, not the target ${target}`, jobRef, {
      ...messageOf(job),
    });
  // This node's Job ran unpinned: what it found is the version of the whole rollout.
  const resolved: Record<string, string> =
    target === undefined ? { [bottlerocketRecordKey(ctx.op.name)]: `${ctx.op.revision} ${result.version}` } : {};
  if (result.outcome === 'current') {
    enterVerifying(ctx, node, `node ${node.name} is already at Bottlerocket ${result.version}; no reboot`, {
      ...messageOf(job),
      ...resolved,
    });
    return;
  }
  if (node.bootID === undefined || node.bootID === '')
    return failNode(
      ctx,
      node,
      'the node reports no bootID (status.nodeInfo.bootID), so a reboot could not be verified',
      jobRef,
    );
  enterRebooting(ctx, node, node.bootID, `node ${node.name}: Bottlerocket ${result.version} is staged; reboot next`, {
    ...messageOf(job),
    ...resolved,
  });
}
