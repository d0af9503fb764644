// Mocha helpers for tests against a real control plane (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, KWOK).
//
//   import { useControlPlane, eventually } from '../support/control-plane.js';
//   describe('x', function () {
//     const cp = useControlPlane();          // one control plane for this describe block
//     it('...', async () => { const kc = cp().adminKubeConfig(); ... });
//   });
//
// The binaries come from DRYDOCK_K8S_BIN / KUBEBUILDER_ASSETS / the build cache (run
// `bash scripts/k8s-binaries.sh`; `npm test` does). DRYDOCK_SKIP_CONTROL_PLANE=1 skips such
// suites instead of failing them when the binaries are not there; DRYDOCK_UNIT_ONLY=1 always
// skips them (see unit-only.ts).
import { ApiException, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

import {
  startControlPlane,
  resolveBinDir,
  type ControlPlane,
  type ControlPlaneOptions,
} from '../../src/sandbox/control-plane/index.js';
import { unitOnly } from './unit-only.js';

export { fakeNode, type ControlPlane } from '../../src/sandbox/control-plane/index.js';

export interface UseControlPlaneOptions extends ControlPlaneOptions {
  /** before-hook timeout, ms (default 180 000: a loaded 2-core CI machine) */
  startTimeoutMs?: number;
}

/** Starts one control plane in `before`, stops it in `after`; returns a getter for it. */
export function useControlPlane(opts: UseControlPlaneOptions = {}): () => ControlPlane {
  let cp: ControlPlane | undefined;
  const { startTimeoutMs = 180_000, ...cpOpts } = opts;
  before(async function () {
    this.timeout(startTimeoutMs);
    if (unitOnly()) this.skip();
    if (process.env.DRYDOCK_SKIP_CONTROL_PLANE === '1') {
      try {
        resolveBinDir();
      } catch {
        this.skip();
      }
    }
    const lines: string[] = [];
    cp = await startControlPlane({
      log: cpOpts.log ?? ((msg, fields) => lines.push(`${msg} ${JSON.stringify(fields ?? {})}`)),
      ...cpOpts,
    });
    // one line per suite, so start-up time is visible in every test run
    process.stderr.write(`      (control plane ready in ${cp.startupMs} ms at ${cp.server})\n`);
  });
  after(async function () {
    this.timeout(60_000);
    await cp?.stop();
    cp = undefined;
  });
  return () => {
    if (!cp) throw new Error('the control plane is not running (did the before hook fail?)');
    return cp;
  };
}

/**
 * Retries `fn` until it returns without throwing (and, if it returns a value, until that is
 * not undefined/false); fails after timeoutMs with the last error and `what`.
 */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  { timeoutMs = 30_000, intervalMs = 250 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const why = last instanceof Error ? `: ${last.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Runs a read-modify-write `fn` again while the API server answers 409 Conflict, as any client
 * that writes an object a controller also writes must (the object changed between the read and
 * the write). Gives up after `attempts` conflicts with the last one.
 */
export async function retryOnConflict<T>(fn: () => Promise<T>, attempts = 10): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (statusOf(err) !== 409 || i >= attempts) throw err;
    }
  }
}

/** HTTP status of a client-node error (ApiException), or undefined. */
export function statusOf(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

/** Waits until the Node `name` reports Ready=True. */
export async function waitNodeReady(kc: KubeConfig, name: string, timeoutMs = 30_000): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await eventually(
    `node ${name} Ready`,
    async () => {
      const node = await core.readNode({ name });
      return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    },
    { timeoutMs },
  );
}
