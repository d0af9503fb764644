/**
 * The planted planner bugs of the mutation check (run.ts): each one a mistake a person could
 * make in src/plan/, written as one exact find → replace on the compiled planner
 * (dist/src/plan/<file>). The find text must occur exactly once: when the source moves on and a
 * find no longer matches, the check fails loudly instead of testing nothing.
 *
 * To add one: build, read the compiled file, copy the line(s) to change as they are there
 * (tsc strips the types and breaks `if` bodies onto their own lines), and say the bug in one line.
 */
export interface Mutant {
  /** Short and stable: `npm run mutation -- <id>` runs it alone. */
  readonly id: string;
  /** The compiled file, relative to dist/src/plan/. */
  readonly file: string;
  readonly find: string;
  readonly replace: string;
  /** The bug, as a person would make it. */
  readonly bug: string;
}

export const MUTANTS: readonly Mutant[] = [
  // The NodeOp's own steps (nodeop/).
  {
    id: 'nodeop-no-pdb-preflight',
    file: 'nodeop/step.js',
    find: 'const blocked = preflight(ctx.view, drainView(podsOn(ctx.view, node.name), op.drain));',
    replace: 'const blocked = undefined;',
    bug: 'a NodeOp cordons and drains a node without the PDB pre-flight',
  },
  {
    id: 'nodeop-uncordons-person',
    file: 'nodeop/step.js',
    find: 'if (ctx.view.stateOf(node).cordonedByUs)',
    replace: 'if (true)',
    bug: 'a NodeOp uncordons a node a person cordoned (the drydock.dev/cordoned mark not checked)',
  },
  {
    id: 'nodeop-cordon-past-budget',
    file: 'nodeop/step.js',
    find: 'if (!ctx.budget.canTakeDown()) {',
    replace: 'if (false) {',
    bug: 'a NodeOp cordons a Pending node without asking the budget whether it may go down',
  },
  {
    id: 'reboot-pod-after-reboot',
    file: 'nodeop/step.js',
    find: 'if (node.bootID === recorded && pod.pod === undefined)',
    replace: 'if (pod.pod === undefined)',
    bug: 'the reboot pod is made again when it is gone, though the bootID already changed (a second reboot)',
  },
  {
    id: 'reboot-pod-new-bootid',
    file: 'nodeop/step.js',
    find: 'const pod = rebootPodOf(ctx, node.name, recorded);',
    replace: 'const pod = rebootPodOf(ctx, node.name, node.bootID ?? recorded);',
    bug: "the reboot pod is looked up under the node's current bootID, so a restarted round makes another",
  },
  {
    id: 'nodeop-job-deleted-running',
    file: 'nodeop/step.js',
    find: "if (phase === 'Updating' || phase === 'Pending' || phase === 'Draining' || phase === 'Cordoned')",
    replace: "if (phase === 'Pending' || phase === 'Draining' || phase === 'Cordoned')",
    bug: "a node's Job is cleaned up while the node is still Updating (the Job runs again)",
  },
  {
    id: 'nodeop-no-done-record',
    file: 'nodeop/step.js',
    find: '[ctx.record.key]: ctx.record.value,',
    replace: '',
    bug: 'a finished node gets no nodeop.drydock.dev/ record, so it is started again under the same revision',
  },
  {
    id: 'nodeop-verify-no-min-ready',
    file: 'nodeop/verify.js',
    find: 'if (health.blocker === undefined && health.at <= ctx.now) {',
    replace: 'if (health.blocker === undefined) {',
    bug: 'a Verifying node is done as soon as nothing blocks it, without staying Ready minReadySeconds',
  },
  {
    id: 'nodeop-workers-before-control-plane',
    file: 'nodeop/index.js',
    find: 'if (controlPlaneLeft && !isControlPlane(n)) {',
    replace: 'if (false) {',
    bug: 'a NodeOp starts workers while its own control-plane nodes are still to do',
  },
  // The shared sequence (sequence/).
  {
    id: 'canary-off-by-one',
    file: 'sequence/canary.js',
    find: 'return { open: true, limit: p.wave - started };',
    replace: 'return { open: true, limit: p.wave - started + 1 };',
    bug: 'the canary wave lets one node more than canary.nodes start',
  },
  {
    id: 'canary-soak-in-ms',
    file: 'sequence/canary.js',
    find: 'p.policy.soakSeconds * 1000',
    replace: 'p.policy.soakSeconds',
    bug: 'the canary soak is read as milliseconds, so the wave barely soaks',
  },
  {
    id: 'after-canary-approval-unchecked',
    file: 'sequence/start-gate.js',
    find: "if (required === 'afterCanary' &&",
    replace: "if (required === 'after-canary' &&",
    bug: 'the after-canary approval is never asked for (the stage spelled as its file name)',
  },
  {
    id: 'budget-not-reserved',
    file: 'sequence/admit.js',
    find: 'this.budget.reserve();',
    replace: '',
    bug: 'StartSlots.take starts a node without reserving its share of the cluster budget',
  },
  {
    id: 'concurrency-off-by-one',
    file: 'sequence/admit.js',
    find: 'if (this.slots > 0)',
    replace: 'if (this.slots >= 0)',
    bug: 'one node more than rollout.concurrency starts',
  },
  {
    id: 'concurrency-zero-is-zero',
    file: 'sequence/admit.js',
    find: 'rollout.concurrency > 0 ? rollout.concurrency',
    replace: 'rollout.concurrency >= 0 ? rollout.concurrency',
    bug: 'concurrency 0 (all at once) is read as no node at all',
  },
  {
    id: 'maintenance-node-started',
    file: 'sequence/admit.js',
    find: 'if (maintenance !== undefined)',
    replace: 'if (false)',
    bug: 'a rollout starts a node a NodeMaintenance in Git names (heldElsewhere skips the maintenance)',
  },
  {
    id: 'taken-this-round-again',
    file: 'sequence/admit.js',
    find: 'if (b.taken.has(node.name))',
    replace: 'if (false)',
    bug: 'a node another spec took earlier this round is taken again',
  },
  {
    id: 'handover-past-lowered-limit',
    file: 'sequence/admit.js',
    find: 'this.concurrencyLeft < 0 || !this.budget.withinLimit',
    replace: 'false',
    bug: 'a finished node hands its place over though the concurrency or the budget was lowered under the nodes in flight',
  },
  {
    id: 'handover-any-group',
    file: 'sequence/admit.js',
    find: 'ownKey === undefined || h.own === ownKey',
    replace: 'true',
    bug: "a place handed over takes a node past its group's share when it came from another group",
  },
  {
    id: 'surge-counts-removed',
    file: 'replace/surge.js',
    find: ' || finishing.has(e.node.name)',
    replace: '',
    bug: "an instance removed this round still counts against the group's maxSurge, so the node started on its place waits a round for its surge",
  },
  {
    id: 'foreign-lock-read-free',
    file: 'sequence/holder.js',
    find: "return state.holds ? 'foreign' : 'free';",
    replace: "return 'free';",
    bug: 'a node held by another operation is read as free, so a spec takes it',
  },
  {
    id: 'drain-evicts-past-pdb',
    file: 'sequence/drain-step.js',
    find: 'if (holdingPdb(view, pod) === undefined)',
    replace: 'if (true)',
    bug: 'the drain evicts a pod whose PDB allows no disruption now',
  },
  // What an ending means (outcome.ts).
  {
    id: 'skip-node-is-failure',
    file: 'outcome.js',
    find: "return { phase: 'Skipped', uncordon: true, failure: false, halts: false, annotations: {} };",
    replace: "return { phase: 'Failed', uncordon: true, failure: true, halts: policy.stopOnFailure, annotations: {} };",
    bug: 'drain.onTimeout skipNode is counted as a failure (Failed, halting under stopOnFailure)',
  },
  {
    id: 'halted-drain-not-halting',
    file: 'outcome.js',
    find: "halts: true,\n            annotations: { [ANNOTATIONS.halts]: 'true' },",
    replace: 'halts: policy.stopOnFailure,\n            annotations: {},',
    bug: 'drain.onTimeout halt halts the spec only under stopOnFailure',
  },
  {
    id: 'halts-mark-not-read',
    file: 'outcome.js',
    find: 'if (eachFailureHalts(policy) || state.halts)',
    replace: 'if (eachFailureHalts(policy))',
    bug: 'a Failed node marked drydock.dev/halts no longer halts its spec once read back',
  },
  {
    id: 'stop-on-failure-ignored',
    file: 'outcome.js',
    find: 'halts: eachFailureHalts(policy),',
    replace: 'halts: false,',
    bug: 'a failed step never halts the spec, whatever stopOnFailure says',
  },
  {
    id: 'keep-cordoned-ignored',
    file: 'outcome.js',
    find: "uncordon: policy.onFailure !== 'keepCordoned',",
    replace: 'uncordon: true,',
    bug: 'a failed node is uncordoned although onFailure is keepCordoned',
  },
  {
    id: 'drain-timeout-in-ms',
    file: 'outcome.js',
    find: 'const deadline = started + drain.timeoutSeconds * 1000;',
    replace: 'const deadline = started + drain.timeoutSeconds;',
    bug: 'drain.timeoutSeconds is read as milliseconds, so every drain times out at once',
  },
  // Approvals, windows, the budget, the protocol.
  {
    id: 'approval-other-image',
    file: 'approval.js',
    find: 'if (t.image !== undefined && a.image !== t.image)\n        return false;',
    replace: '',
    bug: 'an approval for another image counts for the new one (counts() skips the image)',
  },
  {
    id: 'approval-any-stage',
    file: 'approval.js',
    find: '.find((a) => a.stage === stage);',
    replace: '.find(() => true);',
    bug: 'any approval of the spec opens every stage (a start approval opens after-canary too)',
  },
  {
    id: 'window-always-open',
    file: 'window.js',
    find: 'if (isWindowOpen(window, now))',
    replace: 'if (true)',
    bug: 'a rollout that names a window starts whether the window is open or not',
  },
  {
    id: 'window-exclusion-ignored',
    file: 'window.js',
    find: 'if (exclusionAt(window, ms) !== undefined)\n        return false;',
    replace: '',
    bug: "a window's exclusions do not close it",
  },
  {
    id: 'failure-budget-one-late',
    file: 'outcome.js',
    find: 'if (failed.length < limit)',
    replace: 'if (failed.length <= limit)',
    bug: 'maxFailures halts the spec one failed node after its budget, not at it',
  },
  {
    id: 'budget-one-over',
    file: 'budget.js',
    find: 'return this.counts.unavailable + 1 <= this.max;',
    replace: 'return this.counts.unavailable <= this.max;',
    bug: 'canTakeDown lets one node more than budget.maxUnavailable go down',
  },
  {
    id: 'failed-node-keeps-budget',
    file: 'budget.js',
    find: 'if (state.settled && state.holds)\n            continue;',
    replace: '',
    bug: 'a Failed or Skipped node keeps its share of the budget, holding every other operation back',
  },
  {
    id: 'held-annotations-no-lock',
    file: 'protocol.js',
    find: '[ANNOTATIONS.operation]: null,',
    replace: '',
    bug: 'HELD_ANNOTATIONS lacks the lock key, so a released node stays locked',
  },
  // A replace rollout (replace/) and a NodeMaintenance (maintenance/).
  {
    id: 'replacement-done-before-ready-time',
    file: 'replace/inflight.js',
    find: 'if (health.at > now) {',
    replace: 'if (false) {',
    bug: 'a replacement is marked Done before it stayed Ready healthGate.minReadySeconds',
  },
  {
    id: 'replacement-done-while-blocked',
    file: 'replace/inflight.js',
    find: 'if (health.blocker !== undefined) {',
    replace: 'if (false) {',
    bug: 'a replacement is marked Done while its health gate is still blocked (its pods not back)',
  },
  {
    id: 'replace-no-pdb-preflight',
    file: 'replace/inflight.js',
    find: 'const blocked = preflight(ctx.view, drain);',
    replace: 'const blocked = undefined;',
    bug: 'a replace rollout cordons the old node without the PDB pre-flight',
  },
  {
    id: 'maintenance-past-budget',
    file: 'maintenance/index.js',
    find: 'if (!round.budget.canTakeDown()) {',
    replace: 'if (false) {',
    bug: 'a NodeMaintenance cordons its node past the cluster budget',
  },
  {
    id: 'maintenance-skip-stays-cordoned',
    file: 'maintenance/drain.js',
    find: "if (target === 'Skipped') {\n        // Given back: after the record, so a restart in between finds it Skipped and uncordons again.\n        if (state.keptCordoned)",
    replace: "if (target === 'Skipped') {\n        if (false)",
    bug: 'a NodeMaintenance skipped by drain.onTimeout skipNode leaves its node cordoned',
  },
];
