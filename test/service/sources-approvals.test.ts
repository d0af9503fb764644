import { strict as assert } from 'node:assert';
import { pino } from 'pino';
import { parse } from 'yaml';
import { createServiceSources } from '../../src/service/sources.js';
import { buildStatus } from '../../src/service/status.js';
import { plan } from '../../src/plan/index.js';
import { observed } from '../plan/fixtures.js';
import { git, tempDir, TEST_USER, withUser } from '../support/git-server.js';
import { createFixture, type Fixture } from '../source/fixture.js';

const CONFIG = 'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ncluster: approvals\npaths: [specs, approvals]\n';
const IMAGE =
  'apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata:\n  name: worker\nspec:\n  image: os:v2\n  strategy: replace\n';
const APPROVAL = (image: string): string =>
  `apiVersion: drydock.dev/v1alpha1\nkind: Approval\nmetadata:\n  name: worker-start\nspec:\n  target:\n    kind: NodeImage\n    name: worker\n  image: ${image}\n  stage: start\n`;

describe('drydock run: approvals record their approver, and status shows the ones the plan counts', function () {
  this.timeout(60_000);
  let fx: Fixture;
  before(async () => {
    fx = await createFixture();
  });
  after(async () => {
    await fx?.close();
  });

  it('names the author of the commit that merged the approval file (under --path), in the spec and in status/<Kind>/<name>.yaml', async () => {
    await fx.commit({ 'cluster/drydock.yaml': CONFIG, 'cluster/specs/image.yaml': IMAGE }, 1, {
      author: ['Grace Hopper', 'grace@example.com'],
    });
    const approved = await fx.commit(
      {
        'cluster/approvals/worker-start.yaml': APPROVAL('os:v2'),
        'cluster/approvals/old.yaml': APPROVAL('os:v1').replace('worker-start', 'worker-old'),
      },
      2,
      {
        author: ['Ada Lovelace', 'ada@example.com'],
      },
    );
    // A later commit by someone else that leaves the approval file alone does not make them the approver.
    const tip = await fx.commit({ 'cluster/NOTES.md': 'notes\n' }, 3, {
      author: ['Grace Hopper', 'grace@example.com'],
    });

    const { source, status } = await createServiceSources(
      {
        repo: fx.url,
        branch: 'main',
        path: 'cluster',
        cacheDir: fx.cacheRoot,
        env: { DRYDOCK_GIT_USERNAME: TEST_USER.username, DRYDOCK_GIT_PASSWORD: TEST_USER.password },
      },
      pino({ level: 'silent' }),
    );
    assert.ok(status);
    const rev = await source.sync();
    assert.equal(rev.commit, tip);
    assert.ok(rev.load.ok, 'the commit loads');
    const approval = rev.load.desired.approvals.find((a) => a.name === 'worker-start');
    assert.deepEqual(approval?.approvedBy, {
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      commit: approved,
      at: '2024-01-01T00:02:00.000Z',
    });

    // The plan decides which approvals count; status shows those. The old image's approval does not.
    const planned = plan(rev.load.desired, observed(), new Date('2024-01-02T00:00:00.000Z'));
    const spec = planned.specs.find((x) => x.spec.kind === 'NodeImage' && x.spec.name === 'worker');
    assert.ok(spec);
    assert.deepEqual(
      spec.approvals?.map((a) => a.name),
      ['worker-start'],
    );
    const snapshot = { ...buildStatus({ cluster: 'approvals', sourceCommit: tip, newestCommit: tip }), specs: [spec] };
    await status.write(snapshot);

    const fetched = tempDir('drydock-status-');
    try {
      await git(fetched.dir, ['init', '-q']);
      await git(fetched.dir, ['fetch', '-q', withUser(fx.url, TEST_USER), 'refs/heads/drydock/status']);
      const doc = parse(await git(fetched.dir, ['show', 'FETCH_HEAD:status/NodeImage/worker.yaml'])) as {
        approvals?: Array<Record<string, unknown>>;
      };
      assert.deepEqual(doc.approvals, [
        {
          stage: 'start',
          name: 'worker-start',
          file: 'cluster/approvals/worker-start.yaml',
          approvedBy: {
            name: 'Ada Lovelace',
            email: 'ada@example.com',
            commit: approved,
            at: '2024-01-01T00:02:00.000Z',
          },
        },
      ]);
    } finally {
      fetched.remove();
    }
  });
});
