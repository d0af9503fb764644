/**
 * Test helpers around the sandbox's Git server: a server in a fresh temporary root, and native
 * git run with fixed author and committer dates so commit ids are deterministic.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGitServer, type GitServer, type GitServerUser } from '../../src/sandbox/git-server.js';

const run = promisify(execFile);

export type { GitServer } from '../../src/sandbox/git-server.js';

export const TEST_USER: GitServerUser = { username: 'alice', password: 's3cret-pass' };

/** A server over a new temporary directory, with TEST_USER required; removes it on stop. */
export async function startTestGitServer(users: readonly GitServerUser[] = [TEST_USER]): Promise<GitServer> {
  const root = mkdtempSync(path.join(tmpdir(), 'drydock-git-'));
  const server = await startGitServer({ root, users });
  return {
    ...server,
    get requestCount() {
      return server.requestCount;
    },
    repoUrl: server.repoUrl,
    createBareRepo: server.createBareRepo,
    stop: async () => {
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A temporary directory removed by the returned function. */
export function tempDir(prefix = 'drydock-'): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Fixed identity and clock: the nth commit is dated 2024-01-01 + n minutes. */
export function gitEnv(tick: number, name = 'Ada Lovelace', email = 'ada@example.com'): NodeJS.ProcessEnv {
  const date = `${1704067200 + tick * 60} +0000`;
  return {
    ...process.env,
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
  };
}

/**
 * Runs native git; rejects with its stderr on failure; resolves to stdout trimmed. Asynchronous
 * on purpose: the server runs in this process, so a synchronous git would wait on it forever.
 */
export async function git(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = gitEnv(0)): Promise<string> {
  try {
    const r = await run('git', ['-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', ...args], {
      cwd,
      env,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return r.stdout.trim();
  } catch (err) {
    const stderr = typeof err === 'object' && err !== null && 'stderr' in err ? String(err.stderr) : String(err);
    throw new Error(`git ${args.join(' ')} failed: ${stderr}`);
  }
}

/** URL with basic-auth credentials, for native git only (drydock itself never takes them that way in tests). */
export function withUser(url: string, user: GitServerUser = TEST_USER): string {
  const u = new URL(url);
  u.username = user.username;
  u.password = user.password;
  return u.toString();
}
