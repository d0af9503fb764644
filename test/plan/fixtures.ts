/**
 * Small builders for planner tests: a DesiredState and an ObservedState described in a few
 * lines. Defaults are spelled out here once so each test states only what it is about.
 */
import type { GroupDescription, Instance } from '../../src/cloud/provider.js';
import type {
  ObservedDeployment,
  ObservedNode,
  ObservedPDB,
  ObservedPod,
  ObservedState,
} from '../../src/observe/types.js';
import type {
  Approval,
  AutoscalingStrategy,
  DesiredState,
  JobTemplate,
  MaintenanceWindow,
  NodeImage,
  NodeMaintenance,
  NodeRole,
  RepoConfig,
  RolloutPolicy,
  ScalingGroup,
  SourcePosition,
  UpgradeGate,
} from '../../src/spec/model.js';

export const T0 = Date.parse('2026-03-02T10:00:00.000Z');
/** An instant `seconds` after T0, as a Date. */
export const at = (seconds: number): Date => new Date(T0 + seconds * 1000);
/** An instant `seconds` after T0, as ISO 8601. */
export const iso = (seconds: number): string => at(seconds).toISOString();

const source: SourcePosition = { file: 'specs/test.yaml', line: 1, column: 1 };

export function policy(overrides: Partial<RolloutPolicy> = {}): RolloutPolicy {
  return {
    maxSurge: 1,
    maxUnavailable: 0,
    concurrency: 0,
    order: 'controlPlaneFirst',
    stopOnFailure: false,
    joinTimeoutSeconds: 600,
    drain: { enabled: true, force: false, ignoreDaemonSets: true, deleteEmptyDirData: false, onTimeout: 'halt' },
    healthGate: { minReadySeconds: 0 },
    approval: { required: 'none' },
    ...overrides,
  };
}

export function nodeImage(
  name: string,
  image: string,
  rollout: Partial<RolloutPolicy> = {},
  revision = `${name}-${image}`,
): NodeImage {
  return {
    kind: 'NodeImage',
    name,
    apiVersion: 'drydock.dev/v1alpha1',
    source,
    revision,
    image,
    strategy: 'replace',
    rollout: policy(rollout),
  };
}

export function scalingGroup(name: string, image: string, role: NodeRole = 'worker', groupId = name): ScalingGroup {
  return {
    kind: 'ScalingGroup',
    name,
    apiVersion: 'drydock.dev/v1alpha1',
    source,
    revision: `sg-${name}`,
    provider: 'sim',
    groupId,
    nodeImage: image,
    role,
  };
}

export function approval(name: string, target: string, image: string, stage: Approval['stage']): Approval {
  return {
    kind: 'Approval',
    name,
    apiVersion: 'drydock.dev/v1alpha1',
    source,
    revision: `a-${name}`,
    target: { kind: 'NodeImage', name: target },
    image,
    stage,
  };
}

export function autoscaling(name: string, deploymentName = 'cluster-autoscaler', enabled = true): AutoscalingStrategy {
  return {
    kind: 'AutoscalingStrategy',
    name,
    apiVersion: 'drydock.dev/v1alpha1',
    source,
    revision: `as-${name}`,
    enabled,
    deploymentName,
    deploymentNamespace: 'kube-system',
  };
}

export function nodeMaintenance(
  name: string,
  nodeName: string,
  reason = 'disk swap',
  drain: Partial<NodeMaintenance['drain']> = {},
  revision = `m-${name}`,
): NodeMaintenance {
  return {
    kind: 'NodeMaintenance',
    name,
    apiVersion: 'drydock.dev/v1alpha1',
    source,
    revision,
    nodeName,
    reason,
    drain: {
      enabled: true,
      force: false,
      ignoreDaemonSets: true,
      deleteEmptyDirData: true,
      onTimeout: 'halt',
      ...drain,
    },
  };
}

export function maintenanceWindow(
  name: string,
  timeZone: string,
  schedules: MaintenanceWindow['schedules'],
  exclusions: MaintenanceWindow['exclusions'] = [],
): MaintenanceWindow {
  return {
    kind: 'MaintenanceWindow',
    name,
    apiVersion: 'drydock.dev/v1alpha1',
    source,
    revision: `w-${name}`,
    timeZone,
    schedules,
    exclusions,
  };
}

export function config(budget: RepoConfig['budget']['maxUnavailable'] = 10): RepoConfig {
  return {
    cluster: 'test',
    budget: { maxUnavailable: budget },
    defaults: { rollout: policy() },
    paths: ['.'],
    statusBranch: 'drydock/status',
  };
}

export function desired(parts: Partial<DesiredState> = {}): DesiredState {
  return {
    config: config(),
    scalingGroups: [],
    nodeImages: [],
    autoscalingStrategies: [],
    nodeMaintenances: [],
    nodeOps: [],
    nodeOpUpgrades: [],
    upgradeGates: [],
    maintenanceWindows: [],
    approvals: [],
    mutexTargets: [],
    mutexRunConfigs: [],
    ...parts,
  };
}

export const providerID = (group: string, id: string): string => `sim://${group}/${id}`;

export function instance(
  group: string,
  id: string,
  image: string,
  createdAt = -3600,
  state: Instance['state'] = 'running',
): Instance {
  return { id, providerID: providerID(group, id), image, state, createdAt: iso(createdAt) };
}

export function cloudGroup(
  scalingGroup: string,
  image: string,
  instances: Instance[],
  targetSize = instances.length,
  groupId = scalingGroup,
) {
  const description: GroupDescription = {
    groupId,
    image,
    targetSize,
    instances: [...instances].sort((a, b) => (a.id < b.id ? -1 : 1)),
  };
  return { scalingGroup, description };
}

export interface NodeOptions {
  readonly ready?: boolean;
  readonly readySince?: number;
  readonly annotations?: Record<string, string>;
  readonly labels?: Record<string, string>;
  readonly unschedulable?: boolean;
  readonly taints?: ObservedNode['taints'];
}

export function node(name: string, pid: string, o: NodeOptions = {}): ObservedNode {
  return {
    name,
    providerID: pid,
    labels: { 'kubernetes.io/hostname': name, ...o.labels },
    annotations: o.annotations ?? {},
    unschedulable: o.unschedulable ?? false,
    ready: o.ready ?? true,
    readySince: iso(o.readySince ?? -3600),
    createdAt: iso(-3600),
    taints: o.taints ?? [],
  };
}

export function pod(namespace: string, name: string, nodeName: string, o: Partial<ObservedPod> = {}): ObservedPod {
  return {
    namespace,
    name,
    uid: `uid-${namespace}-${name}`,
    nodeName,
    labels: {},
    ownerKind: 'ReplicaSet',
    ownerName: `${name}-rs`,
    phase: 'Running',
    ready: true,
    readySince: iso(-3600),
    terminating: false,
    hasEmptyDir: false,
    mirror: false,
    pdbs: [],
    ...o,
  };
}

export function pdb(namespace: string, name: string, disruptionsAllowed: number): ObservedPDB {
  return {
    namespace,
    name,
    disruptionsAllowed,
    currentHealthy: 2,
    desiredHealthy: 2 - disruptionsAllowed,
    expectedPods: 2,
  };
}

export function deployment(
  name: string,
  replicas: number,
  annotations: Record<string, string> = {},
): ObservedDeployment {
  return { namespace: 'kube-system', name, replicas, annotations };
}

export function observed(parts: Partial<ObservedState> = {}): ObservedState {
  const sortBy = <T>(items: readonly T[] | undefined, key: (t: T) => string): T[] =>
    [...(items ?? [])].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return {
    nodes: sortBy(parts.nodes, (n) => n.name),
    pods: sortBy(parts.pods, (p) => `${p.namespace}/${p.name}`),
    pdbs: sortBy(parts.pdbs, (p) => `${p.namespace}/${p.name}`),
    deployments: sortBy(parts.deployments, (d) => `${d.namespace}/${d.name}`),
    jobs: sortBy(parts.jobs, (j) => `${j.namespace}/${j.name}`),
    ...(parts.workloads !== undefined ? { workloads: parts.workloads } : {}),
    cloudGroups: sortBy(parts.cloudGroups, (g) => g.scalingGroup),
    problems: parts.problems ?? [],
    ...(parts.openshift !== undefined ? { openshift: parts.openshift } : {}),
    ...(parts.metrics !== undefined ? { metrics: parts.metrics } : {}),
  };
}

/**
 * The common world of these tests: ScalingGroup `workers` with nodes worker-0..n-1 on
 * instances i-0..i-(n-1), all on `image`; `extra` adds instances/nodes on top.
 */
export function workers(n: number, image: string, nodeOptions: (i: number) => NodeOptions = () => ({})) {
  const instances = Array.from({ length: n }, (_, i) => instance('workers', `i-${i}`, image));
  const nodes = instances.map((inst, i) => node(`worker-${i}`, inst.providerID, nodeOptions(i)));
  return { instances, nodes };
}

/** Deep-freezes a value, so a test can prove the planner does not mutate its input. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

/** A Job template for gates: the smallest batch/v1 JobSpec, `command` telling them apart. */
export function jobTemplate(command = 'true'): JobTemplate {
  return {
    spec: {
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: [command] }] } },
    },
  };
}

/** An UpgradeGate named `storage` for `targets`, one before- and one after-Job unless told otherwise. */
export function upgradeGate(targets: UpgradeGate['appliesTo']['targets'], o: Partial<UpgradeGate> = {}): UpgradeGate {
  return {
    kind: 'UpgradeGate',
    name: 'storage',
    apiVersion: 'drydock.dev/v1alpha1',
    source: { file: 'policies/storage.yaml', line: 1, column: 1 },
    revision: 'g1',
    appliesTo: { targets },
    before: [jobTemplate()],
    after: [jobTemplate()],
    ...o,
  };
}
