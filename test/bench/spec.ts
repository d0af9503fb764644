/**
 * Spec loader benchmarks (the service validates every commit with this loader):
 * - the largest repository the limits allow: 2,000 files, 32 MiB of valid specs;
 * - one 1 MiB file of errors (a spec with ~50,000 unknown fields), which locating errors by
 *   searching the mapping once per error made take 49 s.
 * Wall-clock and CPU time are both printed: on a shared machine the second is the steadier, so
 * the file of errors is held to its target in CPU time; beside it, the CPU time of the fast
 * path's read of the same file (js-yaml with positions), which the loader takes for it, and of
 * the `yaml` library's parse alone, which the full path would take. Figures go to
 * bench-results.json (spec.*).
 * Alone: `npx tsc -p . && node dist/test/bench/spec.js`.
 */
import { performance } from 'node:perf_hooks';
import { Composer, LineCounter, Parser } from 'yaml';
import { DEFAULT_LIMITS, loadFromSource } from '../../src/spec/index.js';
import { parseFast } from '../../src/spec/parse-fast.js';
import { fileOfErrors } from '../spec/corpus.js';
import { memorySource } from '../spec/support.js';
import type { BenchResult } from './plan.js';
import { recordFigures } from './results.js';

/** One file's worth of specs: a NodeImage, its ScalingGroup and a MaintenanceWindow per group, repeated to `bytes`. */
function specFile(f: number, bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes - 1200; i++) {
    const n = `f${f}-${i}`;
    const text = `---
apiVersion: drydock.dev/v1alpha1
kind: NodeImage
metadata:
  name: img-${n}
  labels:
    app.kubernetes.io/part-of: fleet
spec:
  image: registry.example/node-os:v1.${i}
  rollout:
    maxSurge: 2
    maxUnavailable: 10%
    canary: {nodes: 1, soak: 10m}
    window: win-${n}
    drain:
      timeoutSeconds: 600
      podSelector:
        matchExpressions:
        - {key: app, operator: NotIn, values: [critical]}
---
apiVersion: drydock.dev/v1alpha1
kind: ScalingGroup
metadata:
  name: group-${n}
spec:
  provider: sim
  groupId: g${f}x${i}
  nodeImage: img-${n}
---
apiVersion: drydock.dev/v1alpha1
kind: MaintenanceWindow
metadata:
  name: win-${n}
spec:
  timeZone: Europe/Berlin
  schedules:
  - cron: '0 22 * * 1-5'
    duration: 4h
`;
    parts.push(text);
    size += text.length;
  }
  return parts.join('');
}

/** Files under the limits: as many as allowed, together just under the total. */
export function largestRepository(): Record<string, string> {
  const files = DEFAULT_LIMITS.maxFiles;
  const per = Math.floor((DEFAULT_LIMITS.maxTotalBytes - 4096) / files);
  const tree: Record<string, string> = {};
  for (let f = 0; f < files; f++) tree[`specs/d${f % 40}/f${f}.yaml`] = specFile(f, per);
  return tree;
}

/** The parse the loader hands to `yaml` (lexer, parser, composer, line counter), and nothing else. */
function yamlParseOnly(text: string): number {
  const lc = new LineCounter();
  const composer = new Composer({ uniqueKeys: false, strict: true, prettyErrors: false, version: '1.2' });
  let n = 0;
  for (const doc of composer.compose(new Parser(lc.addNewLine).parse(text))) n += doc.errors.length + 1;
  return n;
}

async function timed(run: () => Promise<unknown>): Promise<{ ms: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const t = performance.now();
  await run();
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - t, cpuMs: (used.user + used.system) / 1000 };
}

function result(name: string, ms: number, target: number): BenchResult {
  return { name, value: Math.round(ms), unit: 'ms', target, ratio: ms / target };
}

export async function run(): Promise<BenchResult[]> {
  const tree = largestRepository();
  const bytes = Object.values(tree).reduce((n, t) => n + Buffer.byteLength(t), 0);
  let specs = 0;
  const repo = await timed(async () => {
    const r = await loadFromSource(memorySource(tree));
    if (!r.ok) throw new Error(`the generated repository is invalid: ${r.errors[0]?.message}`);
    specs = r.desired.nodeImages.length + r.desired.scalingGroups.length + r.desired.maintenanceWindows.length;
  });
  const { text, fields } = fileOfErrors();
  const errors = await timed(async () => {
    const r = await loadFromSource(memorySource({ 'big.yaml': text }));
    if (r.ok) throw new Error('the file of errors loaded');
  });
  const fastOnly = await timed(() => Promise.resolve(parseFast('big.yaml', text, DEFAULT_LIMITS)));
  const parseOnly = await timed(() => Promise.resolve(yamlParseOnly(text)));
  const out = [
    result(
      `validate the largest allowed repository: ${Object.keys(tree).length} files, ${(bytes / 2 ** 20).toFixed(1)} MiB, ${specs} specs`,
      repo.ms,
      60_000,
    ),
    result(`validate one 1 MiB file of ${fields} errors (CPU)`, errors.cpuMs, 500),
    result(`  of which the fast path's read (js-yaml with positions, CPU)`, fastOnly.cpuMs, 500),
    result(`  the yaml library's parse alone, for comparison (CPU)`, parseOnly.cpuMs, 500),
  ];
  const both = [repo, errors, fastOnly, parseOnly];
  out.forEach((r, i) =>
    console.log(
      `${r.name}: wall ${Math.round(both[i]!.ms)} ms, CPU ${Math.round(both[i]!.cpuMs)} ms (target ≤ ${r.target} ${r.unit}, ratio ${r.ratio.toFixed(2)})`,
    ),
  );
  const command = 'npx tsc -p . && node dist/test/bench/spec.js';
  const size = `${Object.keys(tree).length} files, ${(bytes / 2 ** 20).toFixed(1)} MiB`;
  recordFigures([
    {
      id: 'spec.largestRepoMs',
      what: `validate the largest allowed repository (${specs} specs), wall clock`,
      value: Math.round(repo.ms),
      unit: 'ms',
      target: 60_000,
      size,
      command,
    },
    {
      id: 'spec.largestRepoCpuMs',
      what: 'the same, CPU time',
      value: Math.round(repo.cpuMs),
      unit: 'ms',
      target: null,
      size,
      command,
    },
    {
      id: 'spec.fileOfErrorsCpuMs',
      what: `validate one 1 MiB file of ${fields} unknown fields, CPU time`,
      value: Math.round(errors.cpuMs),
      unit: 'ms',
      target: 500,
      size: '1 MiB, one file',
      command,
    },
    {
      id: 'spec.fileOfErrorsFastReadCpuMs',
      what: "of which the fast path's read (js-yaml with positions), CPU time",
      value: Math.round(fastOnly.cpuMs),
      unit: 'ms',
      target: null,
      size: '1 MiB, one file',
      command,
    },
    {
      id: 'spec.fileOfErrorsYamlParseCpuMs',
      what: "the yaml library's parse of the same file alone, CPU time",
      value: Math.round(parseOnly.cpuMs),
      unit: 'ms',
      target: null,
      size: '1 MiB, one file',
      command,
    },
  ]);
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
