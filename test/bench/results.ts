/**
 * bench-results.json: one entry per figure, each with its value, unit, target, the ratio of the
 * two, the size it was measured at, the command that reproduces it, the machine it ran on and
 * the page under docs/benchmarks/ that tells how it was measured and what it showed. A module
 * records only its own figures (merged by id), so a module run alone updates its part of the
 * file. BENCHMARKS.md is generated from the file (npm run docs).
 *
 * ratio: value ÷ target where the target is an upper bound above zero (≤ 1 meets it); for a
 * target of zero the ratio is the value itself (0 meets it); null where no target exists.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
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
  /** Cores and load average when it was recorded: figures of a loaded machine read differently. */
  readonly machine: string;
  /** The page that explains the figure, relative to the repository root. */
  readonly details: string;
}

/** Which page under docs/benchmarks/ explains a figure, by its id; the first match wins. */
const DETAILS: readonly (readonly [RegExp, string])[] = [
  [/^churn\./, 'docs/benchmarks/churn.md'],
  [/^eta\./, 'docs/benchmarks/eta.md'],
  [/^fleet\./, 'docs/benchmarks/fleet.md'],
  [/^kairosPeer\./, 'docs/benchmarks/kairos-peer.md'],
  [/^makespan\.\w+(Writes|Events|Refused)/, 'docs/benchmarks/api-writes.md'],
  [/^makespan\./, 'docs/benchmarks/makespan.md'],
  [/^scale\.(rss|heap|external)/, 'docs/benchmarks/memory.md'],
  [/^scale\./, 'docs/benchmarks/idle-at-scale.md'],
  [/^spec\./, 'docs/benchmarks/spec-loader.md'],
  [/^status\./, 'docs/benchmarks/status-writer.md'],
];

export function detailsOf(id: string): string {
  const found = DETAILS.find(([pattern]) => pattern.test(id));
  if (!found) throw new Error(`bench figure ${id}: no page under docs/benchmarks/ explains it (add one to DETAILS)`);
  return found[1];
}

/** "2 cores, load 4.1": the machine as the notebook has always described it. */
function machineNow(): string {
  return `${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1) ?? '?'}`;
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
  const machine = machineNow();
  for (const f of figures)
    byId.set(f.id, { ...f, ratio: ratioOf(f.value, f.target), measuredAt: now, machine, details: detailsOf(f.id) });
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

/** A figure as the tables print it: whole numbers from 100, two decimals from 1, else three digits. */
export function round(v: number): string {
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
