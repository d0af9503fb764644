/**
 * A crash point for the reliability suite: with `DRYDOCK_TEST_CRASH_AFTER=N` the process kills
 * itself with SIGKILL right after its Nth mutating call (an action that changed something),
 * before that call's Event and before the next call. The suite restarts drydock with a new,
 * seeded N each time, so it can stop drydock between any two API calls of a node's sequence.
 * Unset (always, outside that suite) it does nothing.
 */
import { writeSync } from 'node:fs';

export const CRASH_AFTER_ENV = 'DRYDOCK_TEST_CRASH_AFTER';

/** The N of `DRYDOCK_TEST_CRASH_AFTER`, or undefined when unset; throws on anything but a positive integer. */
export function parseCrashAfter(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^[1-9][0-9]*$/.test(value)) {
    throw new Error(`${CRASH_AFTER_ENV} must be a positive integer (mutating calls before SIGKILL), got "${value}"`);
  }
  return Number(value);
}

/** The line written to stderr just before the kill, so the suite knows which call came last. */
export function crashLine(call: number, what: string): string {
  return `drydock: crash point after mutating call ${call}: ${what}\n`;
}

/**
 * Counts mutating calls and calls `kill` at the Nth, naming the call; a no-op without N.
 * `kill` defaults to writing crashLine synchronously (a pipe's buffer would die with the
 * process) and SIGKILL.
 */
export function crashPoint(
  after: number | undefined,
  kill: (call: number, what: string) => void = killNow,
): (what: string) => void {
  if (after === undefined) return () => undefined;
  let calls = 0;
  return (what) => {
    calls += 1;
    if (calls >= after) kill(calls, what);
  };
}

function killNow(call: number, what: string): void {
  writeSync(2, crashLine(call, what));
  process.kill(process.pid, 'SIGKILL');
}

let processCrashPoint: ((what: string) => void) | undefined;

/** This process's crash point, read from the environment once; `what` names the call just made. */
export function mutatingCallDone(what: string): void {
  processCrashPoint ??= crashPoint(parseCrashAfter(process.env[CRASH_AFTER_ENV]));
  processCrashPoint(what);
}
