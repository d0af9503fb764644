/**
 * The sandbox's live progress view, as pure functions of a snapshot: `renderView` draws the
 * whole screen (redrawn in place on a terminal), `renderChanges` says what changed between two
 * snapshots as plain lines (appended when the output is a log or CI). No clock and no I/O
 * here: the snapshot carries `now`.
 */

import { sameCommit, shortCommit } from '../commit.js';
import { plural } from '../words.js';
import { NODE_PHASES } from '../protocol/keys.js';
import type { ApprovalWanted } from '../plan/types.js';

export type StepStatus = 'pending' | 'running' | 'done' | 'failed';

/** One start-up step ("start the control plane"). */
export interface StepView {
  readonly title: string;
  readonly status: StepStatus;
  /** What it is doing or waiting for now, or the result. */
  readonly detail?: string;
  /** ISO 8601 start and end, for the duration shown. */
  readonly startedAt?: string;
  readonly endedAt?: string;
}

/** One spec's line, read from the status branch. */
export interface SpecView {
  readonly kind: string;
  readonly name: string;
  readonly phase: string;
  readonly done: number;
  readonly total: number;
  readonly waitingFor?: string;
  /** When it waits for an approval: the file that ends the wait (stage, repository path, target). */
  readonly approvalWanted?: ApprovalWanted;
  readonly lastError?: string;
  /** Short commit id of the spec commit this status is about. */
  readonly sourceCommit?: string;
  /**
   * How many of its nodes are in each phase that is not done yet (its status file's node rows),
   * e.g. { Updating: 2, Rebooting: 1 }: the same for a replace rollout, a NodeOp or an inPlace one.
   */
  readonly nodePhases?: Readonly<Record<string, number>>;
}

/** One node's line, read from the Node object (labels and drydock.dev/ annotations). */
export interface NodeView {
  readonly name: string;
  /** Scaling group (from the providerID). */
  readonly group?: string;
  readonly image?: string;
  readonly ready: boolean;
  readonly unschedulable: boolean;
  /** drydock.dev/phase; undefined when drydock has not touched the node. */
  readonly phase?: string;
  readonly phaseSince?: string;
  /** drydock.dev/reason. */
  readonly reason?: string;
  /** The operation holding the node (its drydock.dev/operation lock), as Kind/name. */
  readonly operation?: string;
  /** drydock.dev/job: the Job a node operation runs on it (namespace/name). */
  readonly job?: string;
  /** status.nodeInfo.bootID: changes when the host rebooted. */
  readonly bootID?: string;
  /** status.nodeInfo.osImage: what the node's OS says it runs (a Bottlerocket host names its version). */
  readonly osImage?: string;
}

export interface GitView {
  /** The tracked branch of fleet.git and its head. */
  readonly branch: string;
  readonly head?: string;
  readonly headSubject?: string;
  readonly statusBranch: string;
  readonly statusHead?: string;
  readonly statusSubject?: string;
  /** The source commit the newest status commit reports on (its Drydock-Source trailer). */
  readonly statusSource?: string;
  /** Seconds since drydock last fetched the repository (its drydock_git_last_sync_age_seconds metric). */
  readonly lastFetchSeconds?: number;
  /** The newest commit drydock refused (errors.yaml on the status branch), with its errors as file:line:column: message. */
  readonly refused?: { readonly commit: string; readonly errors: readonly string[] };
}

export interface SandboxSnapshot {
  readonly now: string;
  readonly startedAt: string;
  /** A headline, e.g. "running" or "scenario upgrade: rolling out". */
  readonly headline: string;
  readonly steps: readonly StepView[];
  readonly specs: readonly SpecView[];
  readonly nodes: readonly NodeView[];
  /** Whether `nodes` has been read from the cluster yet (before that it is empty for want of a look). */
  readonly nodesRead?: boolean;
  readonly git?: GitView;
  /** Why the cluster view is empty or stale (the API server is not reachable yet). */
  readonly problem?: string;
}

const BAR_WIDTH = 20;
/** A refused commit's errors shown on the screen; errors.yaml has them all. */
const SHOWN_ERRORS = 3;

/** "1h2m", "3m12s", "45s". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h}h${m}m`;
  if (m > 0) return `${m}m${sec}s`;
  return `${sec}s`;
}

function since(now: string, then: string | undefined): string {
  if (then === undefined) return '';
  const ms = Date.parse(now) - Date.parse(then);
  return Number.isFinite(ms) ? formatDuration(ms) : '';
}

/** "[██████░░░░░░░░░░░░░░]": done out of total, rounded down so "complete" means complete. */
export function progressBar(done: number, total: number, width = BAR_WIDTH): string {
  const filled = total > 0 ? Math.min(width, Math.floor((Math.max(0, done) / total) * width)) : 0;
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]`;
}

const STEP_MARK: Readonly<Record<StepStatus, string>> = { pending: '·', running: '…', done: '✓', failed: '✗' };

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

/** A line of the screen and where its continuation lines start when it is wrapped. */
interface Line {
  readonly text: string;
  readonly hang: number;
}

/** A line that is no table row: continued a little right of its own indentation. */
function line(text: string): Line {
  return { text, hang: (/^ */.exec(text)?.[0].length ?? 0) + 4 };
}

/** Columns sized to their widest cell; the last column is left unpadded, and continues under itself when wrapped. */
function table(rows: readonly (readonly string[])[], indent = '  '): Line[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const last = indent.length + widths.slice(0, -1).reduce((sum, w) => sum + w + 2, 0);
  return rows.map((row) => ({
    text: (
      indent + row.map((cell, i) => (i === row.length - 1 ? cell : pad(cell, widths[i] ?? 0))).join('  ')
    ).trimEnd(),
    hang: last,
  }));
}

/**
 * `text` in lines no wider than `width`, broken at spaces, never inside a word: a wait, a
 * commit id or a timestamp is a fact a person acts on, and half of one says something else.
 * Continuation lines start at `hang` (at most half the width, so they keep room for words);
 * only a single word wider than a whole line is broken.
 */
export function wrap(text: string, width: number, hang: number): string[] {
  const indent = ' '.repeat(Math.min(hang, Math.floor(width / 2)));
  const out: string[] = [];
  let rest = text;
  let prefix = '';
  while (prefix.length + rest.length > width) {
    const room = width - prefix.length;
    const lead = prefix === '' ? (/^ */.exec(rest)?.[0].length ?? 0) : 0;
    const space = rest.lastIndexOf(' ', room);
    const cut = space > lead ? space : room;
    out.push((prefix + rest.slice(0, cut)).trimEnd());
    rest = rest.slice(cut).trimStart();
    prefix = indent;
  }
  if (rest !== '' || out.length === 0) out.push(prefix + rest);
  return out;
}

const INSTANT = /\b(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z\b/g;

/** ISO instants in a wait or reason as a person reads a clock: "15:04:05 UTC", with the date only when it is not today's. */
export function readableInstants(text: string, now: string): string {
  const today = now.slice(0, 10);
  return text.replace(INSTANT, (_, date: string, time: string) =>
    date === today ? `${time} UTC` : `${date} ${time} UTC`,
  );
}

/**
 * Whether drydock has reported on the newest commit of the tracked branch, or refused it: a
 * refused head is not a sync still under way, and the commit that stays in force is named.
 */
export function gitSyncState(git: GitView): string {
  if (git.head === undefined) return `${git.branch}: no commits yet`;
  if (git.statusHead === undefined) return `waiting for drydock's first status commit on ${git.statusBranch}`;
  if (git.refused !== undefined && sameCommit(git.head, git.refused.commit)) {
    const inForce =
      git.statusSource === undefined
        ? 'no valid commit is in force yet'
        : `${shortCommit(git.statusSource)} stays in force`;
    return `refused: ${git.branch} ${git.head} is not applied; ${inForce}`;
  }
  if (git.statusSource === undefined) return `${git.statusBranch} ${git.statusHead} does not name its source commit`;
  return sameCommit(git.head, git.statusSource)
    ? `in sync: ${git.statusBranch} reports on ${git.branch} ${git.head}`
    : `syncing: ${git.branch} is at ${git.head}, ${git.statusBranch} still reports on ${shortCommit(git.statusSource)}`;
}

/** The phases of one node's sequence in their order; others (Outdated, Joining, ...) after them. */
const PHASE_ORDER: readonly string[] = NODE_PHASES;

/** "2 Updating, 1 Rebooting": the nodes not done, by phase, in the order a node walks them. */
export function phaseSummary(phases: Readonly<Record<string, number>> | undefined): string {
  const rank = (p: string): number => {
    const i = PHASE_ORDER.indexOf(p);
    return i < 0 ? PHASE_ORDER.length : i;
  };
  return Object.entries(phases ?? {})
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([p, n]) => `${n} ${p}`)
    .join(', ');
}

/** What a spec's progress counts, when it is not nodes: a maintenance counts its node's pods evicted. */
const PROGRESS_UNIT: Readonly<Record<string, string>> = { NodeMaintenance: ' pods' };

function specLine(spec: SpecView, now: string): string[] {
  const why = readableInstants(
    spec.lastError ?? (spec.waitingFor === undefined ? '' : `waiting: ${spec.waitingFor}`),
    now,
  );
  const phases = phaseSummary(spec.nodePhases);
  const detail = phases === '' ? why : why === '' ? phases : `${phases} · ${why}`;
  return [
    `${spec.kind}/${spec.name}`,
    progressBar(spec.done, spec.total),
    `${spec.done}/${spec.total}${PROGRESS_UNIT[spec.kind] ?? ''}`,
    spec.phase,
    detail,
  ];
}

/**
 * The spec a person wrote, for the lock on a node: a NodeOpUpgrade's nodes carry the lock of
 * the NodeOp it generates, of the same name, which no file of the repository declares.
 */
function operationLabel(operation: string | undefined, specs: readonly SpecView[]): string | undefined {
  if (operation === undefined || !operation.startsWith('NodeOp/')) return operation;
  const has = (id: string): boolean => specs.some((s) => `${s.kind}/${s.name}` === id);
  const upgrade = `NodeOpUpgrade/${operation.slice('NodeOp/'.length)}`;
  return !has(operation) && has(upgrade) ? upgrade : operation;
}

function nodeState(node: NodeView): string {
  return [node.ready ? 'Ready' : 'NotReady', ...(node.unschedulable ? ['cordoned'] : [])].join(',');
}

function nodeLine(node: NodeView, snapshot: SandboxSnapshot): string[] {
  return [
    node.name,
    node.group ?? '-',
    node.image ?? '-',
    nodeState(node),
    operationLabel(node.operation, snapshot.specs) ?? '-',
    node.phase ?? '-',
    since(snapshot.now, node.phaseSince),
    readableInstants(node.reason ?? (node.job === undefined ? '' : `job ${node.job}`), snapshot.now),
  ];
}

function stepLines(snapshot: SandboxSnapshot): Line[] {
  if (snapshot.steps.every((s) => s.status === 'done')) return [];
  const rows = snapshot.steps.map((s) => {
    const took = s.startedAt === undefined ? '' : since(s.endedAt ?? snapshot.now, s.startedAt);
    return [STEP_MARK[s.status], s.title, took, s.detail ?? ''];
  });
  return [line(''), ...table(rows)];
}

function gitLines(git: GitView): Line[] {
  const fetched = git.lastFetchSeconds;
  const lines = [
    line(''),
    line(
      `  git   ${gitSyncState(git)}${fetched === undefined ? '' : ` · drydock fetched ${formatDuration(fetched * 1000)} ago`}`,
    ),
  ];
  if (git.statusSubject !== undefined) lines.push({ text: `        last status: ${git.statusSubject}`, hang: 21 });
  const refused = git.refused;
  if (refused !== undefined) {
    const n = refused.errors.length;
    lines.push(
      line(
        `  ! commit ${shortCommit(refused.commit)} refused (${plural(n, 'error')}; errors.yaml on ${git.statusBranch}): fix ${n === 1 ? 'it' : 'them'} in a new commit`,
      ),
    );
    for (const e of refused.errors.slice(0, SHOWN_ERRORS)) lines.push(line(`      ${e}`));
    if (n > SHOWN_ERRORS) lines.push(line(`      … ${plural(n - SHOWN_ERRORS, 'more error')} in errors.yaml`));
  }
  return lines;
}

/** The whole screen, top to bottom. Lines are not wider than `width`: a longer one is wrapped at a space, never cut. */
export function renderView(snapshot: SandboxSnapshot, width = 120): string[] {
  // Uptime before the headline: a long headline is what wraps on a narrow terminal.
  const lines: Line[] = [
    {
      text: `drydock sandbox · up ${formatDuration(Date.parse(snapshot.now) - Date.parse(snapshot.startedAt))} · ${snapshot.headline}`,
      hang: 2,
    },
    ...stepLines(snapshot),
    ...(snapshot.git === undefined ? [] : gitLines(snapshot.git)),
  ];
  if (snapshot.specs.length > 0) lines.push(line(''), ...table(snapshot.specs.map((s) => specLine(s, snapshot.now))));
  if (snapshot.nodes.length > 0) {
    lines.push(
      line(''),
      ...table([
        ['NODE', 'GROUP', 'IMAGE', 'STATE', 'OPERATION', 'PHASE', 'SINCE', 'REASON'],
        ...snapshot.nodes.map((n) => nodeLine(n, snapshot)),
      ]),
    );
  }
  if (snapshot.problem !== undefined) lines.push(line(''), line(`  ! ${snapshot.problem}`));
  return lines.flatMap((l) => wrap(l.text, width, l.hang));
}

function byKey<T>(items: readonly T[], key: (t: T) => string): Map<string, T> {
  return new Map(items.map((i) => [key(i), i]));
}

/**
 * What changed from `prev` to `next`, one plain line per change, for logs and CI where a
 * redrawn screen would be noise. `prev` undefined: everything is new.
 */
export function renderChanges(prev: SandboxSnapshot | undefined, next: SandboxSnapshot): string[] {
  const out: string[] = [];
  const stamp = `[${formatDuration(Date.parse(next.now) - Date.parse(next.startedAt))}]`;
  const say = (text: string): void => {
    out.push(`${stamp} ${text}`);
  };
  if (prev?.headline !== next.headline) say(next.headline);
  const prevSteps = byKey(prev?.steps ?? [], (s) => s.title);
  for (const s of next.steps) {
    const p = prevSteps.get(s.title);
    if (p?.status === s.status && p.detail === s.detail) continue;
    if (s.status === 'pending') continue;
    const took =
      s.status === 'done' && s.startedAt !== undefined ? ` (${since(s.endedAt ?? next.now, s.startedAt)})` : '';
    say(`${STEP_MARK[s.status]} ${s.title}${took}${s.detail === undefined ? '' : `: ${s.detail}`}`);
  }
  if (next.git !== undefined) {
    const state = gitSyncState(next.git);
    if (prev?.git === undefined || gitSyncState(prev.git) !== state) say(`git ${state}`);
    const refused = next.git.refused;
    if (refused !== undefined && prev?.git?.refused?.commit !== refused.commit) {
      say(`! commit ${shortCommit(refused.commit)} refused: ${refused.errors.join('; ')}`);
    }
  }
  const prevSpecs = byKey(prev?.specs ?? [], (s) => `${s.kind}/${s.name}`);
  for (const s of next.specs) {
    const p = prevSpecs.get(`${s.kind}/${s.name}`);
    if (
      p !== undefined &&
      p.phase === s.phase &&
      p.done === s.done &&
      p.total === s.total &&
      p.waitingFor === s.waitingFor &&
      p.lastError === s.lastError &&
      phaseSummary(p.nodePhases) === phaseSummary(s.nodePhases)
    ) {
      continue;
    }
    say(
      specLine(s, next.now)
        .filter((c) => c !== '')
        .join(' '),
    );
  }
  const prevNodes = byKey(prev?.nodes ?? [], (n) => n.name);
  for (const n of next.nodes) {
    const p = prevNodes.get(n.name);
    if (p === undefined) {
      // Only a node that appears after a first look has joined; the first look finds the ones already there (a resumed sandbox).
      say(
        `node ${n.name} ${prev?.nodesRead === true ? 'joined' : 'found'} (${n.group ?? 'no group'}, ${n.image ?? 'image unknown'})`,
      );
    } else if (
      p.phase !== n.phase ||
      p.unschedulable !== n.unschedulable ||
      p.ready !== n.ready ||
      p.reason !== n.reason ||
      p.operation !== n.operation
    ) {
      const operation = operationLabel(n.operation, next.specs);
      const by = operation === undefined ? '' : ` (${operation}${n.job === undefined ? '' : `, job ${n.job}`})`;
      say(`node ${n.name} ${n.phase ?? '-'} ${nodeState(n)}${by}${n.reason === undefined ? '' : `: ${n.reason}`}`);
    }
  }
  const nextNames = new Set(next.nodes.map((n) => n.name));
  for (const p of prev?.nodes ?? []) if (!nextNames.has(p.name)) say(`node ${p.name} removed`);
  if (next.problem !== undefined && prev?.problem !== next.problem) say(`! ${next.problem}`);
  return out;
}
