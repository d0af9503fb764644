/**
 * `drydock sandbox --scenario upgrade`: the project's smoke test of its main job. It pushes an
 * image change for every scaling group's NodeImage, follows the rollout on the live
 * snapshots, and when drydock reports Complete checks the end state from every side: the
 * cloud's instances, the Nodes, and the status branch. The checks and the summary are pure
 * functions of what was observed.
 */
import type { CloudProvider, Instance } from '../cloud/provider.js';
import { SandboxError } from './errors.js';
import { commitImageChange, nextImage } from './fleet-repo.js';
import { formatDuration, gitSyncState, type NodeView, type SandboxSnapshot, type SpecView } from './view.js';
import { sameCommit, shortCommit } from '../commit.js';

/** One scaling group the scenario upgrades. */
export interface GroupExpectation {
  readonly groupId: string;
  /** The NodeImage the group's ScalingGroup names. */
  readonly nodeImage: string;
  readonly size: number;
}

export interface FinalObservation {
  /** groupId → its instances, as the cloud describes them. */
  readonly instances: ReadonlyMap<string, readonly Instance[]>;
  readonly nodes: readonly NodeView[];
  readonly specs: readonly SpecView[];
  /** Drydock-Source of the newest status commit. */
  readonly statusSource?: string;
}

const IN_FLIGHT = new Set(['Pending', 'Cordoned', 'Draining', 'Updating', 'Rebooting', 'Verifying']);

export { sameCommit };

/**
 * Everything wrong with the end state, in words; empty when the upgrade is done: every
 * instance and every Node of each group on its new image, the group at its size, no Node
 * cordoned or failed, each NodeImage Complete on the status branch for the new commit.
 */
export function finalProblems(
  groups: readonly GroupExpectation[],
  images: ReadonlyMap<string, string>,
  commit: string,
  observed: FinalObservation,
): string[] {
  const problems: string[] = [];
  if (!sameCommit(observed.statusSource, commit)) {
    problems.push(
      `the status branch reports on ${observed.statusSource ?? 'no commit'}, not on the upgrade commit ${shortCommit(commit)}`,
    );
  }
  for (const g of groups) {
    const image = images.get(g.nodeImage);
    if (image === undefined) {
      problems.push(`no new image recorded for NodeImage/${g.nodeImage}`);
      continue;
    }
    const instances = observed.instances.get(g.groupId) ?? [];
    if (instances.length !== g.size)
      problems.push(`cloud group ${g.groupId} has ${instances.length} instances, expected ${g.size}`);
    for (const i of instances) {
      if (i.image !== image) problems.push(`cloud instance ${g.groupId}/${i.id} runs ${i.image}, expected ${image}`);
      if (i.state !== 'running') problems.push(`cloud instance ${g.groupId}/${i.id} is ${i.state}`);
    }
    const nodes = observed.nodes.filter((n) => n.group === g.groupId);
    if (nodes.length !== g.size) problems.push(`group ${g.groupId} has ${nodes.length} nodes, expected ${g.size}`);
    for (const n of nodes) {
      if (n.image !== image) problems.push(`node ${n.name} runs ${n.image ?? 'an unknown image'}, expected ${image}`);
      if (n.unschedulable) problems.push(`node ${n.name} is still cordoned`);
      if (!n.ready) problems.push(`node ${n.name} is not Ready`);
      if (n.phase !== undefined && n.phase !== 'Done')
        problems.push(`node ${n.name} is in phase ${n.phase}${n.reason === undefined ? '' : `: ${n.reason}`}`);
    }
    const spec = observed.specs.find((s) => s.kind === 'NodeImage' && s.name === g.nodeImage);
    if (spec === undefined) problems.push(`the status branch has no status for NodeImage/${g.nodeImage}`);
    else if (spec.phase !== 'Complete' || spec.done !== spec.total) {
      problems.push(`NodeImage/${g.nodeImage} is ${spec.phase} ${spec.done}/${spec.total} on the status branch`);
    }
  }
  return problems;
}

/** A spec that cannot finish by itself: the scenario stops at once rather than wait out the timeout. */
export function stuckSpec(specs: readonly SpecView[], nodeImages: ReadonlySet<string>): SpecView | undefined {
  return specs.find(
    (s) => s.kind === 'NodeImage' && nodeImages.has(s.name) && (s.phase === 'Failed' || s.phase === 'Halted'),
  );
}

/** What the rollout is waiting for now, in words, for progress lines and the timeout error. */
export function describeWaiting(
  snapshot: SandboxSnapshot,
  commit: string | undefined,
  nodeImages: ReadonlySet<string>,
): string {
  const parts: string[] = [];
  const git = snapshot.git;
  if (commit !== undefined && git !== undefined && !sameCommit(git.statusSource, commit)) parts.push(gitSyncState(git));
  for (const s of snapshot.specs) {
    if (s.kind !== 'NodeImage' || !nodeImages.has(s.name)) continue;
    if (s.phase === 'Complete' && s.done === s.total) continue;
    parts.push(
      `NodeImage/${s.name} ${s.phase} ${s.done}/${s.total}${s.waitingFor === undefined ? '' : ` (waiting: ${s.waitingFor})`}`,
    );
  }
  const flying = snapshot.nodes
    .filter((n) => n.phase !== undefined && IN_FLIGHT.has(n.phase))
    .map((n) => `${n.name} ${n.phase ?? ''}`);
  if (flying.length > 0) parts.push(`nodes in flight: ${flying.join(', ')}`);
  return parts.length > 0 ? parts.join('; ') : 'the final checks';
}

/**
 * Follows the rollout over snapshots: which of the original nodes are gone, and the waves —
 * nodes of one group (so of one NodeImage) that drydock took out of service in the same
 * observation form one wave; groups rolling side by side have waves of their own.
 */
export class RolloutTracker {
  private readonly original: Set<string>;
  private readonly seenInFlight = new Set<string>();
  private waveCount = 0;

  constructor(initial: readonly NodeView[]) {
    this.original = new Set(initial.map((n) => n.name));
  }

  observe(nodes: readonly NodeView[]): void {
    const entering = nodes.filter(
      (n) =>
        this.original.has(n.name) &&
        (n.unschedulable || (n.phase !== undefined && IN_FLIGHT.has(n.phase))) &&
        !this.seenInFlight.has(n.name),
    );
    for (const n of entering) this.seenInFlight.add(n.name);
    this.waveCount += new Set(entering.map((n) => n.group ?? '')).size;
  }

  replaced(nodes: readonly NodeView[]): number {
    const present = new Set(nodes.map((n) => n.name));
    return [...this.original].filter((n) => !present.has(n)).length;
  }

  get waves(): number {
    return this.waveCount;
  }
}

export interface ScenarioSummary {
  readonly commit: string;
  readonly changes: readonly { readonly nodeImage: string; readonly from: string; readonly to: string }[];
  readonly durationMs: number;
  readonly nodesReplaced: number;
  readonly waves: number;
}

export function summaryLines(s: ScenarioSummary): string[] {
  return [
    `upgrade complete in ${formatDuration(s.durationMs)}: ${s.nodesReplaced} nodes replaced in ${s.waves} waves (commit ${shortCommit(s.commit)})`,
    ...s.changes.map((c) => `  NodeImage/${c.nodeImage}: ${c.from} → ${c.to}`),
  ];
}

/** Where the scenario gets its snapshots and tells what it is doing. */
export interface ScenarioDeps {
  readonly bare: string;
  readonly workDir: string;
  readonly groups: readonly GroupExpectation[];
  readonly cloud: CloudProvider;
  /** Resolves with the next fresh snapshot. */
  nextSnapshot(): Promise<SandboxSnapshot>;
  setHeadline(text: string): void;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** A process the sandbox needs has died. */
  failure(): SandboxError | undefined;
  /** The log to name when the rollout times out. */
  readonly log: string;
  readonly now?: () => number;
}

async function describeAll(
  cloud: CloudProvider,
  groups: readonly GroupExpectation[],
): Promise<Map<string, readonly Instance[]>> {
  const out = new Map<string, readonly Instance[]>();
  for (const g of groups) out.set(g.groupId, (await cloud.describeGroup(g.groupId)).instances);
  return out;
}

export function guard(deps: Pick<ScenarioDeps, 'failure' | 'signal'>, step: string): void {
  const failed = deps.failure();
  if (failed !== undefined) throw failed;
  if (deps.signal.aborted) throw new SandboxError('Interrupted', `interrupted during ${step}`, { step });
}

/** Runs the upgrade to the end; resolves with the summary or rejects naming what went wrong. */
export async function runUpgradeScenario(deps: ScenarioDeps): Promise<ScenarioSummary> {
  const now = deps.now ?? Date.now;
  const nodeImages = new Set(deps.groups.map((g) => g.nodeImage));
  const start = now();
  const deadline = start + deps.timeoutMs;

  // 1. A settled start: drydock has reported on the current head, nothing in flight.
  deps.setHeadline('scenario upgrade: waiting for drydock to report on the current specs');
  let snapshot = await deps.nextSnapshot();
  for (;;) {
    guard(deps, 'the baseline wait');
    const head = snapshot.git?.head;
    const settled =
      head !== undefined &&
      sameCommit(snapshot.git?.statusSource, head) &&
      deps.groups.every((g) =>
        snapshot.specs.some((s) => s.kind === 'NodeImage' && s.name === g.nodeImage && s.phase === 'Complete'),
      );
    if (settled) break;
    if (now() > deadline) {
      throw new SandboxError(
        'Timeout',
        `timed out before the upgrade started, waiting for ${describeWaiting(snapshot, head, nodeImages)}`,
        {
          step: 'wait for a settled start',
          waitingFor: describeWaiting(snapshot, head, nodeImages),
          timeoutSeconds: Math.round(deps.timeoutMs / 1000),
          log: deps.log,
        },
      );
    }
    snapshot = await deps.nextSnapshot();
  }

  // 2. The change, pushed as a person would.
  const tracker = new RolloutTracker(snapshot.nodes.filter((n) => deps.groups.some((g) => g.groupId === n.group)));
  // A NodeImage missing from the repository makes commitImageChange refuse, naming it.
  const { commit, changes } = commitImageChange(
    deps.bare,
    deps.workDir,
    (current) => new Map([...nodeImages].map((name) => [name, nextImage(current.get(name) ?? name)])),
  );
  const images = new Map(changes.map((c) => [c.nodeImage, c.to]));
  const pushedAt = now();
  deps.setHeadline(`scenario upgrade: rolling out ${changes.map((c) => `${c.nodeImage} → ${c.to}`).join(', ')}`);

  // 3. Follow the rollout until the checks pass, something gets stuck, or time runs out.
  let problems: string[] = [];
  for (;;) {
    snapshot = await deps.nextSnapshot();
    guard(deps, 'the rollout');
    tracker.observe(snapshot.nodes);
    const refused = snapshot.git?.refused;
    if (refused !== undefined && sameCommit(refused.commit, commit)) {
      throw new SandboxError('CheckFailed', `drydock refused the upgrade commit ${shortCommit(commit)}`, {
        step: 'the rollout',
        problems: [...refused.errors],
        log: deps.log,
      });
    }
    const stuck = stuckSpec(snapshot.specs, nodeImages);
    if (stuck !== undefined && sameCommit(snapshot.git?.statusSource, commit)) {
      throw new SandboxError(
        'CheckFailed',
        `NodeImage/${stuck.name} is ${stuck.phase}: ${stuck.lastError ?? stuck.waitingFor ?? 'no reason given'}`,
        {
          step: 'the rollout',
          problems: [`NodeImage/${stuck.name} ${stuck.phase} ${stuck.done}/${stuck.total}`],
          log: deps.log,
        },
      );
    }
    const reported = sameCommit(snapshot.git?.statusSource, commit);
    const complete = deps.groups.every((g) =>
      snapshot.specs.some(
        (s) => s.kind === 'NodeImage' && s.name === g.nodeImage && s.phase === 'Complete' && s.done === s.total,
      ),
    );
    if (reported && complete) {
      const source = snapshot.git?.statusSource;
      problems = finalProblems(deps.groups, images, commit, {
        instances: await describeAll(deps.cloud, deps.groups),
        nodes: snapshot.nodes,
        specs: snapshot.specs,
        ...(source === undefined ? {} : { statusSource: source }),
      });
      if (problems.length === 0) break;
    }
    if (now() > deadline) {
      const waitingFor =
        problems.length > 0 ? 'the final checks to pass' : describeWaiting(snapshot, commit, nodeImages);
      throw new SandboxError(
        'Timeout',
        `the upgrade did not finish within ${formatDuration(deps.timeoutMs)}; waiting for ${waitingFor}`,
        {
          step: 'the rollout',
          waitingFor,
          timeoutSeconds: Math.round(deps.timeoutMs / 1000),
          ...(problems.length > 0 ? { problems } : {}),
          log: deps.log,
        },
      );
    }
  }
  return {
    commit,
    changes,
    durationMs: now() - pushedAt,
    nodesReplaced: tracker.replaced(snapshot.nodes),
    waves: tracker.waves,
  };
}
