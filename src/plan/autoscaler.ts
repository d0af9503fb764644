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
    const spec: SpecRef = { kind: 'AutoscalingStrategy', name: strategy.name };
    const key = `${strategy.deploymentNamespace}/${strategy.deploymentName}`;
    const status = (phase: SpecStatus['phase'], message: string, lastError?: string): SpecStatus => ({
      spec,
      revision: strategy.revision,
      phase,
      progress: { done: phase === 'Complete' ? 1 : 0, total: 1 },
      failures: 0,
      conditions: [{ type: 'Ready', status: phase === 'Complete' ? 'True' : 'False', reason: phase, message }],
      nodes: [],
      pending: [],
      ...(phase === 'Complete' ? {} : { waitingFor: message }),
      ...(lastError !== undefined ? { lastError } : {}),
    });
    if (!strategy.enabled) {
      statuses.push(status('Complete', 'disabled'));
      continue;
    }
    const dep = view.observed.deployments.find(
      (d) => d.namespace === strategy.deploymentNamespace && d.name === strategy.deploymentName,
    );
    if (dep === undefined) {
      const text = `deployment ${key} not found; nothing to pause (check deploymentNamespace/deploymentName)`;
      b.note(spec, text);
      statuses.push(status('Complete', text));
      continue;
    }
    const remembered = dep.annotations[ANNOTATIONS.previousReplicas];
    if (rolloutActive) {
      if (dep.replicas > 0) {
        b.act({
          kind: 'scaleDeployment',
          spec,
          namespace: dep.namespace,
          name: dep.name,
          replicas: 0,
          // A count already remembered is the original one; a repeat must not replace it.
          ...(remembered === undefined ? { rememberPrevious: dep.replicas } : {}),
          reason:
            'a node image rollout is running; the cluster-autoscaler is paused so it does not fight the replacements',
        });
        const text = `cluster-autoscaler ${key} still has ${plural(dep.replicas, 'replica')}; waiting for it to scale to 0 before nodes are replaced`;
        b.wait(spec, 'autoscaler', text);
        blocking.push(text);
        statuses.push(status('Progressing', text));
      } else {
        statuses.push(
          status('Waiting', `the rollouts to finish; paused at 0 replicas until then (restores ${remembered ?? '0'})`),
        );
      }
      continue;
    }
    if (remembered === undefined) {
      statuses.push(status('Complete', 'no rollout running'));
      continue;
    }
    if (unknown !== undefined) {
      statuses.push(status('Waiting', `paused until the rollouts are known to be done; ${unknown}`));
      continue;
    }
    if (!/^\d+$/.test(remembered)) {
      const text = `annotation ${ANNOTATIONS.previousReplicas}="${remembered}" on deployment ${key} is not a replica count; set the replicas by hand and remove the annotation`;
      b.wait(spec, 'autoscaler', text);
      statuses.push(status('Failed', text, text));
      continue;
    }
    b.act({
      kind: 'scaleDeployment',
      spec,
      namespace: dep.namespace,
      name: dep.name,
      replicas: Number(remembered),
      reason: `no rollout is running; the cluster-autoscaler gets back the ${remembered} replica${remembered === '1' ? '' : 's'} it had`,
    });
    statuses.push(status('Progressing', `restoring ${remembered} replica${remembered === '1' ? '' : 's'}`));
  }
  return { ...(blocking.length > 0 ? { blocking: blocking.join('; ') } : {}), statuses };
}
