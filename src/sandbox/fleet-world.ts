/**
 * The sandbox's fleet of two clusters, for `--scenario fleet`: one Git server holding a fleet
 * repository (a shared NodeImage, a ScalingGroup per cluster under clusters/<name>/, and
 * fleet/fleet.yaml with two stages and a short soak), and per cluster its own control plane,
 * sim cloud and drydock run with `--cluster <name>`. Each cluster's parts keep their state in
 * a folder of their own under the state directory (<state>/<name>/), and their processes are
 * named after it (sim-cloud-a, drydock-a), so their logs stay apart.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml, stringify } from 'yaml';
import {
  startDrydock,
  startSandboxControlPlane,
  startSandboxGitServer,
  startSimCloud,
  type DrydockProcess,
  type SandboxSettings,
  type SimCloudProcess,
  type StartContext,
} from './components.js';
import type { ControlPlane } from './control-plane/index.js';
import { SandboxError } from './errors.js';
import type { FleetGroup } from './fleet-groups.js';
import { fleetRepoPath, git, readBranch, readTree, seedFleetRepo, TRACKED_BRANCH } from './fleet-repo.js';
import type { GitServer } from './git-server.js';
import { writeSettings, type StateLayout } from './layout.js';
import type { StepHandle } from './monitor.js';
import type { ClusterSample, FleetHistory, FleetReport, FleetShape } from './scenario-fleet.js';
import { nodeViews, readNodes } from './snapshot.js';

/** Cluster a in the first stage, b in the second; a soak short enough for a smoke test, long enough to see. */
export const FLEET_SHAPE: FleetShape = {
  first: 'a',
  second: 'b',
  firstStage: 'first',
  nodeImage: 'worker',
  soakMs: 10_000,
  workers: 2,
};

const FLEET_IMAGE = 'registry.example/node-os:v1.0.0';
const NODE_IMAGE_FILE = 'images/worker.yaml';
const STATUS_FILE = `status/NodeImage/${FLEET_SHAPE.nodeImage}.yaml`;

export function fleetStatusBranch(cluster: string): string {
  return `drydock/status-${cluster}`;
}

/** The seed repository's files: path → text. */
export function fleetSeedFiles(shape: FleetShape = FLEET_SHAPE): Record<string, string> {
  const doc = (kind: string, name: string, spec: Record<string, unknown>): string =>
    stringify({ apiVersion: 'drydock.dev/v1alpha1', kind, metadata: { name }, spec });
  const group = doc('ScalingGroup', 'workers', {
    provider: 'sim',
    groupId: 'workers',
    nodeImage: shape.nodeImage,
    role: 'worker',
    autoscaling: false,
  });
  return {
    'drydock.yaml': stringify({
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'RepoConfig',
      budget: { maxUnavailable: 1 },
      paths: ['images', 'groups'],
    }),
    [NODE_IMAGE_FILE]: doc('NodeImage', shape.nodeImage, {
      image: FLEET_IMAGE,
      strategy: 'replace',
      rollout: {
        maxSurge: 1,
        maxUnavailable: 1,
        concurrency: 1,
        joinTimeout: '60s',
        healthGate: { minReadySeconds: 1 },
        drain: { timeoutSeconds: 60, onTimeout: 'halt', ignoreDaemonSets: true, deleteEmptyDirData: true },
        approval: { required: 'none' },
      },
    }),
    [`clusters/${shape.first}/groups/workers.yaml`]: group,
    [`clusters/${shape.second}/groups/workers.yaml`]: group,
    'fleet/fleet.yaml': stringify({
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'Fleet',
      metadata: { name: 'sandbox' },
      spec: {
        clusters: [{ name: shape.first }, { name: shape.second }],
        stages: [
          { name: shape.firstStage, clusters: [shape.first], soak: `${shape.soakMs / 1000}s`, tolerate: 0 },
          { name: 'second', clusters: [shape.second], tolerate: 0 },
        ],
      },
    }),
  };
}

/** A cluster's own folders under the state directory; logs, pids, Git and scratch space stay shared. */
export function memberLayout(layout: StateLayout, cluster: string): StateLayout {
  const root = path.join(layout.root, cluster);
  return {
    ...layout,
    controlPlane: path.join(root, 'control-plane'),
    cloud: path.join(root, 'cloud'),
    drydock: path.join(root, 'drydock'),
  };
}

/** What the fleet's start needs of the sandbox run: its steps on the screen, and keeping what it started. */
export interface FleetStarter {
  begin(title: string, detail?: string): StepHandle;
  finish(handle: StepHandle, detail?: string): void;
  /** Stopped on the way out, whatever the way out. */
  keep(part: ControlPlane | GitServer): void;
}

export interface FleetMember {
  readonly name: string;
  readonly controlPlane: ControlPlane;
  readonly kc: KubeConfig;
  readonly cloud: SimCloudProcess;
  readonly drydock: DrydockProcess;
}

export interface FleetWorld {
  readonly bare: string;
  readonly members: readonly FleetMember[];
}

export const FLEET_STEPS = {
  state: 'state directory',
  binaries: 'Kubernetes binaries',
  controlPlanes: 'control planes',
  git: 'fleet repository',
  clouds: 'sim clouds',
  drydocks: 'drydocks',
} as const;

/** The seed, written out and pushed as the repository's first commit (a resumed one must be a fleet). */
function seedRepository(layout: StateLayout): { readonly bare: string; readonly created: boolean } {
  const seedDir = mkdtempSync(path.join(layout.work, 'fleet-seed-'));
  try {
    for (const [file, text] of Object.entries(fleetSeedFiles())) {
      mkdirSync(path.dirname(path.join(seedDir, file)), { recursive: true });
      writeFileSync(path.join(seedDir, file), text);
    }
    const seeded = seedFleetRepo(layout.gitRoot, seedDir, layout.work);
    const bare = fleetRepoPath(layout.gitRoot);
    if (!readTree(bare, TRACKED_BRANCH, 'fleet/fleet.yaml').has('fleet/fleet.yaml'))
      throw new SandboxError(
        'StepFailed',
        `the fleet repository in ${layout.gitRoot} has no fleet/fleet.yaml (it was made for another scenario); run with --reset`,
        { step: FLEET_STEPS.git },
      );
    return { bare, created: seeded.created };
  } finally {
    rmSync(seedDir, { recursive: true, force: true });
  }
}

/** Starts the fleet: control planes one after the other, then Git, then each cluster's sim cloud and drydock. */
export async function startFleetWorld(
  starter: FleetStarter,
  ctx: StartContext,
  settings: SandboxSettings,
  binDir: string,
  timeoutMs: number,
): Promise<FleetWorld> {
  const names = [FLEET_SHAPE.first, FLEET_SHAPE.second];
  const ctxOf = (name: string): StartContext => ({ ...ctx, layout: memberLayout(ctx.layout, name) });
  for (const name of names) {
    const l = ctxOf(name).layout;
    for (const dir of [l.controlPlane, l.cloud, l.drydock]) mkdirSync(dir, { recursive: true });
  }
  let step = starter.begin(FLEET_STEPS.controlPlanes, names.join(', '));
  const planes: ControlPlane[] = [];
  for (const name of names) {
    // One at a time: each picks its free ports, and two picking at once could pick the same.
    const cp = await startSandboxControlPlane(ctxOf(name), binDir);
    starter.keep(cp);
    planes.push(cp);
  }
  starter.finish(step, planes.map((cp, i) => `${names[i] ?? ''} ${cp.server}`).join(', '));

  step = starter.begin(FLEET_STEPS.git);
  const { bare, created } = seedRepository(ctx.layout);
  const gitServer = await startSandboxGitServer(ctx, settings);
  starter.keep(gitServer);
  writeSettings(ctx.layout, { ...settings, gitPort: gitServer.port });
  starter.finish(step, `${gitServer.repoUrl('fleet.git')}${created ? ' (new)' : ' (resumed)'}`);

  const group: FleetGroup = {
    groupId: 'workers',
    scalingGroup: 'workers',
    nodeImage: FLEET_SHAPE.nodeImage,
    role: 'worker',
    image: FLEET_IMAGE,
    size: FLEET_SHAPE.workers,
  };
  step = starter.begin(FLEET_STEPS.clouds);
  const clouds = await Promise.all(
    names.map((name, i) => {
      const cp = planes[i] as ControlPlane;
      const c = ctxOf(name);
      return startSimCloud(c, cp.adminKubeConfig(), cp.kubeconfigPath, [group], step, timeoutMs, `sim-cloud-${name}`);
    }),
  );
  starter.finish(step, clouds.map((c, i) => `${names[i] ?? ''} ${c.url} workers ×${group.size}`).join(', '));

  step = starter.begin(FLEET_STEPS.drydocks);
  const drydocks = await Promise.all(
    names.map((name, i) =>
      startDrydock(
        ctxOf(name),
        {
          repoUrl: gitServer.repoUrl('fleet.git'),
          user: settings.gitUser,
          kubeconfigPath: (planes[i] as ControlPlane).kubeconfigPath,
          simCloudUrl: (clouds[i] as SimCloudProcess).url,
          cluster: name,
        },
        timeoutMs,
      ),
    ),
  );
  starter.finish(step, drydocks.map((d, i) => `--cluster ${names[i] ?? ''} ${d.url}`).join(', '));
  const members = names.map((name, i) => {
    const controlPlane = planes[i] as ControlPlane;
    return {
      name,
      controlPlane,
      kc: controlPlane.adminKubeConfig(),
      cloud: clouds[i] as SimCloudProcess,
      drydock: drydocks[i] as DrydockProcess,
    };
  });
  return { bare, members };
}

function report(text: string | undefined): FleetReport | undefined {
  if (text === undefined) return undefined;
  const doc = (parseYaml(text) ?? {}) as Record<string, unknown>;
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const phase = str(doc.phase);
  const revision = str(doc.revision);
  const waitingFor = str(doc.waitingFor);
  const lastError = str(doc.lastError);
  const progress = (doc.progress ?? {}) as Record<string, unknown>;
  const done = typeof progress.done === 'number' ? progress.done : undefined;
  const total = typeof progress.total === 'number' ? progress.total : undefined;
  return {
    ...(done === undefined ? {} : { done }),
    ...(total === undefined ? {} : { total }),
    ...(phase === undefined ? {} : { phase }),
    ...(revision === undefined ? {} : { revision }),
    ...(waitingFor === undefined ? {} : { waitingFor }),
    ...(lastError === undefined ? {} : { lastError }),
  };
}

/** One cluster as a person reads it: `kubectl get nodes`, and `git show` of its status branch's head. */
export async function sampleCluster(bare: string, member: FleetMember): Promise<ClusterSample> {
  const branch = fleetStatusBranch(member.name);
  const head = readBranch(bare, branch);
  const nodes = nodeViews(await readNodes(member.kc));
  const source = head?.trailers['Drydock-Source'];
  const r = head === undefined ? undefined : report(readTree(bare, branch, STATUS_FILE).get(STATUS_FILE));
  return {
    nodes,
    ...(source === undefined ? {} : { statusSource: source }),
    ...(r === undefined ? {} : { report: r }),
  };
}

/** Each commit of a status branch, oldest first: its commit time (ms) and its report on the NodeImage. */
function branchReports(bare: string, cluster: string): { readonly at: number; readonly report?: FleetReport }[] {
  const step = 'read the status branches';
  const branch = fleetStatusBranch(cluster);
  const log = git(['--git-dir', bare, 'log', '--reverse', '--format=%H %ct', `refs/heads/${branch}`], { step });
  return log
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      const [oid = '', ct = '0'] = line.split(' ');
      let text: string | undefined;
      try {
        text = git(['--git-dir', bare, 'show', `${oid}:${STATUS_FILE}`], { step });
      } catch {
        text = undefined; // no status for the spec in that commit
      }
      const r = report(text);
      return { at: Number(ct) * 1000, ...(r === undefined ? {} : { report: r }) };
    });
}

/** What the two status branches' histories say of the change at `revision`. */
export function fleetHistory(bare: string, revision: string, soakEnd: number | undefined): FleetHistory {
  const first = branchReports(bare, FLEET_SHAPE.first).find(
    (c) => c.report?.revision === revision && c.report.phase === 'Complete',
  );
  // Commit times are whole seconds: a commit of the soak's last second may already be after it.
  const before =
    soakEnd === undefined ? [] : branchReports(bare, FLEET_SHAPE.second).filter((c) => c.at < soakEnd - 1000);
  const reports = before.flatMap((c) => (c.report?.revision === revision ? [c.report] : []));
  return {
    ...(first === undefined ? {} : { firstCompleteAt: first.at }),
    secondBeforeSoakEnd: reports,
  };
}
