/** A NodeOp for planner tests, with Kairos' defaults and only what a test is about spelled out. */
import type { NodeOp } from '../../../src/spec/model.js';
import { policy } from '../fixtures.js';

export function nodeOp(name: string, o: Partial<NodeOp> = {}): NodeOp {
  const drain = {
    enabled: false,
    force: false,
    ignoreDaemonSets: true,
    deleteEmptyDirData: true,
    onTimeout: 'halt' as const,
  };
  return {
    kind: 'NodeOp',
    name,
    apiVersion: 'drydock.dev/v1alpha1',
    source: { file: 'specs/nodeop.yaml', line: 1, column: 1 },
    revision: 'r1',
    image: 'busybox:1.36',
    imagePullSecrets: [],
    command: ['/bin/sh', '-c', 'true'],
    hostMountPath: '/host',
    cordon: false,
    drain,
    rebootOnSuccess: false,
    backoffLimit: 3,
    concurrency: 1,
    stopOnFailure: false,
    followNewNodes: true,
    rollout: policy({ drain }),
    ...o,
  };
}
