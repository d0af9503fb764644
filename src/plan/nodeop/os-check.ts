/**
 * An in-place update is verified by the node itself: once it rebooted, its OS must report the
 * target in status.nodeInfo.osImage. A node that booted back into its old partition (Bottlerocket
 * falls back when the new one fails to boot), or whose Job silently did nothing, fails here
 * with both versions named, rather than being counted as updated.
 */
import type { ObservedNode } from '../../observe/types.js';
import { bottlerocketVersionOf, osImageMatches } from '../../spec/os-image.js';
import type { NodeOpContext } from './context.js';

/** Why the rebooted node is not on the target, or undefined when it is (or nothing is expected). */
export function osImageFailure(
  ctx: Pick<NodeOpContext, 'expectedOsImage' | 'bottlerocket'>,
  node: ObservedNode,
): string | undefined {
  const expected = ctx.expectedOsImage;
  if (expected === undefined || osImageMatches(expected, node.osImage)) return undefined;
  const reported =
    node.osImage === undefined ? 'reports no osImage' : `reports osImage ${JSON.stringify(node.osImage)}`;
  const target = ctx.bottlerocket?.version;
  if (target !== undefined) {
    const running = bottlerocketVersionOf(node.osImage) ?? 'an unknown version';
    return `node ${node.name} came back on Bottlerocket ${running}, not the target ${target} (it ${reported}): the update did not take`;
  }
  return `node ${node.name} came back and ${reported}, not the expected ${expected}: the update did not take`;
}

/** What status says of how nodes are verified; undefined where no OS is updated (a plain NodeOp). */
export function verificationText(
  ctx: Pick<NodeOpContext, 'expectedOsImage' | 'bottlerocket' | 'spec' | 'op'>,
): string | undefined {
  if (ctx.expectedOsImage !== undefined)
    return `verified by the OS: after its reboot each node must report osImage ${ctx.expectedOsImage}`;
  if (ctx.bottlerocket !== undefined)
    return 'verified by the OS: once latest is resolved, each node must report "Bottlerocket OS <version>" after its reboot';
  if (ctx.spec.kind === 'NodeOp' || !ctx.op.rebootOnSuccess) return undefined;
  return 'not verified by the OS: no osImage is expected, so a node counts as updated once its Job succeeded and it rebooted';
}
