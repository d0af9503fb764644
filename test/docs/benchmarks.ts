/**
 * BENCHMARKS.md from bench-results.json: one table of every recorded figure, each row linked to
 * the page under docs/benchmarks/ that tells how it was measured and what it showed. The file
 * is what the benchmark modules write (test/bench/results.ts), so a benchmark run followed by
 * `npm run docs` brings the table up to date.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { round, type RecordedFigure } from '../bench/results.js';
import { ROOT, byText, code, generatedNote, table } from './markdown.js';

const RESULTS = 'bench-results.json';

/** Pages of benchmarks whose modules print their figures but do not record them in the file. */
const UNRECORDED = [
  ['docs/benchmarks/planner.md', 'one plan() over 5,000 nodes, and rollout makespan in the simulated world'],
  ['docs/benchmarks/git.md', 'incremental fetch against native git, and webhook to loaded specs'],
  ['docs/benchmarks/service-idle.md', 'idle reconcile at 1,000 nodes, and webhook to first cluster action'],
  ['docs/benchmarks/idle-cpu.md', 'why an idle round cost what it did, and what cut it'],
] as const;

/** Family first, then the size after "@" as a number, so 200 comes before 1000. */
function byFigure(a: RecordedFigure, b: RecordedFigure): number {
  const [fa = '', sa = ''] = a.id.split('@');
  const [fb = '', sb = ''] = b.id.split('@');
  return byText(fa, fb) || parseFloat(sa) - parseFloat(sb) || byText(a.id, b.id);
}

function ratioCell(f: RecordedFigure): string {
  if (f.ratio === null) return '–';
  const met = f.ratio <= (f.target === 0 ? 0 : 1);
  return met ? String(f.ratio) : `**${f.ratio} (missed)**`;
}

function row(f: RecordedFigure): string[] {
  if (!f.details || !existsSync(path.join(ROOT, f.details)))
    throw new Error(`${RESULTS}: ${f.id} links to ${f.details || 'no page'}, which does not exist`);
  return [
    `[${f.what}](${f.details}) ${code(f.id)}`,
    f.target === null ? '–' : `≤ ${f.target} ${f.unit}`,
    `${round(f.value)} ${f.unit}`,
    ratioCell(f),
    f.size,
    f.machine,
    f.measuredAt.slice(0, 10),
    code(f.command),
  ];
}

export function benchmarksPage(): { markdown: string; rows: number } {
  const { figures } = JSON.parse(readFileSync(path.join(ROOT, RESULTS), 'utf8')) as { figures: RecordedFigure[] };
  const sorted = [...figures].sort(byFigure);
  const pages = [...new Set(sorted.map((f) => f.details))].sort(byText);
  const markdown = [
    generatedNote(RESULTS),
    '',
    '# Benchmarks',
    '',
    `Every figure the benchmarks in \`test/bench/\` recorded in \`${RESULTS}\`, ${sorted.length} in all. Each row links to the page that says how it is measured, what it showed and what changed because of it; those pages keep the runs that came before the figure in the table.`,
    '',
    '- **Target** is an upper bound from DESIGN.md or the module itself; **ratio** is value ÷ target, so a ratio of 1 or less meets it. For a target of zero the ratio is the value itself (0 meets it). A dash: no target.',
    '- **Machine** is the one the figure was measured on, with its load average: most figures come from a 2-core machine shared with other work, where wall-clock times follow the load.',
    '- **Command** reproduces the figure. `npm run bench` (after `npx tsc -p .`) runs every module at modest sizes; a module run alone records only its own figures, merged by id (`DRYDOCK_BENCH_RESULTS` names another file). Then `npm run docs` regenerates this page.',
    '',
    'The large sizes are asked for by environment variable, one size after another, largest last:',
    '',
    '```sh',
    'npx tsc -p . && DRYDOCK_BENCH_SCALE=500,1000,2000 node dist/test/bench/scale.js',
    'DRYDOCK_BENCH_SCALE=5000 DRYDOCK_BENCH_SCALE_CHURN=1 DRYDOCK_BENCH_SCALE_WAVE=1000 node dist/test/bench/scale.js  # idle, churn and a wave on one world',
    'DRYDOCK_BENCH_STATUS_NODES=500,5000 node dist/test/bench/status.js',
    '```',
    '',
    'The peer benchmark (`kairos-peer`) runs the Kairos operator beside drydock. The operator is built from its source, cached, by `bash scripts/kairos-operator.sh`, which prints the directory to give as `DRYDOCK_KAIROS_OPERATOR`; otherwise the benchmark runs the script itself. The source comes from the Go module proxy (`go mod download github.com/kairos-io/kairos-operator@v0.1.3`), from `DRYDOCK_KAIROS_SRC` (a checkout of that tag) where the proxy refuses it, or from a clone of the tag. The build is `CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath ./cmd`, with every dependency checked against its `go.sum`, and the CRDs come from `config/crd/bases`. See [kairos-peer](docs/benchmarks/kairos-peer.md).',
    '',
    `Pages: ${pages.map((p) => `[${path.basename(p, '.md')}](${p})`).join(', ')}. Benchmarks that print their figures without recording them:`,
    '',
    ...UNRECORDED.map(([p, what]) => `- [${path.basename(p, '.md')}](${p}): ${what}.`),
    '',
    table(['Figure', 'Target', 'Value', 'Ratio', 'Size', 'Machine', 'Date', 'Command'], sorted.map(row)),
    '',
  ].join('\n');
  return { markdown, rows: sorted.length };
}
