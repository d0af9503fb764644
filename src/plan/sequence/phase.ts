/**
 * Writing a node's step, for every kind: its phase and since when, with what the step records
 * beside it, in one annotateNode written before the step acts, so a restart resumes there.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import type { PlanBuilder } from '../builder.js';
import type { SpecRef } from '../types.js';

export function setPhase(
  ctx: { readonly b: PlanBuilder; readonly spec: SpecRef; readonly now: number },
  node: ObservedNode,
  phase: string,
  reason: string,
  extra: Record<string, string | null> = {},
): void {
  const annotations = {
    [ANNOTATIONS.phase]: phase,
    [ANNOTATIONS.phaseSince]: new Date(ctx.now).toISOString(),
    ...extra,
  };
  ctx.b.act({ kind: 'annotateNode', spec: ctx.spec, node: node.name, annotations, reason });
}
