// KWOK: fake nodes and pods, driven by Stage definitions.
import { readFileSync } from 'node:fs';
import type { V1Node } from '@kubernetes/client-node';

/** The version of KWOK the stage definitions in assets/kwok/stages.yaml come from. */
export const KWOK_STAGES_VERSION = 'v0.8.0';

/** assets/ of the package: four levels above dist/src/sandbox/control-plane/ (shipped by `files`). */
const STAGES_FILE = new URL('../../../../assets/kwok/stages.yaml', import.meta.url);

/** Multi-document YAML for kwok --config: the Stages that make fake nodes and pods behave. */
export function kwokStagesYaml(): string {
  return readFileSync(STAGES_FILE, 'utf8');
}

/**
 * Who ends Job pods: 'kwok' (KWOK's pod-complete stage: they succeed at once), or 'host' (they
 * stay Running for a host player, the sim cloud's simulated hosts, to end them with an exit
 * code after a run time).
 */
export type JobPodPlayer = 'kwok' | 'host';

/** The stages KWOK runs with; 'host' leaves out pod-complete. */
export function kwokStages(jobPods: JobPodPlayer = 'kwok'): string {
  const stages = kwokStagesYaml();
  if (jobPods === 'kwok') return stages;
  return stages
    .split(/^---$/m)
    .filter((doc) => !/^\s*name: pod-complete$/m.test(doc))
    .join('---');
}

/**
 * Slower node heartbeats, for worlds of thousands of KWOK nodes on a small machine. KWOK's
 * defaults (a 40 s lease renewed every 10 s, the node's status every 600–610 s) are a kubelet's,
 * and 5,000 nodes then need 500 lease renewals a second, more than two cores give the API server
 * beside everything else. The controller manager's grace periods follow the lease (startup.ts).
 */
export interface NodeHeartbeat {
  /** duration of each node's lease; KWOK renews it every quarter of that, as a kubelet does */
  readonly leaseSeconds: number;
  /** how often KWOK rewrites a Ready node's status (its heartbeat stage's delay) */
  readonly statusSeconds: number;
}

/** The stage name whose delay sets the node status heartbeat. */
const HEARTBEAT_STAGE = 'node-heartbeat-with-lease';

/**
 * `stages` with the node status heartbeat every `seconds` (plus up to a sixtieth of that, as
 * the stage's own 600 s + 10 s jitter): only that stage's delay changes.
 */
export function withStatusHeartbeat(stages: string, seconds: number): string {
  const ms = Math.round(seconds * 1000);
  const docs = stages.split(/^---$/m);
  const i = docs.findIndex((doc) => new RegExp(`^\\s*name: ${HEARTBEAT_STAGE}$`, 'm').test(doc));
  const doc = docs[i];
  if (doc === undefined || !/^ {4}durationMilliseconds: \d+$/m.test(doc))
    throw new Error(`KWOK stages: no ${HEARTBEAT_STAGE} stage with a delay to change`);
  docs[i] = doc
    .replace(/^( {4}durationMilliseconds:) \d+$/m, `$1 ${ms}`)
    .replace(/^( {4}jitterDurationMilliseconds:) \d+$/m, `$1 ${ms + Math.round(ms / 60)}`);
  return docs.join('---');
}

/** The annotation (and label) that makes KWOK manage a node. */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
export const KWOK_NODE_VALUE = 'fake';
/** The taint KWOK nodes usually carry so ordinary clusters keep real pods off them. */
export const KWOK_TAINT = { key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' } as const;

export interface FakeNodeOptions {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** add the kwok NoSchedule taint (default false: ordinary pods may land on the node) */
  taint?: boolean;
  /** status.allocatable / capacity; defaults: 32 cpu, 256Gi memory, 110 pods */
  capacity?: Record<string, string>;
  providerID?: string;
  unschedulable?: boolean;
}

/**
 * A Node object KWOK will manage: it becomes Ready within a second or two of creation, and
 * pods bound to it become Running/Ready (Job pods then Succeed).
 */
export function fakeNode(name: string, opts: FakeNodeOptions = {}): V1Node {
  const capacity = { cpu: '32', memory: '256Gi', pods: '110', ...opts.capacity };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: {
        [KWOK_NODE_ANNOTATION]: KWOK_NODE_VALUE,
        'node.alpha.kubernetes.io/ttl': '0',
        ...opts.annotations,
      },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'node-role.kubernetes.io/agent': '',
        type: 'kwok',
        ...opts.labels,
      },
    },
    spec: {
      ...(opts.providerID ? { providerID: opts.providerID } : {}),
      ...(opts.unschedulable ? { unschedulable: true } : {}),
      ...(opts.taint ? { taints: [{ ...KWOK_TAINT }] } : {}),
    },
    status: { allocatable: capacity, capacity },
  };
}
