/**
 * An UpgradeGate's (or MutexRule's) Job for one node: the user's batch/v1 JobSpec as written,
 * named per operation, node, revision, step and position, labelled like every Job drydock
 * runs, with the node's name (and, for replace, its replacement's) in every container's
 * environment. It is not pinned to the node: a gate checks the system around the node (its
 * storage, its workloads), from wherever the user's spec lets it run.
 */
import type { V1Container, V1EnvVar, V1Job, V1JobSpec } from '@kubernetes/client-node';
import type { JobTemplate } from '../../spec/model.js';
import { gateJobName, jobAnnotations, jobLabels, operationValue, type OperationRef } from '../../protocol/jobs.js';

/**
 * Environment every gate container gets; the names the examples use. A MutexRule's Jobs also
 * get the rule's name as MUTEX_RULE, as the mutex operator gives its rule Jobs (beside NODE_NAME).
 */
export const GATE_ENV = {
  node: 'NODE_NAME',
  replacement: 'REPLACEMENT_NODE_NAME',
  operation: 'DRYDOCK_OPERATION',
  mutexRule: 'MUTEX_RULE',
} as const;

export interface GateJobInput {
  readonly operation: OperationRef;
  /** The UpgradeGate's name. */
  readonly gate: string;
  readonly step: 'before' | 'after';
  /** Position in the gate's before or after list. */
  readonly index: number;
  readonly template: JobTemplate;
  readonly node: string;
  /** replace: the new node that takes this one's place. */
  readonly replacement?: string;
  /** Used when the template names no namespace. */
  readonly defaultNamespace: string;
  /** The gate was written as a MutexRule of this name. */
  readonly mutexRule?: string;
}

function withEnv(c: V1Container, env: readonly V1EnvVar[]): V1Container {
  const names = new Set(env.map((e) => e.name));
  // drydock's values win over the template's, so a gate always checks the node it is run for.
  return { ...c, env: [...(c.env ?? []).filter((e) => !names.has(e.name)), ...env] };
}

export function gateJob(input: GateJobInput): V1Job {
  const { operation: op } = input;
  const spec = structuredClone(input.template.spec) as unknown as V1JobSpec;
  const labels = jobLabels(op, input.node, input.step);
  const annotations = jobAnnotations(op, input.node);
  const env: V1EnvVar[] = [
    { name: GATE_ENV.node, value: input.node },
    ...(input.replacement !== undefined ? [{ name: GATE_ENV.replacement, value: input.replacement }] : []),
    { name: GATE_ENV.operation, value: operationValue(op) },
    ...(input.mutexRule !== undefined ? [{ name: GATE_ENV.mutexRule, value: input.mutexRule }] : []),
  ];
  const template = spec.template ?? {};
  const podSpec = template.spec ?? { containers: [] };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: gateJobName(input),
      namespace: input.template.namespace ?? input.defaultNamespace,
      labels,
      annotations,
    },
    spec: {
      ...spec,
      template: {
        ...template,
        metadata: {
          ...template.metadata,
          labels: { ...template.metadata?.labels, ...labels },
          annotations: { ...template.metadata?.annotations, ...annotations },
        },
        spec: {
          ...podSpec,
          containers: (podSpec.containers ?? []).map((c) => withEnv(c, env)),
          ...(podSpec.initContainers !== undefined
            ? { initContainers: podSpec.initContainers.map((c) => withEnv(c, env)) }
            : {}),
        },
      },
    },
  };
}
