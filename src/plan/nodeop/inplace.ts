/**
 * A NodeImage with strategy inPlace runs on the NodeOp machinery: per node, a Job runs the new
 * image (its pod marked with the image it applies), the node reboots once, and the node is
 * done when it carries drydock.dev/image = the image. The record is the image, not the spec
 * revision, so a change of rollout policy alone never updates a node again.
 */
import type { NodeImage, NodeOp } from '../../spec/model.js';

export function inPlaceNodeOp(image: NodeImage): NodeOp {
  const r = image.rollout;
  return {
    kind: 'NodeOp',
    name: image.name,
    apiVersion: image.apiVersion,
    source: image.source,
    revision: image.revision,
    ...(image.nodeSelector !== undefined ? { nodeSelector: image.nodeSelector } : {}),
    image: image.image,
    imagePullSecrets: [],
    // The image's own entrypoint applies it (the Job gets HOST_DIR and the host's root).
    command: [],
    hostMountPath: '/host',
    cordon: true,
    drain: r.drain,
    rebootOnSuccess: true,
    backoffLimit: 0,
    concurrency: r.concurrency,
    stopOnFailure: r.stopOnFailure,
    // An image is the state every selected node should be in, new ones too.
    followNewNodes: true,
    rollout: r,
    ...(image.inPlace?.osImage !== undefined ? { osImage: image.inPlace.osImage } : {}),
    ...(image.paused !== undefined ? { paused: image.paused } : {}),
  };
}
