/**
 * How a simulated instance shows up in the cluster: the Node object it registers when it
 * boots, and the registries that create and delete it (the real API server, or memory).
 *
 * Nodes are made for KWOK: the `kwok.x-k8s.io/node: fake` annotation makes KWOK drive their
 * status (Ready, heartbeats), and capacity/allocatable/nodeInfo are set on create, as a kubelet
 * would, so pods schedule onto them at once.
 */
import { createHash } from 'node:crypto';
import { ApiException, CoreV1Api, KubeConfig, type V1Node } from '@kubernetes/client-node';
import type { NodeRole } from '../../spec/model.js';
import type { SimResources } from './config.js';

/** Label and annotation keys the simulator sets. */
export const SIM_LABELS = {
  group: 'sim.drydock.dev/group',
  instance: 'sim.drydock.dev/instance',
  /** The instance's image, made label-safe (see imageLabelValue); the exact image is in the annotation. */
  image: 'sim.drydock.dev/image',
} as const;
export const SIM_IMAGE_ANNOTATION = 'sim.drydock.dev/image';
export const KWOK_ANNOTATION = 'kwok.x-k8s.io/node';
export const CONTROL_PLANE_TAINT = { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' } as const;

export function nodeNameFor(groupId: string, instanceId: string): string {
  return `${groupId}-${instanceId}`;
}

export function providerIDFor(groupId: string, instanceId: string): string {
  return `sim://${groupId}/${instanceId}`;
}

const PROVIDER_ID = /^sim:\/\/([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)\/(i-\d+)$/;

export function parseSimProviderID(providerID: string): { groupId: string; instanceId: string } | undefined {
  const m = PROVIDER_ID.exec(providerID);
  return m && m[1] && m[2] ? { groupId: m[1], instanceId: m[2] } : undefined;
}

/**
 * A label value for an image name: the name itself when it is a valid label value, otherwise
 * its invalid characters replaced by "-", cut to fit, with a short hash so distinct images
 * stay distinct.
 */
export function imageLabelValue(image: string): string {
  if (/^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(image)) return image;
  const hash = createHash('sha256').update(image).digest('hex').slice(0, 8);
  const safe = image
    .replace(/[^-A-Za-z0-9_.]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 52)
    .replace(/[^A-Za-z0-9]+$/, '');
  return safe === '' ? hash : `${safe}-${hash}`;
}

/** What a Bottlerocket node reports as its osImage, e.g. "Bottlerocket OS 1.19.2 (aws-k8s-1.30)". */
export function bottlerocketOsImage(version: string, variant: string): string {
  return `Bottlerocket OS ${version} (${variant})`;
}

export interface SimNodeInput {
  readonly groupId: string;
  readonly instanceId: string;
  readonly role: NodeRole;
  readonly image: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly resources: SimResources;
  /** status.nodeInfo.osImage when the OS reports something else than the image (a Bottlerocket host). */
  readonly osImage?: string;
  /** status.nodeInfo.bootID: a new one every boot (a reboot changes it, see host.ts). */
  readonly bootID?: string;
}

export function buildNode(input: SimNodeInput): V1Node {
  const name = nodeNameFor(input.groupId, input.instanceId);
  const resources = { cpu: input.resources.cpu, memory: input.resources.memory, pods: input.resources.pods };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        ...input.labels,
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        [`node-role.kubernetes.io/${input.role}`]: '',
        type: 'kwok',
        [SIM_LABELS.group]: input.groupId,
        [SIM_LABELS.instance]: input.instanceId,
        [SIM_LABELS.image]: imageLabelValue(input.image),
      },
      annotations: {
        [KWOK_ANNOTATION]: 'fake',
        [SIM_IMAGE_ANNOTATION]: input.image,
        'node.alpha.kubernetes.io/ttl': '0',
      },
    },
    spec: {
      providerID: providerIDFor(input.groupId, input.instanceId),
      ...(input.role === 'control-plane' ? { taints: [{ ...CONTROL_PLANE_TAINT }] } : {}),
    },
    status: {
      capacity: { ...resources },
      allocatable: { ...resources },
      nodeInfo: {
        architecture: 'amd64',
        operatingSystem: 'linux',
        osImage: input.osImage ?? input.image,
        // Left empty so KWOK fills in its own version, as a kubelet reports its own.
        kernelVersion: '',
        containerRuntimeVersion: '',
        kubeletVersion: '',
        kubeProxyVersion: '',
        machineID: '',
        systemUUID: '',
        bootID: input.bootID ?? '',
      },
    },
  };
}

/** Where instances register their Nodes. Both operations are idempotent. */
export interface NodeRegistry {
  /** Creates the Node; an existing Node of that name counts as success. */
  register(node: V1Node): Promise<void>;
  /** Deletes the Node; a missing Node counts as success. */
  deregister(name: string): Promise<void>;
}

/** Nodes kept in memory: for unit tests and for a simulator without a cluster. */
export class MemoryNodeRegistry implements NodeRegistry {
  readonly nodes = new Map<string, V1Node>();
  async register(node: V1Node): Promise<void> {
    const name = node.metadata?.name ?? '';
    if (!this.nodes.has(name)) this.nodes.set(name, structuredClone(node));
  }
  async deregister(name: string): Promise<void> {
    this.nodes.delete(name);
  }
}

/** Nodes in a real cluster, through the Kubernetes API. */
export class KubeNodeRegistry implements NodeRegistry {
  private readonly api: CoreV1Api;

  constructor(kubeConfig: KubeConfig) {
    this.api = kubeConfig.makeApiClient(CoreV1Api);
  }

  static fromFile(kubeconfigPath: string): KubeNodeRegistry {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    return new KubeNodeRegistry(kc);
  }

  async register(node: V1Node): Promise<void> {
    try {
      await this.api.createNode({ body: node, fieldManager: 'drydock-sim-cloud' });
    } catch (err) {
      if (err instanceof ApiException && err.code === 409) return;
      throw err;
    }
  }

  async deregister(name: string): Promise<void> {
    try {
      await this.api.deleteNode({ name });
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return;
      throw err;
    }
  }
}
