/**
 * One pass over the ObservedState that builds the lookups every part of the planner needs
 * (nodes by providerID, pods by node, PDBs by key), so a plan over thousands of nodes and
 * tens of thousands of pods stays linear.
 */
import type { Instance } from '../cloud/provider.js';
import type { ObservedJob, ObservedNode, ObservedPDB, ObservedPod, ObservedState } from '../observe/types.js';
import { parseNodeState, type NodeState } from './protocol.js';

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
  /**
   * The node's protocol state (protocol.ts): parsed once per round for every observed node; a
   * node a step derived this round (one it failed, with new annotations) is parsed as it is.
   */
  readonly stateOf: (node: ObservedNode) => NodeState;
}

const NO_PODS: readonly ObservedPod[] = [];

/**
 * The pods-by-node index of a frozen pod list (the service's snapshot, which stays the same
 * object until a watch event changes something): an idle round re-plans over the same list,
 * and this index was its largest allocation. A list that is not frozen may be changed in
 * place by its owner, so it is indexed afresh each time.
 */
const podIndex = new WeakMap<readonly ObservedPod[], ReadonlyMap<string, readonly ObservedPod[]>>();

function podsByNodeOf(pods: readonly ObservedPod[]): ReadonlyMap<string, readonly ObservedPod[]> {
  const hit = podIndex.get(pods);
  if (hit) return hit;
  const byNode = new Map<string, ObservedPod[]>();
  for (const pod of pods) {
    let list = byNode.get(pod.nodeName);
    if (list === undefined) {
      list = [];
      byNode.set(pod.nodeName, list);
    }
    list.push(pod);
  }
  if (Object.isFrozen(pods)) podIndex.set(pods, byNode);
  return byNode;
}

interface NodeIndex {
  readonly replacedByKey: string;
  readonly nodeByName: ReadonlyMap<string, ObservedNode>;
  readonly nodeByProviderID: ReadonlyMap<string, ObservedNode>;
  readonly claimed: ReadonlySet<string>;
}

/** The node lookups of a frozen node list, kept like podIndex. */
const nodeIndex = new WeakMap<readonly ObservedNode[], NodeIndex>();

function nodeIndexOf(nodes: readonly ObservedNode[], replacedByKey: string): NodeIndex {
  const hit = nodeIndex.get(nodes);
  if (hit?.replacedByKey === replacedByKey) return hit;
  const nodeByName = new Map<string, ObservedNode>();
  const nodeByProviderID = new Map<string, ObservedNode>();
  const claimed = new Set<string>();
  for (const node of nodes) {
    nodeByName.set(node.name, node);
    if (node.providerID !== undefined) nodeByProviderID.set(node.providerID, node);
    const by = node.annotations[replacedByKey];
    if (by !== undefined && by !== '') claimed.add(by);
  }
  const index = { replacedByKey, nodeByName, nodeByProviderID, claimed };
  if (Object.isFrozen(nodes)) nodeIndex.set(nodes, index);
  return index;
}

export function buildView(observed: ObservedState, replacedByKey: string): ClusterView {
  const { nodeByName, nodeByProviderID, claimed } = nodeIndexOf(observed.nodes, replacedByKey);
  const podsByNode = podsByNodeOf(observed.pods);
  const pdbByKey = new Map<string, ObservedPDB>();
  for (const pdb of observed.pdbs) pdbByKey.set(`${pdb.namespace}/${pdb.name}`, pdb);
  const jobByKey = new Map<string, ObservedJob>();
  for (const job of observed.jobs) jobByKey.set(`${job.namespace}/${job.name}`, job);
  // Parsed per round and never kept across rounds: a node object may be changed in place
  // between rounds (the test worlds do), and a stale state would then lie about it.
  const states = new Map<ObservedNode, NodeState>();
  for (const node of observed.nodes) states.set(node, parseNodeState(node));
  const stateOf = (node: ObservedNode): NodeState => states.get(node) ?? parseNodeState(node);
  return { observed, nodeByName, nodeByProviderID, podsByNode, pdbByKey, claimed, jobByKey, stateOf };
}

export function podsOn(view: ClusterView, node: string): readonly ObservedPod[] {
  return view.podsByNode.get(node) ?? NO_PODS;
}

export function nodeOf(view: ClusterView, instance: Instance): ObservedNode | undefined {
  return view.nodeByProviderID.get(instance.providerID);
}
