/**
 * Every generated page, from its source of truth: the references under docs/reference/ and
 * BENCHMARKS.md. `npm run docs` writes them (generate.ts); test/docs/pages.test.ts fails when
 * one on disk differs from what its source gives now.
 */
import { annotationsPage } from './annotations.js';
import { benchmarksPage } from './benchmarks.js';
import { cliPage } from './cli.js';
import { formatted, type Page } from './markdown.js';
import { metricsPage } from './metrics.js';
import { specsPage } from './specs.js';

export async function generatePages(): Promise<Page[]> {
  return Promise.all([
    formatted('docs/reference/specs.md', specsPage().markdown),
    formatted('docs/reference/annotations.md', annotationsPage().markdown),
    formatted('docs/reference/cli.md', cliPage().markdown),
    formatted('docs/reference/metrics.md', metricsPage().markdown),
    formatted('BENCHMARKS.md', benchmarksPage().markdown),
  ]);
}
