/**
 * Notification events, derived from the status drydock publishes. An event is a fact a
 * snapshot shows (a rollout took a node, waits for an approval, lost a node, halted, is
 * complete) with an id made of spec, revision, event and node: the same fact seen in any
 * later snapshot, by this process or the next leader, has the same id, so the sent-log
 * (sent-log.ts) is what makes it one message, not the round that saw it.
 */
import { createHash } from 'node:crypto';
import type { NotifyEventType } from '../spec/model.js';
import type { SpecRef, SpecStatus, Wait } from '../plan/types.js';

export interface NotifyEvent {
  /** Stable across rounds and restarts: sha256 of spec, revision, event and node, 24 hex digits. */
  readonly id: string;
  readonly type: NotifyEventType;
  readonly cluster: string;
  readonly spec: SpecRef;
  readonly revision: string;
  readonly node?: string;
  /** One line for a person: what happened. */
  readonly summary: string;
  /** What the status says beside it (a wait, an error), if anything. */
  readonly detail?: string;
  /** The source commit in force. */
  readonly sourceCommit?: string;
}

/**
 * What the events are read from: the part of a published status report they need (the
 * service's status snapshot is one).
 */
export interface NotifiedStatus {
  readonly cluster: string;
  /** The commit whose specs are in force. */
  readonly sourceCommit?: string;
  readonly specs: readonly SpecStatus[];
  readonly waits: readonly Wait[];
}

/** Node phases that mean the rollout acted on the node (not UpToDate, Outdated, Joining, Pending). */
const ACTED = new Set(['Cordoned', 'Draining', 'Updating', 'Rebooting', 'Verifying', 'Done', 'Skipped', 'Failed']);

export function eventId(spec: SpecStatus['spec'], revision: string, type: NotifyEventType, node = ''): string {
  return createHash('sha256')
    .update(`${spec.kind}/${spec.name}\n${revision}\n${type}\n${node}`)
    .digest('hex')
    .slice(0, 24);
}

function event(
  snap: NotifiedStatus,
  s: SpecStatus,
  type: NotifyEventType,
  summary: string,
  extra: { node?: string; detail?: string | undefined } = {},
): NotifyEvent {
  return {
    id: eventId(s.spec, s.revision, type, extra.node),
    type,
    cluster: snap.cluster,
    spec: s.spec,
    revision: s.revision,
    ...(extra.node !== undefined ? { node: extra.node } : {}),
    summary,
    ...(extra.detail !== undefined && extra.detail !== '' ? { detail: extra.detail } : {}),
    ...(snap.sourceCommit !== undefined ? { sourceCommit: snap.sourceCommit } : {}),
  };
}

/** The events one spec's status shows, in the order a person would read them. */
function specEvents(snap: NotifiedStatus, s: SpecStatus): NotifyEvent[] {
  const name = `${s.spec.kind}/${s.spec.name}`;
  const out: NotifyEvent[] = [];
  const started = s.nodes.some((n) => ACTED.has(n.phase));
  if (started) out.push(event(snap, s, 'started', `${name}: rollout started`, { detail: progress(s) }));
  const approval = snap.waits.find((w) => w.code === 'approval' && sameSpec(w.spec, s));
  if (approval) {
    const stage = approval.approval?.stage ?? 'start';
    out.push({
      ...event(snap, s, 'approval', `${name}: waiting for an approval (${stage})`, {
        detail: approval.approval ? `merge ${approval.approval.path}` : approval.reason,
      }),
      // One per stage: the afterCanary approval is news after the start one.
      id: eventId(s.spec, s.revision, 'approval', stage),
    });
  }
  for (const n of s.nodes) {
    if (n.phase !== 'Failed') continue;
    out.push(
      event(snap, s, 'nodeFailed', `${name}: node ${n.node} failed`, {
        node: n.node,
        detail: n.lastError ?? n.message,
      }),
    );
  }
  if (s.phase === 'Halted')
    out.push(event(snap, s, 'halted', `${name}: rollout halted`, { detail: s.waitingFor ?? s.lastError }));
  if (s.phase === 'Complete' && s.progress.total > 0) {
    out.push(event(snap, s, 'complete', `${name}: rollout complete`, { detail: progress(s) }));
  }
  return out;
}

function sameSpec(a: SpecStatus['spec'], b: SpecStatus): boolean {
  return a.kind === b.spec.kind && a.name === b.spec.name;
}

function progress(s: SpecStatus): string {
  return `${s.progress.done}/${s.progress.total} nodes done`;
}

/** Every event the snapshot shows, as a fact (sent or not). */
export function snapshotEvents(snap: NotifiedStatus): NotifyEvent[] {
  return snap.specs.flatMap((s) => specEvents(snap, s));
}

/** The ids of the events statuses and waits show (an id needs nothing else). */
export function eventIds(view: Pick<NotifiedStatus, 'specs' | 'waits'>): string[] {
  return snapshotEvents({ cluster: '', specs: view.specs, waits: view.waits }).map((e) => e.id);
}

/** The ids of the events spec statuses read back from the status branch show, their approval waits included. */
export function branchEventIds(specs: readonly SpecStatus[]): string[] {
  const waits = specs.flatMap((s): Wait[] =>
    s.approvalWanted !== undefined
      ? [{ spec: s.spec, code: 'approval', reason: 'approval needed', approval: s.approvalWanted }]
      : [],
  );
  return eventIds({ specs, waits });
}

/**
 * The events of `snap` to send, given the ids already sent (or recorded as a baseline): a
 * completion is news only for a rollout whose start was, so a spec that was already at its
 * revision when it appeared, or that nothing had to touch, sends nothing.
 */
export function newEvents(snap: NotifiedStatus, sent: ReadonlySet<string>): NotifyEvent[] {
  const all = snapshotEvents(snap);
  const started = new Set(all.filter((e) => e.type === 'started').map((e) => e.id));
  return all.filter((e) => {
    if (sent.has(e.id)) return false;
    if (e.type !== 'complete') return true;
    const start = eventId(e.spec, e.revision, 'started');
    return sent.has(start) || started.has(start);
  });
}
