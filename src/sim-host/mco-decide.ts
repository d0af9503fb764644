/**
 * What the simulated Machine Config Operator does next, decided from the objects alone (pure,
 * so it is tested without a cluster). It follows the MCO's documented behaviour:
 * - render: every pool's rendered config (spec.configuration.name) is named after the release
 *   ClusterVersion asks for, rendered-<pool>-<hash of the version>;
 * - node controller: in an unpaused pool, nodes whose desiredConfig is not the pool's rendered
 *   config get it, as many as the pool's maxUnavailable leaves room for (nodes not Ready,
 *   cordoned, updating or Degraded use that room up); a paused pool is left alone;
 * - daemon: a node whose desiredConfig differs from its currentConfig goes Working, is
 *   cordoned, drained through the Eviction API, rebooted, then comes back Done with
 *   currentConfig = desiredConfig, uncordoned, labelled with the release it now runs; an update
 *   within the same release changes no files worth a reboot and is applied in place; a node
 *   marked faulty goes Degraded with a reason instead;
 * - pool status: machine counts and the Updated, Updating, NodeDegraded and Degraded conditions.
 * Used by mco.ts.
 */
import { createHash } from 'node:crypto';
import type { V1LabelSelector, V1Node, V1NodeCondition } from '@kubernetes/client-node';
import type { SimMcoConfig } from '../cloud/sim/config.js';
import { HOST_KEYS } from './decide.js';

/** The node annotations and label the MCO's controller and daemon coordinate through, and the sim's own. */
export const MCO_KEYS = {
  currentConfig: 'machineconfiguration.openshift.io/currentConfig',
  desiredConfig: 'machineconfiguration.openshift.io/desiredConfig',
  state: 'machineconfiguration.openshift.io/state',
  reason: 'machineconfiguration.openshift.io/reason',
  /** Node label: the release the node's config was rendered from. */
  releaseVersion: 'machineconfiguration.openshift.io/release-image-version',
  /** Node annotation: the desiredConfig the node has been drained for. */
  drained: 'sim.drydock.dev/mco-drained',
  /** Node annotation: the bootID the node had when the update rebooted it. */
  rebootFrom: 'sim.drydock.dev/mco-reboot-from',
  /** Node label: "true" makes the node go Degraded when it is told to update. */
  degrade: 'sim.drydock.dev/mco-degrade',
} as const;

export interface PoolCondition {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}

export interface PoolStatus {
  readonly observedGeneration?: number;
  readonly configuration?: { readonly name?: string };
  readonly machineCount?: number;
  readonly updatedMachineCount?: number;
  readonly readyMachineCount?: number;
  readonly unavailableMachineCount?: number;
  readonly degradedMachineCount?: number;
  readonly conditions?: readonly PoolCondition[];
}

export interface MachineConfigPool {
  readonly metadata?: { readonly name?: string; readonly generation?: number };
  readonly spec?: {
    readonly nodeSelector?: V1LabelSelector;
    readonly paused?: boolean;
    readonly maxUnavailable?: number | string;
    readonly configuration?: { readonly name?: string };
  };
  readonly status?: PoolStatus;
}

export interface Release {
  readonly version?: string;
  readonly image?: string;
}

export interface ClusterVersion {
  readonly metadata?: { readonly name?: string; readonly generation?: number };
  readonly spec?: { readonly desiredUpdate?: Release };
  readonly status?: {
    readonly desired?: Release;
    readonly history?: readonly (Release & { readonly state?: string })[];
  };
}

export interface ClusterVersionStatus {
  readonly observedGeneration: number;
  readonly versionHash: string;
  readonly desired: { readonly version: string; readonly image: string };
  readonly availableUpdates: readonly Release[];
  readonly history: readonly object[];
}

export type McoStep =
  | { readonly kind: 'render'; readonly key: string; readonly pool: string; readonly config: string }
  | { readonly kind: 'poolStatus'; readonly key: string; readonly pool: string; readonly status: PoolStatus }
  | {
      readonly kind: 'clusterVersion';
      readonly key: string;
      readonly name: string;
      readonly status: ClusterVersionStatus;
    }
  | McoNodeStep;

/** A change to one node: what the controller or the daemon writes on it. */
export type McoNodeStep =
  | {
      readonly kind: 'adopt';
      readonly key: string;
      readonly node: string;
      readonly config: string;
      readonly version?: string;
    }
  | { readonly kind: 'setDesired'; readonly key: string; readonly node: string; readonly config: string }
  | { readonly kind: 'degrade'; readonly key: string; readonly node: string; readonly reason: string }
  | { readonly kind: 'start'; readonly key: string; readonly node: string }
  | { readonly kind: 'drain'; readonly key: string; readonly node: string; readonly config: string }
  | {
      readonly kind: 'reboot';
      readonly key: string;
      readonly node: string;
      readonly bootID: string;
      readonly until: number;
      readonly conditions: V1NodeCondition[];
    }
  | {
      readonly kind: 'finish';
      readonly key: string;
      readonly node: string;
      readonly config: string;
      readonly version?: string;
    };

export interface McoWorld {
  readonly pools: readonly MachineConfigPool[];
  readonly clusterVersions: readonly ClusterVersion[];
  /** The sim cloud's own nodes. */
  readonly nodes: readonly V1Node[];
  readonly config: SimMcoConfig;
  /** Seconds a rebooting node stays down (the host's rebootSeconds). */
  readonly rebootSeconds: number;
  /** Epoch milliseconds. */
  readonly now: number;
}

/** The rendered config a pool gets for a release: like the MCO's, named after the pool and a hash. */
export function renderedConfigName(pool: string, version: string): string {
  return `rendered-${pool}-${createHash('sha256').update(version).digest('hex').slice(0, 32)}`;
}

function nameOf(o: { metadata?: { name?: string } }): string {
  return o.metadata?.name ?? '';
}

function annotation(node: V1Node, key: string): string | undefined {
  return node.metadata?.annotations?.[key];
}

/** The ClusterVersion the cluster has ("version" on OpenShift; the first by name otherwise). */
export function clusterVersionOf(cvs: readonly ClusterVersion[]): ClusterVersion | undefined {
  return cvs.find((cv) => nameOf(cv) === 'version') ?? [...cvs].sort((a, b) => nameOf(a).localeCompare(nameOf(b)))[0];
}

/** Every release the ClusterVersion knows of, so a rendered config's name tells its release. */
function knownVersions(cv: ClusterVersion | undefined): string[] {
  const all = [
    cv?.spec?.desiredUpdate?.version,
    cv?.status?.desired?.version,
    ...(cv?.status?.history ?? []).map((h) => h.version),
  ];
  return all.filter((v): v is string => v !== undefined && v !== '');
}

/** Which release a rendered config name was rendered from, if the cluster knows it. */
export function releaseOf(
  config: string,
  pools: readonly MachineConfigPool[],
  cv: ClusterVersion | undefined,
): string | undefined {
  for (const v of knownVersions(cv)) for (const p of pools) if (renderedConfigName(nameOf(p), v) === config) return v;
  return undefined;
}

export function matchesSelector(
  labels: Readonly<Record<string, string>>,
  selector: V1LabelSelector | undefined,
): boolean {
  // The MCO reads a missing selector as selecting nothing, not everything.
  if (selector === undefined) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const value = labels[e.key];
    const inValues = value !== undefined && (e.values ?? []).includes(value);
    const ok =
      e.operator === 'In'
        ? inValues
        : e.operator === 'NotIn'
          ? !inValues
          : e.operator === 'Exists'
            ? has
            : e.operator === 'DoesNotExist'
              ? !has
              : false;
    if (!ok) return false;
  }
  return true;
}

/**
 * The one pool a node belongs to. As in the MCO: master wins; a custom pool wins over worker
 * (a node labelled into a canary pool leaves worker); a node in two custom pools is in none.
 */
export function poolOf(node: V1Node, pools: readonly MachineConfigPool[]): MachineConfigPool | undefined {
  const labels = node.metadata?.labels ?? {};
  const matching = pools.filter((p) => matchesSelector(labels, p.spec?.nodeSelector));
  const master = matching.find((p) => nameOf(p) === 'master');
  if (master !== undefined) return master;
  const custom = matching.filter((p) => nameOf(p) !== 'worker');
  if (custom.length > 1) return undefined;
  return custom[0] ?? matching[0];
}

/** The pool's maxUnavailable as a node count: an integer, or a percentage rounded down; at least 1. */
export function maxUnavailableOf(pool: MachineConfigPool, machines: number): number {
  const raw = pool.spec?.maxUnavailable;
  let n = 1;
  if (typeof raw === 'number') n = Math.trunc(raw);
  else if (typeof raw === 'string' && /^\d+%$/.test(raw)) n = Math.floor((machines * Number(raw.slice(0, -1))) / 100);
  else if (typeof raw === 'string' && /^\d+$/.test(raw)) n = Number(raw);
  return Math.max(1, n);
}

export function isReady(node: V1Node): boolean {
  return (
    annotation(node, HOST_KEYS.rebootingUntil) === undefined &&
    (node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false)
  );
}

/** Unavailable, as the MCO's node controller counts it: not Ready, cordoned, updating or Degraded. */
export function isUnavailable(node: V1Node): boolean {
  const current = annotation(node, MCO_KEYS.currentConfig);
  return (
    !isReady(node) ||
    node.spec?.unschedulable === true ||
    current !== annotation(node, MCO_KEYS.desiredConfig) ||
    annotation(node, MCO_KEYS.state) !== 'Done'
  );
}

function isFaulty(node: V1Node, config: SimMcoConfig): boolean {
  return config.degradedNodes.includes(nameOf(node)) || node.metadata?.labels?.[MCO_KEYS.degrade] === 'true';
}

export function decideMco(world: McoWorld): { steps: McoStep[]; nextAt?: number } {
  const cv = clusterVersionOf(world.clusterVersions);
  const upgrade = clusterVersionSteps(cv, world.now, world.config.controlPlaneSeconds);
  const steps: McoStep[] = [...renderSteps(world.pools, cv, world.config.controlPlaneSeconds), ...upgrade.steps];
  const members = new Map<string, V1Node[]>();
  for (const node of world.nodes) {
    const pool = poolOf(node, world.pools);
    if (pool !== undefined) members.set(nameOf(pool), [...(members.get(nameOf(pool)) ?? []), node]);
  }
  let nextAt: number | undefined = upgrade.nextAt;
  for (const pool of world.pools) {
    const nodes = [...(members.get(nameOf(pool)) ?? [])].sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
    const target = pool.spec?.configuration?.name;
    if (target === undefined || target === '') continue;
    steps.push(...controllerSteps(pool, target, nodes, world.pools, cv));
    for (const node of nodes) {
      const step = daemonStep(node, world, world.pools, cv);
      if (step !== undefined) steps.push(step);
      const until = Date.parse(annotation(node, HOST_KEYS.rebootingUntil) ?? '');
      if (Number.isFinite(until)) nextAt = Math.min(nextAt ?? until, Math.max(until, world.now));
    }
    const status = poolStatus(pool, target, nodes, world.now);
    if (status !== undefined)
      steps.push({
        kind: 'poolStatus',
        key: `status:${nameOf(pool)}:${JSON.stringify(status)}`,
        pool: nameOf(pool),
        status,
      });
  }
  return { steps, ...(nextAt === undefined ? {} : { nextAt }) };
}

/** The release the control plane runs: the newest Completed entry of the history. */
function controlPlaneAt(cv: ClusterVersion | undefined): string | undefined {
  const newest = cv?.status?.history?.[0];
  return newest?.state === 'Completed' ? newest.version : undefined;
}

function renderSteps(
  pools: readonly MachineConfigPool[],
  cv: ClusterVersion | undefined,
  controlPlaneSeconds: number,
): McoStep[] {
  const version = cv?.spec?.desiredUpdate?.version;
  if (version === undefined || version === '') return [];
  // With a control plane that takes its time, the pools follow once it has the release.
  if (controlPlaneSeconds > 0 && controlPlaneAt(cv) !== version) return [];
  const steps: McoStep[] = [];
  // Paused pools are rendered too: pausing holds the nodes back, not the render.
  for (const pool of pools) {
    const config = renderedConfigName(nameOf(pool), version);
    if (pool.spec?.configuration?.name !== config)
      steps.push({ kind: 'render', key: `render:${nameOf(pool)}:${config}`, pool: nameOf(pool), config });
  }
  return steps;
}

/**
 * The cluster-version operator's part, cut down: the control plane of the sim has nothing to
 * update, so a desired release becomes the desired one in status with a Partial entry of the
 * history, Completed once `controlPlaneSeconds` have passed (at once with 0).
 */
function clusterVersionSteps(
  cv: ClusterVersion | undefined,
  now: number,
  controlPlaneSeconds: number,
): { steps: McoStep[]; nextAt?: number } {
  const want = cv?.spec?.desiredUpdate;
  if (cv === undefined || want?.version === undefined || want.version === '') return { steps: [] };
  const at = new Date(now).toISOString();
  const image = want.image ?? `sim.drydock.dev/release:${want.version}`;
  const history = cv.status?.history ?? [];
  const newest = history[0];
  const started = cv.status?.desired?.version === want.version;
  if (started && (newest?.version !== want.version || newest.state === 'Completed')) return { steps: [] };
  const startedAt = started ? Date.parse((newest as { startedTime?: string }).startedTime ?? at) : now;
  const doneAt = startedAt + controlPlaneSeconds * 1000;
  if (started && now < doneAt) return { steps: [], nextAt: doneAt };
  const done = now >= doneAt;
  const entry = {
    state: done ? 'Completed' : 'Partial',
    version: want.version,
    image,
    startedTime: new Date(startedAt).toISOString(),
    // Required, and null while Partial, as OpenShift writes it.
    completionTime: done ? at : null,
    verified: false,
  };
  const status: ClusterVersionStatus = {
    observedGeneration: cv.metadata?.generation ?? 1,
    versionHash: createHash('sha256').update(want.version).digest('hex').slice(0, 16),
    desired: { version: want.version, image },
    // Required; a merge patch would drop a null.
    availableUpdates: [],
    history: [entry, ...(started ? history.slice(1) : history)],
  };
  return {
    steps: [
      { kind: 'clusterVersion', key: `cv:${nameOf(cv)}:${want.version}:${entry.state}`, name: nameOf(cv), status },
    ],
    ...(done ? {} : { nextAt: doneAt }),
  };
}

/** The node controller: adopts new nodes, and hands the rendered config to as many nodes as the pool allows. */
function controllerSteps(
  pool: MachineConfigPool,
  target: string,
  nodes: readonly V1Node[],
  pools: readonly MachineConfigPool[],
  cv: ClusterVersion | undefined,
): McoStep[] {
  const steps: McoStep[] = [];
  // A node that joins with no config was provisioned with the pool's rendered config.
  for (const node of nodes) {
    if (annotation(node, MCO_KEYS.currentConfig) !== undefined) continue;
    const version = releaseOf(target, pools, cv);
    steps.push({
      kind: 'adopt',
      key: `adopt:${nameOf(node)}:${target}`,
      node: nameOf(node),
      config: target,
      ...(version ? { version } : {}),
    });
  }
  if (pool.spec?.paused === true) return steps;
  const known = nodes.filter((n) => annotation(n, MCO_KEYS.currentConfig) !== undefined);
  const room = maxUnavailableOf(pool, known.length) - known.filter(isUnavailable).length;
  const candidates = known.filter((n) => annotation(n, MCO_KEYS.desiredConfig) !== target);
  for (const node of candidates.slice(0, Math.max(0, room)))
    steps.push({ kind: 'setDesired', key: `desire:${nameOf(node)}:${target}`, node: nameOf(node), config: target });
  return steps;
}

/** The daemon on one node: the next step of its update, if it has one to make. */
function daemonStep(
  node: V1Node,
  world: McoWorld,
  pools: readonly MachineConfigPool[],
  cv: ClusterVersion | undefined,
): McoNodeStep | undefined {
  const name = nameOf(node);
  const current = annotation(node, MCO_KEYS.currentConfig);
  const desired = annotation(node, MCO_KEYS.desiredConfig);
  if (current === undefined || desired === undefined || desired === current) return undefined;
  const state = annotation(node, MCO_KEYS.state);
  const faulty = isFaulty(node, world.config);
  if (faulty) {
    return state === 'Degraded'
      ? undefined
      : {
          kind: 'degrade',
          key: `degrade:${name}:${desired}`,
          node: name,
          reason: `${world.config.degradedReason} (${desired})`,
        };
  }
  const version = releaseOf(desired, pools, cv);
  const base = { node: name, config: desired, ...(version ? { version } : {}) };
  // Nothing of the release changes: the daemon writes the config in place, without drain or reboot.
  if (version !== undefined && version === releaseOf(current, pools, cv) && state !== 'Working')
    return { kind: 'finish', key: `finish:${name}:${desired}`, ...base };
  if (state !== 'Working' || node.spec?.unschedulable !== true)
    return { kind: 'start', key: `start:${name}:${desired}:${state ?? ''}`, node: name };
  if (annotation(node, MCO_KEYS.drained) !== desired)
    return { kind: 'drain', key: `drain:${name}:${desired}`, node: name, config: desired };
  const bootID = node.status?.nodeInfo?.bootID ?? '';
  const rebootFrom = annotation(node, MCO_KEYS.rebootFrom);
  if (annotation(node, HOST_KEYS.rebootingUntil) !== undefined) return undefined;
  if (rebootFrom === undefined || rebootFrom === bootID) {
    const at = new Date(world.now);
    return {
      kind: 'reboot',
      key: `reboot:${name}:${desired}:${bootID}`,
      node: name,
      bootID,
      until: world.now + world.rebootSeconds * 1000,
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'Rebooting',
          message: 'rebooting into a new machine config',
          lastHeartbeatTime: at,
          lastTransitionTime: at,
        },
      ],
    };
  }
  if (!isReady(node)) return undefined;
  return { kind: 'finish', key: `finish:${name}:${desired}`, ...base };
}

function condition(type: string, on: boolean, message = '', reason = ''): PoolCondition {
  return { type, status: on ? 'True' : 'False', ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

/** The pool's status as the MCO computes it, or undefined when the pool already says so. */
export function poolStatus(
  pool: MachineConfigPool,
  target: string,
  nodes: readonly V1Node[],
  now: number,
): PoolStatus | undefined {
  const updated = nodes.filter(
    (n) =>
      annotation(n, MCO_KEYS.currentConfig) === target &&
      annotation(n, MCO_KEYS.desiredConfig) === target &&
      annotation(n, MCO_KEYS.state) === 'Done',
  );
  const ready = updated.filter((n) => isReady(n) && n.spec?.unschedulable !== true);
  const unavailable = nodes.filter(isUnavailable);
  const degraded = nodes.filter((n) => annotation(n, MCO_KEYS.state) === 'Degraded');
  const all = nodes.length;
  const allUpdated = updated.length === all && ready.length === all && unavailable.length === 0;
  const degradedMessage = degraded
    .map((n) => `Node ${nameOf(n)} is reporting: ${JSON.stringify(annotation(n, MCO_KEYS.reason) ?? '')}`)
    .join(', ');
  const degradedReason = degraded.length > 0 ? `${degraded.length} nodes are reporting degraded status on sync` : '';
  const conditions = [
    condition('Updated', allUpdated, allUpdated ? `All nodes are updated with ${target}` : ''),
    condition(
      'Updating',
      !allUpdated && pool.spec?.paused !== true,
      allUpdated
        ? ''
        : pool.spec?.paused === true
          ? `Pool is paused; will not update to ${target}`
          : `All nodes are updating to ${target}`,
    ),
    condition('NodeDegraded', degraded.length > 0, degradedMessage, degradedReason),
    condition('Degraded', degraded.length > 0, degradedMessage, degradedReason),
  ];
  const wanted: PoolStatus = {
    observedGeneration: pool.metadata?.generation ?? 1,
    configuration: allUpdated ? { name: target } : (pool.status?.configuration ?? {}),
    machineCount: all,
    updatedMachineCount: updated.length,
    readyMachineCount: ready.length,
    unavailableMachineCount: unavailable.length,
    degradedMachineCount: degraded.length,
    conditions,
  };
  const stamp = (c: PoolCondition): string => JSON.stringify([c.type, c.status, c.reason ?? '', c.message ?? '']);
  const before = pool.status ?? {};
  const same =
    JSON.stringify({ ...wanted, conditions: undefined }) ===
      JSON.stringify({ ...pick(before, wanted), conditions: undefined }) &&
    conditions.every((c) => before.conditions?.some((b) => stamp(b) === stamp(c)));
  if (same) return undefined;
  const at = new Date(now).toISOString();
  return {
    ...wanted,
    // A condition's transition time moves only when its status does.
    conditions: conditions.map((c) => {
      const old = before.conditions?.find((b) => b.type === c.type);
      return {
        ...c,
        lastTransitionTime: old?.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : at,
      };
    }),
  };
}

/** The fields of `status` that `shape` has, in `shape`'s order, for comparing the two. */
function pick(status: PoolStatus, shape: PoolStatus): PoolStatus {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(shape)) out[k] = (status as Record<string, unknown>)[k];
  return out;
}
