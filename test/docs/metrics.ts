/**
 * docs/reference/metrics.md from the service's metrics registry (src/service/metrics.ts),
 * created as the service creates it: every metric's name, type, help and labels. drydock's own
 * metrics first; then the process metrics prom-client adds under drydock_process_.
 */
import type { MetricObject } from 'prom-client';
import { createMetrics } from '../../src/service/metrics.js';
import { byText, code, generatedNote, table } from './markdown.js';

interface MetricInfo {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly labels: readonly string[];
}

function infoOf(metrics: readonly MetricObject[]): MetricInfo[] {
  return metrics
    .map((m) => {
      const fields = m as unknown as { name: string; help: string; type: string; labelNames?: readonly string[] };
      return { name: fields.name, type: fields.type, help: fields.help, labels: [...(fields.labelNames ?? [])] };
    })
    .sort((a, b) => byText(a.name, b.name));
}

function metricTable(metrics: readonly MetricInfo[]): string {
  return table(
    ['Metric', 'Type', 'Labels', 'Help'],
    metrics.map((m) => [code(m.name), m.type, m.labels.map(code).join(', '), m.help]),
  );
}

export function metricsPage(): { markdown: string; own: number; process: number } {
  const own = infoOf(createMetrics({ defaultMetrics: false }).registry.getMetricsAsArray());
  const ownNames = new Set(own.map((m) => m.name));
  const processMetrics = infoOf(createMetrics().registry.getMetricsAsArray()).filter((m) => !ownNames.has(m.name));
  const markdown = [
    generatedNote('src/service/metrics.ts (the registry createMetrics builds)'),
    '',
    '# Metrics',
    '',
    `\`drydock run\` serves Prometheus metrics at \`/metrics\` on its \`--listen\` address: ${own.length} of drydock's own and ${processMetrics.length} about the process. Every replica serves them; \`drydock_leader\` says which one acts.`,
    '',
    "## drydock's metrics",
    '',
    metricTable(own),
    '',
    '## Process metrics',
    '',
    "prom-client's default metrics of the Node.js process, under the prefix `drydock_process_`, as collected on Linux (the image's platform; a few are Linux only).",
    '',
    metricTable(processMetrics),
    '',
  ].join('\n');
  return { markdown, own: own.length, process: processMetrics.length };
}
