/**
 * One pass over the ObservedState that builds the lookups every part of the planner needs
 * (nodes by providerID, pods by node, PDBs by key), so a plan over thousands of nodes and
 * tens of thousands of pods stays linear.
 */
import type { Instance } from '../cloud/provider.js';
import type { ObservedJob, ObservedNode, ObservedPDB, ObservedPod, ObservedState } from '../observe/types.js';

export interface ClusterView {
  readonly observed: ObservedState;
  readonly nodeByName: ReadonlyMap<string, ObservedNode>;
  readonly nodeByProviderID: ReadonlyMap<string, ObservedNode>;
  readonly podsByNode: ReadonlyMap<string, readonly ObservedPod[]>;
  readonly pdbByKey: ReadonlyMap<string, ObservedPDB>;
  /** Every instance id some node's replaced-by annotation names. */
  readonly claimed: ReadonlySet<string>;
  /** drydock's Jobs by namespace/name. */
  readonly jobByKey: ReadonlyMap<string, ObservedJob>;
}

const NO_PODS: readonly ObservedPod[] = [];

export function buildView(observed: ObservedState, replacedByKey: string): ClusterView {
  const nodeByName = new Map<string, ObservedNode>();
  const nodeByProviderID = new Map<string, ObservedNode>();
  const claimed = new Set<string>();
  for (const node of observed.nodes) {
    nodeByName.set(node.name, node);
    if (node.providerID !== undefined) nodeByProviderID.set(node.providerID, node);
    const by = node.annotations[replacedByKey];
    if (by !== undefined && by !== '') claimed.add(by);
  }
  const podsByNode = new Map<string, ObservedPod[]>();
  for (const pod of observed.pods) {
    let list = podsByNode.get(pod.nodeName);
    if (list === undefined) {
      list = [];
      podsByNode.set(pod.nodeName, list);
    }
    list.push(pod);
  }
  const pdbByKey = new Map<string, ObservedPDB>();
  for (const pdb of observed.pdbs) pdbByKey.set(`${pdb.namespace}/${pdb.name}`, pdb);
  const jobByKey = new Map<string, ObservedJob>();
  for (const job of observed.jobs) jobByKey.set(`${job.namespace}/${job.name}`, job);
  return { observed, nodeByName, nodeByProviderID, podsByNode, pdbByKey, claimed, jobByKey };
}

export function podsOn(view: ClusterView, node: string): readonly ObservedPod[] {
  return view.podsByNode.get(node) ?? NO_PODS;
}

export function nodeOf(view: ClusterView, instance: Instance): ObservedNode | undefined {
  return view.nodeByProviderID.get(instance.providerID);
}
