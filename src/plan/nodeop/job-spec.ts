/** What a NodeOp asks its node Job to run: the part of the spec the plan's createNodeJob action carries. */
import type { NodeJobSpec } from '../../protocol/jobs.js';
import type { NodeOp } from '../../spec/model.js';

/**
 * A NodeOp's (and so a NodeOpUpgrade's) job fields as a NodeJobSpec. It runs privileged: its
 * command works on the host through the mount (Kairos' upgrade binds the host's /dev and /run).
 */
export function nodeOpJobSpec(
  op: Pick<NodeOp, 'image' | 'command' | 'imagePullSecrets' | 'backoffLimit' | 'hostMountPath'>,
): NodeJobSpec {
  return {
    image: op.image,
    command: op.command,
    imagePullSecrets: op.imagePullSecrets,
    backoffLimit: op.backoffLimit,
    privileged: true,
    hostMountPath: op.hostMountPath,
  };
}
