/**
 * The sandbox's cloud is made to fit the fleet repository: one sim scaling group per
 * ScalingGroup spec (provider sim), starting on the image its NodeImage names, sized like a
 * small real cluster (3 control-plane nodes, 6 workers). Both drydock's own ScalingGroup and
 * Constellation's are read, as drydock itself reads them.
 */
import { parseAllDocuments, stringify } from 'yaml';
import type { SimBottlerocketConfig } from '../cloud/sim/config.js';
import type { NodeRole } from '../spec/model.js';
import { SandboxError } from './errors.js';

export const GROUP_SIZE: Readonly<Record<NodeRole, number>> = { 'control-plane': 3, worker: 6 };

export interface FleetGroup {
  readonly groupId: string;
  readonly scalingGroup: string;
  readonly nodeImage: string;
  readonly role: NodeRole;
  readonly image: string;
  readonly size: number;
  /** The group's nodes play Bottlerocket hosts (the sim cloud's `bottlerocket`). */
  readonly bottlerocket?: SimBottlerocketConfig;
}

const SIM_GROUP_ID = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/;

function record(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function roleOf(value: unknown): NodeRole {
  return value === 'control-plane' || value === 'ControlPlane' ? 'control-plane' : 'worker';
}

/** Sim groups of the repository's files (path → text); files that do not parse are skipped (drydock reports them). */
export function fleetGroups(files: ReadonlyMap<string, string>): FleetGroup[] {
  const images = new Map<string, string>();
  const groups: Omit<FleetGroup, 'image'>[] = [];
  for (const [file, text] of files) {
    if (!/\.ya?ml$/.test(file)) continue;
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length > 0) continue;
      const value = record(doc.toJS());
      const name = record(value.metadata).name;
      const spec = record(value.spec);
      if (typeof name !== 'string') continue;
      if (value.kind === 'NodeImage' && typeof spec.image === 'string') images.set(name, spec.image);
      if (value.kind !== 'ScalingGroup') continue;
      const groupId = spec.groupId;
      const provider = spec.provider ?? (typeof groupId === 'string' && SIM_GROUP_ID.test(groupId) ? 'sim' : undefined);
      if (provider !== 'sim' || typeof groupId !== 'string' || typeof spec.nodeImage !== 'string') continue;
      const role = roleOf(spec.role);
      groups.push({ groupId, scalingGroup: name, nodeImage: spec.nodeImage, role, size: GROUP_SIZE[role] });
    }
  }
  const out: FleetGroup[] = [];
  for (const g of groups) {
    const image = images.get(g.nodeImage);
    if (image === undefined) {
      throw new SandboxError(
        'StepFailed',
        `ScalingGroup ${g.scalingGroup} names NodeImage ${g.nodeImage}, which the fleet repository does not define`,
        {
          step: 'configure the sim cloud',
        },
      );
    }
    out.push({ ...g, image });
  }
  if (out.length === 0) {
    throw new SandboxError(
      'StepFailed',
      'the fleet repository has no ScalingGroup with provider sim; the sandbox has nothing to simulate',
      {
        step: 'configure the sim cloud',
      },
    );
  }
  return out.sort((a, b) => a.groupId.localeCompare(b.groupId));
}

/** The file that defines NodeImage `name`, to tell a person which file to edit. */
export function nodeImageFile(files: ReadonlyMap<string, string>, name: string): string | undefined {
  for (const [file, text] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    if (!/\.ya?ml$/.test(file)) continue;
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length > 0) continue;
      const value = record(doc.toJS());
      if (value.kind === 'NodeImage' && record(value.metadata).name === name) return file;
    }
  }
  return undefined;
}

/** The Bottlerocket versions of the sandbox's Bottlerocket hosts: the one they boot, the one offered. */
export const SANDBOX_BOTTLEROCKET = { from: '1.19.2', to: '1.20.3', variant: 'aws-k8s-1.30' } as const;

/**
 * The sandbox's Bottlerocket hosts: a group no ScalingGroup names (they are updated in place,
 * never replaced), on SANDBOX_BOTTLEROCKET.from with .to in their update repository. Two
 * nodes show the rollout going node by node and keep the run short.
 */
export function bottlerocketGroup(size = 2): FleetGroup {
  const { from, to, variant } = SANDBOX_BOTTLEROCKET;
  return {
    groupId: 'bottlerocket',
    scalingGroup: 'bottlerocket',
    nodeImage: 'bottlerocket',
    role: 'worker',
    image: `bottlerocket-${variant}-x86_64`,
    size,
    bottlerocket: { version: from, variant, available: [from, to], faults: [] },
  };
}

/** The sim cloud's groups.yaml for these groups. Boots take a few seconds, like a fast cloud. */
export function simCloudConfigYaml(groups: readonly FleetGroup[], bootDelaySeconds = 3): string {
  return stringify({
    bootDelaySeconds,
    terminateDelaySeconds: 2,
    groups: groups.map((g) => ({
      id: g.groupId,
      role: g.role,
      size: g.size,
      image: g.image,
      ...(g.bottlerocket !== undefined ? { bottlerocket: g.bottlerocket } : {}),
    })),
  });
}
