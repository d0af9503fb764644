/**
 * bench-results.json: one entry per figure, each with its value, unit, target, the ratio of the
 * two, the size it was measured at and the command that reproduces it. A module records only
 * its own figures (merged by id), so a module run alone updates its part of the file.
 *
 * ratio: value ÷ target where the target is an upper bound above zero (≤ 1 meets it); for a
 * target of zero the ratio is the value itself (0 meets it); null where no target exists.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface Figure {
  /** Stable key, e.g. "scale.idle.requestsPerReconcile@500". */
  readonly id: string;
  readonly what: string;
  readonly value: number;
  readonly unit: string;
  /** Upper bound the value should stay at or below; null where there is none. */
  readonly target: number | null;
  readonly size: string;
  readonly command: string;
}

export interface RecordedFigure extends Figure {
  readonly ratio: number | null;
  readonly measuredAt: string;
}

export const RESULTS_FILE = path.resolve(process.env.DRYDOCK_BENCH_RESULTS ?? 'bench-results.json');

export function ratioOf(value: number, target: number | null): number | null {
  if (target === null) return null;
  return target === 0 ? value : Number((value / target).toFixed(4));
}

/** Merges `figures` into bench-results.json and prints them as a Markdown table. */
export function recordFigures(figures: readonly Figure[]): void {
  const now = new Date().toISOString();
  const existing: RecordedFigure[] = existsSync(RESULTS_FILE)
    ? ((JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as { figures?: RecordedFigure[] }).figures ?? [])
    : [];
  const byId = new Map(existing.map((f) => [f.id, f]));
  for (const f of figures) byId.set(f.id, { ...f, ratio: ratioOf(f.value, f.target), measuredAt: now });
  const all = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  writeFileSync(RESULTS_FILE, JSON.stringify({ figures: all }, null, 2) + '\n');
  console.log('| what | size | figure | target | ratio |');
  console.log('|---|---|---|---|---|');
  for (const f of figures) {
    const r = ratioOf(f.value, f.target);
    const verdict = r === null ? '–' : `${r}${r <= (f.target === 0 ? 0 : 1) ? '' : ' MISSED'}`;
    console.log(
      `| ${f.what} | ${f.size} | ${round(f.value)} ${f.unit} | ${f.target === null ? '–' : `≤ ${f.target}`} | ${verdict} |`,
    );
  }
}

function round(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3);
}

/** Sizes from a comma-separated environment variable, or the default. */
export function sizesFrom(variable: string, fallback: readonly number[]): number[] {
  const text = process.env[variable];
  if (!text) return [...fallback];
  const sizes = text.split(',').map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n <= 0))
    throw new Error(`${variable}=${text}: expected comma-separated positive integers, e.g. 500,1000,2000`);
  return sizes;
}
