/**
 * Kill points over one rollout: drydock runs with a seeded `DRYDOCK_TEST_CRASH_AFTER`, kills
 * itself after that many mutating calls, and is started again (with the next seeded count) on
 * the same rollout, until the rollout's own end condition holds. With two replicas both carry a
 * crash point; only the leader acts, so the one that dies is the leader, and it comes back as
 * the standby. Every life gets a crash point until the rollout is done, so the number of kills
is the rollout's mutating calls divided by the mean gap; the last life finishes the work.
 */
import { CRASH_AFTER_ENV } from '../../../src/execute/crash-point.js';
import { SeededRandom } from '../../../src/cloud/sim/random.js';
import { startDrydockChild, type DrydockChild } from '../drydock-child.js';

export interface KillPoint {
  readonly scenario: string;
  /** The mutating calls this process made, the last one included. */
  readonly after: number;
  /** The last call made before the kill (action kind and target). */
  readonly call: string;
}

export interface CrashLoopOptions {
  readonly scenario: string;
  readonly args: readonly string[];
  readonly replicas: 1 | 2;
  /** Mean mutating calls between kills: counts are drawn from [1, 2·gap − 1] ([1, gap] for the first lives). */
  readonly gap: number;
  readonly rng: SeededRandom;
  /** The rollout's end condition, read from the API server, cloud and status branch. */
  readonly done: () => Promise<boolean>;
  readonly timeoutMs: number;
  readonly env?: NodeJS.ProcessEnv;
}

const CRASH_LINE = /^drydock: crash point after mutating call (\d+): (.*)$/;

export interface CrashLoopResult {
  readonly kills: KillPoint[];
  /** Mutating calls made over the whole rollout, by every life (from drydock's own log, for the figures only). */
  readonly calls: number;
}

export async function runWithKills(o: CrashLoopOptions): Promise<CrashLoopResult> {
  const kills: KillPoint[] = [];
  let calls = 0;
  // The first life draws from [1, gap], so a rollout of at least `gap` calls is killed at least once.
  let lives = 0;
  const spawnOne = (): DrydockChild => {
    const most = lives++ < o.replicas ? o.gap : 2 * o.gap - 1;
    return startDrydockChild(o.args, { ...o.env, [CRASH_AFTER_ENV]: String(o.rng.int(1, Math.max(1, most))) });
  };
  const applied = (c: DrydockChild): number => c.records().filter((r) => r.msg === 'action applied').length;
  const children: DrydockChild[] = [];
  for (let i = 0; i < o.replicas; i++) children.push(spawnOne());
  const started = Date.now();
  const deadline = started + o.timeoutMs;
  try {
    for (;;) {
      if (await o.done().catch(() => false)) break;
      if (Date.now() > deadline) {
        throw new Error(
          `${o.scenario}: not done after ${o.timeoutMs} ms and ${kills.length} kills; last lines:\n${children
            .flatMap((c) => c.lines.slice(-15))
            .join('\n')}`,
        );
      }
      for (let i = 0; i < children.length; i++) {
        const c = children[i]!;
        if (c.proc.exitCode === null && c.proc.signalCode === null) continue;
        const line = c.lines.map((l) => CRASH_LINE.exec(l)).find((m) => m !== null);
        if (c.proc.signalCode !== 'SIGKILL' || !line) {
          throw new Error(
            `${o.scenario}: drydock exited on its own (code ${c.proc.exitCode}, signal ${c.proc.signalCode}):\n${c.lines.slice(-30).join('\n')}`,
          );
        }
        kills.push({ scenario: o.scenario, after: Number(line[1]), call: line[2] ?? '' });
        calls += Number(line[1]);
        if (process.env.DRYDOCK_E2E_VERBOSE !== undefined) {
          const t = ((Date.now() - started) / 1000).toFixed(0);
          process.stderr.write(`      (${o.scenario} +${t}s: killed after call ${line[1]}: ${line[2]})\n`);
        }
        children[i] = spawnOne();
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    calls += children.reduce((n, c) => n + applied(c), 0);
    await Promise.all(
      children.map(async (c) => {
        if (c.proc.exitCode === null && c.proc.signalCode === null) {
          c.kill('SIGTERM');
          await c.exited;
        }
      }),
    );
  }
  return { kills, calls };
}
