/** nodemaintenance.medik8s.io / nodemaintenance.kubevirt.io v1beta1 NodeMaintenance → the model. */
import type { SeedNodeMaintenanceDocument } from '../generated/medik8s-node-maintenance.schema.js';
import type { NodeMaintenance, Spec } from '../model.js';
import type { NormaliseContext } from './context.js';
import { MAINTENANCE_DRAIN } from './drydock.js';
import { meta, raw } from './meta.js';

export function mNodeMaintenance(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<SeedNodeMaintenanceDocument>(ctx.doc);
  const m: NodeMaintenance = {
    ...meta(ctx.doc, 'NodeMaintenance'),
    nodeName: spec.nodeName,
    reason: spec.reason ?? '',
    drain: MAINTENANCE_DRAIN,
  };
  return [m];
}
