import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './markdown.js';
import { generatePages } from './pages.js';

/**
 * The generated pages are held to their sources: a change to a schema, a drydock.dev/ key, a
 * command's flags, a metric or bench-results.json must come with the page regenerated. Needs
 * no control plane, so it runs in the unit pass too.
 */
describe('generated docs', function () {
  this.timeout(60_000);

  it('every generated page on disk is what its source gives now', async () => {
    const stale: string[] = [];
    for (const page of await generatePages()) {
      // prom-client registers a few process metrics on Linux only; the page shows the image's.
      if (page.file === 'docs/reference/metrics.md' && process.platform !== 'linux') continue;
      const file = path.join(ROOT, page.file);
      const onDisk = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
      if (onDisk !== page.text) stale.push(`${page.file} is out of date: run npm run docs`);
    }
    assert.deepEqual(stale, []);
  });
});
