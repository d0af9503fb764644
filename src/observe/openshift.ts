/**
 * The OpenShift half of cluster observation: ClusterVersion `version` (config.openshift.io/v1)
 * and the MachineConfigPools (machineconfiguration.openshift.io/v1) an MCO upgrade is driven by.
 * Nothing is asked of the API until a MutexRunConfig wants it (a cluster that is not OpenShift
 * pays nothing): then the API groups are discovered, and each served kind is watched like the
 * nodes (informer.ts). A cluster that serves neither is not OpenShift: the view says which kind
 * is absent (and discovery is tried again now and then, since CRDs can be installed later), so
 * the run's status says so instead of waiting in silence.
 */
import {
  ApisApi,
  CustomObjectsApi,
  type KubernetesListObject,
  type KubernetesObject,
  type V1LabelSelector,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { describeError } from '../errors.js';
import { watchCollection, type WatchedCollection } from '../kube/informer.js';
import { DRYDOCK_PREFIX } from '../protocol/keys.js';
import { record, toLabelSelector } from './convert.js';
import { sameTrimmed } from './trim.js';
import type { CountingKubeConfig } from './kube.js';
import type { ObservedClusterVersion, ObservedOpenShift, ObservedPool } from './types.js';

/** The kinds observed, with where the API serves them. */
export const OPENSHIFT_KINDS = {
  ClusterVersion: { group: 'config.openshift.io', version: 'v1', plural: 'clusterversions' },
  MachineConfigPool: { group: 'machineconfiguration.openshift.io', version: 'v1', plural: 'machineconfigpools' },
} as const;

type OpenShiftKind = keyof typeof OPENSHIFT_KINDS;
const KINDS = Object.keys(OPENSHIFT_KINDS) as OpenShiftKind[];

/** The name of the one ClusterVersion OpenShift keeps. */
export const CLUSTER_VERSION_NAME = 'version';

/** How often a cluster that lacked a kind is asked again (its CRD may be installed since). */
export const REDISCOVER_MS = 60_000;

interface Condition {
  readonly type?: string;
  readonly status?: string;
}

/** ClusterVersion as drydock reads it (the rest is trimmed away). */
export interface RawClusterVersion extends KubernetesObject {
  spec?: { desiredUpdate?: { version?: string } };
  status?: { history?: readonly { state?: string; version?: string }[] };
}

/** MachineConfigPool as drydock reads it. */
export interface RawPool extends KubernetesObject {
  spec?: {
    paused?: boolean;
    nodeSelector?: V1LabelSelector;
    maxUnavailable?: number | string;
  };
  status?: { configuration?: { name?: string }; conditions?: readonly Condition[] };
}

function trimMeta(m: KubernetesObject['metadata'], annotations: boolean): NonNullable<KubernetesObject['metadata']> {
  const out: NonNullable<KubernetesObject['metadata']> = {};
  if (m?.name !== undefined) out.name = m.name;
  if (m?.resourceVersion !== undefined) out.resourceVersion = m.resourceVersion;
  if (annotations && m?.annotations) {
    // Only drydock's own (paused-by): the MCO's and kubectl's change often and say nothing here.
    const ours = Object.entries(m.annotations).filter(([k]) => k.startsWith(DRYDOCK_PREFIX));
    if (ours.length > 0) out.annotations = Object.fromEntries(ours);
  }
  return out;
}

export function trimClusterVersion(cv: RawClusterVersion): RawClusterVersion {
  const version = cv.spec?.desiredUpdate?.version;
  return {
    metadata: trimMeta(cv.metadata, false),
    spec: version !== undefined ? { desiredUpdate: { version } } : {},
    status: {
      history: (cv.status?.history ?? []).map((h) => ({
        ...(h.state !== undefined ? { state: h.state } : {}),
        ...(h.version !== undefined ? { version: h.version } : {}),
      })),
    },
  };
}

/** A pool's machine counts move with every node the MCO touches: they are not kept. */
export function trimPool(pool: RawPool): RawPool {
  const s = pool.spec;
  const configuration = pool.status?.configuration?.name;
  const conditions = (pool.status?.conditions ?? [])
    .filter((c) => c.type === 'Degraded' || c.type === 'Updated')
    .map((c) => ({ type: c.type, status: c.status }));
  return {
    metadata: trimMeta(pool.metadata, true),
    spec: {
      ...(s?.paused !== undefined ? { paused: s.paused } : {}),
      ...(s?.nodeSelector !== undefined ? { nodeSelector: s.nodeSelector } : {}),
      ...(s?.maxUnavailable !== undefined ? { maxUnavailable: s.maxUnavailable } : {}),
    },
    status: { ...(configuration !== undefined ? { configuration: { name: configuration } } : {}), conditions },
  };
}

export function toObservedClusterVersion(cv: RawClusterVersion): ObservedClusterVersion {
  const version = cv.spec?.desiredUpdate?.version;
  return Object.freeze({
    ...(version !== undefined && version !== '' ? { desiredVersion: version } : {}),
    history: Object.freeze(
      (cv.status?.history ?? []).map((h) => Object.freeze({ state: h.state ?? '', version: h.version ?? '' })),
    ),
  });
}

function conditionTrue(pool: RawPool, type: string): boolean {
  return (pool.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

export function toObservedPool(pool: RawPool): ObservedPool {
  const selector = toLabelSelector(pool.spec?.nodeSelector);
  const maxUnavailable = pool.spec?.maxUnavailable;
  const configuration = pool.status?.configuration?.name;
  return Object.freeze({
    name: pool.metadata?.name ?? '',
    annotations: record(pool.metadata?.annotations),
    paused: pool.spec?.paused === true,
    ...(selector !== undefined ? { nodeSelector: selector } : {}),
    ...(maxUnavailable !== undefined ? { maxUnavailable } : {}),
    ...(configuration !== undefined ? { configuration } : {}),
    degraded: conditionTrue(pool, 'Degraded'),
    updated: conditionTrue(pool, 'Updated'),
  });
}

/** The planner's view from the raw objects (pure: tested without a cluster). */
export function buildOpenShift(raw: {
  readonly clusterVersions: readonly RawClusterVersion[];
  readonly pools: readonly RawPool[];
  readonly absent?: readonly string[];
  readonly unreadable?: string;
}): ObservedOpenShift {
  const cv = raw.clusterVersions.find((c) => c.metadata?.name === CLUSTER_VERSION_NAME);
  const pools = raw.pools.map(toObservedPool).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return Object.freeze({
    ...(cv !== undefined ? { clusterVersion: toObservedClusterVersion(cv) } : {}),
    pools: Object.freeze(pools),
    absent: Object.freeze([...(raw.absent ?? [])]),
    ...(raw.unreadable !== undefined ? { unreadable: raw.unreadable } : {}),
  });
}

/** Which of the kinds the cluster does not serve, by its API groups (one discovery request). */
export async function discoverAbsent(apis: ApisApi): Promise<OpenShiftKind[]> {
  const groups = (await apis.getAPIVersions()).groups;
  const serves = (k: OpenShiftKind): boolean => {
    const { group, version } = OPENSHIFT_KINDS[k];
    return groups.some((g) => g.name === group && g.versions.some((v) => v.version === version));
  };
  return KINDS.filter((k) => !serves(k));
}

function listOf<T extends KubernetesObject>(custom: CustomObjectsApi, kind: OpenShiftKind) {
  return async (page: { limit?: number; _continue?: string }): Promise<KubernetesListObject<T>> =>
    (await custom.listClusterCustomObject({ ...OPENSHIFT_KINDS[kind], ...page })) as KubernetesListObject<T>;
}

/** "cannot read MachineConfigPools: 403 ...; grant ..." when a list or watch is refused. */
export function unreadableReason(kind: string, err: unknown): string {
  const { message, code } = describeError(err);
  const hint =
    code === 403 || code === 401
      ? `; grant drydock's ServiceAccount list and watch on ${kind} (deploy/rbac.yaml)`
      : '; drydock retries';
  return `cannot read ${kind}: ${code !== undefined ? `${code} ` : ''}${message}${hint}`;
}

export interface OpenShiftCacheOptions {
  readonly kubeConfig: CountingKubeConfig;
  readonly logger: Logger;
  readonly onChange: () => void;
  readonly onError?: (collection: string, err: unknown) => void;
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /** Default REDISCOVER_MS. */
  readonly rediscoverMs?: number;
}

export interface OpenShiftCache {
  /** The view, once known; the first call starts discovery (undefined until it answered). */
  view(): ObservedOpenShift | undefined;
  stop(): Promise<void>;
}

export function startOpenShiftCache(opts: OpenShiftCacheOptions): OpenShiftCache {
  const kc = opts.kubeConfig;
  const custom = kc.makeApiClient(CustomObjectsApi);
  let started = false;
  let stopped = false;
  let absent: OpenShiftKind[] | undefined;
  let timer: NodeJS.Timeout | undefined;
  let watched: { cvs: WatchedCollection<RawClusterVersion>; pools: WatchedCollection<RawPool> } | undefined;
  const errors = new Map<string, string>();
  let current: ObservedOpenShift | undefined;
  const changed = (): void => {
    current = undefined;
    if (!stopped) opts.onChange();
  };
  const common = (kind: OpenShiftKind) => {
    const { group, version, plural } = OPENSHIFT_KINDS[kind];
    return {
      kubeConfig: kc,
      name: plural,
      path: `/apis/${group}/${version}/${plural}`,
      logger: opts.logger,
      same: sameTrimmed,
      onChange: () => {
        errors.delete(kind);
        changed();
      },
      onError: (err: unknown) => {
        errors.set(kind, unreadableReason(`${kind}s`, err));
        opts.onError?.(plural, err);
        changed();
      },
      ...(opts.backoff ? { backoff: opts.backoff } : {}),
    };
  };

  const discover = async (): Promise<void> => {
    timer = undefined;
    try {
      absent = await discoverAbsent(kc.makeApiClient(ApisApi));
      errors.delete('discovery');
    } catch (err) {
      errors.set('discovery', unreadableReason('the API groups', err));
      opts.onError?.('discovery', err);
    }
    if (stopped) return;
    if (absent !== undefined && absent.length === 0) {
      opts.logger.info({}, 'OpenShift API served; watching ClusterVersion and MachineConfigPools');
      watched = {
        cvs: watchCollection<RawClusterVersion>({
          ...common('ClusterVersion'),
          trim: trimClusterVersion,
          list: listOf(custom, 'ClusterVersion'),
        }),
        pools: watchCollection<RawPool>({
          ...common('MachineConfigPool'),
          trim: trimPool,
          list: listOf(custom, 'MachineConfigPool'),
        }),
      };
      void Promise.all([watched.cvs.synced, watched.pools.synced]).then(changed);
    } else {
      if (absent !== undefined) opts.logger.info({ absent }, 'OpenShift API not served; asking again later');
      timer = setTimeout(() => void discover(), opts.rediscoverMs ?? REDISCOVER_MS);
      timer.unref?.();
    }
    changed();
  };

  return {
    view: () => {
      if (!started) {
        started = true;
        void discover();
      }
      if (current !== undefined) return current;
      // A refused list or watch is shown only while nothing was read: a cache once synced is
      // kept, as the nodes' is, while its watch restarts.
      const unreadable = [...errors.values()][0];
      const unsynced = (): ObservedOpenShift | undefined =>
        unreadable === undefined ? undefined : buildOpenShift({ clusterVersions: [], pools: [], unreadable });
      if (watched === undefined) {
        if (absent === undefined) return unsynced();
        current = buildOpenShift({ clusterVersions: [], pools: [], absent });
        return current;
      }
      if (!watched.cvs.isSynced() || !watched.pools.isSynced()) return unsynced();
      current = buildOpenShift({ clusterVersions: watched.cvs.list(), pools: watched.pools.list() });
      return current;
    },
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (watched) await Promise.all([watched.cvs.stop(), watched.pools.stop()]);
    },
  };
}

/** One list of each kind, no watch: for one-shot commands (`drydock plan`); a refused read is said in the view. */
export async function listOpenShift(kc: CountingKubeConfig): Promise<ObservedOpenShift> {
  let absent: OpenShiftKind[];
  try {
    absent = await discoverAbsent(kc.makeApiClient(ApisApi));
  } catch (err) {
    return buildOpenShift({ clusterVersions: [], pools: [], unreadable: unreadableReason('the API groups', err) });
  }
  if (absent.length > 0) return buildOpenShift({ clusterVersions: [], pools: [], absent });
  const custom = kc.makeApiClient(CustomObjectsApi);
  const read = async <T extends KubernetesObject>(kind: OpenShiftKind): Promise<T[] | string> => {
    try {
      return (await listOf<T>(custom, kind)({})).items;
    } catch (err) {
      return unreadableReason(`${kind}s`, err);
    }
  };
  const [cvs, pools] = await Promise.all([
    read<RawClusterVersion>('ClusterVersion'),
    read<RawPool>('MachineConfigPool'),
  ]);
  if (typeof cvs === 'string') return buildOpenShift({ clusterVersions: [], pools: [], unreadable: cvs });
  if (typeof pools === 'string') return buildOpenShift({ clusterVersions: [], pools: [], unreadable: pools });
  return buildOpenShift({ clusterVersions: cvs, pools });
}
