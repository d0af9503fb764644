/**
 * What the API server announced, in the order it arrived: watches on a few collections feeding
 * one log, so a test can replay the cluster's history and check an ordering claim at every
 * change (never from drydock's logs).
 */
import { Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';

export interface Announced {
  /** Which watch it came from (the caller's name for the collection). */
  readonly source: string;
  readonly type: string;
  readonly at: number;
  readonly obj: KubernetesObject & { spec?: unknown; status?: unknown };
}

export class ApiLog {
  readonly events: Announced[] = [];
  private readonly stops: (() => void)[] = [];
  /** Watches that ended before stop(): the log has a gap from then on. */
  private readonly broken: string[] = [];
  private stopped = false;

  /** Starts one watch per entry of `paths` (source name → API path); resolves once all are open. */
  async start(kc: KubeConfig, paths: Readonly<Record<string, string>>): Promise<void> {
    const w = new Watch(kc);
    for (const [source, path] of Object.entries(paths)) {
      const req = await w.watch(
        path,
        {},
        (type: string, obj: Announced['obj']) => this.events.push({ source, type, at: Date.now(), obj }),
        (err: unknown) => {
          if (!this.stopped) this.broken.push(`${source}: ${err instanceof Error ? err.message : 'ended'}`);
        },
      );
      this.stops.push(() => req.abort());
    }
  }

  stop(): void {
    this.stopped = true;
    for (const s of this.stops.splice(0)) s();
  }

  /** Throws when a watch ended early: a claim about "every change" would rest on a gap. */
  assertWhole(): void {
    if (this.broken.length > 0) throw new Error(`a watch ended while the test relied on it: ${this.broken.join('; ')}`);
  }

  /**
   * The most `count` gave over the objects of `source` at any change the API server announced
   * (not at sampling instants, which miss what is brief).
   */
  maxOver(source: string, count: (objs: readonly Announced['obj'][]) => number): number {
    this.assertWhole();
    let max = 0;
    replay(this.events, (e, state) => {
      if (e.source === source) max = Math.max(max, count([...(state.get(source)?.values() ?? [])]));
    });
    return max;
  }
}

/** Nodes cordoned (spec.unschedulable) as the API server holds them. */
export function cordonedNodes(objs: readonly Announced['obj'][]): number {
  return objs.filter((o) => (o as { spec?: { unschedulable?: boolean } }).spec?.unschedulable === true).length;
}

/**
 * Replays `events` into the latest object per name of each source, calling `visit` after each
 * event with the state as it stood then.
 */
export function replay(
  events: readonly Announced[],
  visit: (e: Announced, state: ReadonlyMap<string, ReadonlyMap<string, Announced['obj']>>) => void,
): void {
  const state = new Map<string, Map<string, Announced['obj']>>();
  for (const e of events) {
    const bySource = state.get(e.source) ?? new Map<string, Announced['obj']>();
    state.set(e.source, bySource);
    const key = `${e.obj.metadata?.namespace ?? ''}/${e.obj.metadata?.name ?? ''}`;
    if (e.type === 'DELETED') bySource.delete(key);
    else bySource.set(key, e.obj);
    visit(e, state);
  }
}
