/** Pull-request reports over a described cluster: two worker groups, the real planner. */
import type { ObservedState } from '../../src/observe/types.js';
import { buildPrReport, planHead, type PrReport } from '../../src/report/pr-report.js';
import type { DesiredState, LoadResult, SpecError } from '../../src/spec/model.js';
import type { PlanOptions } from '../../src/plan/index.js';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { revisionOf } from '../../src/spec/revision.js';
import {
  at,
  cloudGroup,
  desired,
  instance,
  node,
  nodeImage,
  observed,
  pdb,
  pod,
  scalingGroup,
} from '../plan/fixtures.js';

export const V1 = 'img:v1';
export const V2 = 'img:v2';
const CANARY = { canary: { nodes: 1, soakSeconds: 600 }, concurrency: 2, maxSurge: 2, maxUnavailable: 2 } as const;
const groups = [scalingGroup('blue', 'worker'), scalingGroup('green', 'worker')];

/** blue: 3 nodes, green: 2 nodes, all on V1; the PDB of web (on n-blue-i0) allows `allowed` disruptions. */
export function cluster(allowed?: number): ObservedState {
  const ins = (g: string, n: number) => Array.from({ length: n }, (_, i) => instance(g, `${g}-i${i}`, V1));
  const blue = ins('blue', 3);
  const green = ins('green', 2);
  const nodes = [...blue, ...green].map((x) => node(`n-${x.id}`, x.providerID));
  const web =
    allowed === undefined
      ? {}
      : { pods: [pod('apps', 'web-0', 'n-blue-i0', { pdbs: ['apps/web'] })], pdbs: [pdb('apps', 'web', allowed)] };
  return observed({ nodes, cloudGroups: [cloudGroup('blue', V1, blue), cloudGroup('green', V1, green)], ...web });
}

export const ok = (d: DesiredState): LoadResult => ({ ok: true, desired: d, files: [] });
export const invalid = (errors: SpecError[]): LoadResult => ({ ok: false, errors, files: [] });

export function report(base: LoadResult, head: LoadResult, live?: ObservedState, options?: PlanOptions): PrReport {
  const now = at(0);
  const plan =
    live && head.ok
      ? { plan: planHead(head.desired, live, now, options), observed: live }
      : { skipped: 'no cluster access' };
  return buildPrReport({
    base: { ref: 'main', commit: 'a'.repeat(40), load: base },
    head: { ref: 'pr', commit: 'b'.repeat(40), load: head },
    at: now,
    live: plan,
  });
}

/** The worker NodeImage, its revision the loader's hash (so a policy edit is a new revision). */
export function worker(image: string, rollout = {}) {
  const spec = nodeImage('worker', image, { ...CANARY, ...rollout });
  return { ...spec, revision: revisionOf(spec) };
}
export const state = (image: string, rollout = {}, extra: Partial<DesiredState> = {}) =>
  desired({ scalingGroups: groups, nodeImages: [worker(image, rollout)], ...extra });

/** An inPlace NodeImage over `nodes` nodes picked by a label: no cloud group, a Job and a reboot on each. */
export function edge(image: string, rollout = {}) {
  const spec = {
    ...nodeImage('edge', image, { ...CANARY, ...rollout }),
    strategy: 'inPlace' as const,
    nodeSelector: { matchLabels: { pool: 'edge' } },
  };
  return { ...spec, revision: revisionOf(spec) };
}
export const edgeState = (image: string, rollout = {}) => desired({ nodeImages: [edge(image, rollout)] });

/** Three edge nodes, each with a bootID; with `updatedTo`, each records that image as applied in place. */
export function edgeCluster(updatedTo?: string): ObservedState {
  const annotations: Record<string, string> = updatedTo === undefined ? {} : { [ANNOTATIONS.image]: updatedTo };
  const nodes = [0, 1, 2].map((i) => ({
    ...node(`edge-${i}`, `sim://edge/edge-${i}`, { labels: { pool: 'edge' }, annotations }),
    bootID: `boot-${i}`,
  }));
  return observed({ nodes });
}
