/**
 * Values that the schema checks for shape and the loader checks for meaning: durations,
 * percentages, cron expressions (time zones: time-zone.ts).
 */
import { CronExpressionParser } from 'cron-parser';
import { parseDuration } from '../../duration.js';
import type { IntOrPercent } from '../model.js';
import type { PathSegment } from '../parse.js';
import type { NormaliseContext } from './context.js';

/** Longest duration drydock accepts anywhere: a year. */
const MAX_DURATION_SECONDS = 366 * 24 * 3600;

/** Seconds of a '1h30m'-style duration; undefined (and a finding) when it does not parse. */
export function durationSeconds(ctx: NormaliseContext, path: readonly PathSegment[], text: string): number | undefined {
  // Specs count whole seconds.
  const ms = parseDuration(text, { unitRequired: true });
  if (ms === undefined || ms % 1000 !== 0) {
    ctx.report(
      'invalid-value',
      path,
      `${JSON.stringify(text)} is not a duration`,
      "write hours, minutes and seconds in that order, e.g. '30s', '10m', '1h30m'",
    );
    return undefined;
  }
  const seconds = ms / 1000;
  if (!Number.isSafeInteger(seconds) || seconds > MAX_DURATION_SECONDS) {
    ctx.report(
      'invalid-value',
      path,
      `duration ${JSON.stringify(text)} is longer than a year`,
      'use a shorter duration',
    );
    return undefined;
  }
  return seconds;
}

/** An IntOrPercent with the percentage in 0–100%. */
export function intOrPercent(
  ctx: NormaliseContext,
  path: readonly PathSegment[],
  value: number | string,
): IntOrPercent | undefined {
  if (typeof value === 'number') return value;
  const pct = Number(value.slice(0, -1));
  if (!/^\d{1,3}%$/.test(value) || pct > 100) {
    ctx.report(
      'invalid-value',
      path,
      `percentage ${JSON.stringify(value)} is out of range`,
      "write a percentage from '0%' to '100%', or a number of nodes",
    );
    return undefined;
  }
  return `${pct}%`;
}

/** True when `cron` is a valid five-field cron expression in `timeZone`. */
export function checkCron(
  ctx: NormaliseContext,
  path: readonly PathSegment[],
  cron: string,
  timeZone: string,
): boolean {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) {
    ctx.report(
      'invalid-value',
      path,
      `cron expression ${JSON.stringify(cron)} has ${fields.length} fields, not 5`,
      "write minute hour day-of-month month day-of-week, e.g. '0 22 * * 1-5' for 22:00 on weekdays",
    );
    return false;
  }
  const key = `${timeZone} ${cron}`;
  if (!cronProblems.has(key)) {
    let problem: string | undefined;
    try {
      CronExpressionParser.parse(cron, { tz: timeZone });
    } catch (err) {
      problem = err instanceof Error ? `: ${err.message}` : '';
    }
    if (cronProblems.size < 10_000) cronProblems.set(key, problem);
    else return report(problem);
  }
  return report(cronProblems.get(key));

  function report(problem: string | undefined): boolean {
    if (problem === undefined) return true;
    ctx.report(
      'invalid-value',
      path,
      `cron expression ${JSON.stringify(cron)} is not valid${problem}`,
      "write minute hour day-of-month month day-of-week, e.g. '0 22 * * 1-5' for 22:00 on weekdays",
    );
    return false;
  }
}

// Parsing a cron expression in a zone costs a timezone lookup; a large repository repeats a few expressions many times.
const cronProblems = new Map<string, string | undefined>();
