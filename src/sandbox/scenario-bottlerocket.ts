/**
 * `drydock sandbox --scenario bottlerocket`: the smoke test of in-place OS updates through
 * Bottlerocket's update API. For this scenario the sandbox adds a group of Bottlerocket hosts
 * that no ScalingGroup names (bottlerocketGroup: they are updated in place, never replaced),
 * booted on one version with the next in their update repository. It pushes a NodeImage that
 * pins them to the next version with `inPlace: {updater: bottlerocket}`, follows it on the live
 * snapshots and, from the API server's own watch, every update Job and reboot pod drydock
 * creates for it; when drydock reports Complete it checks that each host ran its update Job
 * once, rebooted once through the API (its bootID changed once), reports the new version in
 * status.nodeInfo.osImage (what its OS says, not drydock's record) and is back in service.
 * The checks are pure functions of what was observed.
 */
import { shortCommit } from '../commit.js';
import { bottlerocketOsImage } from '../cloud/sim/nodes.js';
import { SandboxError } from './errors.js';
import { SANDBOX_BOTTLEROCKET } from './fleet-groups.js';
import { commitSpecFile } from './fleet-repo.js';
import { guard, sameCommit, type ScenarioDeps } from './scenario.js';
import { NodeOpLedger, settled, workerProblems, type NodeOpObservation } from './scenario-nodeop.js';
import { formatDuration, gitSyncState, type SandboxSnapshot } from './view.js';

export const BOTTLEROCKET_NAME = 'sandbox-bottlerocket';
export const BOTTLEROCKET_FILE = `images/${BOTTLEROCKET_NAME}.yaml`;
const OPERATION = `NodeImage/${BOTTLEROCKET_NAME}`;
/** A short soak per host keeps the run to about a minute and still shows the health gate at work. */
const MIN_READY_SECONDS = 5;

/** The osImage a host reports once it runs the version the scenario pins. */
export function bottlerocketTarget(): string {
  return bottlerocketOsImage(SANDBOX_BOTTLEROCKET.to, SANDBOX_BOTTLEROCKET.variant);
}

/** The NodeImage the scenario pushes: every host of `group`, one at a time, to the next version. */
export function bottlerocketSpecYaml(group: string): string {
  return [
    '# Pushed by `drydock sandbox --scenario bottlerocket`: the Bottlerocket hosts updated in place,',
    "# one at a time, through the host's update API.",
    'apiVersion: drydock.dev/v1alpha1',
    'kind: NodeImage',
    'metadata:',
    `  name: ${BOTTLEROCKET_NAME}`,
    'spec:',
    `  image: "${SANDBOX_BOTTLEROCKET.to}"`,
    '  strategy: inPlace',
    '  inPlace:',
    '    updater: bottlerocket',
    '  nodeSelector:',
    '    matchLabels:',
    `      sim.drydock.dev/group: ${group}`,
    '  rollout:',
    '    concurrency: 1',
    '    stopOnFailure: true',
    '    healthGate:',
    `      minReadySeconds: ${MIN_READY_SECONDS}`,
    '',
  ].join('\n');
}

/**
 * Everything wrong with the end state, in words; empty when the update is done: the status
 * branch reports Complete n/n for the commit, each host ran one update Job that succeeded, had
 * one reboot pod, changed its bootID once, reports `osImage` and is Ready, uncordoned and free.
 * Nothing ran on another node.
 */
export function bottlerocketProblems(
  hosts: readonly string[],
  commit: string,
  osImage: string,
  observed: NodeOpObservation,
): string[] {
  const problems: string[] = [];
  if (!sameCommit(observed.statusSource, commit)) {
    problems.push(
      `the status branch reports on ${observed.statusSource ?? 'no commit'}, not on the NodeImage commit ${shortCommit(commit)}`,
    );
  }
  const spec = observed.specs.find((s) => s.kind === 'NodeImage' && s.name === BOTTLEROCKET_NAME);
  if (spec === undefined) problems.push(`the status branch has no status for ${OPERATION}`);
  else if (spec.phase !== 'Complete' || spec.done !== hosts.length || spec.total !== hosts.length) {
    problems.push(
      `${OPERATION} is ${spec.phase} ${spec.done}/${spec.total} on the status branch, expected Complete ${hosts.length}/${hosts.length}`,
    );
  }
  for (const h of hosts) {
    problems.push(...workerProblems(h, observed));
    const n = observed.nodes.find((v) => v.name === h);
    if (n !== undefined && n.osImage !== osImage)
      problems.push(
        `node ${h} reports osImage ${JSON.stringify(n.osImage ?? '')}, expected ${JSON.stringify(osImage)}`,
      );
  }
  const strays = observed.objects.filter((o) => !hosts.includes(o.node));
  for (const o of strays)
    problems.push(`${o.kind} ${o.name} ran on ${o.node || 'no node'}, which is no Bottlerocket host`);
  return problems;
}

/** What the update is waiting for now, in words. */
function describeWaiting(snapshot: SandboxSnapshot, commit: string): string {
  const parts: string[] = [];
  if (snapshot.git !== undefined && !sameCommit(snapshot.git.statusSource, commit))
    parts.push(gitSyncState(snapshot.git));
  const s = snapshot.specs.find((v) => v.kind === 'NodeImage' && v.name === BOTTLEROCKET_NAME);
  if (s === undefined) parts.push(`no status for ${OPERATION} yet`);
  else if (s.phase !== 'Complete' || s.done !== s.total)
    parts.push(
      `${OPERATION} ${s.phase} ${s.done}/${s.total}${s.waitingFor === undefined ? '' : ` (waiting: ${s.waitingFor})`}`,
    );
  const held = snapshot.nodes.filter((n) => n.operation !== undefined).map((n) => `${n.name} ${n.phase ?? ''}`);
  if (held.length > 0) parts.push(`nodes in flight: ${held.join(', ')}`);
  return parts.length > 0 ? parts.join('; ') : 'the final checks';
}

export interface BottlerocketSummary {
  readonly commit: string;
  readonly durationMs: number;
  readonly hosts: number;
  readonly from: string;
  readonly to: string;
}

export function bottlerocketSummaryLines(s: BottlerocketSummary): string[] {
  return [
    `bottlerocket complete in ${formatDuration(s.durationMs)}: ${OPERATION} updated ${s.hosts} Bottlerocket hosts in place from ${s.from} to ${s.to}, one update Job and one reboot each, every host reporting ${s.to} (commit ${shortCommit(s.commit)})`,
  ];
}

export type BottlerocketDeps = Omit<ScenarioDeps, 'groups' | 'cloud'> & {
  /** The Bottlerocket hosts' sim group: the NodeImage's targets. */
  readonly group: string;
  /** Starts feeding the ledger every Job and pod drydock makes for the NodeImage; resolves with its stop. */
  watch(ledger: NodeOpLedger): Promise<() => Promise<void>>;
};

function failure(deps: BottlerocketDeps, code: 'CheckFailed' | 'Timeout', message: string, problems: string[]) {
  return new SandboxError(code, message, {
    step: 'the rollout',
    ...(code === 'Timeout' ? { timeoutSeconds: Math.round(deps.timeoutMs / 1000) } : {}),
    ...(problems.length > 0 ? { problems } : {}),
    log: deps.log,
  });
}

/** Runs the update to the end; resolves with the summary or rejects naming what went wrong. */
export async function runBottlerocketScenario(deps: BottlerocketDeps): Promise<BottlerocketSummary> {
  const now = deps.now ?? Date.now;
  const deadline = now() + deps.timeoutMs;

  // 1. A settled start: drydock reported on the head, and the examples' own operations are done.
  deps.setHeadline('scenario bottlerocket: waiting for drydock to settle on the current specs');
  let snapshot = await deps.nextSnapshot();
  while (!settled(snapshot)) {
    guard(deps, 'the baseline wait');
    if (now() > deadline)
      throw failure(deps, 'Timeout', 'the Bottlerocket scenario found no settled start in time', []);
    snapshot = await deps.nextSnapshot();
  }

  // 2. The NodeImage, pushed as a person would, with the watch already on so no Job goes unseen.
  const hosts = snapshot.nodes.filter((n) => n.group === deps.group);
  const ledger = new NodeOpLedger(hosts, OPERATION);
  const stopWatch = await deps.watch(ledger);
  try {
    const { from, to } = SANDBOX_BOTTLEROCKET;
    const commit = commitSpecFile(
      deps.bare,
      deps.workDir,
      BOTTLEROCKET_FILE,
      bottlerocketSpecYaml(deps.group),
      `Update the Bottlerocket hosts in place to ${to}`,
    );
    const pushedAt = now();
    deps.setHeadline(`scenario bottlerocket: ${OPERATION} on ${hosts.length} hosts, ${from} → ${to}, one at a time`);

    // 3. Follow it until the checks pass, it halts, or time runs out.
    let problems: string[] = [];
    for (;;) {
      snapshot = await deps.nextSnapshot();
      guard(deps, 'the rollout');
      ledger.observeNodes(snapshot.nodes);
      const reported = sameCommit(snapshot.git?.statusSource, commit);
      const refused = snapshot.git?.refused;
      if (refused !== undefined && sameCommit(refused.commit, commit))
        throw failure(deps, 'CheckFailed', `drydock refused the NodeImage commit ${shortCommit(commit)}`, [
          ...refused.errors,
        ]);
      const spec = snapshot.specs.find((s) => s.kind === 'NodeImage' && s.name === BOTTLEROCKET_NAME);
      if (reported && (spec?.phase === 'Failed' || spec?.phase === 'Halted'))
        throw failure(
          deps,
          'CheckFailed',
          `${OPERATION} is ${spec.phase}: ${spec.lastError ?? spec.waitingFor ?? 'no reason given'}`,
          [`${OPERATION} ${spec.phase} ${spec.done}/${spec.total}`],
        );
      if (reported && spec?.phase === 'Complete') {
        const source = snapshot.git?.statusSource;
        problems = bottlerocketProblems(
          hosts.map((h) => h.name),
          commit,
          bottlerocketTarget(),
          {
            nodes: snapshot.nodes,
            specs: snapshot.specs,
            objects: ledger.seen,
            boots: ledger.boots,
            ...(source === undefined ? {} : { statusSource: source }),
          },
        );
        if (problems.length === 0) return { commit, durationMs: now() - pushedAt, hosts: hosts.length, from, to };
      }
      if (now() > deadline) {
        const waitingFor = problems.length > 0 ? 'the final checks to pass' : describeWaiting(snapshot, commit);
        throw failure(
          deps,
          'Timeout',
          `the Bottlerocket scenario did not finish within ${formatDuration(deps.timeoutMs)}; waiting for ${waitingFor}`,
          problems,
        );
      }
    }
  } finally {
    await stopWatch();
  }
}
