/**
 * Canary secrets and the outputs they must never reach: the service's log lines, the cluster's
 * Events, the status branch's history (every file and message), errors.yaml and metrics, and
 * what `drydock plan` and `drydock status` print, errors included. Shared by the suites that
 * plant them (the running service on the sim cloud, the AWS provider against moto).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { git } from '../support/git-server.js';
import { DRYDOCK_BIN, type DrydockChild } from './drydock-child.js';
import type { FleetRepo } from './fleet.js';

const run = promisify(execFile);

export const CANARY = {
  token: 'CANARY-git-token-5d1f0c7e',
  password: 'CANARY-git-password-91b2',
  webhook: 'CANARY-webhook-secret-4a77',
  awsKey: 'AKIACANARY0000000042',
  awsSecret: 'CANARY-aws-secret-key-e3c9/7Zq',
};

/** The AWS SDK's default chain reads these; moto accepts any key, so the canaries are real credentials there. */
export const CANARY_AWS_ENV = { AWS_ACCESS_KEY_ID: CANARY.awsKey, AWS_SECRET_ACCESS_KEY: CANARY.awsSecret };

/** Everything a running service left behind: its replicas' lines, Events, the status branch, errors.yaml, metrics. */
export async function serviceOutputs(
  kc: KubeConfig,
  repo: FleetRepo,
  children: readonly DrydockChild[],
): Promise<string[]> {
  const outputs = children.flatMap((c) => c.lines);
  outputs.push(JSON.stringify((await kc.makeApiClient(CoreV1Api).listEventForAllNamespaces()).items));
  outputs.push(await git(repo.bare, ['--git-dir', repo.bare, 'log', '-p', '--format=%H%n%B', 'drydock/status']));
  outputs.push((await repo.statusFile('errors.yaml')) ?? '');
  for (const child of children) outputs.push(await (await fetch(`${await child.url}/metrics`)).text());
  return outputs;
}

/** A drydock command's stdout and stderr, and its error message when it fails. */
export async function drydockCli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const r = await run(process.execPath, [DRYDOCK_BIN, ...args], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    return r.stdout + r.stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}`;
  }
}

/** Where each canary appears (a wrong variant built on it too), as "name in output i"; empty when nowhere. */
export function findCanaries(outputs: readonly string[], canaries: Record<string, string> = CANARY): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(canaries))
    for (const [i, out] of outputs.entries()) if (out.includes(value)) found.push(`${name} in output ${i}`);
  process.stderr.write(
    `      (${outputs.length} outputs, ${outputs.reduce((n, o) => n + o.length, 0)} characters searched for ${Object.keys(canaries).length} canaries: ${found.length} found)\n`,
  );
  return found;
}
