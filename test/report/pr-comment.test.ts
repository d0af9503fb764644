/**
 * The pull-request comment as golden files (test/report/golden/), read by a person once: a
 * change in the layout shows as a diff here. DRYDOCK_UPDATE_GOLDEN=1 rewrites them; review the
 * diff before committing.
 */
import { strict as assert } from 'node:assert';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PR_COMMENT_MARKER, renderPr } from '../../src/report/pr-render.js';
import type { PrReport } from '../../src/report/pr-report.js';
import { cluster, edgeCluster, edgeState, invalid, ok, report, state, V1, V2 } from './pr-fixtures.js';

const GOLDEN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/report/golden');

const comments: Array<[string, () => PrReport]> = [
  [
    'image-change-approval-pdb',
    () => report(ok(state(V1)), ok(state(V2, { approval: { required: 'afterCanary' } })), cluster(0)),
  ],
  ['image-change-live-skipped', () => report(ok(state(V1)), ok(state(V2)))],
  ['rollout-ready', () => report(ok(state(V1)), ok(state(V2)), cluster())],
  // inPlace: the nodes are updated and rebooted where they are, never "replaced".
  ['inplace-image-change', () => report(ok(edgeState(V1)), ok(edgeState(V2)), edgeCluster())],
  [
    'invalid-head',
    () =>
      report(
        ok(state(V1)),
        invalid([
          {
            file: 'images/worker.yaml',
            line: 7,
            column: 10,
            code: 'schema',
            message: 'spec.rollout.maxSurge must be an integer or a percentage',
            hint: 'write e.g. 1 or "25%"',
          },
          {
            file: 'clusters/workers.yaml',
            line: 9,
            column: 14,
            code: 'dangling-reference',
            message: 'ScalingGroup workers names NodeImage wroker, which does not exist',
            hint: 'fix spec.nodeImage (NodeImages: worker)',
          },
        ]),
      ),
  ],
];

describe('plan --format markdown: the pull-request comment (golden files)', () => {
  for (const [name, build] of comments) {
    it(name, () => {
      const text = renderPr(build(), 'markdown');
      const file = path.join(GOLDEN, `${name}.md`);
      if (process.env.DRYDOCK_UPDATE_GOLDEN === '1') writeFileSync(file, text);
      assert.equal(text, readFileSync(file, 'utf8'));
      assert.equal(text.split('\n')[0], PR_COMMENT_MARKER, 'the marker CI looks for opens the comment');
    });
  }
});
