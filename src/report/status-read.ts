/**
 * The status branch's spec files read back (the sandbox's screen, `drydock approve`): each
 * document checked field by field into the SpecStatus it was written from (status-docs.ts lays
 * it out), so a reader decides from typed fields, never from words or a cast. A file that does
 * not hold one says why.
 */
import type { NodePhase } from '../protocol/keys.js';
import type {
  ApprovalInForce,
  ApprovalWanted,
  Condition,
  MaintenanceReport,
  NodeRow,
  PendingNode,
  SpecPhase,
  SpecStatus,
} from '../plan/types.js';
import type { SpecKind } from '../spec/model.js';
import { compareStrings } from '../plan/order.js';
import { readSpecDoc, SPEC_DOC } from './status-nodes.js';

/** A spec's file: its SpecStatus, and the source commit the report was about. */
export interface SpecStatusDoc extends SpecStatus {
  readonly sourceCommit?: string;
}

export type SpecStatusRead =
  { readonly ok: true; readonly status: SpecStatusDoc } | { readonly ok: false; readonly why: string };

// Each union as a record, so a member the plan gains does not compile here until it is listed.
const SPEC_KINDS: Readonly<Record<SpecKind, true>> = {
  ScalingGroup: true,
  NodeImage: true,
  AutoscalingStrategy: true,
  NodeMaintenance: true,
  NodeOp: true,
  NodeOpUpgrade: true,
  UpgradeGate: true,
  MaintenanceWindow: true,
  Approval: true,
  MutexTarget: true,
  MutexRunConfig: true,
};
const SPEC_PHASES: Readonly<Record<SpecPhase, true>> = {
  Pending: true,
  Waiting: true,
  Progressing: true,
  Halted: true,
  Complete: true,
  Failed: true,
  NotSupported: true,
  Running: true,
  Succeeded: true,
  Ended: true,
};
const NODE_PHASES: Readonly<Record<NodePhase | 'Outdated' | 'UpToDate' | 'Joining', true>> = {
  Pending: true,
  Cordoned: true,
  Draining: true,
  Updating: true,
  Rebooting: true,
  Verifying: true,
  Done: true,
  Skipped: true,
  Failed: true,
  Outdated: true,
  UpToDate: true,
  Joining: true,
};
const CONDITION_TYPES: Readonly<Record<Condition['type'], true>> = {
  Ready: true,
  Progressing: true,
  Stalled: true,
  Degraded: true,
};
const CONDITION_STATUSES: Readonly<Record<Condition['status'], true>> = { True: true, False: true, Unknown: true };
const STAGES: Readonly<Record<ApprovalWanted['stage'], true>> = { start: true, afterCanary: true, resume: true };
const APPROVAL_KINDS: Readonly<Record<ApprovalWanted['target']['kind'], true>> = {
  NodeImage: true,
  NodeOp: true,
  NodeOpUpgrade: true,
};
const GOALS: Readonly<Record<PendingNode['goal'], true>> = { Join: true, Leave: true };

class NotAStatus extends Error {}

/** A mapping's fields, each read as the type it must have; `at` names the mapping in errors. */
class Fields {
  private readonly o: Record<string, unknown>;

  constructor(
    value: unknown,
    private readonly at: string,
  ) {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new NotAStatus(`${at || 'the document'} is not a mapping`);
    this.o = value as Record<string, unknown>;
  }

  has(k: string): boolean {
    return this.o[k] !== undefined && this.o[k] !== null;
  }

  private where(k: string): string {
    return this.at ? `${this.at}.${k}` : k;
  }

  str(k: string): string {
    const v = this.o[k];
    if (typeof v !== 'string') throw new NotAStatus(`${this.where(k)} is not a string`);
    return v;
  }

  num(k: string): number {
    const v = this.o[k];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new NotAStatus(`${this.where(k)} is not a number`);
    return v;
  }

  oneOf<T extends string>(k: string, members: Readonly<Record<T, true>>): T {
    const v = this.str(k);
    if (!Object.hasOwn(members, v))
      throw new NotAStatus(`${this.where(k)} is ${JSON.stringify(v)}, not one of ${Object.keys(members).join(', ')}`);
    return v as T;
  }

  obj(k: string): Fields {
    return new Fields(this.o[k], this.where(k));
  }

  list<T>(k: string, each: (f: Fields) => T): T[] {
    const v = this.o[k];
    if (!Array.isArray(v)) throw new NotAStatus(`${this.where(k)} is not a list`);
    return v.map((item, i) => each(new Fields(item, `${this.where(k)}[${i}]`)));
  }

  /** The field read by `read` when present (not absent, not null), otherwise undefined. */
  opt<T>(k: string, read: (k: string) => T): T | undefined {
    return this.has(k) ? read(k) : undefined;
  }
}

/** The object without its undefined fields: what the writer left out stays out. */
function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function condition(f: Fields): Condition {
  return {
    type: f.oneOf('type', CONDITION_TYPES),
    status: f.oneOf('status', CONDITION_STATUSES),
    reason: f.str('reason'),
    message: f.str('message'),
  };
}

function nodeRow(f: Fields): NodeRow {
  const s = (k: string): string | undefined => f.opt(k, (x) => f.str(x));
  return compact({
    node: f.str('node'),
    instance: s('instance'),
    phase: f.oneOf('phase', NODE_PHASES),
    since: s('since'),
    image: s('image'),
    replacedBy: s('replacedBy'),
    message: s('message'),
    job: s('job'),
    attempts: f.opt('attempts', (x) => f.num(x)),
    lastError: s('lastError'),
    jobMessage: s('jobMessage'),
    eta: s('eta'),
  });
}

function pendingNode(f: Fields): PendingNode {
  return compact({
    groupId: f.str('groupId'),
    instanceId: f.str('instanceId'),
    providerID: f.str('providerID'),
    goal: f.oneOf('goal', GOALS),
    deadline: f.opt('deadline', (x) => f.str(x)),
    nodeName: f.opt('nodeName', (x) => f.str(x)),
  });
}

function approvalInForce(f: Fields): ApprovalInForce {
  const by = f.opt('approvedBy', (x) => f.obj(x));
  return compact({
    stage: f.oneOf('stage', STAGES),
    name: f.str('name'),
    file: f.str('file'),
    approvedBy: by && { name: by.str('name'), email: by.str('email'), commit: by.str('commit'), at: by.str('at') },
  });
}

function approvalWanted(f: Fields): ApprovalWanted {
  const t = f.obj('target');
  return {
    stage: f.oneOf('stage', STAGES),
    path: f.str('path'),
    target: compact({
      kind: t.oneOf('kind', APPROVAL_KINDS),
      name: t.str('name'),
      revision: t.str('revision'),
      image: t.opt('image', (x) => t.str(x)),
    }),
  };
}

/** medik8s' status fields, which a NodeMaintenance's file holds at its top level, with drydock's detail. */
function maintenance(f: Fields): MaintenanceReport {
  return compact({
    nodeName: f.str('nodeName'),
    reason: f.str('reason'),
    totalPods: f.num('totalpods'),
    evictionPods: f.num('evictionPods'),
    pendingPods: f.list('pendingPodDetails', (p) =>
      compact({
        pod: p.str('pod'),
        pdb: p.opt('pdb', (x) => p.str(x)),
        blockedBy: p.opt('blockedBy', (x) => p.str(x)),
      }),
    ),
    drainProgress: f.num('drainProgress'),
    lastUpdate: f.opt('lastUpdate', (x) => f.str(x)),
    endedAt: f.opt('endedAt', (x) => f.str(x)),
  });
}

function specStatusOf(f: Fields): SpecStatusDoc {
  const s = (k: string): string | undefined => f.opt(k, (x) => f.str(x));
  const progress = f.obj('progress');
  const extra = f.opt('extra', (x) => f.obj(x));
  return compact({
    spec: { kind: f.oneOf('kind', SPEC_KINDS), name: f.str('name') },
    revision: f.str('revision'),
    sourceCommit: s('sourceCommit'),
    phase: f.oneOf('phase', SPEC_PHASES),
    progress: { done: progress.num('done'), total: progress.num('total') },
    strategy: f.opt('strategy', (x) => f.oneOf(x, { inPlace: true })),
    resolvedImage: s('resolvedImage'),
    verification: s('verification'),
    failures: f.obj('counts').num('failures'),
    failureBudget: f.obj('counts').opt('failureBudget', (x) => f.obj('counts').str(x)),
    paused: s('paused'),
    metricHalt: f.opt('metricHalt', (x) => {
      const m = f.obj(x);
      return compact({
        breach: m.str('breach'),
        since: m.str('since'),
        resumeSeen: m.opt('resumeSeen', (y) => m.str(y)),
      });
    }),
    conditions: f.list('conditions', condition),
    nodes: f.list('nodes', nodeRow),
    pending: extra?.opt('pending', (x) => extra.list(x, pendingNode)) ?? [],
    waitingFor: s('waitingFor'),
    lastError: s('lastError'),
    approvals: f.opt('approvals', (x) => f.list(x, approvalInForce)),
    approvalWanted: f.opt('approvalWanted', (x) => approvalWanted(f.obj(x))),
    maintenance: f.has('nodeName') ? maintenance(f) : undefined,
    eta: s('eta'),
  });
}

/** One parsed spec document (its node files' rows under `nodes`) as a SpecStatus, or why it is none. */
function specStatusFromDoc(doc: unknown): SpecStatusRead {
  try {
    return { ok: true, status: specStatusOf(new Fields(doc, '')) };
  } catch (e) {
    if (e instanceof NotAStatus) return { ok: false, why: e.message };
    throw e;
  }
}

/** One spec's file of the status branch's files (path → text), read back. */
export function readSpecStatus(files: ReadonlyMap<string, string>, path: string): SpecStatusRead | undefined {
  if (!files.has(path)) return undefined;
  let doc: unknown;
  try {
    doc = readSpecDoc(files, path);
  } catch {
    return { ok: false, why: 'it is not valid YAML' };
  }
  return specStatusFromDoc(doc);
}

/** Every spec file of the status branch's files, by path, read back. */
export function readSpecStatuses(files: ReadonlyMap<string, string>): Map<string, SpecStatusRead> {
  const out = new Map<string, SpecStatusRead>();
  for (const p of [...files.keys()].filter((k) => SPEC_DOC.test(k)).sort(compareStrings)) {
    const read = readSpecStatus(files, p);
    if (read !== undefined) out.set(p, read);
  }
  return out;
}
