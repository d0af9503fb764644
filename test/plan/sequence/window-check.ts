/**
 * Whether an instant lies inside a MaintenanceWindow, judged without the planner's window code
 * (and without a time-zone library): each zone the tests use has its UTC offsets written out
 * below, from the published rules, for March and April 2026; a schedule's cron is read for its
 * minute and hour fields only (the tests' windows leave day, month and weekday at "*"). A
 * planner that applied the wrong offset, missed a DST change or let a window run past its
 * duration starts a node at an instant this says is closed.
 */
import type { MaintenanceWindow } from '../../../src/spec/model.js';

const H = 3600_000;

/** Per zone: [UTC instant from which it holds, offset in minutes], in time order. */
const OFFSETS: Readonly<Record<string, readonly (readonly [number, number])[]>> = {
  // CET; CEST from the last Sunday of March, 01:00 UTC.
  'Europe/Berlin': [
    [-Infinity, 60],
    [Date.parse('2026-03-29T01:00:00Z'), 120],
  ],
  // EST; EDT from the second Sunday of March, 02:00 local (07:00 UTC).
  'America/New_York': [
    [-Infinity, -300],
    [Date.parse('2026-03-08T07:00:00Z'), -240],
  ],
  // IST, no DST, and half an hour off the hour.
  'Asia/Kolkata': [[-Infinity, 330]],
  // AEDT; AEST from the first Sunday of April, 03:00 local (16:00 UTC the day before).
  'Australia/Sydney': [
    [-Infinity, 660],
    [Date.parse('2026-04-04T16:00:00Z'), 600],
  ],
};

/** The zone's offset in minutes at a UTC instant. */
export function offsetMinutes(zone: string, t: number): number {
  const table = OFFSETS[zone];
  if (table === undefined) throw new Error(`no offset table for ${zone}`);
  let offset = 0;
  for (const [from, minutes] of table) if (t >= from) offset = minutes;
  return offset;
}

/** The values a cron field allows: "*", "a", "a-b", "*\/n", "a-b/n", and lists of these. */
function field(text: string, max: number): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const [range = '*', stepText] = part.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    const [lo, hi] = range === '*' ? [0, max] : range.split('-').map(Number);
    const last = range.includes('-') || range === '*' ? (hi ?? max) : (lo ?? 0);
    for (let v = lo ?? 0; v <= last; v += step) out.add(v);
  }
  return out;
}

/** Whether the schedule's cron fires at this local wall-clock minute. */
function fires(cron: string, localMs: number): boolean {
  const [minute = '*', hour = '*', ...rest] = cron.trim().split(/\s+/);
  if (rest.some((f) => f !== '*')) throw new Error(`window check reads minute and hour only: "${cron}"`);
  const d = new Date(localMs);
  return field(minute, 59).has(d.getUTCMinutes()) && field(hour, 23).has(d.getUTCHours());
}

/**
 * Open at t when some schedule fired at a whole UTC minute s with s <= t < s + duration. Every
 * UTC minute maps to exactly one local wall-clock minute; wall times skipped by a spring-forward
 * map from none, so they never fire.
 */
export function windowOpenAt(w: MaintenanceWindow, t: number): boolean {
  for (const e of w.exclusions) if (t >= Date.parse(e.start) && t < Date.parse(e.end)) return false;
  for (const s of w.schedules) {
    if (s.durationSeconds > 48 * H) throw new Error('window check: duration too long to scan');
    for (let m = Math.floor(t / 60_000) * 60_000; m > t - s.durationSeconds * 1000; m -= 60_000)
      if (fires(s.cron, m + offsetMinutes(w.timeZone, m) * 60_000)) return true;
  }
  return false;
}
