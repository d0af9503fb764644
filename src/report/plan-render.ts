/**
 * Renders a Plan for people: plain text for a terminal, Markdown for a pull-request comment
 * (a summary table, the waves, the blockers), JSON for tools. Everything shown is read off the
 * Plan; nothing is re-derived.
 */
import { shortCommit } from '../commit.js';
import type { Action, MetricGateView, Plan, Wait, WaitCode } from '../plan/types.js';
import { describePace } from '../plan/pace.js';
import { cell } from './markdown.js';
import { DRAIN_PENDING_TAINT } from '../protocol/keys.js';

export type PlanFormat = 'text' | 'markdown' | 'json';
export const PLAN_FORMATS = ['text', 'markdown', 'json'] as const satisfies readonly PlanFormat[];

/** Waits that only a person can end: the plan is blocked while any is present. */
export const BLOCKING_WAITS = ['approval', 'pdb', 'halted', 'paused'] as const satisfies readonly WaitCode[];

export interface PlanContext {
  /** Source commit the plan was made from. */
  readonly commit?: string;
  readonly cluster?: string;
  /** ISO 8601 time the plan was made. */
  readonly at: string;
  /** Validation errors of the newest commit (the plan is then made from nothing). */
  readonly errors?: readonly Finding[];
  /** What the loader warns about that does not refuse the commit (a listed path a commit emptied). */
  readonly warnings?: readonly Finding[];
}

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
  readonly hint: string;
}

export function blockers(plan: Plan): Wait[] {
  return plan.waits.filter((w) => (BLOCKING_WAITS as readonly string[]).includes(w.code));
}

export function isBlocked(plan: Plan): boolean {
  return blockers(plan).length > 0;
}

/** "3 cordon, 1 setGroupImage" — what the next step changes, counted by kind. */
export function summariseActions(actions: readonly Action[]): string {
  if (actions.length === 0) return 'nothing';
  const counts = new Map<string, number>();
  for (const a of actions) counts.set(a.kind, (counts.get(a.kind) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
}

function target(a: Action): string {
  switch (a.kind) {
    case 'setGroupImage':
      return `group ${a.groupId} → image ${a.image}`;
    case 'surge':
      return `group ${a.groupId} +${a.count} instance(s)`;
    case 'annotateNode':
      return `node ${a.node}: ${Object.entries(a.annotations)
        .map(([k, v]) => (v === null ? `-${k}` : `${k}=${v}`))
        .join(' ')}`;
    case 'cordon':
    case 'uncordon':
    case 'deleteNode':
      return `node ${a.node}`;
    case 'evict':
      return `pod ${a.namespace}/${a.pod} on ${a.node}`;
    case 'deletePod':
      return `pod ${a.namespace}/${a.pod} on ${a.node} (${a.reason})`;
    case 'copyLabels':
      return `labels ${a.from} → ${a.to}`;
    case 'removeInstance':
      return `instance ${a.groupId}/${a.instanceId}${a.node ? ` (node ${a.node})` : ''}`;
    case 'scaleDeployment':
      return `deployment ${a.namespace}/${a.name} → ${a.replicas} replica(s)`;
    case 'createNodeJob':
      return `Job in ${a.namespace} on node ${a.node} (${a.job.image})`;
    case 'createBottlerocketUpdateJob':
      return `Bottlerocket update Job in ${a.namespace} on node ${a.node} (version ${a.version})`;
    case 'createGateJob':
      return `UpgradeGate ${a.gate} ${a.step}-Job ${a.index + 1} for node ${a.node}`;
    case 'createRebootPod':
      return `reboot pod in ${a.namespace} on node ${a.node} (bootID ${a.bootID})`;
    case 'deleteJob':
      return `Job ${a.namespace}/${a.name} (node ${a.node})`;
    case 'deleteRebootPod':
      return `pod ${a.namespace}/${a.name} (node ${a.node})`;
    case 'labelNode':
      return `node ${a.node}: ${Object.entries(a.labels)
        .map(([k, v]) => (v === null ? `-${k}` : `${k}=${v}`))
        .join(' ')}`;
    case 'markDrainPending':
      return `node ${a.node}: ${a.pending ? '' : '-'}taint ${DRAIN_PENDING_TAINT.key}:${DRAIN_PENDING_TAINT.effect}`;
    case 'patchPool':
      return `MachineConfigPool ${a.pool}${a.paused !== undefined ? ` paused=${String(a.paused)}` : ''}${a.nodeSelector !== undefined ? ' nodeSelector' : ''}`;
  }
}

function specName(s: { kind: string; name: string }): string {
  return `${s.kind}/${s.name}`;
}

function short(commit: string | undefined): string {
  return shortCommit(commit, 'unknown');
}

export function renderText(plan: Plan, ctx: PlanContext): string {
  const out: string[] = [];
  out.push(`drydock plan for cluster ${ctx.cluster ?? 'unknown'} at commit ${short(ctx.commit)} (${ctx.at})`);
  for (const e of ctx.errors ?? []) out.push(`${e.file}:${e.line}:${e.column}: error: ${e.message}\n  hint: ${e.hint}`);
  for (const e of ctx.warnings ?? [])
    out.push(`${e.file}:${e.line}:${e.column}: warning: ${e.message}\n  hint: ${e.hint}`);
  out.push('', 'Specs:');
  if (plan.specs.length === 0) out.push('  (none)');
  for (const s of plan.specs) {
    // Progress counts nodes only for specs that act on nodes.
    const progress =
      s.spec.kind === 'AutoscalingStrategy' || s.phase === 'NotSupported'
        ? ''
        : `, ${s.progress.done}/${s.progress.total} nodes`;
    // A Bottlerocket NodeImage names the version its nodes move to (latest, once resolved).
    const version = s.resolvedImage !== undefined ? `, to ${s.resolvedImage}` : '';
    out.push(
      `  ${specName(s.spec)}: ${s.phase}${progress}${version}${s.waitingFor ? ` — waiting: ${s.waitingFor}` : ''}`,
    );
  }
  if (plan.metricGates !== undefined) {
    out.push('', 'Metric gates:');
    for (const g of plan.metricGates) out.push(...metricGateLines(g).map((l) => `  ${l}`));
  }
  if (plan.budget !== undefined) {
    out.push('', 'Cluster budget:');
    for (const line of plan.budget) out.push(`  ${line}`);
  }
  out.push('', `Next step: ${summariseActions(plan.actions)}`);
  for (const a of plan.actions) out.push(`  ${a.kind} ${target(a)}`);
  out.push('', 'Waves:');
  if (plan.forecast.waves.length === 0) out.push('  (none)');
  for (const w of plan.forecast.waves) {
    out.push(`  ${w.index}. ${specName(w.spec)} ${w.label}: ${w.nodes.join(', ')} (${w.start} → ${w.end})`);
  }
  out.push('', `ETA: ${plan.forecast.eta ?? 'none while blocked'}`);
  for (const p of plan.forecast.paces ?? []) out.push(`  ${specName(p.spec)}: ${describePace(p)}`);
  const blocked = blockers(plan);
  out.push('', blocked.length === 0 ? 'Blockers: none' : 'Blockers (need a person):');
  for (const w of blocked) out.push(`  [${w.code}] ${specName(w.spec)}${w.node ? ` ${w.node}` : ''}: ${w.reason}`);
  const other = plan.waits.filter((w) => !blocked.includes(w));
  if (other.length > 0) {
    out.push('', 'Waiting (ends by itself):');
    for (const w of other)
      out.push(
        `  [${w.code}] ${specName(w.spec)}${w.node ? ` ${w.node}` : ''}: ${w.reason}${w.until ? ` (until ${w.until})` : ''}`,
      );
  }
  return `${out.join('\n')}\n`;
}

/** A metric gate in a few lines: where, on breach what, for which specs, what it checks, its state. */
function metricGateLines(g: MetricGateView): string[] {
  const am = g.alertmanager !== undefined ? `, silences from Alertmanager at ${g.alertmanager}` : '';
  const specs = g.specs.length > 0 ? g.specs.join(', ') : 'no spec';
  return [
    `Prometheus at ${g.prometheus}${am}; on breach ${g.onBreach}; for ${specs}: ${g.state}`,
    ...g.checks.map((c) => `  - ${c}`),
  ];
}

export function renderMarkdown(plan: Plan, ctx: PlanContext): string {
  const out: string[] = [];
  const blocked = blockers(plan);
  out.push(
    `### drydock plan — ${blocked.length > 0 ? '⛔ blocked' : plan.actions.length > 0 || plan.forecast.waves.length > 0 ? '🔄 will change nodes' : '✅ no changes'}`,
  );
  out.push(
    '',
    `Cluster \`${ctx.cluster ?? 'unknown'}\`, commit \`${short(ctx.commit)}\`, planned at ${ctx.at}. ETA: ${plan.forecast.eta ?? 'none while blocked'}.`,
  );
  if ((ctx.errors ?? []).length > 0) {
    out.push('', '#### Errors', '');
    for (const e of ctx.errors ?? []) out.push(`- \`${e.file}:${e.line}:${e.column}\`: ${e.message} — ${e.hint}`);
  }
  if ((ctx.warnings ?? []).length > 0) {
    out.push('', '#### Warnings', '');
    for (const e of ctx.warnings ?? []) out.push(`- \`${e.file}:${e.line}:${e.column}\`: ${e.message} — ${e.hint}`);
  }
  out.push('', '| Spec | Phase | Progress | Waiting for |', '| --- | --- | --- | --- |');
  for (const s of plan.specs) {
    out.push(
      `| ${cell(specName(s.spec))} | ${s.phase} | ${s.progress.done}/${s.progress.total} | ${cell(s.waitingFor ?? '')} |`,
    );
  }
  if (plan.specs.length === 0) out.push('| (none) | | | |');
  if (plan.metricGates !== undefined) {
    out.push('', '#### Metric gates', '');
    for (const g of plan.metricGates) {
      const [head, ...checks] = metricGateLines(g);
      out.push(`- ${head ?? ''}`, ...checks.map((c) => `  ${c.trim()}`));
    }
  }
  if (plan.budget !== undefined) {
    out.push('', '#### Cluster budget', '');
    for (const line of plan.budget) out.push(`- ${line}`);
  }
  out.push('', '#### Waves', '');
  if (plan.forecast.waves.length === 0) out.push('No waves: nothing to roll out.');
  else {
    out.push('| # | Spec | Wave | Nodes | Start | End |', '| --- | --- | --- | --- | --- | --- |');
    for (const w of plan.forecast.waves) {
      out.push(
        `| ${w.index} | ${cell(specName(w.spec))} | ${cell(w.label)} | ${cell(w.nodes.join(', '))} | ${w.start} | ${w.end} |`,
      );
    }
    const paces = plan.forecast.paces ?? [];
    if (paces.length > 0) out.push('', ...paces.map((p) => `- ${cell(specName(p.spec))}: ${cell(describePace(p))}`));
  }
  out.push('', '#### Blockers', '');
  if (blocked.length === 0) out.push('None.');
  for (const w of blocked)
    out.push(`- **${w.code}** ${cell(specName(w.spec))}${w.node ? ` (\`${w.node}\`)` : ''}: ${w.reason}`);
  if (plan.actions.length > 0) {
    out.push('', `<details><summary>Next step: ${summariseActions(plan.actions)}</summary>`, '');
    for (const a of plan.actions) out.push(`- \`${a.kind}\` ${target(a)}`);
    out.push('', '</details>');
  }
  return `${out.join('\n')}\n`;
}

export function renderJson(plan: Plan, ctx: PlanContext): string {
  return `${JSON.stringify(
    {
      cluster: ctx.cluster ?? null,
      commit: ctx.commit ?? null,
      at: ctx.at,
      blocked: isBlocked(plan),
      blockers: blockers(plan),
      errors: ctx.errors ?? [],
      warnings: ctx.warnings ?? [],
      specs: plan.specs,
      actions: plan.actions,
      waits: plan.waits,
      notes: plan.notes,
      waves: plan.forecast.waves,
      eta: plan.forecast.eta ?? null,
      paces: plan.forecast.paces ?? [],
      wakeAt: plan.wakeAt ?? null,
      ...(plan.metricGates !== undefined ? { metricGates: plan.metricGates } : {}),
      ...(plan.budget !== undefined ? { budget: plan.budget } : {}),
    },
    null,
    2,
  )}\n`;
}

export function renderPlan(plan: Plan, format: PlanFormat, ctx: PlanContext): string {
  switch (format) {
    case 'text':
      return renderText(plan, ctx);
    case 'markdown':
      return renderMarkdown(plan, ctx);
    case 'json':
      return renderJson(plan, ctx);
  }
}
