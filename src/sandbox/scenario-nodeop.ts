/**
 * `drydock sandbox --scenario nodeop`: the smoke test of node operations. It pushes a NodeOp
 * that runs a Job on every worker and reboots it after the Job succeeded, follows it on the
 * live snapshots and, from the API server's own watch, every Job and reboot pod drydock
 * creates for it; when drydock reports Complete it checks that each worker ran its Job
 * exactly once, rebooted exactly once (its bootID changed once) and is back in service.
 * The checks and the summary are pure functions of what was observed.
 */
import { BatchV1Api, CoreV1Api, makeInformer, type KubeConfig, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { shortCommit } from '../commit.js';
import { plural } from '../words.js';
import { operationLabel } from '../protocol/jobs.js';
import { JOB_LABELS } from '../protocol/keys.js';
import { SandboxError } from './errors.js';
import { commitSpecFile } from './fleet-repo.js';
import { guard, sameCommit, type ScenarioDeps } from './scenario.js';
import { formatDuration, gitSyncState, type NodeView, type SandboxSnapshot, type SpecView } from './view.js';

export const NODEOP_NAME = 'sandbox-reboot';
export const NODEOP_FILE = `operations/${NODEOP_NAME}.yaml`;
/** Two nodes at a time keeps the run to a few minutes and still shows concurrency at work. */
export const NODEOP_CONCURRENCY = 2;

/** The NodeOp the scenario pushes: every worker, cordoned, a Job, then a reboot. */
export function nodeOpSpecYaml(): string {
  return [
    '# Pushed by `drydock sandbox --scenario nodeop`: a Job on every worker, then a reboot.',
    'apiVersion: drydock.dev/v1alpha1',
    'kind: NodeOp',
    'metadata:',
    `  name: ${NODEOP_NAME}`,
    'spec:',
    '  nodeSelector:',
    '    matchLabels:',
    '      node-role.kubernetes.io/worker: ""',
    '  image: busybox:1.36',
    '  command: ["sh", "-c", "echo patched"]',
    '  cordon: true',
    '  rebootOnSuccess: true',
    '  backoffLimit: 0',
    `  concurrency: ${NODEOP_CONCURRENCY}`,
    '  stopOnFailure: true',
    '',
  ].join('\n');
}

/** One Job or pod drydock created for the NodeOp, as the API server last showed it. */
export interface OperationObject {
  readonly uid: string;
  readonly kind: 'Job' | 'Pod';
  readonly name: string;
  /** The node it is pinned to. */
  readonly node: string;
  /** Its drydock.dev/step: operation, before, after or reboot. */
  readonly step: string;
  readonly succeeded: boolean;
  readonly failed: boolean;
}

export function jobObject(job: V1Job): OperationObject {
  return {
    uid: job.metadata?.uid ?? '',
    kind: 'Job',
    name: job.metadata?.name ?? '',
    node: job.spec?.template.spec?.nodeName ?? '',
    step: job.metadata?.labels?.[JOB_LABELS.step] ?? '',
    succeeded: (job.status?.succeeded ?? 0) > 0,
    failed: (job.status?.conditions ?? []).some((c) => c.type === 'Failed' && c.status === 'True'),
  };
}

export function podObject(pod: V1Pod): OperationObject {
  return {
    uid: pod.metadata?.uid ?? '',
    kind: 'Pod',
    name: pod.metadata?.name ?? '',
    node: pod.spec?.nodeName ?? '',
    step: pod.metadata?.labels?.[JOB_LABELS.step] ?? '',
    succeeded: pod.status?.phase === 'Succeeded',
    failed: pod.status?.phase === 'Failed',
  };
}

/**
 * What the scenario saw over the run: every distinct bootID of each worker, in order, every
 * object drydock created for the operation (by uid: a Job made twice is two entries, even when
 * the first was cleaned up long ago), and the most workers held by the operation at once. The
 * operation is the NodeOp unless another (Kind/name) is given: the Bottlerocket scenario's
 * NodeImage.
 */
export class NodeOpLedger {
  readonly boots = new Map<string, string[]>();
  private readonly objects = new Map<string, OperationObject>();
  private mostInFlight = 0;

  constructor(
    readonly workers: readonly NodeView[],
    readonly operation = `NodeOp/${NODEOP_NAME}`,
  ) {
    this.observeNodes(workers);
  }

  observeNodes(nodes: readonly NodeView[]): void {
    for (const n of nodes) {
      if (!this.workers.some((w) => w.name === n.name) || n.bootID === undefined) continue;
      const seen = this.boots.get(n.name) ?? [];
      if (seen[seen.length - 1] !== n.bootID) this.boots.set(n.name, [...seen, n.bootID]);
    }
    const held = nodes.filter((n) => n.operation === this.operation).length;
    this.mostInFlight = Math.max(this.mostInFlight, held);
  }

  /** A later view of an object keeps what an earlier one showed: a success is never forgotten. */
  observeObject(o: OperationObject): void {
    const before = this.objects.get(o.uid);
    this.objects.set(o.uid, {
      ...o,
      succeeded: o.succeeded || before?.succeeded === true,
      failed: o.failed || before?.failed === true,
    });
  }

  get seen(): readonly OperationObject[] {
    return [...this.objects.values()];
  }

  get maxInFlight(): number {
    return this.mostInFlight;
  }
}

export interface NodeOpObservation {
  readonly nodes: readonly NodeView[];
  readonly specs: readonly SpecView[];
  readonly statusSource?: string;
  readonly objects: readonly OperationObject[];
  /** node → its distinct bootIDs in the order seen, the first from before the push. */
  readonly boots: ReadonlyMap<string, readonly string[]>;
}

/** The problems of one worker: its Job, its reboot, and how the operation left it. */
export function workerProblems(name: string, observed: NodeOpObservation): string[] {
  const problems: string[] = [];
  const jobs = observed.objects.filter((o) => o.kind === 'Job' && o.node === name && o.step === 'operation');
  if (jobs.length !== 1) problems.push(`node ${name} had ${plural(jobs.length, 'operation Job')}, expected 1`);
  for (const j of jobs) if (!j.succeeded) problems.push(`node ${name}: Job ${j.name} did not succeed`);
  const reboots = observed.objects.filter((o) => o.kind === 'Pod' && o.node === name && o.step === 'reboot');
  if (reboots.length !== 1) problems.push(`node ${name} had ${plural(reboots.length, 'reboot pod')}, expected 1`);
  const changes = (observed.boots.get(name)?.length ?? 0) - 1;
  if (changes !== 1) problems.push(`node ${name} rebooted ${plural(Math.max(changes, 0), 'time')}, expected once`);
  const n = observed.nodes.find((v) => v.name === name);
  if (n === undefined) return [...problems, `node ${name} is gone`];
  if (n.unschedulable) problems.push(`node ${name} is still cordoned`);
  if (!n.ready) problems.push(`node ${name} is not Ready`);
  // drydock clears the phase of a node it finished with; Done is the other way to say so.
  if (n.phase !== undefined && n.phase !== 'Done')
    problems.push(`node ${name} is in phase ${n.phase}${n.reason === undefined ? '' : `: ${n.reason}`}`);
  if (n.operation !== undefined) problems.push(`node ${name} is still locked by ${n.operation}`);
  return problems;
}

/**
 * Everything wrong with the end state, in words; empty when the NodeOp is done: the status
 * branch reports Complete n/n for the NodeOp commit, and each worker ran one Job that
 * succeeded, had one reboot pod, changed its bootID once, and is Ready, uncordoned and free.
 * No node outside the workers got anything.
 */
export function nodeOpProblems(workers: readonly string[], commit: string, observed: NodeOpObservation): string[] {
  const problems: string[] = [];
  if (!sameCommit(observed.statusSource, commit)) {
    problems.push(
      `the status branch reports on ${observed.statusSource ?? 'no commit'}, not on the NodeOp commit ${shortCommit(commit)}`,
    );
  }
  const spec = observed.specs.find((s) => s.kind === 'NodeOp' && s.name === NODEOP_NAME);
  if (spec === undefined) problems.push(`the status branch has no status for NodeOp/${NODEOP_NAME}`);
  else if (spec.phase !== 'Complete' || spec.done !== workers.length || spec.total !== workers.length) {
    problems.push(
      `NodeOp/${NODEOP_NAME} is ${spec.phase} ${spec.done}/${spec.total} on the status branch, expected Complete ${workers.length}/${workers.length}`,
    );
  }
  for (const w of workers) problems.push(...workerProblems(w, observed));
  const strays = observed.objects.filter((o) => !workers.includes(o.node));
  for (const o of strays) problems.push(`${o.kind} ${o.name} ran on ${o.node || 'no node'}, which is not a worker`);
  return problems;
}

/** What the NodeOp is waiting for now, in words. */
export function describeNodeOpWaiting(snapshot: SandboxSnapshot, commit: string): string {
  const parts: string[] = [];
  if (snapshot.git !== undefined && !sameCommit(snapshot.git.statusSource, commit))
    parts.push(gitSyncState(snapshot.git));
  const s = snapshot.specs.find((v) => v.kind === 'NodeOp' && v.name === NODEOP_NAME);
  if (s === undefined) parts.push(`no status for NodeOp/${NODEOP_NAME} yet`);
  else if (s.phase !== 'Complete' || s.done !== s.total) {
    parts.push(
      `NodeOp/${NODEOP_NAME} ${s.phase} ${s.done}/${s.total}${s.waitingFor === undefined ? '' : ` (waiting: ${s.waitingFor})`}`,
    );
  }
  const held = snapshot.nodes.filter((n) => n.operation !== undefined).map((n) => `${n.name} ${n.phase ?? ''}`);
  if (held.length > 0) parts.push(`nodes in flight: ${held.join(', ')}`);
  return parts.length > 0 ? parts.join('; ') : 'the final checks';
}

/** drydock has reported on the head and nothing runs: the examples' own operations are done or waiting. */
export function settled(snapshot: SandboxSnapshot): boolean {
  const head = snapshot.git?.head;
  return (
    head !== undefined &&
    sameCommit(snapshot.git?.statusSource, head) &&
    !snapshot.specs.some((s) => s.phase === 'Progressing') &&
    snapshot.nodes.every((n) => n.operation === undefined && !n.unschedulable)
  );
}

export interface NodeOpSummary {
  readonly commit: string;
  readonly durationMs: number;
  readonly workers: number;
  readonly maxInFlight: number;
}

export function nodeOpSummaryLines(s: NodeOpSummary): string[] {
  return [
    `nodeop complete in ${formatDuration(s.durationMs)}: NodeOp/${NODEOP_NAME} ran its Job once and rebooted once on each of ${s.workers} workers, at most ${s.maxInFlight} at a time (commit ${shortCommit(s.commit)})`,
  ];
}

export type NodeOpDeps = Omit<ScenarioDeps, 'groups' | 'cloud'> & {
  /** The worker scaling groups: their nodes are the NodeOp's targets. */
  readonly workerGroups: readonly string[];
  /** Starts feeding the ledger every Job and pod drydock makes for the NodeOp; resolves with its stop. */
  watch(ledger: NodeOpLedger): Promise<() => Promise<void>>;
};

/** Watches the Jobs and pods labelled with the ledger's operation from the API server, until stopped. */
export async function watchOperation(kc: KubeConfig, ledger: NodeOpLedger): Promise<() => Promise<void>> {
  const [kind = '', name = ''] = ledger.operation.split('/');
  const labelSelector = `${JOB_LABELS.operation}=${operationLabel({ kind, name, revision: '' })}`;
  const batch = kc.makeApiClient(BatchV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const jobs = makeInformer<V1Job>(
    kc,
    '/apis/batch/v1/jobs',
    () => batch.listJobForAllNamespaces({ labelSelector }),
    labelSelector,
  );
  const pods = makeInformer<V1Pod>(
    kc,
    '/api/v1/pods',
    () => core.listPodForAllNamespaces({ labelSelector }),
    labelSelector,
  );
  for (const event of ['add', 'update', 'delete'] as const) {
    jobs.on(event, (j) => ledger.observeObject(jobObject(j)));
    pods.on(event, (p) => ledger.observeObject(podObject(p)));
  }
  // A watch that breaks restarts with a fresh list (a Job made twice still shows as two uids);
  // once stopped, never again, or it would keep the process alive after the control plane left.
  let stopped = false;
  for (const informer of [jobs, pods] as const) {
    informer.on('error', () => {
      if (!stopped) setTimeout(() => void (stopped ? undefined : informer.start().catch(() => undefined)), 1000);
    });
  }
  await Promise.all([jobs.start(), pods.start()]);
  return async () => {
    stopped = true;
    await Promise.all([jobs.stop(), pods.stop()]);
  };
}

function timeout(deps: NodeOpDeps, step: string, waitingFor: string, problems: readonly string[]): SandboxError {
  return new SandboxError(
    'Timeout',
    `the NodeOp scenario did not finish within ${formatDuration(deps.timeoutMs)}; waiting for ${waitingFor}`,
    {
      step,
      waitingFor,
      timeoutSeconds: Math.round(deps.timeoutMs / 1000),
      ...(problems.length > 0 ? { problems: [...problems] } : {}),
      log: deps.log,
    },
  );
}

/** Runs the NodeOp to the end; resolves with the summary or rejects naming what went wrong. */
export async function runNodeOpScenario(deps: NodeOpDeps): Promise<NodeOpSummary> {
  const now = deps.now ?? Date.now;
  const deadline = now() + deps.timeoutMs;

  // 1. A settled start: drydock reported on the head, and the examples' own operations are done.
  deps.setHeadline('scenario nodeop: waiting for drydock to settle on the current specs');
  let snapshot = await deps.nextSnapshot();
  while (!settled(snapshot)) {
    guard(deps, 'the baseline wait');
    if (now() > deadline) {
      throw timeout(deps, 'wait for a settled start', gitSyncOrBusy(snapshot), []);
    }
    snapshot = await deps.nextSnapshot();
  }

  // 2. The NodeOp, pushed as a person would, with the watch already on so no Job goes unseen.
  const workers = snapshot.nodes.filter((n) => n.group !== undefined && deps.workerGroups.includes(n.group));
  const ledger = new NodeOpLedger(workers);
  const stopWatch = await deps.watch(ledger);
  try {
    const commit = commitSpecFile(
      deps.bare,
      deps.workDir,
      NODEOP_FILE,
      nodeOpSpecYaml(),
      `Run NodeOp/${NODEOP_NAME} on every worker, with a reboot`,
    );
    const pushedAt = now();
    deps.setHeadline(
      `scenario nodeop: NodeOp/${NODEOP_NAME} on ${workers.length} workers, ${NODEOP_CONCURRENCY} at a time`,
    );

    // 3. Follow it until the checks pass, it halts, or time runs out.
    let problems: string[] = [];
    for (;;) {
      snapshot = await deps.nextSnapshot();
      guard(deps, 'the rollout');
      ledger.observeNodes(snapshot.nodes);
      const reported = sameCommit(snapshot.git?.statusSource, commit);
      const refused = snapshot.git?.refused;
      if (refused !== undefined && sameCommit(refused.commit, commit)) {
        throw new SandboxError('CheckFailed', `drydock refused the NodeOp commit ${shortCommit(commit)}`, {
          step: 'the rollout',
          problems: [...refused.errors],
          log: deps.log,
        });
      }
      const spec = snapshot.specs.find((s) => s.kind === 'NodeOp' && s.name === NODEOP_NAME);
      if (reported && spec !== undefined && (spec.phase === 'Failed' || spec.phase === 'Halted')) {
        throw new SandboxError(
          'CheckFailed',
          `NodeOp/${NODEOP_NAME} is ${spec.phase}: ${spec.lastError ?? spec.waitingFor ?? 'no reason given'}`,
          {
            step: 'the rollout',
            problems: [`NodeOp/${NODEOP_NAME} ${spec.phase} ${spec.done}/${spec.total}`],
            log: deps.log,
          },
        );
      }
      if (reported && spec?.phase === 'Complete') {
        const source = snapshot.git?.statusSource;
        problems = nodeOpProblems(
          workers.map((w) => w.name),
          commit,
          {
            nodes: snapshot.nodes,
            specs: snapshot.specs,
            objects: ledger.seen,
            boots: ledger.boots,
            ...(source === undefined ? {} : { statusSource: source }),
          },
        );
        if (problems.length === 0) {
          return { commit, durationMs: now() - pushedAt, workers: workers.length, maxInFlight: ledger.maxInFlight };
        }
      }
      if (now() > deadline) {
        throw timeout(
          deps,
          'the rollout',
          problems.length > 0 ? 'the final checks to pass' : describeNodeOpWaiting(snapshot, commit),
          problems,
        );
      }
    }
  } finally {
    await stopWatch();
  }
}

function gitSyncOrBusy(snapshot: SandboxSnapshot): string {
  const busy = snapshot.specs.filter((s) => s.phase === 'Progressing').map((s) => `${s.kind}/${s.name} Progressing`);
  const held = snapshot.nodes.filter((n) => n.operation !== undefined || n.unschedulable).map((n) => n.name);
  return [
    ...(snapshot.git === undefined ? ['the repository'] : [gitSyncState(snapshot.git)]),
    ...busy,
    ...(held.length > 0 ? [`nodes in flight: ${held.join(', ')}`] : []),
  ].join('; ');
}
