/**
 * A Git server with one repository (HEAD naming `master`, holding `main`, as the case that
 * breaks isomorphic-git's clone), a native-git work tree pushing to it, and a cache root.
 */
import { mkdirSync, writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  git,
  gitEnv,
  startTestGitServer,
  tempDir,
  TEST_USER,
  withUser,
  type GitServer,
} from '../support/git-server.js';

export interface CommitOptions {
  readonly author?: readonly [string, string];
  readonly branch?: string;
  /** Push with --force (history rewritten). */
  readonly force?: boolean;
}

export interface Fixture {
  readonly server: GitServer;
  readonly url: string;
  /** The bare repository's directory on the server (for hooks). */
  readonly bare: string;
  readonly work: string;
  readonly cacheRoot: string;
  /** Writes files (path → content; null deletes), commits at the given tick, pushes; resolves to the commit id. */
  commit(files: Readonly<Record<string, string | null>>, tick: number, opts?: CommitOptions): Promise<string>;
  /** Pushes the given refspecs (e.g. ':refs/heads/main' deletes main). */
  push(refspecs?: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

export async function createFixture(): Promise<Fixture> {
  const server = await startTestGitServer();
  const bare = server.createBareRepo('specs.git', 'master');
  const url = server.repoUrl('specs.git');
  const work = tempDir('drydock-work-');
  const cache = tempDir('drydock-cache-');
  await git(work.dir, ['init', '-q', '-b', 'main']);
  const authed = withUser(url, TEST_USER);
  const fixture: Fixture = {
    server,
    url,
    bare,
    work: work.dir,
    cacheRoot: cache.dir,
    async commit(files, tick, opts = {}) {
      const author = opts.author ?? ['Ada Lovelace', 'ada@example.com'];
      for (const [p, content] of Object.entries(files)) {
        const abs = path.join(work.dir, p);
        if (content === null) rmSync(abs, { force: true });
        else {
          mkdirSync(path.dirname(abs), { recursive: true });
          writeFileSync(abs, content);
        }
      }
      const env = gitEnv(tick, author[0], author[1]);
      await git(work.dir, ['add', '-A'], env);
      await git(work.dir, ['commit', '-q', '--allow-empty', '-m', `change ${tick}`], env);
      await git(
        work.dir,
        ['push', '-q', ...(opts.force ? ['-f'] : []), authed, `HEAD:refs/heads/${opts.branch ?? 'main'}`],
        env,
      );
      return git(work.dir, ['rev-parse', 'HEAD'], env);
    },
    async push(refspecs = []) {
      await git(work.dir, ['push', '-q', authed, ...refspecs], gitEnv(0));
    },
    async close() {
      await server.stop();
      work.remove();
      cache.remove();
    },
  };
  return fixture;
}

/** Registers mocha hooks that give each test a fresh fixture, handed to `use`, and close it after. */
export function useFixture(use: (fx: Fixture) => void): void {
  let current: Fixture | undefined;
  beforeEach(async () => {
    current = await createFixture();
    use(current);
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
}
