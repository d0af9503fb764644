/**
 * The e2e fleet repository: its files (a drydock.yaml, two ScalingGroups, two NodeImages, the
 * AutoscalingStrategy) and a bare repository on a real Git server that tests push to.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { startTestGitServer, git, gitEnv, withUser, TEST_USER, type GitServer } from '../support/git-server.js';
import type { GitServerUser } from '../../src/sandbox/git-server.js';

/** A file's new content: text, bytes, or a symlink to `symlink`; null deletes it. */
export type FleetEntry = string | Uint8Array | { readonly symlink: string } | null;

export const IMAGE_V1 = 'registry.example/node-os:v1.0.0';
export const IMAGE_V2 = 'registry.example/node-os:v2.0.0';
export const IMAGE_V3 = 'registry.example/node-os:v3.0.0';
export const IMAGE_V4 = 'registry.example/node-os:v4.0.0';

export function rolloutYaml(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    maxSurge: 1,
    maxUnavailable: 1,
    concurrency: 1,
    joinTimeout: '20s',
    healthGate: { minReadySeconds: 1 },
    drain: { timeoutSeconds: 60, onTimeout: 'halt', ignoreDaemonSets: true, deleteEmptyDirData: true },
    approval: { required: 'none' },
    ...overrides,
  };
}

/** One drydock.dev/v1alpha1 spec as YAML. */
export function specDoc(kind: string, name: string, spec: Record<string, unknown>): string {
  return stringify({ apiVersion: 'drydock.dev/v1alpha1', kind, metadata: { name }, spec });
}

const doc = specDoc;

/** drydock.yaml of a fleet whose specs live under ops/ (the node-operation suites). */
export const OPS_REPO_CONFIG = stringify({
  apiVersion: 'drydock.dev/v1alpha1',
  kind: 'RepoConfig',
  cluster: 'e2e',
  budget: { maxUnavailable: 2 },
  paths: ['ops'],
  statusBranch: 'drydock/status',
});

/** The fleet repository's files, for a worker and a control-plane image. */
export function fleetFiles(opts: {
  worker: string;
  controlPlane: string;
  workerRollout?: Record<string, unknown>;
  autoscaler?: boolean;
}): Record<string, string> {
  const files: Record<string, string> = {
    'drydock.yaml': stringify({
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'RepoConfig',
      cluster: 'e2e',
      budget: { maxUnavailable: 2 },
      defaults: { rollout: rolloutYaml() },
      paths: ['clusters', 'images'],
      statusBranch: 'drydock/status',
    }),
    'clusters/workers.yaml': doc('ScalingGroup', 'workers', {
      provider: 'sim',
      groupId: 'workers',
      nodeImage: 'worker',
      role: 'worker',
      autoscaling: true,
    }),
    'clusters/control-plane.yaml': doc('ScalingGroup', 'control-plane', {
      provider: 'sim',
      groupId: 'control-plane',
      nodeImage: 'control-plane',
      role: 'control-plane',
      autoscaling: false,
    }),
    'images/worker.yaml': doc('NodeImage', 'worker', {
      image: opts.worker,
      strategy: 'replace',
      rollout: rolloutYaml(opts.workerRollout),
    }),
    'images/control-plane.yaml': doc('NodeImage', 'control-plane', {
      image: opts.controlPlane,
      strategy: 'replace',
      rollout: rolloutYaml(),
    }),
  };
  if (opts.autoscaler !== false) {
    files['clusters/autoscaler.yaml'] = doc('AutoscalingStrategy', 'cluster-autoscaler', {
      enabled: true,
      deploymentName: 'cluster-autoscaler',
      deploymentNamespace: 'kube-system',
    });
  }
  return files;
}

export interface FleetRepo {
  readonly url: string;
  /** The bare repository on the server. */
  readonly bare: string;
  /** A file of the status branch, or undefined when absent. */
  statusFile(file: string, branch?: string): Promise<string | undefined>;
  readonly server: GitServer;
  /** Writes (or with null deletes) files, commits and pushes; resolves to the commit id. */
  push(files: Readonly<Record<string, FleetEntry>>, message: string): Promise<string>;
  head(): Promise<string>;
  close(): Promise<void>;
}

/** `users` may read and push besides TEST_USER (who pushes here). */
export async function startFleetRepo(
  initial: Record<string, string>,
  users: readonly GitServerUser[] = [],
): Promise<FleetRepo> {
  const server = await startTestGitServer([TEST_USER, ...users]);
  server.createBareRepo('fleet.git', 'main');
  const url = server.repoUrl('fleet.git');
  const work = mkdtempSync(path.join(tmpdir(), 'drydock-e2e-work-'));
  let tick = 0;
  await git(work, ['init', '-q', '-b', 'main']);
  await git(work, ['remote', 'add', 'origin', withUser(url)]);
  const push = async (files: Readonly<Record<string, FleetEntry>>, message: string): Promise<string> => {
    for (const [file, content] of Object.entries(files)) {
      const abs = path.join(work, file);
      rmSync(abs, { force: true });
      if (content === null) continue;
      mkdirSync(path.dirname(abs), { recursive: true });
      if (typeof content === 'object' && 'symlink' in content) symlinkSync(content.symlink, abs);
      else writeFileSync(abs, content);
    }
    tick += 1;
    await git(work, ['add', '-A'], gitEnv(tick));
    await git(work, ['commit', '-q', '-m', message], gitEnv(tick));
    await git(work, ['push', '-q', 'origin', 'HEAD:main'], gitEnv(tick));
    return git(work, ['rev-parse', 'HEAD']);
  };
  await push(initial, 'fleet: initial specs');
  const bare = path.join(server.root, 'fleet.git');
  return {
    url,
    bare,
    statusFile: async (file, branch = 'drydock/status') => {
      try {
        return await git(bare, ['--git-dir', bare, 'show', `${branch}:${file}`]);
      } catch {
        return undefined;
      }
    },
    server,
    push,
    head: () => git(work, ['rev-parse', 'HEAD']),
    close: async () => {
      await server.stop();
      rmSync(work, { recursive: true, force: true });
    },
  };
}
