/** drydock.dev/v1alpha1 documents → the model, defaults filled in. */
import type { ApprovalDocument } from '../generated/approval.schema.js';
import type { AutoscalingStrategyDocument } from '../generated/autoscaling-strategy.schema.js';
import type { MaintenanceWindowDocument } from '../generated/maintenance-window.schema.js';
import type { NodeImageDocument } from '../generated/node-image.schema.js';
import type { NodeMaintenanceDocument } from '../generated/node-maintenance.schema.js';
import type { NodeOpUpgradeDocument } from '../generated/node-op-upgrade.schema.js';
import type { NodeOpDocument } from '../generated/node-op.schema.js';
import type { ScalingGroupDocument } from '../generated/scaling-group.schema.js';
import type { UpgradeGateDocument } from '../generated/upgrade-gate.schema.js';
import type { JobTemplateSpec } from '../generated/common.schema.js';
import type {
  Approval,
  AutoscalingStrategy,
  JobTemplate,
  MaintenanceWindow,
  NodeImage,
  NodeImageInPlace,
  NodeMaintenance,
  NodeOp,
  Spec,
  UpgradeGate,
  WindowExclusion,
  WindowSchedule,
  WrittenNamespace,
} from '../model.js';
import type { NormaliseContext } from './context.js';
import { meta, raw } from './meta.js';
import {
  checkDrainNeedsCordon,
  checkOsImage,
  KAIROS_DEFAULTS,
  KAIROS_DRAIN,
  nodeOpJob,
  nodeOpRollout,
  nodeOpUpgrade,
} from './node-op.js';
import { checkSelector, labelSelector, mergeDrain, mergeRollout } from './rollout.js';
import { scalingGroup } from './scaling-group.js';
import { containerImage } from '../formats.js';
import { bottlerocketTarget } from '../os-image.js';
import { checkCron, durationSeconds } from './values.js';
import { timeZoneProblem } from './time-zone.js';

export function dScalingGroup(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<ScalingGroupDocument>(ctx.doc);
  const sg = scalingGroup(ctx, {
    ...(spec.provider !== undefined ? { provider: spec.provider } : {}),
    groupId: spec.groupId,
    nodeImage: spec.nodeImage,
    role: spec.role ?? 'worker',
    autoscaling: spec.autoscaling,
    seed: false,
  });
  return sg ? [sg] : [];
}

export function dNodeImage(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<NodeImageDocument>(ctx.doc);
  const strategy = spec.strategy ?? 'replace';
  if (strategy === 'inPlace' && spec.nodeSelector === undefined) {
    ctx.report(
      'invalid-value',
      ['spec', 'strategy'],
      'strategy inPlace needs a nodeSelector',
      'add spec.nodeSelector naming the nodes to update in place (for nodes in a cloud group use strategy replace and a ScalingGroup)',
    );
  }
  if (strategy === 'replace' && spec.nodeSelector !== undefined) {
    ctx.report(
      'invalid-value',
      ['spec', 'nodeSelector'],
      'nodeSelector only applies to strategy inPlace',
      'remove it: with replace, the nodes are those of the ScalingGroups that name this NodeImage',
    );
  }
  const inPlace = nodeImageInPlace(ctx, spec, strategy);
  checkSelector(ctx, ['spec', 'nodeSelector'], spec.nodeSelector);
  const nodeSelector = labelSelector(spec.nodeSelector);
  const image: NodeImage = {
    ...meta(ctx.doc, 'NodeImage'),
    image: spec.image,
    strategy,
    ...(nodeSelector !== undefined ? { nodeSelector } : {}),
    ...(inPlace !== undefined ? { inPlace } : {}),
    rollout: mergeRollout(ctx, ['spec', 'rollout'], ctx.rollout, spec.rollout),
    ...(spec.paused === true ? { paused: {} } : {}),
  };
  return [image];
}

/**
 * The image an inPlace NodeImage names, checked for its updater (a container image for the
 * update Job; a Bottlerocket version or latest), and spec.inPlace as written.
 */
function nodeImageInPlace(
  ctx: NormaliseContext,
  spec: NodeImageDocument['spec'],
  strategy: NodeImage['strategy'],
): NodeImageInPlace | undefined {
  const written = spec.inPlace;
  if (strategy !== 'inPlace') {
    if (written !== undefined)
      ctx.report(
        'invalid-value',
        ['spec', 'inPlace'],
        'inPlace only applies to strategy inPlace',
        'remove it, or set spec.strategy: inPlace',
      );
    return undefined;
  }
  const updater = written?.updater ?? 'job';
  if (updater === 'bottlerocket') {
    if (bottlerocketTarget(spec.image) === undefined)
      ctx.report(
        'invalid-value',
        ['spec', 'image'],
        `image ${JSON.stringify(spec.image)} is not a Bottlerocket version`,
        'with inPlace.updater bottlerocket, image is a version such as 1.20.3 (or v1.20.3), or latest',
      );
    if (written?.osImage !== undefined)
      ctx.report(
        'invalid-value',
        ['spec', 'inPlace', 'osImage'],
        'the bottlerocket updater verifies the node by its version',
        'remove osImage: the node must report "Bottlerocket OS <version>"',
      );
  } else {
    const notContainer = containerImage(spec.image);
    if (notContainer !== undefined)
      ctx.report(
        'invalid-value',
        ['spec', 'image'],
        `image ${JSON.stringify(spec.image)} ${notContainer}`,
        'with strategy inPlace, image is the container image of the update job (for Bottlerocket nodes set inPlace.updater: bottlerocket)',
      );
    checkOsImage(ctx, ['spec', 'inPlace', 'osImage'], written?.osImage);
  }
  if (written === undefined) return undefined;
  return { updater, ...(written.osImage !== undefined ? { osImage: written.osImage } : {}) };
}

export function dAutoscalingStrategy(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<AutoscalingStrategyDocument>(ctx.doc);
  const s: AutoscalingStrategy = {
    ...meta(ctx.doc, 'AutoscalingStrategy'),
    enabled: spec.enabled,
    deploymentName: spec.deploymentName,
    deploymentNamespace: spec.deploymentNamespace,
  };
  return [s];
}

export function dNodeMaintenance(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<NodeMaintenanceDocument>(ctx.doc);
  const m: NodeMaintenance = {
    ...meta(ctx.doc, 'NodeMaintenance'),
    nodeName: spec.nodeName,
    reason: spec.reason ?? '',
    drain: mergeDrain(ctx, ['spec', 'drain'], MAINTENANCE_DRAIN, spec.drain),
  };
  return [m];
}

/** As the node-maintenance operator: evict every evictable pod, DaemonSet pods ignored, no timeout. */
export const MAINTENANCE_DRAIN = {
  enabled: true,
  force: false,
  ignoreDaemonSets: true,
  deleteEmptyDirData: true,
  onTimeout: 'halt',
} as const satisfies NodeMaintenance['drain'];

export function dNodeOp(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<NodeOpDocument>(ctx.doc);
  checkDrainNeedsCordon(ctx, spec.drainOptions?.enabled, spec.cordon);
  checkSelector(ctx, ['spec', 'nodeSelector'], spec.nodeSelector);
  const nodeSelector = labelSelector(spec.nodeSelector);
  const drain = mergeDrain(ctx, ['spec', 'drainOptions'], KAIROS_DRAIN, spec.drainOptions);
  const concurrency = spec.concurrency ?? KAIROS_DEFAULTS.concurrency;
  const stopOnFailure = spec.stopOnFailure ?? KAIROS_DEFAULTS.stopOnFailure;
  const merged = mergeRollout(ctx, ['spec', 'rollout'], ctx.rollout, spec.rollout);
  const op: NodeOp = {
    ...meta(ctx.doc, 'NodeOp'),
    ...(nodeSelector !== undefined ? { nodeSelector } : {}),
    ...nodeOpJob(spec, drain),
    concurrency,
    stopOnFailure,
    // Following new nodes is what drydock.dev NodeOps always did.
    followNewNodes: spec.followNewNodes ?? true,
    rollout: nodeOpRollout(
      ctx,
      ['spec', 'rollout'],
      merged,
      { concurrency, stopOnFailure, drain, stopOnFailureWritten: spec.stopOnFailure !== undefined },
      spec.rollout as Record<string, unknown> | undefined,
    ),
    ...(spec.paused === true ? { paused: {} } : {}),
  };
  return [op];
}

export function dNodeOpUpgrade(ctx: NormaliseContext): Spec[] {
  return nodeOpUpgrade(ctx, raw<NodeOpUpgradeDocument>(ctx.doc).spec, true);
}

function jobTemplate(t: JobTemplateSpec): JobTemplate {
  return {
    ...(t.name !== undefined ? { name: t.name } : {}),
    ...(t.namespace !== undefined ? { namespace: t.namespace } : {}),
    spec: t.spec,
  };
}

export function dUpgradeGate(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<UpgradeGateDocument>(ctx.doc);
  checkSelector(ctx, ['spec', 'appliesTo', 'nodeSelector'], spec.appliesTo.nodeSelector);
  const nodeSelector = labelSelector(spec.appliesTo.nodeSelector);
  if ((spec.before ?? []).length === 0 && (spec.after ?? []).length === 0) {
    ctx.report(
      'invalid-value',
      ['spec'],
      'the gate has no jobs',
      'add spec.before (jobs that must succeed before a node is touched) or spec.after (jobs once it is done)',
    );
  }
  const g: UpgradeGate = {
    ...meta(ctx.doc, 'UpgradeGate'),
    appliesTo: {
      targets: spec.appliesTo.targets.map((t) =>
        t.name !== undefined ? { kind: t.kind, name: t.name } : { kind: t.kind },
      ),
      ...(nodeSelector !== undefined ? { nodeSelector } : {}),
    },
    before: (spec.before ?? []).map(jobTemplate),
    after: (spec.after ?? []).map(jobTemplate),
  };
  // Each namespace once, where it is first written: validate warns once per namespace.
  const written: WrittenNamespace[] = [];
  for (const step of ['before', 'after'] as const)
    (spec[step] ?? []).forEach((t, i) => {
      if (t.namespace !== undefined && !written.some((w) => w.name === t.namespace))
        written.push({ name: t.namespace, at: ctx.doc.locate(['spec', step, i, 'namespace']) });
    });
  return [written.length > 0 ? { ...g, writtenJobNamespaces: written } : g];
}

export function dMaintenanceWindow(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<MaintenanceWindowDocument>(ctx.doc);
  const tz = timeZoneProblem(spec.timeZone);
  if (tz !== undefined) ctx.report('invalid-value', ['spec', 'timeZone'], tz.message, tz.hint);
  const tzOk = tz === undefined;
  const schedules: WindowSchedule[] = [];
  spec.schedules.forEach((s, i) => {
    if (tzOk) checkCron(ctx, ['spec', 'schedules', i, 'cron'], s.cron, spec.timeZone);
    const seconds = durationSeconds(ctx, ['spec', 'schedules', i, 'duration'], s.duration);
    if (seconds === 0)
      ctx.report(
        'invalid-value',
        ['spec', 'schedules', i, 'duration'],
        'a window of 0s never opens',
        'give the window a duration, e.g. 4h',
      );
    schedules.push({ cron: s.cron.trim().split(/\s+/).join(' '), durationSeconds: seconds ?? 0 });
  });
  const exclusions: WindowExclusion[] = (spec.exclusions ?? []).map((x, i) => {
    if (!(Date.parse(x.start) < Date.parse(x.end))) {
      ctx.report(
        'invalid-value',
        ['spec', 'exclusions', i, 'end'],
        `exclusion ends (${x.end}) before it starts (${x.start})`,
        'make end later than start',
      );
    }
    return {
      start: new Date(Date.parse(x.start)).toISOString(),
      end: new Date(Date.parse(x.end)).toISOString(),
      reason: x.reason ?? '',
    };
  });
  const w: MaintenanceWindow = {
    ...meta(ctx.doc, 'MaintenanceWindow'),
    timeZone: spec.timeZone,
    schedules,
    exclusions,
  };
  return [w];
}

export function dApproval(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<ApprovalDocument>(ctx.doc);
  const byRevision = spec.target.kind === 'NodeOp';
  if (byRevision && spec.revision === undefined) {
    ctx.report(
      'invalid-value',
      ['spec'],
      'an approval of a NodeOp names the revision it approves',
      'add spec.revision: the NodeOp revision drydock plan shows',
    );
  }
  if (!byRevision && spec.image === undefined) {
    ctx.report(
      'invalid-value',
      ['spec'],
      `an approval of a ${spec.target.kind} names the image it approves`,
      `add spec.image: the ${spec.target.kind}'s image`,
    );
  }
  if (byRevision && spec.image !== undefined)
    ctx.report(
      'invalid-value',
      ['spec', 'image'],
      'a NodeOp approval names a revision, not an image',
      'replace image with revision',
    );
  if (!byRevision && spec.revision !== undefined)
    ctx.report(
      'invalid-value',
      ['spec', 'revision'],
      `a ${spec.target.kind} approval names an image, not a revision`,
      'replace revision with image',
    );
  const a: Approval = {
    ...meta(ctx.doc, 'Approval'),
    target: { kind: spec.target.kind, name: spec.target.name },
    ...(spec.image !== undefined ? { image: spec.image } : {}),
    ...(spec.revision !== undefined ? { targetRevision: spec.revision } : {}),
    stage: spec.stage,
  };
  return [a];
}
