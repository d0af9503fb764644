/**
 * Demo workloads for the sandbox: a few Deployments spread over the worker nodes, each with a
 * PodDisruptionBudget that allows exactly one disruption when all its pods are healthy, so a
 * rollout must drain nodes one at a time and its waits ("PDB demo/web allows 0 disruptions")
 * show up in the view. Applied with server-side apply, so a re-run changes nothing.
 */
import {
  AppsV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { notYet, type NotYet } from './wait.js';

export const DEMO_NAMESPACE = 'demo';
const FIELD_MANAGER = 'drydock-sandbox';

export interface DemoApp {
  readonly name: string;
  readonly replicas: number;
  /** Exactly one of them, as on a PodDisruptionBudget. */
  readonly pdb: { readonly minAvailable: number | string } | { readonly maxUnavailable: number | string };
}

/** Both PDB styles appear, so the view shows both kinds of wait. */
export const DEMO_APPS: readonly DemoApp[] = [
  { name: 'web', replicas: 6, pdb: { maxUnavailable: 1 } },
  { name: 'api', replicas: 3, pdb: { minAvailable: 2 } },
  { name: 'queue', replicas: 2, pdb: { minAvailable: '50%' } },
];

/** A Kubernetes object with the spec the client's base type leaves out. */
export interface Manifest extends KubernetesObject {
  readonly spec?: Readonly<Record<string, unknown>>;
}

function labelsOf(app: { readonly name: string }): Record<string, string> {
  return { 'app.kubernetes.io/name': app.name, 'app.kubernetes.io/part-of': 'drydock-sandbox' };
}

function deployment(namespace: string, name: string, replicas: number): Manifest {
  const labels = labelsOf({ name });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          // Workers only: control-plane nodes are tainted, and the demo is about draining workers.
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'DoesNotExist' }] },
                ],
              },
            },
          },
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'ScheduleAnyway',
              labelSelector: { matchLabels: labels },
            },
          ],
          terminationGracePeriodSeconds: 1,
          containers: [{ name, image: `demo/${name}:1`, resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
        },
      },
    },
  };
}

/**
 * A stand-in for the cluster-autoscaler that examples-repo's AutoscalingStrategy names, so the
 * sandbox shows it scaled to zero during a rollout and restored after.
 */
export const AUTOSCALER = { namespace: 'kube-system', name: 'cluster-autoscaler', replicas: 1 } as const;

/**
 * The namespace, then a Deployment and a PDB per app, then the autoscaler stand-in. Pure: the
 * same input gives the same objects.
 */
export function demoManifests(apps: readonly DemoApp[] = DEMO_APPS): Manifest[] {
  const objects: Manifest[] = [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: DEMO_NAMESPACE, labels: { 'app.kubernetes.io/part-of': 'drydock-sandbox' } },
    },
  ];
  for (const app of apps) {
    const labels = labelsOf(app);
    objects.push(deployment(DEMO_NAMESPACE, app.name, app.replicas));
    objects.push({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: app.name, namespace: DEMO_NAMESPACE, labels },
      spec: { ...app.pdb, selector: { matchLabels: labels } },
    });
  }
  objects.push(deployment(AUTOSCALER.namespace, AUTOSCALER.name, AUTOSCALER.replicas));
  return objects;
}

/** Server-side apply of every object, in order (the namespace first), as `fieldManager`. */
export async function applyObjects(
  kc: KubeConfig,
  objects: readonly KubernetesObject[],
  fieldManager = FIELD_MANAGER,
): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  for (const object of objects) {
    await client.patch(object, undefined, undefined, fieldManager, true, PatchStrategy.ServerSideApply);
  }
}

/** True once every demo Deployment has all its replicas available; otherwise what is missing. */
export async function demoWorkloadsReady(kc: KubeConfig, apps: readonly DemoApp[] = DEMO_APPS): Promise<true | NotYet> {
  const api = kc.makeApiClient(AppsV1Api);
  const missing: string[] = [];
  for (const app of apps) {
    const d = await api.readNamespacedDeployment({ name: app.name, namespace: DEMO_NAMESPACE });
    const available = d.status?.availableReplicas ?? 0;
    if (available < app.replicas) missing.push(`${DEMO_NAMESPACE}/${app.name} ${available}/${app.replicas} available`);
  }
  return missing.length === 0 ? true : notYet(missing.join(', '));
}
