/**
 * moto, the AWS service emulator, as a local server for one describe block: started on a free
 * loopback port, stopped afterwards. The binary comes from DRYDOCK_MOTO_SERVER (scripts/test.sh
 * sets it) or from scripts/moto.sh (installs into the cache once).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from './control-plane.js';
import { unitOnly } from './unit-only.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface Moto {
  readonly endpoint: string;
  /** Forget every resource (moto's reset API), so each test starts from an empty account. */
  reset(): Promise<void>;
}

/** Static credentials moto accepts; no real account is ever touched. */
export const MOTO_CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' } as const;
export const MOTO_REGION = 'eu-central-1';

/**
 * The environment a drydock child's AWS SDK reads its default chain from: moto's endpoint and
 * region, and `credentials` (moto's own by default; a test of secrets passes canaries).
 */
export function motoSdkEnv(
  endpoint: string,
  credentials: { AWS_ACCESS_KEY_ID: string; AWS_SECRET_ACCESS_KEY: string } = {
    AWS_ACCESS_KEY_ID: MOTO_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: MOTO_CREDENTIALS.secretAccessKey,
  },
): NodeJS.ProcessEnv {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_REGION: MOTO_REGION,
    ...credentials,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}

function motoServerBinary(): string {
  const fromEnv = process.env['DRYDOCK_MOTO_SERVER'];
  if (fromEnv) return fromEnv;
  return execFileSync('bash', [path.join(ROOT, 'scripts', 'moto.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Starts moto_server before the block's tests and stops it after them. */
export function useMoto(): () => Moto {
  let proc: ChildProcess | undefined;
  let moto: Moto | undefined;
  before(async function () {
    this.timeout(300_000);
    if (unitOnly()) this.skip();
    const binary = motoServerBinary();
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    const output: string[] = [];
    proc = spawn(binary, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    proc.stdout?.on('data', (c: Buffer) => output.push(c.toString()));
    proc.stderr?.on('data', (c: Buffer) => output.push(c.toString()));
    try {
      await eventually('moto_server answers', async () => (await fetch(`${endpoint}/moto-api/`)).ok, {
        timeoutMs: 60_000,
      });
    } catch (err) {
      throw new Error(`moto_server did not start: ${String(err)}\n${output.join('').slice(-2000)}`);
    }
    moto = {
      endpoint,
      reset: async () => {
        const r = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
        if (!r.ok) throw new Error(`moto reset: HTTP ${r.status}`);
      },
    };
  });
  after(async () => {
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc?.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
  });
  return () => {
    if (!moto) throw new Error('moto is not running (useMoto() in a describe block)');
    return moto;
  };
}
