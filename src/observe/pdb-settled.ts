import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { WatchedCollection } from '../kube/informer.js';
import { podTerminating, readyCondition, toObservedPDB } from './convert.js';
import { matchesSelector } from './selector.js';
import { TimedWaits } from './timed-waits.js';
import type { ObservedPDB, ObservedPod } from './types.js';

/**
 * How long the disruption controller keeps a pod an eviction named in disruptedPods before it
 * gives up waiting for the pod's deletion (its DeletionTimeout).
 */
export const DISRUPTED_POD_TIMEOUT_MS = 2 * 60 * 1000;

/** What the check reads of a pod the PDB covers. */
export type SettlePod = Pick<ObservedPod, 'name' | 'uid' | 'ready' | 'terminating'>;

/**
 * Whether the disruption controller, syncing `pdb` now over `pods` (the pods it covers), would
 * write nothing: its status already says what the pods say. Mirrors the controller's trySync
 * (pkg/controller/disruption): it drops a disruptedPods entry once the pod is being deleted or
 * gone, and counts as healthy the Ready pods neither being deleted nor in disruptedPods.
 *
 * An eviction updates its PDB's status, and kube-apiserver retries one whose update conflicted
 * with another write to the PDB only 500 ms later. The controller writes the PDB right after
 * every eviction (the evicted pod leaves disruptedPods) and again as pods come and go; an eviction
 * sent while such a write is due often meets it. `evicted` are the uids of pods evicted whose
 * deletion the caller may not have seen yet: they count as being deleted.
 *
 * The expected and desired counts, which follow the workload's scale, are not compared.
 */
export function pdbSettled(
  pdb: ObservedPDB,
  pods: readonly SettlePod[],
  evicted: ReadonlySet<string>,
  now: Date,
): boolean {
  if (pdb.unobserved) return false;
  const byName = new Map(pods.map((p) => [p.name, p]));
  const gone = (p: SettlePod): boolean => p.terminating || evicted.has(p.uid);
  const disrupted = new Set<string>();
  for (const [name, at] of Object.entries(pdb.disruptedPods ?? {})) {
    const pod = byName.get(name);
    // The controller would drop this entry: the pod went, is going, or outlived the timeout.
    if (pod === undefined || gone(pod) || Date.parse(at) + DISRUPTED_POD_TIMEOUT_MS <= now.getTime()) return false;
    disrupted.add(name);
  }
  let healthy = 0;
  for (const p of pods) if (p.ready && !gone(p) && !disrupted.has(p.name)) healthy++;
  return healthy === pdb.currentHealthy;
}

/** A PDB (namespace/name) and the pods it covers as the caches hold them now; no PDB: not there. */
export type PdbLookup = (key: string) => { readonly pdb: ObservedPDB; readonly pods: readonly SettlePod[] } | undefined;

/** A PDB (namespace/name) as the caches hold it, with the pods of its namespace its selector matches. */
export function pdbAndPods(
  pdbs: WatchedCollection<V1PodDisruptionBudget>,
  pods: WatchedCollection<V1Pod>,
  key: string,
): { pdb: ObservedPDB; pods: SettlePod[] } | undefined {
  const slash = key.indexOf('/');
  const namespace = key.slice(0, slash);
  const raw = pdbs.get(key.slice(slash + 1), namespace);
  if (raw === undefined) return undefined;
  const pdb = toObservedPDB(raw);
  const covered: SettlePod[] = [];
  // A PDB without a selector covers no pod (policy/v1).
  if (pdb.selector === undefined) return { pdb, pods: covered };
  for (const p of pods.list()) {
    const m = p.metadata;
    if (m?.namespace !== namespace || !matchesSelector(pdb.selector, m.labels ?? {})) continue;
    covered.push({
      name: m.name ?? '',
      uid: m.uid ?? '',
      ready: readyCondition(p)?.status === 'True',
      terminating: podTerminating(p),
    });
  }
  return { pdb, pods: covered };
}

/**
 * Callers waiting for a PDB to settle (pdbSettled), checked again after each change the caches
 * saw, at most once per turn of the event loop however many events came in it. A check reads
 * the one PDB and the cached pods its selector matches, never a whole snapshot: a wave of drains
 * has waiters most of the time, and the pods change many times a second then.
 */
export class PdbSettledWaiters {
  /** Each wait's check: whether its PDB has settled now. */
  private readonly waits = new TimedWaits<() => boolean>();
  private scheduled = false;

  constructor(
    private readonly lookup: PdbLookup,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Resolves true once the PDB `key` (namespace/name) has settled, or is not there; false after
   * `timeoutMs` if it has not.
   */
  when(key: string, evicted: ReadonlySet<string>, timeoutMs: number): Promise<boolean> {
    const settled = (): boolean => {
      const found = this.lookup(key);
      return found === undefined || pdbSettled(found.pdb, found.pods, evicted, this.now());
    };
    if (settled()) return Promise.resolve(true);
    return this.waits.wait(settled, timeoutMs);
  }

  /** Something the caches hold changed. */
  changed(): void {
    if (this.waits.size === 0 || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.waits.endWhere((settled) => settled());
    });
  }

  /** Resolves every waiter false (the caches stop). */
  stop(): void {
    this.waits.stop();
  }
}
