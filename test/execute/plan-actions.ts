/** Plan actions for the executor's unit tests (lanes, drains in flight). */
import { pino } from 'pino';
import type { CloudProvider } from '../../src/cloud/provider.js';
import { NO_EVENTS, type KubeApis } from '../../src/execute/index.js';
import type { Action, SpecRef } from '../../src/plan/types.js';

/** The executor's dependencies around a recording kube and cloud (none: no group has one): silent, no Events. */
export function recordingDeps(kube: KubeApis, cloud?: CloudProvider) {
  return {
    kube,
    cloud: () => cloud,
    fieldManager: 'drydock',
    logger: pino({ level: 'silent' }),
    events: NO_EVENTS,
    now: () => new Date(),
  };
}

export const spec: SpecRef = { kind: 'NodeImage', name: 'worker' };

export const annotate = (node: string, phase: string, forNode?: string): Action => ({
  kind: 'annotateNode',
  spec,
  reason: 'test',
  node,
  annotations: { 'drydock.dev/phase': phase },
  ...(forNode !== undefined ? { forNode } : {}),
});

export const evict = (node: string, pod: string): Action => ({
  kind: 'evict',
  spec,
  reason: 'test',
  node,
  namespace: 'ns',
  pod,
});

export const surge = (count: number): Action => ({ kind: 'surge', spec, reason: 'test', groupId: 'workers', count });
