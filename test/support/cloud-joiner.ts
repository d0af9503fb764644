/**
 * The part of a cloud a fake does not have: kubelets. Every running instance a `list` function
 * reports joins the cluster as a KWOK node carrying the providerID its cloud controller manager
 * would set, and its Node is deleted once the instance is no longer listed (terminating or
 * gone), so drydock sees nodes come and go as on the real cloud.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { fakeNode } from './control-plane.js';

/** Annotation with the image the node's instance runs, for assertions. */
export const JOINER_IMAGE_ANNOTATION = 'test.drydock.dev/image';
/** Label with the node's group; the joiner owns the nodes that carry it. */
export const CLOUD_JOINER_LABEL = 'test.drydock.dev/cloud-group';

export interface CloudMember {
  readonly nodeName: string;
  readonly providerID: string;
  /** The group, as a label value (no slashes). */
  readonly group: string;
  readonly image: string;
}

export interface CloudJoiner {
  /** Joins and removes once, now. */
  sync(): Promise<void>;
  stop(): Promise<void>;
}

export function startCloudJoiner(opts: {
  kc: KubeConfig;
  list: () => Promise<readonly CloudMember[]> | readonly CloudMember[];
  /** The label that marks the joiner's nodes; default CLOUD_JOINER_LABEL. */
  label?: string;
  intervalMs?: number;
}): CloudJoiner {
  const label = opts.label ?? CLOUD_JOINER_LABEL;
  const core = opts.kc.makeApiClient(CoreV1Api);
  let running: Promise<void> = Promise.resolve();
  const sync = async (): Promise<void> => {
    const live = new Map((await opts.list()).map((m) => [m.providerID, m]));
    const existing = await core.listNode({ labelSelector: label });
    const have = new Set<string>();
    for (const n of existing.items) {
      const id = n.spec?.providerID ?? '';
      if (live.has(id)) have.add(id);
      else await core.deleteNode({ name: n.metadata?.name ?? '' }).catch(() => undefined);
    }
    for (const m of live.values()) {
      if (have.has(m.providerID)) continue;
      const node = fakeNode(m.nodeName, {
        providerID: m.providerID,
        labels: { [label]: m.group, 'node-role.kubernetes.io/worker': '' },
        annotations: { [JOINER_IMAGE_ANNOTATION]: m.image },
      });
      await core.createNode({ body: node }).catch((err: unknown) => {
        if ((err as { code?: number }).code !== 409) throw err;
      });
    }
  };
  const timer = setInterval(() => {
    running = running.then(sync).catch(() => undefined);
  }, opts.intervalMs ?? 300);
  return {
    sync: () => (running = running.then(sync)),
    stop: async () => {
      clearInterval(timer);
      await running.catch(() => undefined);
    },
  };
}
