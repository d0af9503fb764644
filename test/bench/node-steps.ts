/**
 * Per node, when each step's write went out, read off the counting proxy's record: the cordon,
 * the NodeOp's Job and reboot pod, the uncordon, the Job's and the Node's deletion. drydock and
 * the floor driver both reach the API server through the proxy, so the same read-out gives both
 * their per-node step times, side by side.
 */
import type { ProxiedRequest } from '../service/counting-proxy.js';
import { ANNOTATIONS, JOB_LABELS } from '../../src/protocol/keys.js';

type Marks = Record<string, number>;

interface Body {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, unknown> };
  spec?: { unschedulable?: boolean | null; taints?: unknown };
}

/**
 * drydock's mark of a node a rollout drains later, or its removal (plan/drain-pending.ts): made
 * at the rollout's start and as the node's turn passes, no step of the node's own sequence.
 */
function drainPendingMark(b: Body): boolean {
  const keys = Object.keys(b.metadata?.annotations ?? {});
  return b.spec?.taints !== undefined && keys.length === 1 && keys[0] === ANNOTATIONS.drainPending;
}

function parsed(r: ProxiedRequest): Body {
  try {
    return JSON.parse(r.body ?? '{}') as Body;
  } catch {
    return {};
  }
}

function mark(marks: Map<string, Marks>, node: string, step: string, at: number): void {
  const m = marks.get(node) ?? {};
  // The first time a step happened: a retried write does not move it.
  m[step] ??= at;
  marks.set(node, m);
}

/** A write on a Node object: its first write, its cordon, uncordon, deletion. */
function nodeWrite(marks: Map<string, Marks>, r: ProxiedRequest, node: string): void {
  if (r.method === 'PATCH' && drainPendingMark(parsed(r))) return;
  mark(marks, node, 'first', r.at);
  const m = marks.get(node) ?? {};
  m['last'] = r.at;
  if (r.method === 'DELETE') mark(marks, node, 'nodeDeleted', r.at);
  if (r.method !== 'PATCH') return;
  const u = parsed(r).spec?.unschedulable;
  if (u === true) mark(marks, node, 'cordon', r.at);
  else if (u === false || u === null) mark(marks, node, 'uncordon', r.at);
}

/** Per node, the instant (ms) of each step's first write. */
export function nodeSteps(writes: readonly ProxiedRequest[]): Map<string, Marks> {
  const marks = new Map<string, Marks>();
  const jobNode = new Map<string, string>();
  for (const r of writes) {
    const path = new URL(r.path, 'http://x').pathname;
    // A refused write did not happen, but for a Node's deletion: a 404 there means the sim cloud
    // deleted it first, and the call still marks when the step went out.
    const refused = r.status !== undefined && r.status >= 400;
    if (refused && !(r.method === 'DELETE' && r.status === 404)) continue;
    const node = /^\/api\/v1\/nodes\/([^/]+)$/.exec(path)?.[1];
    if (node !== undefined) {
      nodeWrite(marks, r, node);
      continue;
    }
    if (r.method === 'POST' && /\/jobs$/.test(path)) {
      const b = parsed(r);
      const n = b.metadata?.labels?.[JOB_LABELS.node];
      if (n !== undefined) {
        jobNode.set(b.metadata?.name ?? '', n);
        mark(marks, n, 'job', r.at);
      }
    } else if (r.method === 'POST' && /\/pods$/.test(path)) {
      const labels = parsed(r).metadata?.labels ?? {};
      const n = labels[JOB_LABELS.node];
      if (n !== undefined && labels[JOB_LABELS.step] === 'reboot') mark(marks, n, 'reboot', r.at);
    } else if (r.method === 'DELETE') {
      const n = jobNode.get(/\/jobs\/([^/]+)$/.exec(path)?.[1] ?? '');
      if (n !== undefined) mark(marks, n, 'jobDeleted', r.at);
    }
  }
  // A node's end: its last write or its Job's deletion, whichever came later (drydock deletes the
  // Job once it recorded the outcome and writes the node's record at the end; the floor deletes
  // the Job last).
  for (const m of marks.values()) m['end'] = Math.max(m['last'] ?? 0, m['jobDeleted'] ?? 0);
  return marks;
}

export const REPLACE_MARKS = ['first', 'cordon', 'nodeDeleted'] as const;
export const NODEOP_MARKS = ['first', 'cordon', 'job', 'reboot', 'uncordon', 'end'] as const;

/** "a → b: median (p90) s" for each pair of consecutive steps, over the nodes that have both. */
export function describeSteps(marks: ReadonlyMap<string, Marks>, steps: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 1; i < steps.length; i++) {
    const [from = '', to = ''] = [steps[i - 1], steps[i]];
    const s = [...marks.values()]
      .map((m) => ((m[to] ?? NaN) - (m[from] ?? NaN)) / 1000)
      .filter((x) => Number.isFinite(x))
      .sort((a, b) => a - b);
    if (s.length === 0) continue;
    const at = (q: number): string => (s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0).toFixed(2);
    out.push(`${from} → ${to}: ${at(0.5)} s median, ${at(0.9)} s p90 (${s.length} nodes)`);
  }
  return out;
}
