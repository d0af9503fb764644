/**
 * The one duration grammar drydock reads, in flags and in specs: hours, minutes, seconds and
 * milliseconds in that order, each optional ('1h30m', '90s', '500ms', '5 m'), or a bare number
 * of seconds ('90'). Callers decide what they refuse (zero, a bare number, too long) and how
 * they say so; the grammar is the same everywhere.
 */

const COMPONENTS =
  /^(?:(\d+(?:\.\d+)?)\s*h)?\s*(?:(\d+(?:\.\d+)?)\s*m(?!s))?\s*(?:(\d+(?:\.\d+)?)\s*s)?\s*(?:(\d+(?:\.\d+)?)\s*ms)?$/;
const BARE_SECONDS = /^\d+(?:\.\d+)?$/;

export interface DurationOptions {
  /** Refuse a bare number (specs always name the unit). */
  readonly unitRequired?: boolean;
}

/** Milliseconds in `text`, or undefined when it is not a duration. */
export function parseDuration(text: string, options: DurationOptions = {}): number | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  if (BARE_SECONDS.test(t)) return options.unitRequired ? undefined : Math.round(Number(t) * 1000);
  const m = COMPONENTS.exec(t);
  if (m === null) return undefined;
  const [, h, min, s, ms] = m;
  const total = Number(h ?? 0) * 3_600_000 + Number(min ?? 0) * 60_000 + Number(s ?? 0) * 1000 + Number(ms ?? 0);
  return Number.isFinite(total) ? Math.round(total) : undefined;
}

/** Milliseconds in `text` when it is a duration longer than zero, else undefined. */
export function parsePositiveDuration(text: string): number | undefined {
  const ms = parseDuration(text);
  return ms !== undefined && ms > 0 ? ms : undefined;
}
