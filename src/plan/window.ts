/**
 * MaintenanceWindow arithmetic: is an instant inside a window, and when does the next one
 * open. Schedules are cron expressions in the window's own time zone (cron-parser handles the
 * zone rules, DST included); exclusions are absolute [start, end) intervals that close the
 * window whatever the schedule says.
 */
import { CronExpressionParser, type CronExpression } from 'cron-parser';
import type { MaintenanceWindow, WindowSchedule } from '../spec/model.js';

/** What the window arithmetic reads of a window: a MaintenanceWindow's, or a budget window's (budget.ts). */
export type WindowTimes = Pick<MaintenanceWindow, 'timeZone' | 'schedules' | 'exclusions'>;

/** How far ahead nextWindowOpening looks before it gives up (a window that never opens). */
const HORIZON_MS = 400 * 24 * 3600 * 1000;
const MAX_STEPS = 2000;

export type WindowCheck = { readonly ok: true } | { readonly ok: false; readonly problem: string };

/**
 * Parsed expressions and formatters, memoised: parsing and building time-zone formatters
 * dominate the cost of window arithmetic, and results do not depend on the cache.
 */
const expressions = new Map<string, CronExpression>();
const formatters = new Map<string, Intl.DateTimeFormat>();
const MEMO_LIMIT = 1000;

function memo<V>(cache: Map<string, V>, key: string, make: () => V): V {
  let value = cache.get(key);
  if (value === undefined) {
    if (cache.size >= MEMO_LIMIT) cache.clear();
    value = make();
    cache.set(key, value);
  }
  return value;
}

function parse(schedule: WindowSchedule, zone: string, at: number): CronExpression {
  const expr = memo(expressions, `${zone}\n${schedule.cron}`, () =>
    CronExpressionParser.parse(schedule.cron, { tz: zone }),
  );
  expr.reset(new Date(at));
  return expr;
}

function formatter(timeZone: string): Intl.DateTimeFormat {
  return memo(
    formatters,
    timeZone,
    () =>
      new Intl.DateTimeFormat('en-GB', {
        timeZone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      }),
  );
}

/** Whether every schedule and exclusion of the window can be evaluated; says what is wrong if not. */
export function checkWindow(window: MaintenanceWindow): WindowCheck {
  try {
    formatter(window.timeZone);
  } catch {
    return { ok: false, problem: `window ${window.name}: unknown time zone "${window.timeZone}"` };
  }
  for (const [i, s] of window.schedules.entries()) {
    try {
      parse(s, window.timeZone, 0);
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      return { ok: false, problem: `window ${window.name}: schedules[${i}] cron "${s.cron}" is invalid (${detail})` };
    }
    if (!(s.durationSeconds > 0)) {
      return { ok: false, problem: `window ${window.name}: schedules[${i}] durationSeconds must be positive` };
    }
  }
  for (const [i, e] of window.exclusions.entries()) {
    if (!Number.isFinite(Date.parse(e.start)) || !Number.isFinite(Date.parse(e.end))) {
      return { ok: false, problem: `window ${window.name}: exclusions[${i}] start/end are not ISO 8601 instants` };
    }
  }
  return { ok: true };
}

function exclusionAt(window: WindowTimes, at: number) {
  return window.exclusions.find((e) => Date.parse(e.start) <= at && at < Date.parse(e.end));
}

/** The most recent opening of a schedule at or before `at`. */
function lastOpening(schedule: WindowSchedule, zone: string, at: number): number | undefined {
  // cron-parser's prev() is strictly before currentDate; cron has minute resolution, so
  // asking from one second later includes an opening exactly at `at`.
  const expr = parse(schedule, zone, at + 1000);
  try {
    return expr.prev().getTime();
  } catch {
    return undefined;
  }
}

function nextOpening(schedule: WindowSchedule, zone: string, after: number): number | undefined {
  const expr = parse(schedule, zone, after);
  try {
    return expr.next().getTime();
  } catch {
    return undefined;
  }
}

/** Whether the schedules (ignoring exclusions) have a window open at `at`. */
function scheduledOpen(window: WindowTimes, at: number): boolean {
  return window.schedules.some((s) => {
    const start = lastOpening(s, window.timeZone, at);
    return start !== undefined && at < start + s.durationSeconds * 1000;
  });
}

/** Whether `at` lies inside the window. Call checkWindow first: an invalid window throws. */
export function isWindowOpen(window: WindowTimes, at: Date): boolean {
  const ms = at.getTime();
  if (exclusionAt(window, ms) !== undefined) return false;
  return scheduledOpen(window, ms);
}

/**
 * The earliest instant at or after `at` inside the window; undefined when it does not open
 * within about a year (every opening excluded, say).
 */
export function nextWindowOpening(window: WindowTimes, at: Date): Date | undefined {
  let t = at.getTime();
  const limit = t + HORIZON_MS;
  for (let step = 0; step < MAX_STEPS && t <= limit; step++) {
    const excluded = exclusionAt(window, t);
    if (excluded === undefined && scheduledOpen(window, t)) return new Date(t);
    const candidates: number[] = [];
    if (excluded !== undefined) candidates.push(Date.parse(excluded.end));
    for (const s of window.schedules) {
      const next = nextOpening(s, window.timeZone, t);
      if (next !== undefined && next > t) candidates.push(next);
    }
    if (candidates.length === 0) return undefined;
    t = Math.min(...candidates);
  }
  return undefined;
}

/**
 * When the window open at `at` closes: the end of the latest-ending schedule window open then,
 * or the start of the next exclusion if that comes first. Undefined when closed at `at`.
 */
export function windowClosing(window: WindowTimes, at: Date): Date | undefined {
  const ms = at.getTime();
  if (!isWindowOpen(window, at)) return undefined;
  let end = ms;
  for (const s of window.schedules) {
    const start = lastOpening(s, window.timeZone, ms);
    if (start !== undefined) end = Math.max(end, start + s.durationSeconds * 1000);
  }
  for (const e of window.exclusions) {
    const start = Date.parse(e.start);
    if (start > ms && start < end) end = start;
  }
  return new Date(end);
}

/** "2026-03-30 22:00" in the window's own zone, for reasons a person reads. */
export function formatInZone(at: Date, timeZone: string): string {
  const parts = formatter(timeZone).formatToParts(at);
  const get = (type: string): string => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}`;
}

/** "2026-03-30 22:00 Europe/Berlin (20:00 UTC)": the window's own zone, and UTC for everyone else. */
export function opening(at: Date, timeZone: string): string {
  const local = `${formatInZone(at, timeZone)} ${timeZone}`;
  return timeZone === 'UTC' ? local : `${local} (${formatInZone(at, 'UTC')} UTC)`;
}

/**
 * Why a spec whose rollout names window `name` may not start a node at `nowMs`, or undefined
 * when it may (no window named, or the window is open). Shared by every operation kind.
 */
export function windowGate(
  windows: readonly MaintenanceWindow[],
  name: string | undefined,
  nowMs: number,
): { code: 'window'; reason: string; until?: number } | undefined {
  if (name === undefined) return undefined;
  const window = windows.find((w) => w.name === name);
  if (window === undefined)
    return { code: 'window', reason: `MaintenanceWindow ${name} does not exist; add it or fix rollout.window` };
  const check = checkWindow(window);
  if (!check.ok) return { code: 'window', reason: check.problem };
  const now = new Date(nowMs);
  if (isWindowOpen(window, now)) return undefined;
  const next = nextWindowOpening(window, now);
  return next === undefined
    ? {
        code: 'window',
        reason: `waiting for window ${window.name}: it does not open within a year (check schedules and exclusions)`,
      }
    : {
        code: 'window',
        reason: `waiting for window ${window.name}, opens ${opening(next, window.timeZone)}`,
        until: next.getTime(),
      };
}
