/**
 * End to end through the GCP and Azure providers, as aws-rollout.test.ts does through moto: a
 * stateful fake of each API (a managed instance group, a uniform scale set), a joiner that turns
 * the fake's running instances into KWOK nodes with the cloud's providerIDs, and drydock (in this
 * process, the provider pointed at the fake) rolling the group to a new image when the fleet
 * says so: a new template or model, surges, drains and deletions whose operations stay running
 * for a few polls, on the real control plane with the real planner. A burst of 429s lands on the
 * operations' polls in the middle of the rollout and is waited out.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { AzureProvider, GcpProvider, type CloudProvider } from '../../src/cloud/index.js';
import { CountingKubeConfig } from '../../src/observe/kube.js';
import { plan } from '../../src/plan/index.js';
import { directoryDesiredSource } from '../../src/service/directory-source.js';
import { startService, type Service } from '../../src/service/service.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import {
  CLOUD_JOINER_LABEL,
  JOINER_IMAGE_ANNOTATION,
  startCloudJoiner,
  type CloudJoiner,
  type CloudMember,
} from '../support/cloud-joiner.js';
import { startGcpFake, staticGcpAuth, type GcpFake } from '../support/gcp-fake.js';
import { startAzureFake, type AzureFake } from '../support/azure-fake.js';
import { rolloutYaml, specDoc } from './fleet.js';

/**
 * 429s in the middle of the rollout, on the polls of long-running operations: the hard case,
 * where a call fails Throttled after its resize, model change or deletion went through.
 */
const BURST = 3;

function writeFleet(dir: string, provider: string, groupId: string, image: string): void {
  mkdirSync(path.join(dir, 'specs'), { recursive: true });
  writeFileSync(
    path.join(dir, 'drydock.yaml'),
    stringify({
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'RepoConfig',
      cluster: `e2e-${provider}`,
      budget: { maxUnavailable: 1 },
      paths: ['specs'],
    }),
  );
  writeFileSync(
    path.join(dir, 'specs/group.yaml'),
    specDoc('ScalingGroup', 'workers', { provider, groupId, nodeImage: 'worker', role: 'worker', autoscaling: false }),
  );
  writeFileSync(
    path.join(dir, 'specs/image.yaml'),
    specDoc('NodeImage', 'worker', { image, strategy: 'replace', rollout: rolloutYaml({ joinTimeout: '60s' }) }),
  );
}

async function groupNodes(kc: KubeConfig): Promise<{ name: string; image: string; unschedulable: boolean }[]> {
  const list = await kc.makeApiClient(CoreV1Api).listNode({ labelSelector: CLOUD_JOINER_LABEL });
  return list.items.map((n) => ({
    name: n.metadata?.name ?? '',
    image: n.metadata?.annotations?.[JOINER_IMAGE_ANNOTATION] ?? '',
    unschedulable: n.spec?.unschedulable === true,
  }));
}

interface World {
  readonly provider: 'gcp' | 'azure';
  readonly groupId: string;
  readonly images: readonly [string, string];
  readonly cloud: CloudProvider;
  members(): CloudMember[];
  throttle(count: number): void;
  throttled(): number;
  close(): Promise<void>;
}

/**
 * Rolls the world's group from its first image to its second and checks what the cluster and
 * the fake show afterwards; returns nothing, asserts everything.
 */
function rolloutThrough(makeWorld: () => Promise<World>, checkCloud: (w: World) => void): void {
  const cp = useControlPlane();
  let world: World | undefined;
  let joiner: CloudJoiner | undefined;
  let service: Service | undefined;
  let dir = '';
  let original: string[] = [];

  before(async function () {
    this.timeout(120_000);
    world = await makeWorld();
    const w = world;
    const kc = cp().adminKubeConfig();
    joiner = startCloudJoiner({ kc, list: () => w.members() });
    await eventually('3 instances joined as nodes', async () => (await groupNodes(kc)).length === 3, {
      timeoutMs: 30_000,
    });
    original = (await groupNodes(kc)).map((n) => n.name).sort();
    dir = mkdtempSync(path.join(tmpdir(), `drydock-e2e-${w.provider}-`));
    writeFleet(dir, w.provider, w.groupId, w.images[0]);
    const counting = new CountingKubeConfig();
    counting.loadFromFile(cp().kubeconfigPath);
    service = await startService({
      kubeConfig: counting,
      source: directoryDesiredSource(dir),
      planner: (d, o, now) => plan(d, o, now, { jobNamespace: 'kube-system' }),
      providers: { [w.provider]: w.cloud },
      cluster: `e2e-${w.provider}`,
      logger: pino({ level: process.env.DRYDOCK_E2E_LOG ?? 'silent' }),
      leaderElection: false,
      pollIntervalMs: 1_000,
      resyncMs: 2_000,
    });
  });

  after(async function () {
    this.timeout(30_000);
    await service?.stop();
    await joiner?.stop();
    await world?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('replaces every instance with one on the new image, one at a time, through a burst of 429s', async function () {
    this.timeout(240_000);
    assert.ok(world && service);
    const w = world;
    const kc = cp().adminKubeConfig();
    let maxCordoned = 0;
    let burstSent = false;
    const sampler = setInterval(() => {
      void groupNodes(kc).then(
        (ns) => {
          maxCordoned = Math.max(maxCordoned, ns.filter((n) => n.unschedulable).length);
          // In the middle: one node replaced, the others still to go.
          if (!burstSent && ns.some((n) => n.image === w.images[1])) {
            burstSent = true;
            w.throttle(BURST);
          }
        },
        () => undefined,
      );
    }, 200);
    try {
      writeFleet(dir, w.provider, w.groupId, w.images[1]);
      service.poke();
      await eventually(
        'every node on the new image, none cordoned',
        async () => {
          const ns = await groupNodes(kc);
          const off = ns.filter((n) => n.image !== w.images[1] || n.unschedulable);
          if (ns.length !== 3 || off.length > 0)
            throw new Error(`${ns.length} nodes; not done: ${off.map((n) => `${n.name} ${n.image}`).join('; ')}`);
          return true;
        },
        { timeoutMs: 180_000, intervalMs: 1_000 },
      );
    } finally {
      clearInterval(sampler);
    }
    const now = (await groupNodes(kc)).map((n) => n.name).sort();
    assert.equal(now.filter((n) => original.includes(n)).length, 0, 'no original node is left');
    assert.ok(maxCordoned <= 1, `the budget allows one node out at a time; saw ${maxCordoned}`);
    assert.ok(burstSent, 'the burst was sent in the middle of the rollout');
    checkCloud(w);
    assert.equal(w.throttled(), BURST, 'every 429 of the burst reached drydock');
  });
}

const PROJECT = 'proj-123456';
const ZONE = 'europe-west3-a';
const GCP_IMAGES = [
  'projects/images-prj/global/images/node-os-v1',
  'projects/images-prj/global/images/node-os-v2',
] as const;

let gcpFake: GcpFake | undefined;

describe('e2e: image rollout through the GCP provider (stateful Compute fake)', function () {
  this.timeout(300_000);
  rolloutThrough(
    async () => {
      const fake = await startGcpFake();
      gcpFake = fake;
      const template = fake.createTemplate(PROJECT, 'workers-v1', GCP_IMAGES[0]);
      const groupId = fake.createGroup(PROJECT, ZONE, 'workers', template, 3);
      return {
        provider: 'gcp',
        groupId,
        images: GCP_IMAGES,
        cloud: new GcpProvider({ endpoint: fake.url, authClient: staticGcpAuth, timeoutMs: 30_000 }),
        members: () =>
          fake.running().map((i) => ({
            nodeName: i.name,
            providerID: `gce://${i.project}/${i.zone}/${i.name}`,
            group: 'workers',
            image: i.image,
          })),
        throttle: (n) => fake.throttle(n, 1, (r) => r.path.includes('/operations/')),
        throttled: () => fake.throttled,
        close: () => fake.close(),
      };
    },
    (w) => {
      const g = gcpFake?.group(w.groupId);
      assert.equal(g?.targetSize, 3, 'the group is back at its size');
      assert.equal(gcpFake?.templateImage(g?.template ?? ''), GCP_IMAGES[1], "the group's template has the new image");
      const staying = g?.instances.filter((i) => i.deletingSince === undefined) ?? [];
      assert.deepEqual([...new Set(staying.map((i) => gcpFake?.templateImage(i.template)))], [GCP_IMAGES[1]]);
    },
  );
});

const SUB = '00000000-1111-2222-3333-444444444444';
const GALLERY = `/subscriptions/${SUB}/resourceGroups/images-rg/providers/Microsoft.Compute/galleries/nodes/images/node-os/versions`;
const AZURE_IMAGES = [`${GALLERY}/1.0.0`, `${GALLERY}/2.0.0`] as const;
const azureCredential = {
  getToken: async () => ({ token: 'test-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
};
let azureFake: AzureFake | undefined;

describe('e2e: image rollout through the Azure provider (stateful Resource Manager fake)', function () {
  this.timeout(300_000);
  rolloutThrough(
    async () => {
      const fake = await startAzureFake();
      azureFake = fake;
      const groupId = fake.createScaleSet(SUB, 'cluster-rg', 'workers', { id: AZURE_IMAGES[0] }, 3);
      return {
        provider: 'azure',
        groupId,
        images: AZURE_IMAGES,
        cloud: new AzureProvider({
          endpoint: fake.url,
          credential: azureCredential,
          ca: fake.ca,
          pollIntervalMs: 200,
          timeoutMs: 30_000,
        }),
        members: () =>
          fake.running().map((vm) => ({
            nodeName: vm.computerName,
            providerID: `azure://${vm.id}`,
            group: 'workers',
            image: vm.imageReference.id ?? '',
          })),
        throttle: (n) => fake.throttle(n, 1, (r) => r.path.includes('/operations/')),
        throttled: () => fake.throttled,
        close: () => fake.close(),
      };
    },
    (w) => {
      const s = azureFake?.scaleSet(w.groupId);
      assert.equal(s?.capacity, 3, 'the scale set is back at its capacity');
      assert.deepEqual(s?.imageReference, { id: AZURE_IMAGES[1] }, "the scale set's model has the new image");
      const staying = s?.vms.filter((v) => v.deletingSince === undefined) ?? [];
      assert.deepEqual([...new Set(staying.map((v) => v.imageReference.id))], [AZURE_IMAGES[1]]);
    },
  );
});
