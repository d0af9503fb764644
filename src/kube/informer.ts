/**
 * One watch-backed cache of one resource: client-node's informer (list once, then watch),
 * made resilient. client-node stops an informer on any watch error; this restarts it with
 * exponential backoff (from the last resource version, or a fresh list after 410 Gone) and
 * exposes `synced`, resolved once the first list has landed in the cache.
 *
 * Memory: the list is read in pages (listInPages) and every object, listed or watched, is cut
 * down to a new compact object (`trim`) before the informer stores it, so the cache never holds
 * a whole object, nor one left in V8's slow dictionary mode by deleting its fields in place.
 */
import {
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { describeError } from '../errors.js';
import { listInPages, type ListPage } from './pages.js';

export interface CollectionOptions<T extends KubernetesObject> {
  readonly kubeConfig: KubeConfig;
  /** Short name for logs and metrics, e.g. "nodes". */
  readonly name: string;
  /** The watch path, e.g. /api/v1/nodes. */
  readonly path: string;
  /**
   * One page of the list: pass `page` on as the list call's `limit` and `_continue`. A list
   * function that ignores it returns everything at once, which works too.
   */
  readonly list: (page: ListPage) => Promise<KubernetesListObject<T>>;
  readonly labelSelector?: string;
  readonly logger: Logger;
  /** Called on every add, update and delete after the cache has changed. */
  readonly onChange: (change: CollectionChange<T>) => void;
  /** Called on every watch or list error (for the errors metric). */
  readonly onError?: (err: unknown) => void;
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /** Items per list page (pages.ts's PAGE_SIZE unless given). */
  readonly pageSize?: number;
  /**
   * Returns the part of an object its reader needs, as a new object, which the cache stores
   * instead of the whole one (see trim.ts).
   */
  readonly trim?: (obj: T) => T;
  /**
   * Whether an update says nothing new (trim.ts's sameTrimmed): then onChange is not called,
   * so a watch event about a field drydock does not read wakes no round.
   */
  readonly same?: (before: T, after: T) => boolean;
  /**
   * Called with every object a watch event carries, once the cache holds it, whether or not it
   * is a change by `same` (seen-writes.ts: which of drydock's own writes the cache has seen).
   */
  readonly onEvent?: (obj: T) => void;
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
  /** The object the cache holds under that name (and namespace), if any. */
  get(name: string, namespace?: string): T | undefined;
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

  const trim = opts.trim ?? ((obj: T) => obj);
  // The version an update replaces, read from the cache just before the informer stores the
  // new one (client-node hands its callbacks only the new version).
  let replaced: T | undefined;
  const informer: ListWatch<T> = new ListWatch<T>(
    opts.path,
    new TrimmingWatch(opts.kubeConfig, trim, (obj, store) => {
      replaced = informer.get(obj.metadata?.name ?? '', obj.metadata?.namespace);
      try {
        store();
      } finally {
        replaced = undefined;
      }
      if (!stopped) opts.onEvent?.(obj);
    }),
    async () => {
      const result = await listInPages(opts.list, trim, opts.pageSize);
      listed = true;
      return result;
    },
    false,
    opts.labelSelector,
  );

  const changed = (change: CollectionChange<T>): void => {
    if (!stopped) opts.onChange(change);
  };
  informer.on('add', (obj) => {
    changed({ type: 'add', object: obj });
  });
  informer.on('update', (obj) => {
    // A relist after 410 Gone updates without a watch event: no previous version, a change.
    const before = replaced;
    if (before && opts.same?.(before, obj)) return;
    changed({ type: 'update', object: obj, ...(before ? { before } : {}) });
  });
  informer.on('delete', (obj) => {
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
    get: (name, namespace) => informer.get(name, namespace),
    synced,
    isSynced: () => listed,
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await informer.stop();
    },
  };
}

/**
 * client-node's watch, with each event's object trimmed before the informer sees it; `around`
 * is handed the trimmed object and the informer's handling of it (`store`, synchronous: the
 * informer stores the object and calls its callbacks without awaiting).
 */
class TrimmingWatch<T extends KubernetesObject> extends Watch {
  constructor(
    config: KubeConfig,
    private readonly trim: (obj: T) => T,
    private readonly around: (obj: T, store: () => void) => void,
  ) {
    super(config);
  }

  override watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    return super.watch(
      path,
      queryParams,
      (phase, obj: unknown, watchObj) => {
        // ERROR carries a Status and BOOKMARK only a resourceVersion: passed on as they are.
        if ((phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED') && obj && typeof obj === 'object') {
          const trimmed = this.trim(obj as T);
          this.around(trimmed, () => callback(phase, trimmed, watchObj));
        } else callback(phase, obj, watchObj);
      },
      done,
    );
  }
}
