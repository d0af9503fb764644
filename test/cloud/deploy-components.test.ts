/**
 * deploy/components/{aws,gcp,azure}: each builds with kustomize on top of deploy/, gives the
 * ServiceAccount its cloud's workload-identity annotation, selects the provider and drops the
 * sim cloud's endpoint. The env patches address entries by index, so this holds them to
 * deployment.yaml's order.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { resolveBinDir } from '../../src/sandbox/control-plane/index.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Obj {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: {
    template: {
      metadata: { labels: Record<string, string> };
      spec: { containers: { env: { name: string; value?: string }[] }[] };
    };
  };
}

function build(component: string): Obj[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'drydock-kustomize-'));
  try {
    cpSync(path.join(ROOT, 'deploy'), dir, { recursive: true });
    writeFileSync(
      path.join(dir, 'kustomization.yaml'),
      `${readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')}components:\n  - components/${component}\n`,
    );
    const out = execFileSync(path.join(resolveBinDir(), 'kubectl'), ['kustomize', dir], { encoding: 'utf8' });
    return parseAllDocuments(out).map((d) => d.toJS() as Obj);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('deploy/ components per cloud', function () {
  this.timeout(30_000);
  before(function () {
    try {
      resolveBinDir();
    } catch {
      if (process.env['DRYDOCK_SKIP_CONTROL_PLANE'] === '1') this.skip();
      throw new Error('kubectl (scripts/k8s-binaries.sh) is needed to build deploy/ with kustomize');
    }
  });
  const table: Array<[string, Record<string, string>, Record<string, string>, Record<string, string>]> = [
    [
      'aws',
      { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::111122223333:role/drydock' },
      { DRYDOCK_PROVIDER: 'aws', AWS_REGION: 'eu-central-1' },
      {},
    ],
    [
      'gcp',
      { 'iam.gke.io/gcp-service-account': 'drydock@my-project.iam.gserviceaccount.com' },
      { DRYDOCK_PROVIDER: 'gcp' },
      {},
    ],
    [
      'azure',
      { 'azure.workload.identity/client-id': '00000000-0000-0000-0000-000000000000' },
      { DRYDOCK_PROVIDER: 'azure' },
      { 'azure.workload.identity/use': 'true' },
    ],
  ];
  for (const [cloud, annotations, env, podLabels] of table) {
    it(`${cloud}: workload identity on the ServiceAccount, provider ${cloud}, no sim endpoint`, () => {
      const objects = build(cloud);
      const sa = objects.find((o) => o.kind === 'ServiceAccount' && o.metadata.name === 'drydock');
      for (const [k, v] of Object.entries(annotations)) assert.equal(sa?.metadata.annotations?.[k], v, k);
      const deployment = objects.find((o) => o.kind === 'Deployment');
      const vars = new Map((deployment?.spec?.template.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
      for (const [k, v] of Object.entries(env)) assert.equal(vars.get(k), v, k);
      assert.equal(vars.has('DRYDOCK_CLOUD_ENDPOINT'), false);
      assert.equal(vars.get('DRYDOCK_REPO'), 'https://git.example.com/platform/fleet.git', 'the other settings stay');
      for (const [k, v] of Object.entries(podLabels)) assert.equal(deployment?.spec?.template.metadata.labels[k], v, k);
    });
  }

  it('the AWS policy and the Azure role are valid JSON naming the calls the providers make', () => {
    const policy = JSON.parse(readFileSync(path.join(ROOT, 'deploy/components/aws/iam-policy.json'), 'utf8')) as {
      Statement: { Action: string[] }[];
    };
    const actions = policy.Statement.flatMap((s) => s.Action);
    for (const a of [
      'autoscaling:DescribeAutoScalingGroups',
      'autoscaling:SetDesiredCapacity',
      'autoscaling:TerminateInstanceInAutoScalingGroup',
      'autoscaling:UpdateAutoScalingGroup',
      'ec2:DescribeInstances',
      'ec2:DescribeLaunchTemplateVersions',
      'ec2:CreateLaunchTemplateVersion',
    ]) {
      assert.ok(actions.includes(a), a);
    }
    const role = JSON.parse(readFileSync(path.join(ROOT, 'deploy/components/azure/role.json'), 'utf8')) as {
      Actions: string[];
    };
    for (const a of [
      'Microsoft.Compute/virtualMachineScaleSets/read',
      'Microsoft.Compute/virtualMachineScaleSets/write',
      'Microsoft.Compute/virtualMachineScaleSets/delete/action',
      'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/read',
      'Microsoft.Compute/locations/operations/read',
    ]) {
      assert.ok(role.Actions.includes(a), a);
    }
  });
});
