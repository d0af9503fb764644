/**
 * `drydock sandbox --scenario fleet`: the smoke test of a fleet of clusters. Two clusters, a
 * and b, each with its own control plane, sim cloud and drydock (`--cluster a`, `--cluster b`),
 * read one repository whose fleet file puts a in the first stage, with a short soak, and b in
 * the second. The scenario pushes a new image for the shared NodeImage and follows both from
 * outside, as a person would: the Nodes of each cluster and the two status branches. It checks
 * that a rolled first, that b said what it waited for (a to report the change Complete, then
 * the soak, counted from a's report), that b touched no node before the soak ended, and that
 * both ended on the new image with their branches saying Complete. The checks are pure
 * functions of what was observed.
 */
import { sameCommit, shortCommit } from '../commit.js';
import { SandboxError } from './errors.js';
import { commitImageChange, nextImage, readBranch, TRACKED_BRANCH } from './fleet-repo.js';
import { guard, type ScenarioDeps } from './scenario.js';
import { formatDuration, type NodeView } from './view.js';
import { delay } from './wait.js';

/** The fleet's shape: what the seed repository says and the checks expect. */
export interface FleetShape {
  /** The first stage's cluster, then the second's. */
  readonly first: string;
  readonly second: string;
  /** The first stage's name in the fleet file. */
  readonly firstStage: string;
  readonly nodeImage: string;
  readonly soakMs: number;
  /** Nodes per cluster. */
  readonly workers: number;
}

/** A cluster's status report on the shared NodeImage, from its status branch. */
export interface FleetReport {
  readonly phase?: string;
  readonly revision?: string;
  readonly waitingFor?: string;
  readonly lastError?: string;
  /** progress.done and progress.total: nodes done of the nodes the spec targets. */
  readonly done?: number;
  readonly total?: number;
}

/** One cluster as read at one moment: its Nodes and the newest commit of its status branch. */
export interface ClusterSample {
  readonly nodes: readonly NodeView[];
  /** Drydock-Source of the newest status commit. */
  readonly statusSource?: string;
  readonly report?: FleetReport;
}

/** What the status branches' histories say, read once the change is done everywhere. */
export interface FleetHistory {
  /** When the first cluster's branch first said the change Complete (commit time, ms). */
  readonly firstCompleteAt?: number;
  /** The second cluster's reports on the change in its branch's commits before the soak's end, oldest first. */
  readonly secondBeforeSoakEnd: readonly FleetReport[];
}

export interface FleetObservation {
  readonly commit: string;
  readonly image: string;
  readonly revision?: string;
  /** Every distinct waitingFor the second cluster reported for the change, in the order seen. */
  readonly secondWaits: readonly string[];
  /** When the second cluster's Nodes first showed drydock at work on the change (ms). */
  readonly secondFirstAction?: number;
  readonly first: ClusterSample;
  readonly second: ClusterSample;
  readonly history: FleetHistory;
}

/** The soak's end the second cluster named ("… soaks … until <ISO>"), in ms; undefined when it named none. */
export function soakEnd(shape: FleetShape, revision: string, waits: readonly string[]): number | undefined {
  const prefix = `fleet: stage ${shape.firstStage} soaks NodeImage/${shape.nodeImage} revision ${revision} until `;
  const said = waits.find((w) => w.startsWith(prefix));
  const at = said === undefined ? Number.NaN : Date.parse(said.slice(prefix.length));
  return Number.isFinite(at) ? at : undefined;
}

/** Whether drydock has started on a node of the change: holding it, cordoned, or already on the new image. */
export function actedOn(node: NodeView, image: string): boolean {
  return node.operation !== undefined || node.unschedulable || node.image === image;
}

function clusterProblems(name: string, sample: ClusterSample, o: FleetObservation, shape: FleetShape): string[] {
  const problems: string[] = [];
  const spec = `NodeImage/${shape.nodeImage}`;
  if (!sameCommit(sample.statusSource, o.commit))
    problems.push(
      `drydock/status-${name} reports on ${sample.statusSource ?? 'no commit'}, not on the image commit ${shortCommit(o.commit)}`,
    );
  if (sample.report?.phase !== 'Complete')
    problems.push(`${spec} is ${sample.report?.phase ?? 'absent'} on drydock/status-${name}, expected Complete`);
  if (o.revision !== undefined && sample.report?.revision !== o.revision)
    problems.push(`cluster ${name} reports revision ${sample.report?.revision ?? 'none'}, cluster a ${o.revision}`);
  if (sample.nodes.length !== shape.workers)
    problems.push(`cluster ${name} has ${sample.nodes.length} nodes, expected ${shape.workers}`);
  for (const n of sample.nodes) {
    if (n.image !== o.image) problems.push(`node ${n.name} of cluster ${name} runs ${n.image ?? 'no image'}`);
    if (!n.ready || n.unschedulable)
      problems.push(`node ${n.name} of cluster ${name} is ${n.ready ? 'cordoned' : 'not Ready'}`);
  }
  return problems;
}

/** What the second cluster should have said and done while the first cluster rolled and soaked. */
function orderProblems(o: FleetObservation, shape: FleetShape): string[] {
  const { first, second, firstStage, soakMs } = shape;
  if (o.revision === undefined) return [`cluster ${first} never reported a revision of the change`];
  const want = `NodeImage/${shape.nodeImage} revision ${o.revision}`;
  const waited = `fleet: waits for cluster ${first} (stage ${firstStage}) to report ${want} Complete`;
  const problems: string[] = [];
  const said = o.secondWaits.length === 0 ? 'nothing' : o.secondWaits.join(' | ');
  if (!o.secondWaits.includes(waited)) problems.push(`cluster ${second} never said "${waited}"; it said: ${said}`);
  const until = soakEnd(shape, o.revision, o.secondWaits);
  const completeAt = o.history.firstCompleteAt;
  if (until === undefined)
    problems.push(`cluster ${second} never named the end of stage ${firstStage}'s soak; it said: ${said}`);
  if (completeAt === undefined) problems.push(`drydock/status-${first} never said ${want} Complete`);
  if (until === undefined || completeAt === undefined) return problems;
  // Commit times are whole seconds: the report came no earlier than its commit's second.
  if (until < completeAt + soakMs)
    problems.push(
      `the soak ended at ${new Date(until).toISOString()}, before ${formatDuration(soakMs)} after cluster ${first} reported Complete at ${new Date(completeAt).toISOString()}`,
    );
  if (o.secondFirstAction === undefined) problems.push(`no node of cluster ${second} was seen being worked on`);
  else if (o.secondFirstAction < until)
    problems.push(`cluster ${second} started ${formatDuration(until - o.secondFirstAction)} before the soak ended`);
  // Every report of the change before the soak ended, the first round's included (the one that
  // only points the groups at the new image), says Waiting: the held rollout started nothing.
  const early = o.history.secondBeforeSoakEnd;
  const reported = early.map((r) => `${r.phase ?? '?'} ${r.done ?? 0}/${r.total ?? 0}`).join(', ');
  if (early.length === 0 || early.some((r) => r.phase !== 'Waiting' || (r.done ?? 0) > 0))
    problems.push(
      `drydock/status-${second} reported ${want} as ${early.length === 0 ? 'nothing' : reported} before the soak ended, expected Waiting with no node done`,
    );
  return problems;
}

/**
 * Everything wrong with the run, in words; empty when the fleet did what its file says: both
 * clusters on the new image and Complete at one revision, the second having waited for the
 * first's report and the soak after it, and having touched no node before the soak ended.
 */
export function fleetProblems(o: FleetObservation, shape: FleetShape): string[] {
  return [
    ...clusterProblems(shape.first, o.first, o, shape),
    ...clusterProblems(shape.second, o.second, o, shape),
    ...orderProblems(o, shape),
  ];
}

export interface FleetSummary {
  readonly commit: string;
  readonly durationMs: number;
  readonly from: string;
  readonly to: string;
  readonly revision: string;
  readonly soakMs: number;
  readonly nodes: Readonly<Record<string, number>>;
  /** How long after the first cluster's report the second cluster started (ms). */
  readonly startedAfterMs: number;
  /** What the second cluster said the fleet held it for, in the order seen. */
  readonly waits: readonly string[];
}

export function fleetSummaryLines(
  s: FleetSummary,
  shape: Pick<FleetShape, 'first' | 'second' | 'nodeImage'>,
): string[] {
  const { first, second } = shape;
  return [
    `fleet complete in ${formatDuration(s.durationMs)}: NodeImage/${shape.nodeImage} ${s.from} → ${s.to} rolled on cluster ${first} (${s.nodes[first] ?? 0} nodes), then on cluster ${second} (${s.nodes[second] ?? 0} nodes), which started ${formatDuration(s.startedAfterMs)} after ${first} reported it Complete (soak ${formatDuration(s.soakMs)}; commit ${shortCommit(s.commit)}, revision ${s.revision})`,
    ...s.waits.map((w) => `  cluster ${second} waited: ${w}`),
  ];
}

export function fleetFailure(
  code: 'CheckFailed' | 'Timeout',
  message: string,
  problems: readonly string[],
  extra: { readonly timeoutMs: number; readonly log: string },
): SandboxError {
  return new SandboxError(code, message, {
    step: 'the rollout',
    ...(code === 'Timeout' ? { timeoutSeconds: Math.round(extra.timeoutMs / 1000) } : {}),
    ...(problems.length > 0 ? { problems: [...problems] } : {}),
    log: extra.log,
  });
}

export type FleetScenarioDeps = Pick<
  ScenarioDeps,
  'bare' | 'workDir' | 'setHeadline' | 'timeoutMs' | 'signal' | 'failure' | 'log' | 'now'
> & {
  readonly shape: FleetShape;
  /** Reads one cluster: its Nodes and its status branch. */
  sample(cluster: string): Promise<ClusterSample>;
  /** Reads the status branches' histories for the change at `revision`, the soak having ended at `soakEnd`. */
  history(revision: string, soakEnd: number | undefined): FleetHistory;
  readonly intervalMs?: number;
};

/** Once both branches say Complete, how long the Nodes may take to look it (the last uncordon). */
const SETTLE_MS = 15_000;

function describeCluster(name: string, s: ClusterSample, commit: string): string {
  if (!sameCommit(s.statusSource, commit)) return `${name}: not yet on ${shortCommit(commit)}`;
  // Only what the fleet holds it for: a rollout's own waits change every few seconds.
  const r = s.report;
  const held = r?.waitingFor?.startsWith('fleet:') === true ? ` (${r.waitingFor})` : '';
  return `${name}: ${r?.phase ?? 'no status'}${held}`;
}

/** Waits until both status branches report on the tracked branch's head: drydock is up to date in both clusters. */
async function settle(deps: FleetScenarioDeps, deadline: number): Promise<void> {
  const now = deps.now ?? Date.now;
  const { first, second } = deps.shape;
  deps.setHeadline(`scenario fleet: waiting for clusters ${first} and ${second} to report on the current specs`);
  for (;;) {
    guard(deps, 'the baseline wait');
    const head = readBranch(deps.bare, TRACKED_BRANCH)?.commit ?? '';
    const samples = await Promise.all([deps.sample(first), deps.sample(second)]);
    if (samples.every((s) => sameCommit(s.statusSource, head))) return;
    if (now() > deadline)
      throw fleetFailure(
        'Timeout',
        `the fleet scenario found no settled start in time: ${[first, second].map((c, i) => describeCluster(c, samples[i] ?? { nodes: [] }, head)).join('; ')}`,
        [],
        deps,
      );
    await delay(deps.intervalMs ?? 500, deps.signal);
  }
}

/** Runs the change through both clusters; resolves with the summary or rejects naming what went wrong. */
export async function runFleetScenario(deps: FleetScenarioDeps): Promise<FleetSummary> {
  const now = deps.now ?? Date.now;
  const deadline = now() + deps.timeoutMs;
  const { shape } = deps;
  const { first, second, nodeImage } = shape;
  await settle(deps, deadline);

  const { commit, changes } = commitImageChange(deps.bare, deps.workDir, (current) => {
    return new Map([[nodeImage, nextImage(current.get(nodeImage) ?? '')]]);
  });
  const from = changes[0]?.from ?? '';
  const to = changes[0]?.to ?? '';
  const pushedAt = now();
  const waits: string[] = [];
  let revision: string | undefined;
  let secondFirstAction: number | undefined;
  let completeSeen: number | undefined;
  let problems: string[] = [];
  for (;;) {
    await delay(deps.intervalMs ?? 500, deps.signal);
    guard(deps, 'the rollout');
    const [a, b] = await Promise.all([deps.sample(first), deps.sample(second)]);
    const t = now();
    for (const [name, s] of [
      [first, a],
      [second, b],
    ] as const) {
      const phase = s.report?.phase;
      if (sameCommit(s.statusSource, commit) && (phase === 'Failed' || phase === 'Halted'))
        throw fleetFailure(
          'CheckFailed',
          `NodeImage/${nodeImage} is ${phase} in cluster ${name}: ${s.report?.lastError ?? s.report?.waitingFor ?? 'no reason given'}`,
          [],
          deps,
        );
    }
    if (sameCommit(a.statusSource, commit) && a.report?.revision !== undefined) revision = a.report.revision;
    const waiting = sameCommit(b.statusSource, commit) ? b.report?.waitingFor : undefined;
    if (waiting !== undefined && !waits.includes(waiting)) waits.push(waiting);
    if (secondFirstAction === undefined && b.nodes.some((n) => actedOn(n, to))) secondFirstAction = t;
    deps.setHeadline(
      `scenario fleet: ${from} → ${to}; ${describeCluster(first, a, commit)}; ${describeCluster(second, b, commit)}`,
    );

    const complete = [a, b].every((s) => sameCommit(s.statusSource, commit) && s.report?.phase === 'Complete');
    if (complete && revision !== undefined) {
      completeSeen ??= t;
      const history = deps.history(revision, soakEnd(shape, revision, waits));
      const o: FleetObservation = {
        commit,
        image: to,
        revision,
        secondWaits: waits,
        first: a,
        second: b,
        history,
        ...(secondFirstAction === undefined ? {} : { secondFirstAction }),
      };
      problems = fleetProblems(o, shape);
      if (problems.length === 0)
        return {
          commit,
          durationMs: t - pushedAt,
          from,
          to,
          revision,
          soakMs: shape.soakMs,
          nodes: { [first]: a.nodes.length, [second]: b.nodes.length },
          startedAfterMs: (secondFirstAction ?? 0) - (history.firstCompleteAt ?? 0),
          waits: waits.filter((w) => w.startsWith('fleet:')),
        };
      if (t - completeSeen > SETTLE_MS)
        throw fleetFailure(
          'CheckFailed',
          `the fleet reported NodeImage/${nodeImage} Complete, but the checks failed`,
          problems,
          deps,
        );
    }
    if (t > deadline)
      throw fleetFailure(
        'Timeout',
        `the fleet scenario did not finish within ${formatDuration(deps.timeoutMs)}; waiting for ${problems.length > 0 ? 'the final checks to pass' : `${describeCluster(first, a, commit)}; ${describeCluster(second, b, commit)}`}`,
        problems,
        deps,
      );
  }
}
