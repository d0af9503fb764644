/**
 * One watch-backed cache of one resource: client-node's informer (list once, then watch),
 * made resilient. client-node stops an informer on any watch error; this restarts it with
 * exponential backoff (from the last resource version, or a fresh list after 410 Gone) and
 * exposes `synced`, resolved once the first list has landed in the cache.
 */
import {
  makeInformer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';

export interface CollectionOptions<T extends KubernetesObject> {
  readonly kubeConfig: KubeConfig;
  /** Short name for logs and metrics, e.g. "nodes". */
  readonly name: string;
  /** The watch path, e.g. /api/v1/nodes. */
  readonly path: string;
  readonly list: () => Promise<KubernetesListObject<T>>;
  readonly labelSelector?: string;
  readonly logger: Logger;
  /** Called on every add, update and delete after the cache has changed. */
  readonly onChange: (change: CollectionChange<T>) => void;
  /** Called on every watch or list error (for the errors metric). */
  readonly onError?: (err: unknown) => void;
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /**
   * Cuts an object down, in place, to what its reader needs, before the cache's callers see it:
   * the informer otherwise keeps every object whole (see trim.ts).
   */
  readonly trim?: (obj: T) => void;
  /**
   * Whether an update says nothing new (trim.ts's sameTrimmed): then onChange is not called,
   * so a watch event about a field drydock does not read wakes no round.
   */
  readonly same?: (before: T, after: T) => boolean;
}

/** What changed: an object added, updated (with the version it replaced) or deleted. */
export interface CollectionChange<T> {
  readonly type: 'add' | 'update' | 'delete';
  readonly object: T;
  /** An update's previous version, when the collection held one. */
  readonly before?: T;
}

export interface WatchedCollection<T> {
  readonly name: string;
  list(): readonly T[];
  /** Resolves once the first list is in the cache. */
  readonly synced: Promise<void>;
  isSynced(): boolean;
  stop(): Promise<void>;
}

const DEFAULT_BACKOFF = { initialMs: 500, maxMs: 30_000 };

export function watchCollection<T extends KubernetesObject>(opts: CollectionOptions<T>): WatchedCollection<T> {
  const backoff = opts.backoff ?? DEFAULT_BACKOFF;
  let listed = false;
  let stopped = false;
  let delay = backoff.initialMs;
  let timer: NodeJS.Timeout | undefined;
  let resolveSynced!: () => void;
  const synced = new Promise<void>((resolve) => {
    resolveSynced = resolve;
  });

  const informer = makeInformer<T>(
    opts.kubeConfig,
    opts.path,
    async () => {
      const result = await opts.list();
      listed = true;
      return result;
    },
    opts.labelSelector,
  );

  // The version each update replaces: client-node's informer hands its callbacks only the new
  // one. Keyed by the objects' own namespace and name strings, so it costs map entries only.
  const held = new Map<string, Map<string, T>>();
  const keep = (obj: T): T | undefined => {
    const ns = obj.metadata?.namespace ?? '';
    let names = held.get(ns);
    if (!names) held.set(ns, (names = new Map<string, T>()));
    const before = names.get(obj.metadata?.name ?? '');
    names.set(obj.metadata?.name ?? '', obj);
    return before;
  };
  const changed = (change: CollectionChange<T>): void => {
    if (!stopped) opts.onChange(change);
  };
  informer.on('add', (obj) => {
    opts.trim?.(obj);
    keep(obj);
    changed({ type: 'add', object: obj });
  });
  informer.on('update', (obj) => {
    opts.trim?.(obj);
    const before = keep(obj);
    if (before && opts.same?.(before, obj)) return;
    changed({ type: 'update', object: obj, ...(before ? { before } : {}) });
  });
  informer.on('delete', (obj) => {
    const names = held.get(obj.metadata?.namespace ?? '');
    names?.delete(obj.metadata?.name ?? '');
    if (names?.size === 0) held.delete(obj.metadata?.namespace ?? '');
    changed({ type: 'delete', object: obj });
  });
  informer.on('connect', () => {
    delay = backoff.initialMs;
  });
  informer.on('error', (err: unknown) => {
    if (stopped) return;
    opts.onError?.(err);
    opts.logger.warn({ collection: opts.name, err: describeError(err), retryInMs: delay }, 'watch failed; restarting');
    const wait = delay;
    delay = Math.min(delay * 2, backoff.maxMs);
    timer = setTimeout(() => {
      timer = undefined;
      void start();
    }, wait);
    timer.unref?.();
  });

  async function start(): Promise<void> {
    if (stopped) return;
    try {
      await informer.start();
    } catch (err) {
      // start() reports through the error callback; a throw here is a setup problem (no cluster).
      opts.logger.error({ collection: opts.name, err: describeError(err) }, 'watch could not start');
      opts.onError?.(err);
    }
    if (listed) resolveSynced();
  }
  void start();

  return {
    name: opts.name,
    list: () => informer.list(),
    synced,
    isSynced: () => listed,
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await informer.stop();
    },
  };
}

/** A loggable description of a client error without headers or bodies (no secrets). */
export function describeError(err: unknown): { readonly message: string; readonly code?: number | string } {
  if (err && typeof err === 'object') {
    const e = err as { message?: unknown; code?: unknown; statusCode?: unknown };
    const code =
      typeof e.code === 'number' || typeof e.code === 'string'
        ? e.code
        : typeof e.statusCode === 'number'
          ? e.statusCode
          : undefined;
    // ApiException messages embed response headers and bodies: keep only the first line.
    const message = typeof e.message === 'string' ? (e.message.split('\n')[0] ?? '') : JSON.stringify(err);
    return code !== undefined ? { message, code } : { message };
  }
  return { message: String(err) };
}
