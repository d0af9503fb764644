/**
 * The Kairos operator labels every Kairos node `kairos.io/managed: "true"` when it starts, and
 * its own examples select on that label. While the repository holds specs in the operator's
 * format, drydock does the same, every round: a node whose OS says it is Kairos
 * (status.nodeInfo.osImage, from the host's os-release, names it, as the operator's node
 * labeller reads it there) and has no such label gets it. Only added, never changed or removed:
 * a value someone wrote (say "false", to keep a node out) stays.
 */
import type { ObservedNode } from '../../observe/types.js';
import type { DesiredState } from '../../spec/model.js';
import { KAIROS_API } from '../../spec/kinds.js';
import type { PlanBuilder } from '../builder.js';
import { compareStrings } from '../order.js';
import type { SpecRef } from '../types.js';

export const KAIROS_MANAGED = 'kairos.io/managed';

/** A Kairos host reports its os-release name, which names Kairos ("Kairos ubuntu 24.04 v3.5.0"). */
export function isKairosNode(node: ObservedNode): boolean {
  return (node.osImage ?? '').toLowerCase().includes('kairos');
}

/** The first spec written in the Kairos operator's format (the labels are its doing), if any. */
export function kairosSpec(desired: DesiredState): SpecRef | undefined {
  const specs = [...desired.nodeOps.filter((o) => o.generatedBy === undefined), ...desired.nodeOpUpgrades]
    .filter((s) => s.apiVersion === KAIROS_API)
    .map((s) => ({ kind: s.kind, name: s.name }))
    .sort((x, y) => compareStrings(x.kind, y.kind) || compareStrings(x.name, y.name));
  return specs[0];
}

/** Labels the Kairos nodes that carry no kairos.io/managed label yet; returns the nodes it labels. */
export function planKairosLabels(desired: DesiredState, nodes: readonly ObservedNode[], b: PlanBuilder): string[] {
  const spec = kairosSpec(desired);
  if (spec === undefined) return [];
  const unlabelled = nodes.filter((n) => isKairosNode(n) && !(KAIROS_MANAGED in n.labels));
  for (const n of unlabelled)
    b.act({
      kind: 'labelNode',
      spec,
      node: n.name,
      labels: { [KAIROS_MANAGED]: 'true' },
      reason: `node ${n.name} runs Kairos (${n.osImage ?? ''}): labelled ${KAIROS_MANAGED}=true, as the Kairos operator labels its nodes`,
    });
  return unlabelled.map((n) => n.name);
}
