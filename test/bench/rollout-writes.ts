/**
 * API writes as the counting proxy saw them, told apart by verb, resource and (for node
 * patches) which fields they set, so the excess over the steps' minimum is visible; and the
 * minimum itself, written out step by step (docs/benchmarks/api-writes.md explains each).
 */
import { apiCallOf, callKey } from '../e2e/api-calls.js';
import type { ProxiedRequest } from '../service/counting-proxy.js';

export function isWrite(r: ProxiedRequest): boolean {
  return r.method !== 'GET' && !r.lease;
}

/** What a node patch sets: its annotation and label keys and spec fields, without the prefix. */
function nodePatchFields(body: string | undefined): string {
  if (body === undefined) return '';
  try {
    const b = JSON.parse(body) as {
      metadata?: { annotations?: Record<string, unknown>; labels?: Record<string, unknown> };
      spec?: Record<string, unknown>;
    };
    const short = (k: string): string => k.replace(/^[^/]*drydock\.dev\//, '');
    const fields = [
      ...Object.keys(b.metadata?.annotations ?? {}).map(short),
      ...Object.keys(b.metadata?.labels ?? {}).map((k) => `label:${short(k)}`),
      ...Object.keys(b.spec ?? {}).map((k) => `spec.${k}`),
    ];
    return ` {${fields.sort().join(',')}}`;
  } catch {
    return '';
  }
}

/** "verb group/resource[/sub] in ns" and, for a node patch, the fields it sets. */
export function writeKey(r: ProxiedRequest): string {
  const call = apiCallOf(r);
  const key = callKey(call) + (refused(r) ? ` → ${r.status}` : '');
  return call.resource === 'nodes' && call.verb === 'patch' ? key + nodePatchFields(r.body) : key;
}

/** A write the API server refused (a PDB's 429 on an eviction, a 409 conflict): it changed nothing. */
export function refused(r: ProxiedRequest): boolean {
  return r.status !== undefined && r.status >= 400;
}

export function tally(writes: readonly ProxiedRequest[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const w of writes) counts.set(writeKey(w), (counts.get(writeKey(w)) ?? 0) + 1);
  return new Map([...counts].sort((a, b) => b[1] - a[1]));
}

/** One write the steps cannot do without, and why. */
export interface MinimalWrite {
  readonly write: string;
  readonly count: number;
  readonly why: string;
}

/*
 * The minimum, step by step. The rule: one write per phase the protocol makes durable on the
 * node (DESIGN.md: the node's annotations are the only state; a restarted or second replica,
 * the status branch and `kubectl get nodes -L drydock.dev/phase` read them), plus each write
 * that is itself the step (an eviction, a Job, a reboot pod, a cleanup). A cordon or uncordon
 * belongs to the phase change beside it: the two fit in one patch.
 */

/** Per replaced node, draining `pods` pods. */
export function replaceMinimum(pods: number): MinimalWrite[] {
  return [
    {
      write: 'patch node: lock (operation, phase Pending)',
      count: 1,
      why: 'the durable claim before the surge, so a crash or a second replica finds the node taken and surges no second instance',
    },
    {
      write: 'patch node: replaced-by',
      count: 1,
      why: 'names the new instance once it exists (its id is known only then), so a restart does not surge again',
    },
    {
      write: 'patch replacement: replaces, phase Done',
      count: 1,
      why: 'the replacement passed its health gate; what the status and a restart read',
    },
    {
      write: 'patch node: cordon + phase Draining (evicted workloads)',
      count: 1,
      why: 'no new pods land on the node to drain, and the drain and its timeout start from this instant; what it moves is remembered for the health gate',
    },
    {
      write: 'create pods/eviction',
      count: pods,
      why: 'one eviction per pod: the Eviction API is per pod and holds PDBs',
    },
    {
      write: 'delete node',
      count: 1,
      why: 'the old Node object goes with its instance, at once rather than when the cloud controller notices',
    },
  ];
}

/** Per node of an in-place NodeOp with cordon, drain and reboot. */
export function nodeOpMinimum(pods: number): MinimalWrite[] {
  return [
    {
      write: 'patch node: lock + cordon + phase Draining (operation, Job name, evicted workloads)',
      count: 1,
      why: 'the claim, and no new pods land; what was running is remembered for the health gate; one patch when nothing waits between the lock and the cordon (the budget, the drain preflight, UpgradeGate before-Jobs)',
    },
    { write: 'create pods/eviction', count: pods, why: 'one eviction per pod, through PDBs' },
    { write: 'patch node: phase Updating', count: 1, why: 'drained: the Job runs now' },
    { write: 'create job', count: 1, why: 'the operation itself' },
    {
      write: 'patch node: phase Rebooting + bootID',
      count: 1,
      why: 'the Job succeeded (never re-run) and the boot to leave is recorded before any reboot pod exists',
    },
    { write: 'create pod (reboot)', count: 1, why: 'the reboot' },
    { write: 'delete pod (reboot)', count: 1, why: 'the finished reboot pod is cleaned up' },
    {
      write: 'patch node: uncordon + phase Verifying',
      count: 1,
      why: 'rebooted: pods may return while the health gate runs; one patch',
    },
    {
      write: 'patch node: record revision, release lock',
      count: 1,
      why: 'done: this revision never runs on the node again',
    },
    { write: 'delete job', count: 1, why: 'finished Jobs are cleaned up once their outcome is recorded (issue 11)' },
  ];
}

export function total(steps: readonly MinimalWrite[]): number {
  return steps.reduce((n, s) => n + s.count, 0);
}
