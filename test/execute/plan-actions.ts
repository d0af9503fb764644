/** Plan actions for the executor's unit tests (lanes, drains in flight). */
import type { Action, SpecRef } from '../../src/plan/types.js';

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
