/**
 * openshift-optional.skrzypek.io/v1alpha1 MutexRule → an UpgradeGate. A MutexRule gates node
 * upgrades (its MutexRunConfig picks the pools); in drydock the upgrades are NodeImages and
 * NodeOpUpgrades, so the gate applies to every one of them. jobSpec runs before a node is
 * touched, cleanUpJobSpec after it is done; jobName and jobNamespace are kept.
 */
import type { MutexRuleDocument } from '../generated/mutex-rule.schema.js';
import type { Spec, UpgradeGate } from '../model.js';
import type { NormaliseContext } from './context.js';
import { meta, raw } from './meta.js';

export function xMutexRule(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<MutexRuleDocument>(ctx.doc);
  const gate: UpgradeGate = {
    ...meta(ctx.doc, 'UpgradeGate'),
    appliesTo: { targets: [{ kind: 'NodeImage' }, { kind: 'NodeOpUpgrade' }] },
    before: [{ name: spec.jobName, namespace: spec.jobNamespace, spec: spec.jobSpec }],
    after:
      spec.cleanUpJobSpec !== undefined
        ? [{ name: `${spec.jobName}-cleanup`, namespace: spec.jobNamespace, spec: spec.cleanUpJobSpec }]
        : [],
  };
  return [gate];
}
