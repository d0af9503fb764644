/**
 * Kill points over one rollout: drydock runs with crash points, kills itself at one, and is
 * started again (with the next one) on the same rollout, until the rollout's own end condition
 * holds. Two kinds of crash point, alone or together (whichever comes first):
 *
 * - seeded: after a seeded count of mutating calls (`DRYDOCK_TEST_CRASH_AFTER`), drawn around a
 *   mean gap, so kills fall between any two calls, in proportion to how often each comes;
 * - by kind: right after (and before) the first call of a kind not yet killed at
 *   (`DRYDOCK_TEST_CRASH_KINDS`), so each kind of call the rollout makes is killed at once,
 *   however rare. The coverage (kinds killed at, kinds the rollout made) is kept across lives.
 *
 * - from outside: the test itself sends SIGKILL at random instants (`outside`), so a kill also
 *   lands where drydock has no crash point: inside a status push, a Git fetch, a cache write,
 *   a half-read watch.
 *
 * With two replicas both carry the crash points; only the leader acts, so the one that dies is
 * the leader, and it comes back as the standby. The last life finishes the work.
 */
import {
  CRASH_AFTER_ENV,
  CRASH_KINDS_ENV,
  type CrashWhen,
  type KindCrashes,
} from '../../../src/execute/crash-point.js';
import { SeededRandom } from '../../../src/cloud/sim/random.js';
import { startDrydockChild, type DrydockChild } from '../drydock-child.js';

export interface KillPoint {
  readonly scenario: string;
  /** outside: sent by the test at a random instant, not at a crash point. */
  readonly when: CrashWhen | 'outside';
  /** The mutating calls this process made before the kill (after: the last one included). */
  readonly after: number;
  /** The kind of the call (callKind: action kind, an annotation's phase). */
  readonly kind: string;
  /** The call (action kind and target). */
  readonly call: string;
}

/** Per scenario: the kinds killed after and before, and every kind of mutating call its lives made. */
export interface KindCoverage {
  readonly after: Set<string>;
  readonly before: Set<string>;
  readonly issued: Set<string>;
}

export function emptyCoverage(): KindCoverage {
  return { after: new Set(), before: new Set(), issued: new Set() };
}

export interface CrashLoopOptions {
  readonly scenario: string;
  readonly args: readonly string[];
  readonly replicas: 1 | 2;
  /** Seeded: mean mutating calls between kills, counts drawn from [1, 2·gap − 1] ([1, gap] for the first lives). */
  readonly gap?: number;
  readonly rng: SeededRandom;
  /**
   * By kind: the sides killed at (and the kinds that count), with the coverage so far, updated.
   * `notBefore`: kinds never killed right before (where that is the instant right after a kind
   * killed after, or before anything of the scenario happened); they stay out of the coverage.
   */
  readonly kinds?: {
    readonly when: readonly CrashWhen[];
    readonly only?: readonly string[];
    readonly notBefore?: readonly string[];
  };
  readonly coverage: KindCoverage;
  /** From outside: up to `kills` SIGKILLs, each at a random delay in [½, 1½]·meanMs after a life started. */
  readonly outside?: { readonly meanMs: number; readonly kills: number };
  /** The rollout's end condition, read from the API server, cloud and status branch. */
  readonly done: () => Promise<boolean>;
  readonly timeoutMs: number;
  readonly env?: NodeJS.ProcessEnv;
}

const CRASH_LINE =
  /^drydock: crash point (after|before) (?:mutating )?call (\d+) \(([^);]*)(?:; beside ([^)]*))?\): (.*)$/;

/** A crash point's line (crashLine in src/execute/crash-point.ts), read back; undefined for any other line. */
export function readCrashLine(
  line: string,
): { when: CrashWhen; call: number; kind: string; beside: string[]; what: string } | undefined {
  const m = CRASH_LINE.exec(line);
  if (m === null) return undefined;
  const beside = m[4] !== undefined ? m[4].split(', ') : [];
  return { when: m[1] as CrashWhen, call: Number(m[2]), kind: m[3] ?? '', beside, what: m[5] ?? '' };
}

export interface CrashLoopResult {
  readonly kills: KillPoint[];
  /** Mutating calls made over the whole rollout, by every life (from drydock's own log, for the figures only). */
  readonly calls: number;
}

function crashEnv(o: CrashLoopOptions, lives: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...o.env };
  if (o.gap !== undefined) {
    // The first life draws from [1, gap], so a rollout of at least `gap` calls is killed at least once.
    const most = lives < o.replicas ? o.gap : 2 * o.gap - 1;
    env[CRASH_AFTER_ENV] = String(o.rng.int(1, Math.max(1, most)));
  }
  if (o.kinds !== undefined) {
    const k: KindCrashes = {
      ...(o.kinds.when.includes('after') ? { after: [...o.coverage.after] } : {}),
      ...(o.kinds.when.includes('before') ? { before: [...o.coverage.before, ...(o.kinds.notBefore ?? [])] } : {}),
      ...(o.kinds.only !== undefined ? { only: o.kinds.only } : {}),
    };
    env[CRASH_KINDS_ENV] = JSON.stringify(k);
  }
  return env;
}

/** The kinds of mutating call a life made, from the `call` field of its "action applied" lines. */
function issued(c: DrydockChild): string[] {
  return c
    .records()
    .filter((r) => r.msg === 'action applied' && typeof r.call === 'string')
    .map((r) => r.call as string);
}

export async function runWithKills(o: CrashLoopOptions): Promise<CrashLoopResult> {
  const kills: KillPoint[] = [];
  let calls = 0;
  let lives = 0;
  /** Lives killed by the test from outside, and the timers that will. */
  const shot = new Set<DrydockChild>();
  const timers = new Set<NodeJS.Timeout>();
  let outsideLeft = o.outside?.kills ?? 0;
  const spawnOne = (): DrydockChild => {
    const c = startDrydockChild(o.args, crashEnv(o, lives++));
    // Every life gets its instant until the kills are spent; one that dies at a crash point first spends none.
    if (o.outside !== undefined && outsideLeft > 0) {
      const mean = o.outside.meanMs;
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          if (outsideLeft <= 0 || c.proc.exitCode !== null || c.proc.signalCode !== null) return;
          outsideLeft -= 1;
          shot.add(c);
          c.kill('SIGKILL');
        },
        o.rng.int(Math.round(mean / 2), Math.round((mean * 3) / 2)),
      );
      timers.add(timer);
    }
    return c;
  };
  const children: DrydockChild[] = [];
  for (let i = 0; i < o.replicas; i++) children.push(spawnOne());
  const started = Date.now();
  const deadline = started + o.timeoutMs;
  const alive = (c: DrydockChild): boolean => c.proc.exitCode === null && c.proc.signalCode === null;
  /** A dead life's kill point, counted; throws when it died of anything but its crash point. */
  const reaped = new Set<DrydockChild>();
  const reap = (c: DrydockChild): void => {
    reaped.add(c);
    if (shot.has(c) && c.proc.signalCode === 'SIGKILL') {
      const made = issued(c);
      for (const k of made) o.coverage.issued.add(k);
      calls += made.length;
      kills.push({
        scenario: o.scenario,
        when: 'outside',
        after: made.length,
        kind: 'outside',
        call: made.at(-1) ?? '',
      });
      return;
    }
    const line = c.lines.map(readCrashLine).find((m) => m !== undefined);
    if (c.proc.signalCode !== 'SIGKILL' || !line) {
      throw new Error(
        `${o.scenario}: drydock exited on its own (code ${c.proc.exitCode}, signal ${c.proc.signalCode}):\n${c.lines.slice(-30).join('\n')}`,
      );
    }
    const { when } = line;
    const kill = { scenario: o.scenario, when, after: line.call, kind: line.kind, call: line.what };
    kills.push(when === 'after' ? kill : { ...kill, after: kill.after - 1 });
    // A call made beside the one killed after was in flight with it: killed during it, after its partner answered.
    const beside = when === 'after' ? line.beside : [];
    for (const k of [kill.kind, ...beside]) o.coverage[when].add(k);
    // The call killed after made its change but never logged it, nor did those beside it.
    for (const k of when === 'after' ? [...issued(c), kill.kind, ...beside] : issued(c)) o.coverage.issued.add(k);
    calls += kills.at(-1)?.after ?? 0;
    if (process.env.DRYDOCK_E2E_VERBOSE !== undefined) {
      const t = ((Date.now() - started) / 1000).toFixed(0);
      process.stderr.write(
        `      (${o.scenario} +${t}s: killed ${when} call ${line.call} (${kill.kind}): ${kill.call})\n`,
      );
    }
  };
  try {
    for (;;) {
      const done = await o.done().catch(() => false);
      // A life that died just before the end still counts its kill point (the autoscaler's restore, say).
      for (let i = 0; i < children.length; i++) {
        const c = children[i]!;
        if (alive(c) || reaped.has(c)) continue;
        reap(c);
        children[i] = done ? c : spawnOne();
      }
      if (done) break;
      if (Date.now() > deadline) {
        throw new Error(
          `${o.scenario}: not done after ${o.timeoutMs} ms and ${kills.length} kills; last lines:\n${children
            .flatMap((c) => c.lines.slice(-15))
            .join('\n')}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    for (const t of timers) clearTimeout(t);
    for (const c of children) {
      // Killed at a crash point as the rollout ended: its kill counts. Reaped already, it is counted.
      if (!alive(c) && !reaped.has(c) && c.proc.signalCode === 'SIGKILL') reap(c);
      if (reaped.has(c)) continue;
      calls += issued(c).length;
      for (const k of issued(c)) o.coverage.issued.add(k);
    }
    await Promise.all(
      children.map(async (c) => {
        if (alive(c)) {
          c.kill('SIGTERM');
          await c.exited;
        }
      }),
    );
  }
  return { kills, calls };
}
