/**
 * Kubernetes Events for every action drydock takes on a node, so `kubectl describe node` and
 * `kubectl get events` tell the story. Events are best effort: a failure to record one is
 * logged and never fails the action it describes, and nothing waits for one to be written but
 * the service's shutdown: neither the action's next step nor the end of its round.
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
  /** Never rejects: a failure is the recorder's to log. Nothing waits for it but shutdown. */
  record(event: EventInput, now: Date): Promise<void>;
}

/** A recorder that knows its writes under way, so a shutdown can let them finish. */
export interface BackgroundEventRecorder extends EventRecorder {
  /** Resolves once every Event recorded so far has been written (or has failed). */
  idle(): Promise<void>;
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

export function kubeEventRecorder(kc: KubeConfig, logger: Logger, instance: string): BackgroundEventRecorder {
  const core = kc.makeApiClient(CoreV1Api);
  const underWay = new Set<Promise<void>>();
  const write = async (event: EventInput, now: Date): Promise<void> => {
    const body = buildEvent(event, now, instance);
    try {
      await core.createNamespacedEvent({ namespace: body.metadata?.namespace ?? NODE_EVENT_NAMESPACE, body });
    } catch (err) {
      logger.warn({ reason: event.reason, object: event.involved.name, err: describeError(err) }, 'event not recorded');
    }
  };
  return {
    record(event, now) {
      const written = write(event, now);
      underWay.add(written);
      void written.then(() => underWay.delete(written));
      return written;
    },
    async idle() {
      while (underWay.size > 0) await Promise.all(underWay);
    },
  };
}

/** Records nothing; for read-only runs and tests. */
export const NO_EVENTS: EventRecorder = { record: async () => {} };
