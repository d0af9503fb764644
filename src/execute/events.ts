/**
 * Kubernetes Events for every action drydock takes on a node, so `kubectl describe node` and
 * `kubectl get events` tell the story. Events are best effort: a failure to record one is
 * logged and never fails the action it describes.
 */
import { randomBytes } from 'node:crypto';
import { CoreV1Api, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { LABELS } from '../protocol/keys.js';
import type { SpecRef } from '../plan/types.js';
import { describeError } from '../errors.js';

export type EventReason =
  | 'DrydockCordon'
  | 'DrydockUncordon'
  | 'DrydockDrain'
  | 'DrydockForceDelete'
  | 'DrydockPhase'
  | 'DrydockCopyLabels'
  | 'DrydockLabel'
  | 'DrydockReplace'
  | 'DrydockDeleteNode'
  | 'DrydockScaleAutoscaler'
  | 'DrydockBlocked'
  | 'DrydockJob'
  | 'DrydockGateJob'
  | 'DrydockReboot';

export interface EventInput {
  readonly involved: {
    readonly kind: 'Node' | 'Deployment' | 'Pod';
    readonly name: string;
    readonly namespace?: string;
    readonly apiVersion?: string;
  };
  readonly reason: EventReason;
  readonly message: string;
  readonly type?: 'Normal' | 'Warning';
  readonly spec: SpecRef;
}

export interface EventRecorder {
  record(event: EventInput, now: Date): Promise<void>;
}

/** Node events live in the default namespace, as the kubelet's do. */
const NODE_EVENT_NAMESPACE = 'default';

export function buildEvent(event: EventInput, now: Date, instance: string): CoreV1Event {
  const namespace = event.involved.namespace ?? NODE_EVENT_NAMESPACE;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      // Unique per occurrence, like the kubelet's `<object>.<hex>`.
      name: `${event.involved.name}.${now.getTime().toString(16)}${randomBytes(3).toString('hex')}`,
      namespace,
      labels: { [LABELS.managedBy]: 'drydock' },
      annotations: { [LABELS.operation]: `${event.spec.kind}/${event.spec.name}` },
    },
    involvedObject: {
      kind: event.involved.kind,
      name: event.involved.name,
      apiVersion: event.involved.apiVersion ?? (event.involved.kind === 'Deployment' ? 'apps/v1' : 'v1'),
      ...(event.involved.namespace ? { namespace: event.involved.namespace } : {}),
    },
    reason: event.reason,
    message: event.message,
    type: event.type ?? 'Normal',
    source: { component: 'drydock' },
    reportingComponent: 'drydock',
    reportingInstance: instance,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
}

export function kubeEventRecorder(kc: KubeConfig, logger: Logger, instance: string): EventRecorder {
  const core = kc.makeApiClient(CoreV1Api);
  return {
    async record(event, now) {
      const body = buildEvent(event, now, instance);
      try {
        await core.createNamespacedEvent({ namespace: body.metadata?.namespace ?? NODE_EVENT_NAMESPACE, body });
      } catch (err) {
        logger.warn(
          { reason: event.reason, object: event.involved.name, err: describeError(err) },
          'event not recorded',
        );
      }
    },
  };
}

/** Records nothing; for read-only runs and tests. */
export const NO_EVENTS: EventRecorder = { record: async () => {} };
