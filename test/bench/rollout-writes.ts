/**
 * API writes as the counting proxy saw them, told apart by verb, resource and (for node
 * patches) which fields they set, so the excess over the steps' minimum is visible; and the
 * minimum itself, written out step by step (BENCHMARKS.md explains each).
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
  const key = callKey(call);
  return call.resource === 'nodes' && call.verb === 'patch' ? key + nodePatchFields(r.body) : key;
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

/** Per replaced node, draining `pods` pods (with one Event per state-changing step, see `events`). */
export function replaceMinimum(pods: number): MinimalWrite[] {
  return [
    {
      write: 'patch node: lock (operation, phase)',
      count: 1,
      why: 'the durable claim before any cloud or node change, so a crash or a second replica finds the node taken',
    },
    { write: 'patch node: cordon (+ phase Draining)', count: 1, why: 'no new pods land on the node being drained' },
    {
      write: 'create pods/eviction',
      count: pods,
      why: 'one eviction per pod: the Eviction API is per pod and holds PDBs',
    },
    { write: 'delete node', count: 1, why: 'the old Node object goes with its instance' },
  ];
}

/** Per node of an in-place NodeOp with cordon, drain and reboot. */
export function nodeOpMinimum(pods: number): MinimalWrite[] {
  return [
    {
      write: 'patch node: lock + cordon',
      count: 1,
      why: 'claim and cordon in one write: both before anything disruptive',
    },
    { write: 'create pods/eviction', count: pods, why: 'one per pod, through PDBs' },
    { write: 'create job', count: 1, why: 'the operation itself' },
    {
      write: 'patch node: Job succeeded + bootID',
      count: 1,
      why: 'the Job never re-runs, and the reboot is seen done only once bootID changed: both must be durable before the reboot',
    },
    { write: 'create pod (reboot)', count: 1, why: 'the reboot' },
    {
      write: 'patch node: record + uncordon + unlock',
      count: 1,
      why: 'the revision is done on this node; pods may return',
    },
    { write: 'delete job', count: 1, why: 'finished Jobs are cleaned up once recorded (issue 11)' },
    { write: 'delete pod (reboot)', count: 1, why: 'the finished reboot pod is cleaned up' },
  ];
}

export function total(steps: readonly MinimalWrite[]): number {
  return steps.reduce((n, s) => n + s.count, 0);
}
