/**
 * A real Git server for the sandbox and the tests: git's own `git http-backend` (CGI) behind a
 * small node HTTP server on loopback. Push is enabled; basic auth is checked here and handed to
 * the backend as REMOTE_USER, the way a web server in front of it would.
 *
 * Only the smart HTTP protocol is served (what isomorphic-git and native git speak by default).
 */
import { CodedError } from '../errors.js';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';

export interface GitServerUser {
  readonly username: string;
  readonly password: string;
}

export interface GitServerOptions {
  /** Directory holding the bare repositories (GIT_PROJECT_ROOT). */
  readonly root: string;
  /** Accepted credentials; when empty or absent, every request is anonymous and allowed. */
  readonly users?: readonly GitServerUser[];
  /** Port to listen on; 0 (default) picks a free one. */
  readonly port?: number;
  /** Path of git-http-backend; found through `git --exec-path` when absent. */
  readonly backend?: string;
}

export interface GitServer {
  /** e.g. http://127.0.0.1:41234 */
  readonly baseUrl: string;
  readonly port: number;
  readonly root: string;
  /** URL of a repository under root, e.g. repoUrl('specs.git'). */
  readonly repoUrl: (name: string) => string;
  /** Creates a bare repository under root; `defaultBranch` is what its HEAD names. */
  readonly createBareRepo: (name: string, defaultBranch?: string) => string;
  /** Number of requests served so far (tests use it to prove nothing was fetched). */
  readonly requestCount: number;
  stop(): Promise<void>;
}

export class GitServerError extends CodedError<'git-server', Readonly<Record<string, unknown>>> {
  override readonly name = 'GitServerError';
  constructor(message: string, data: Readonly<Record<string, unknown>> = {}) {
    super('git-server', message, data);
  }
}

/** Finds git-http-backend next to the installed git. */
export function findHttpBackend(): string {
  const r = spawnSync('git', ['--exec-path'], { encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout.trim()) {
    throw new GitServerError('git is not installed or `git --exec-path` failed; install git', { stderr: r.stderr });
  }
  return path.join(r.stdout.trim(), 'git-http-backend');
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The user named by a valid Authorization header, or undefined. */
function authenticate(req: IncomingMessage, users: readonly GitServerUser[]): string | undefined {
  const header = req.headers.authorization;
  if (!header?.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const username = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  let found: string | undefined;
  for (const u of users) {
    // Compare every entry so timing does not reveal which user exists.
    if (sameSecret(u.username, username) && sameSecret(u.password, password)) found = u.username;
  }
  return found;
}

function serveCgi(
  backend: string,
  root: string,
  req: IncomingMessage,
  res: ServerResponse,
  user: string | undefined,
): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    // http.receivepack true: allow pushes (by default only with REMOTE_USER set).
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: 'http.receivepack',
    GIT_CONFIG_VALUE_0: 'true',
    GIT_CONFIG_KEY_1: 'safe.directory',
    GIT_CONFIG_VALUE_1: '*',
    GIT_CONFIG_NOSYSTEM: '1',
    HOME: root,
    REQUEST_METHOD: req.method ?? 'GET',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.replace(/^\?/, ''),
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
    SERVER_PROTOCOL: 'HTTP/1.1',
    GATEWAY_INTERFACE: 'CGI/1.1',
  };
  if (req.headers['content-length'] !== undefined) env.CONTENT_LENGTH = req.headers['content-length'];
  if (req.headers['content-encoding'] !== undefined) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
  if (req.headers['git-protocol'] !== undefined) env.GIT_PROTOCOL = String(req.headers['git-protocol']);
  if (user !== undefined) {
    env.REMOTE_USER = user;
    env.AUTH_TYPE = 'Basic';
  }
  const child = spawn(backend, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  req.pipe(child.stdin);
  child.stdin.on('error', () => undefined);
  let head = Buffer.alloc(0);
  let headersDone = false;
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  child.stdout.on('data', (chunk: Buffer) => {
    if (headersDone) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    const endLf = head.indexOf('\n\n');
    const cut = end >= 0 ? { at: end, len: 4 } : endLf >= 0 ? { at: endLf, len: 2 } : undefined;
    if (!cut) return;
    headersDone = true;
    let status = 200;
    for (const line of head.subarray(0, cut.at).toString('latin1').split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
      else res.setHeader(name, value);
    }
    res.statusCode = status;
    res.write(head.subarray(cut.at + cut.len));
  });
  child.on('error', (err) => {
    if (!res.headersSent) res.statusCode = 500;
    res.end(`git http-backend failed to start: ${err.message}\n`);
  });
  child.on('close', (code) => {
    if (!headersDone) {
      res.statusCode = 500;
      res.end(`git http-backend exited ${String(code)} without a response: ${stderr}\n`);
      return;
    }
    res.end();
  });
}

/** Starts the server; resolves once it listens. */
export async function startGitServer(options: GitServerOptions): Promise<GitServer> {
  const root = path.resolve(options.root);
  mkdirSync(root, { recursive: true });
  const backend = options.backend ?? findHttpBackend();
  const users = options.users ?? [];
  let requestCount = 0;
  const server: Server = createServer((req, res) => {
    requestCount += 1;
    let user: string | undefined;
    if (users.length > 0) {
      user = authenticate(req, users);
      if (user === undefined) {
        req.resume();
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="drydock"', 'Content-Type': 'text/plain' });
        res.end('authentication required\n');
        return;
      }
    }
    serveCgi(backend, root, req, res, user);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === 'string')
    throw new GitServerError('the Git server did not bind a TCP port', {});
  const port = address.port;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    port,
    root,
    get requestCount() {
      return requestCount;
    },
    repoUrl: (name) => `${baseUrl}/${name}`,
    createBareRepo: (name, defaultBranch = 'main') => {
      const dir = path.join(root, name);
      const r = spawnSync('git', ['init', '--quiet', '--bare', `--initial-branch=${defaultBranch}`, dir], {
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new GitServerError('git init --bare failed', { name, stderr: r.stderr });
      return dir;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
