import { strict as assert } from 'node:assert';
import { createHmac } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { createServiceSources } from '../../src/service/sources.js';
import {
  git,
  gitEnv,
  startTestGitServer,
  tempDir,
  TEST_USER,
  withUser,
  type GitServer,
} from '../support/git-server.js';

const TOKEN = 'tok-file-7Qm2xZ9pL4';
const WEBHOOK_SECRET = 'hook-file-Vb81rT';

function capturingLogger(): { logger: Logger; text: () => string } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: pino({ level: 'trace' }, stream), text: () => lines.join('') };
}

describe('drydock run: secrets from files', function () {
  this.timeout(60_000);
  let server: GitServer;
  let work: { dir: string; remove: () => void };
  let files: { dir: string; remove: () => void };
  let url: string;
  let commit: string;

  before(async () => {
    // The token is accepted as basic auth x-access-token:<token>, as GitHub, GitLab and Gitea do.
    server = await startTestGitServer([TEST_USER, { username: 'x-access-token', password: TOKEN }]);
    server.createBareRepo('specs.git', 'main');
    url = server.repoUrl('specs.git');
    work = tempDir('drydock-work-');
    files = tempDir('drydock-secrets-');
    mkdirSync(path.join(work.dir, 'specs'));
    writeFileSync(
      path.join(work.dir, 'drydock.yaml'),
      'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ncluster: secrets\npaths: [specs]\n',
    );
    writeFileSync(
      path.join(work.dir, 'specs/image.yaml'),
      'apiVersion: drydock.dev/v1alpha1\nkind: NodeImage\nmetadata:\n  name: worker\nspec:\n  image: os:v1\n  strategy: replace\n',
    );
    await git(work.dir, ['init', '-q', '-b', 'main']);
    await git(work.dir, ['add', '-A']);
    await git(work.dir, ['commit', '-q', '-m', 'specs']);
    await git(work.dir, ['push', '-q', withUser(url, TEST_USER), 'HEAD:refs/heads/main'], gitEnv(0));
    commit = await git(work.dir, ['rev-parse', 'HEAD']);
    writeFileSync(path.join(files.dir, 'token'), `${TOKEN}\n`);
    writeFileSync(path.join(files.dir, 'wrong-token'), 'not-the-token-3kd9\n');
    writeFileSync(path.join(files.dir, 'webhook'), `${WEBHOOK_SECRET}\n`);
  });
  after(async () => {
    await server?.stop();
    work?.remove();
    files?.remove();
  });

  it('authenticates with the token read from --git-token-file, and never logs it', async () => {
    const cache = tempDir('drydock-cache-');
    const { logger, text } = capturingLogger();
    try {
      const { source } = await createServiceSources(
        {
          repo: url,
          branch: 'main',
          path: '.',
          cacheDir: cache.dir,
          gitTokenFile: path.join(files.dir, 'token'),
          env: {},
        },
        logger,
      );
      const rev = await source.sync();
      assert.equal(rev.commit, commit);
      assert.ok(rev.load.ok, 'the commit loads');
      await source.close?.();
    } finally {
      cache.remove();
    }
    assert.ok(text().length > 0, 'something was logged');
    assert.ok(!text().includes(TOKEN), 'the token is not in the logs');
    assert.ok(!text().includes(Buffer.from(`x-access-token:${TOKEN}`).toString('base64')), 'nor its basic-auth form');
  });

  it('a wrong token from the file is refused by the server, and is not logged or shown either', async () => {
    const cache = tempDir('drydock-cache-');
    const { logger, text } = capturingLogger();
    let message = '';
    try {
      const { source } = await createServiceSources(
        {
          repo: url,
          branch: 'main',
          path: '.',
          cacheDir: cache.dir,
          gitTokenFile: path.join(files.dir, 'wrong-token'),
          env: { DRYDOCK_GIT_TOKEN: TOKEN },
        },
        logger,
      );
      await assert.rejects(source.sync(), (err: unknown) => {
        message = err instanceof Error ? err.message : String(err);
        return true;
      });
    } finally {
      cache.remove();
    }
    assert.ok(!text().includes('not-the-token-3kd9') && !message.includes('not-the-token-3kd9'));
  });

  it('a missing token file is an error naming the file, not a silent anonymous fetch', async () => {
    const { logger } = capturingLogger();
    await assert.rejects(
      async () =>
        createServiceSources(
          { repo: url, branch: 'main', path: '.', gitTokenFile: path.join(files.dir, 'absent'), env: {} },
          logger,
        ),
      { code: 'credentials', message: /token file .*absent \(ENOENT\)/ },
    );
  });

  it('verifies webhooks with the secret read from --webhook-secret-file', async () => {
    const { logger } = capturingLogger();
    const { source } = await createServiceSources(
      {
        repo: url,
        branch: 'main',
        path: '.',
        webhookSecretFile: path.join(files.dir, 'webhook'),
        env: { DRYDOCK_WEBHOOK_SECRET: 'from-env-loses' },
      },
      logger,
    );
    assert.ok(source.webhook, 'the webhook route is on');
    let triggered = 0;
    const handler = source.webhook(() => {
      triggered += 1;
    });
    const body = Buffer.from('{"ref":"refs/heads/main"}');
    const sig = (secret: string): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    const good = await handler.handle({ 'x-github-event': 'push', 'x-hub-signature-256': sig(WEBHOOK_SECRET) }, body);
    assert.equal(good.status, 202);
    const bad = await handler.handle({ 'x-github-event': 'push', 'x-hub-signature-256': sig('from-env-loses') }, body);
    assert.equal(bad.status, 401);
    assert.equal(triggered, 1);
    assert.ok(!JSON.stringify(bad.body).includes(WEBHOOK_SECRET));
  });
});
