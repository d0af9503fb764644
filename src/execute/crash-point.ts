/**
 * Crash points for the reliability suite, test-only: unset (always, outside that suite) they do
 * nothing. The process kills itself with SIGKILL, naming the call on stderr first:
 *
 * - `DRYDOCK_TEST_CRASH_AFTER=N`: right after its Nth mutating call (an action that changed
 *   something), before that call's Event and before the next call. The suite restarts drydock
 *   with a new, seeded N each time, so it stops drydock between two calls anywhere.
 * - `DRYDOCK_TEST_CRASH_KINDS={"after":[…],"before":[…],"only":[…]}`: right after the first
 *   mutating call whose kind (callKind in describe.ts: the action kind, and for a node's
 *   annotation the phase it writes) is not in `after`, or right before the first call whose
 *   kind is not in `before`; `only` (optional) limits the kinds that count to those named or
 *   under a named prefix (`scaleDeployment` covers `scaleDeployment:pause`). The suite adds
 *   each kind it killed at to the list for the next life, so every kind of call a rollout
 *   makes is killed after (and before) once, whatever order the rollout makes them in.
 *
 * A call made beside another of its node's step (Action.beside) is named with the kill after
 * that other call (`; beside KIND`): the two are in flight together, so a kill right after one
 * is a kill during the other, and which of the two answers first is the API server's choice.
 */
import { writeSync } from 'node:fs';

export const CRASH_AFTER_ENV = 'DRYDOCK_TEST_CRASH_AFTER';
export const CRASH_KINDS_ENV = 'DRYDOCK_TEST_CRASH_KINDS';

export type CrashWhen = 'after' | 'before';

/** Kinds of call already killed at, per side; a side left out is not killed at. */
export interface KindCrashes {
  readonly after?: readonly string[];
  readonly before?: readonly string[];
  readonly only?: readonly string[];
}

export interface CrashSettings {
  readonly after?: number;
  readonly kinds?: KindCrashes;
}

/** The N of `DRYDOCK_TEST_CRASH_AFTER`, or undefined when unset; throws on anything but a positive integer. */
export function parseCrashAfter(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^[1-9][0-9]*$/.test(value)) {
    throw new Error(`${CRASH_AFTER_ENV} must be a positive integer (mutating calls before SIGKILL), got "${value}"`);
  }
  return Number(value);
}

/** `DRYDOCK_TEST_CRASH_KINDS` as JSON, or undefined when unset; throws naming what is wrong. */
export function parseCrashKinds(value: string | undefined): KindCrashes | undefined {
  if (value === undefined || value === '') return undefined;
  const wrong = (why: string): Error =>
    new Error(
      `${CRASH_KINDS_ENV} must be JSON like {"after":["surge"],"before":[],"only":["copyLabels"]} (${why}), got ${JSON.stringify(value)}`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw wrong('not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw wrong('not an object');
  const out: Record<string, readonly string[]> = {};
  for (const [key, list] of Object.entries(parsed)) {
    if (key !== 'after' && key !== 'before' && key !== 'only') throw wrong(`unknown key "${key}"`);
    if (!Array.isArray(list) || !list.every((k) => typeof k === 'string'))
      throw wrong(`"${key}" is not a list of kinds`);
    out[key] = list;
  }
  return out;
}

/** The line written to stderr just before the kill, so the suite knows where it stopped. */
export function crashLine(
  when: CrashWhen,
  call: number,
  kind: string,
  what: string,
  beside: readonly string[] = [],
): string {
  const also = beside.length > 0 ? `; beside ${beside.join(', ')}` : '';
  return `drydock: crash point ${when === 'after' ? 'after mutating' : 'before'} call ${call} (${kind}${also}): ${what}\n`;
}

/** What kills: where, at which call, of which kind, what it was, and the kinds of call made beside it. */
export type Kill = (when: CrashWhen, call: number, kind: string, what: string, beside: readonly string[]) => void;

export interface CrashPoints {
  /** A call of `kind` is about to be made. */
  before(kind: string, what: string): void;
  /** A call of `kind` changed something; `beside`: the kinds of the calls of its step made with it. */
  done(kind: string, what: string, beside?: readonly string[]): void;
}

/**
 * Counts mutating calls and calls `kill` where the settings say, naming the call; no-ops
 * without settings. `kill` defaults to writing crashLine synchronously (a pipe's buffer
 * would die with the process) and SIGKILL.
 */
export function crashPoints(s: CrashSettings, kill: Kill = killNow): CrashPoints {
  let calls = 0;
  const only = s.kinds?.only;
  const isNew = (kind: string, seen: readonly string[] | undefined): boolean =>
    seen !== undefined &&
    !seen.includes(kind) &&
    (only === undefined || only.some((k) => kind === k || kind.startsWith(`${k}:`)));
  return {
    before: (kind, what) => {
      if (isNew(kind, s.kinds?.before)) kill('before', calls + 1, kind, what, []);
    },
    done: (kind, what, beside = []) => {
      calls += 1;
      if ((s.after !== undefined && calls >= s.after) || isNew(kind, s.kinds?.after))
        kill('after', calls, kind, what, beside);
    },
  };
}

function killNow(when: CrashWhen, call: number, kind: string, what: string, beside: readonly string[]): void {
  writeSync(2, crashLine(when, call, kind, what, beside));
  process.kill(process.pid, 'SIGKILL');
}

/** The settings in this process's environment; throws on a malformed one (checked at start). */
export function crashSettings(env: NodeJS.ProcessEnv = process.env): CrashSettings {
  const after = parseCrashAfter(env[CRASH_AFTER_ENV]);
  const kinds = parseCrashKinds(env[CRASH_KINDS_ENV]);
  return { ...(after !== undefined ? { after } : {}), ...(kinds !== undefined ? { kinds } : {}) };
}

let processCrashPoints: CrashPoints | undefined;

function points(): CrashPoints {
  processCrashPoints ??= crashPoints(crashSettings());
  return processCrashPoints;
}

/** This process's crash point before a call: `kind` is its callKind, `what` names it. */
export function mutatingCallStarts(kind: string, what: string): void {
  points().before(kind, what);
}

/** This process's crash point after a call that changed something; `beside`: the kinds of its step made with it. */
export function mutatingCallDone(kind: string, what: string, beside: readonly string[] = []): void {
  points().done(kind, what, beside);
}
