/**
 * NodeOp and NodeOpUpgrade with Kairos' defaults, shared by the drydock.dev and the
 * operator.kairos.io formats. A NodeOpUpgrade also yields the NodeOp that runs the upgrade,
 * built as the Kairos operator builds it.
 */
import type { NodeOpUpgradeSpec } from '../generated/node-op-upgrade.schema.js';
import type { DrainOptions, LabelSelector, NodeOp, NodeOpUpgrade, RolloutPolicy, Spec } from '../model.js';
import type { PathSegment } from '../parse.js';
import type { NormaliseContext } from './context.js';
import { meta } from './meta.js';
import { checkFailureBudget, checkSelector, labelSelector } from './rollout.js';
import { osImageProblem } from '../os-image.js';

/**
 * Kairos' drainOptions defaults: no drain unless enabled; DaemonSet pods ignored. Kairos uses
 * "a default timeout" when none is given; drydock makes it explicit and bounded, and halts.
 */
export const KAIROS_DRAIN: DrainOptions = {
  enabled: false,
  force: false,
  ignoreDaemonSets: true,
  deleteEmptyDirData: false,
  timeoutSeconds: 600,
  onTimeout: 'halt',
};

export const KAIROS_DEFAULTS = {
  image: 'busybox:latest',
  hostMountPath: '/host',
  cordon: false,
  rebootOnSuccess: false,
  backoffLimit: 6,
  concurrency: 0,
  stopOnFailure: false,
  upgradeActive: true,
  upgradeRecovery: false,
  force: false,
} as const;

/** The job fields of a NodeOp document, the same in drydock's and Kairos' format. */
interface NodeOpJobFields {
  readonly image?: string;
  readonly imagePullSecrets?: readonly { readonly name: string }[];
  readonly command: readonly string[];
  readonly hostMountPath?: string;
  readonly cordon?: boolean;
  readonly rebootOnSuccess?: boolean;
  readonly backoffLimit?: number;
}

/** Reports a drain without cordon: the job would run on a node still taking pods. */
export function checkDrainNeedsCordon(
  ctx: NormaliseContext,
  drainEnabled: boolean | undefined,
  cordon: boolean | undefined,
): void {
  if (drainEnabled === true && cordon !== true) {
    ctx.report(
      'invalid-value',
      ['spec', 'drainOptions', 'enabled'],
      'draining needs cordon: true',
      'set spec.cordon: true, or disable drainOptions',
    );
  }
}

/** A NodeOp's job, cordon and drain, with Kairos' defaults for what the document leaves out. */
export function nodeOpJob(
  spec: NodeOpJobFields,
  drain: DrainOptions,
): Pick<
  NodeOp,
  'image' | 'imagePullSecrets' | 'command' | 'hostMountPath' | 'cordon' | 'drain' | 'rebootOnSuccess' | 'backoffLimit'
> {
  return {
    image: spec.image ?? KAIROS_DEFAULTS.image,
    imagePullSecrets: (spec.imagePullSecrets ?? []).map((s) => s.name),
    command: [...spec.command],
    hostMountPath: spec.hostMountPath ?? KAIROS_DEFAULTS.hostMountPath,
    cordon: spec.cordon ?? KAIROS_DEFAULTS.cordon,
    drain,
    rebootOnSuccess: spec.rebootOnSuccess ?? KAIROS_DEFAULTS.rebootOnSuccess,
    backoffLimit: spec.backoffLimit ?? KAIROS_DEFAULTS.backoffLimit,
  };
}

/** The NodeOp's own concurrency, stopOnFailure and drain are its rollout's: one value, not two. */
export function nodeOpRollout(
  ctx: NormaliseContext,
  rolloutPath: readonly PathSegment[],
  merged: RolloutPolicy,
  own: { concurrency: number; stopOnFailure: boolean; drain: DrainOptions; stopOnFailureWritten: boolean },
  rawRollout: Record<string, unknown> | undefined,
): RolloutPolicy {
  const fields = { concurrency: 'concurrency', stopOnFailure: 'stopOnFailure', drain: 'drainOptions' } as const;
  for (const [field, instead] of Object.entries(fields)) {
    if (rawRollout !== undefined && field in rawRollout) {
      ctx.report(
        'invalid-value',
        [...rolloutPath, field],
        `a NodeOp sets ${field} on spec.${instead}, not in spec.rollout`,
        `move it to spec.${instead}`,
      );
    }
  }
  const rollout = { ...merged, concurrency: own.concurrency, stopOnFailure: own.stopOnFailure, drain: own.drain };
  const written = rawRollout !== undefined && 'maxFailures' in rawRollout;
  if (written && merged.maxFailures !== undefined && own.stopOnFailureWritten)
    checkFailureBudget(ctx, rolloutPath, merged.maxFailures, own.stopOnFailure, 'spec.stopOnFailure');
  // spec.stopOnFailure written, and no maxFailures of its own: an inherited budget gives way.
  return written || !own.stopOnFailureWritten ? rollout : withoutMaxFailures(rollout);
}

/** The rollout with no failure budget: stopOnFailure decides. */
export function withoutMaxFailures(rollout: RolloutPolicy): RolloutPolicy {
  const { maxFailures: _ignored, ...rest } = rollout;
  return rest;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Paths the Kairos operator always keeps out of `kairos-agent upgrade --source dir:/`: the
 * upgrade copies the pod's root onto the host, and Kubernetes writes a pod's own /etc/hostname
 * and /etc/hosts, which would take the node's identity after the reboot.
 */
export const KAIROS_EXCLUDED_PATHS: readonly string[] = ['/etc/hostname', '/etc/hosts'];

/**
 * The termination message of an upgrade Job that found the node already at the target
 * version (the words of Kairos' preflight): the Job succeeded without changing anything, so
 * the node is done without a reboot.
 */
export const KAIROS_UP_TO_DATE = /^node is already at /;

/**
 * Kairos' version lookup: TARGET from the upgrade image, CURRENT from the host, each from
 * kairos-release or else os-release, empty when unknown (two unknowns must not compare equal).
 */
function versionLookup(hostMountPath: string): string[] {
  const host = (file: string): string => shellQuote(`${hostMountPath}/etc/${file}`);
  return [
    'get_version() { [ -f "$1" ] || { echo ""; return 0; }; . "$1"; [ -n "${KAIROS_VERSION}" ] || { echo ""; return 0; }; echo "${KAIROS_VERSION}-${KAIROS_SOFTWARE_VERSION_PREFIX}${KAIROS_SOFTWARE_VERSION}"; }',
    'TARGET=$(get_version /etc/kairos-release)',
    '[ -n "$TARGET" ] || TARGET=$(get_version /etc/os-release)',
    `CURRENT=$(get_version ${host('kairos-release')})`,
    `[ -n "$CURRENT" ] || CURRENT=$(get_version ${host('os-release')})`,
  ];
}

/**
 * The upgrade script the Kairos operator generates: unless forced (or upgrading recovery, which
 * the host's version says nothing about), stop when the host already runs the target version;
 * then kairos-agent upgrade of the recovery and/or active partition (active when neither is
 * asked for), with the host's /dev and /run bound in.
 */
export function kairosUpgradeCommand(
  u: Pick<NodeOpUpgrade, 'force' | 'upgradeActive' | 'upgradeRecovery'>,
  hostMountPath: string,
): string[] {
  const lines = ['set -x -e'];
  if (!u.force && !u.upgradeRecovery) {
    lines.push(
      ...versionLookup(hostMountPath),
      'if [ -n "$CURRENT" ] && [ -n "$TARGET" ] && [ "$CURRENT" = "$TARGET" ]; then echo "node is already at ${TARGET}" > /dev/termination-log; echo "Up to date: ${CURRENT}"; exit 0; fi',
    );
  }
  lines.push(
    `mount --rbind ${shellQuote(`${hostMountPath}/dev`)} /dev`,
    `mount --rbind ${shellQuote(`${hostMountPath}/run`)} /run`,
  );
  const excludes = KAIROS_EXCLUDED_PATHS.map((p) => ` --exclude-path ${shellQuote(p)}`).join('');
  if (u.upgradeRecovery) lines.push(`kairos-agent upgrade --recovery --source dir:/${excludes}`);
  if (u.upgradeActive || !u.upgradeRecovery) lines.push(`kairos-agent upgrade --source dir:/${excludes}`);
  lines.push('exit 0');
  return ['/bin/sh', '-c', lines.join('\n')];
}

/** The NodeOp a NodeOpUpgrade stands for: same name, always cordon and drain, reboot when the active partition changed. */
export function generatedNodeOp(
  u: NodeOpUpgrade,
  defaults: RolloutPolicy,
  followNewNodes: boolean,
  stopOnFailureWritten = false,
): NodeOp {
  const drain: DrainOptions = { ...KAIROS_DRAIN, enabled: true };
  const nodeSelector: LabelSelector | undefined = u.nodeSelector;
  return {
    kind: 'NodeOp',
    name: u.name,
    apiVersion: u.apiVersion,
    source: u.source,
    revision: '',
    ...(nodeSelector !== undefined ? { nodeSelector } : {}),
    image: u.image,
    imagePullSecrets: u.imagePullSecrets,
    command: kairosUpgradeCommand(u, KAIROS_DEFAULTS.hostMountPath),
    hostMountPath: KAIROS_DEFAULTS.hostMountPath,
    cordon: true,
    drain,
    rebootOnSuccess: u.upgradeActive,
    backoffLimit: KAIROS_DEFAULTS.backoffLimit,
    concurrency: u.concurrency,
    stopOnFailure: u.stopOnFailure,
    followNewNodes,
    rollout: (stopOnFailureWritten ? withoutMaxFailures : (r: RolloutPolicy) => r)({
      ...defaults,
      concurrency: u.concurrency,
      stopOnFailure: u.stopOnFailure,
      drain,
    }),
    generatedBy: `NodeOpUpgrade/${u.name}`,
    ...(u.osImage !== undefined ? { osImage: u.osImage } : {}),
    ...(u.paused !== undefined ? { paused: u.paused } : {}),
  };
}

/** An expected osImage written as /regex/ must compile: the error is at its line. */
export function checkOsImage(ctx: NormaliseContext, path: readonly PathSegment[], written: string | undefined): void {
  const problem = written === undefined ? undefined : osImageProblem(written);
  if (problem !== undefined)
    ctx.report(
      'invalid-value',
      path,
      `osImage ${JSON.stringify(written)} ${problem}`,
      'write the exact osImage the node reports, or a regular expression between slashes: /^Kairos v3\\.2/',
    );
}

/**
 * A NodeOpUpgrade (either format: the fields are Kairos') and the NodeOp generated from it;
 * `followDefault` is its format's: Kairos' runs once, on the nodes it first selected.
 */
export function nodeOpUpgrade(ctx: NormaliseContext, spec: NodeOpUpgradeSpec, followDefault: boolean): Spec[] {
  checkSelector(ctx, ['spec', 'nodeSelector'], spec.nodeSelector);
  const nodeSelector = labelSelector(spec.nodeSelector);
  const u: NodeOpUpgrade = {
    ...meta(ctx.doc, 'NodeOpUpgrade'),
    image: spec.image,
    imagePullSecrets: (spec.imagePullSecrets ?? []).map((s) => s.name),
    ...(nodeSelector !== undefined ? { nodeSelector } : {}),
    concurrency: spec.concurrency ?? KAIROS_DEFAULTS.concurrency,
    stopOnFailure: spec.stopOnFailure ?? KAIROS_DEFAULTS.stopOnFailure,
    upgradeActive: spec.upgradeActive ?? KAIROS_DEFAULTS.upgradeActive,
    upgradeRecovery: spec.upgradeRecovery ?? KAIROS_DEFAULTS.upgradeRecovery,
    force: spec.force ?? KAIROS_DEFAULTS.force,
    ...(spec.osImage !== undefined ? { osImage: spec.osImage } : {}),
    ...(spec.paused === true ? { paused: {} } : {}),
  };
  checkOsImage(ctx, ['spec', 'osImage'], spec.osImage);
  return [u, generatedNodeOp(u, ctx.rollout, spec.followNewNodes ?? followDefault, spec.stopOnFailure !== undefined)];
}
