/**
 * AutoscalingStrategy: the cluster-autoscaler must not add or remove nodes while a rollout
 * replaces them. While any rollout runs, its Deployment is scaled to zero and its replica
 * count remembered on the Deployment itself (drydock.dev/previous-replicas), so a restart of
 * drydock still knows what to restore; once every rollout is complete, exactly that count is
 * restored and the executor removes the annotation.
 */
import { ANNOTATIONS } from '../protocol/keys.js';
import type { DesiredState } from '../spec/model.js';
import type { PlanBuilder } from './builder.js';
import type { SpecRef, SpecStatus } from './types.js';
import type { ClusterView } from './view.js';
import { plural } from '../words.js';

export interface AutoscalerResult {
  /** Why new nodes must not start yet (the autoscaler is still running), if so. */
  readonly blocking?: string;
  readonly statuses: readonly SpecStatus[];
}

interface Strategy {
  readonly spec: SpecRef;
  readonly revision: string;
  /** namespace/name of its Deployment. */
  readonly key: string;
}

function statusOf(st: Strategy, phase: SpecStatus['phase'], message: string, lastError?: string): SpecStatus {
  return {
    spec: st.spec,
    revision: st.revision,
    phase,
    progress: { done: phase === 'Complete' ? 1 : 0, total: 1 },
    failures: 0,
    conditions: [{ type: 'Ready', status: phase === 'Complete' ? 'True' : 'False', reason: phase, message }],
    nodes: [],
    pending: [],
    ...(phase === 'Complete' ? {} : { waitingFor: message }),
    ...(lastError !== undefined ? { lastError } : {}),
  };
}

export function planAutoscalers(
  desired: DesiredState,
  view: ClusterView,
  rolloutActive: boolean,
  b: PlanBuilder,
  /** Why it is unknown whether a rollout runs (a group not observed): a paused autoscaler stays paused. */
  unknown?: string,
): AutoscalerResult {
  const blocking: string[] = [];
  const statuses: SpecStatus[] = [];
  for (const strategy of desired.autoscalingStrategies) {
    const st: Strategy = {
      spec: { kind: 'AutoscalingStrategy', name: strategy.name },
      revision: strategy.revision,
      key: `${strategy.deploymentNamespace}/${strategy.deploymentName}`,
    };
    if (!strategy.enabled) {
      statuses.push(statusOf(st, 'Complete', 'disabled'));
      continue;
    }
    const dep = view.observed.deployments.find(
      (d) => d.namespace === strategy.deploymentNamespace && d.name === strategy.deploymentName,
    );
    if (dep === undefined) {
      const text = `deployment ${st.key} not found; nothing to pause (check deploymentNamespace/deploymentName)`;
      b.note(st.spec, text);
      statuses.push(statusOf(st, 'Complete', text));
      continue;
    }
    const status = rolloutActive ? pause(st, dep, b) : restore(st, dep, b, unknown);
    if (status.phase === 'Progressing' && rolloutActive && status.waitingFor !== undefined)
      blocking.push(status.waitingFor);
    statuses.push(status);
  }
  return { ...(blocking.length > 0 ? { blocking: blocking.join('; ') } : {}), statuses };
}

type Deployment = ClusterView['observed']['deployments'][number];

/** A rollout runs: the Deployment goes to 0 replicas, its count remembered on it. */
function pause(st: Strategy, dep: Deployment, b: PlanBuilder): SpecStatus {
  const remembered = dep.annotations[ANNOTATIONS.previousReplicas];
  if (dep.replicas <= 0)
    return statusOf(
      st,
      'Waiting',
      `the rollouts to finish; paused at 0 replicas until then (restores ${remembered ?? '0'})`,
    );
  b.act({
    kind: 'scaleDeployment',
    spec: st.spec,
    namespace: dep.namespace,
    name: dep.name,
    replicas: 0,
    // A count already remembered is the original one; a repeat must not replace it.
    ...(remembered === undefined ? { rememberPrevious: dep.replicas } : {}),
    reason: 'a node image rollout is running; the cluster-autoscaler is paused so it does not fight the replacements',
  });
  const text = `cluster-autoscaler ${st.key} still has ${plural(dep.replicas, 'replica')}; waiting for it to scale to 0 before nodes are replaced`;
  b.wait(st.spec, 'autoscaler', text);
  return statusOf(st, 'Progressing', text);
}

/** No rollout runs: the remembered count is restored, unless it is unknown whether one runs. */
function restore(st: Strategy, dep: Deployment, b: PlanBuilder, unknown: string | undefined): SpecStatus {
  const remembered = dep.annotations[ANNOTATIONS.previousReplicas];
  if (remembered === undefined) return statusOf(st, 'Complete', 'no rollout running');
  if (unknown !== undefined)
    return statusOf(st, 'Waiting', `paused until the rollouts are known to be done; ${unknown}`);
  if (!/^\d+$/.test(remembered)) {
    const text = `annotation ${ANNOTATIONS.previousReplicas}="${remembered}" on deployment ${st.key} is not a replica count; set the replicas by hand and remove the annotation`;
    b.wait(st.spec, 'autoscaler', text);
    return statusOf(st, 'Failed', text, text);
  }
  const replicas = plural(Number(remembered), 'replica');
  b.act({
    kind: 'scaleDeployment',
    spec: st.spec,
    namespace: dep.namespace,
    name: dep.name,
    replicas: Number(remembered),
    reason: `no rollout is running; the cluster-autoscaler gets back the ${replicas} it had`,
  });
  return statusOf(st, 'Progressing', `restoring ${replicas}`);
}
