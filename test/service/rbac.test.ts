/** deploy/ grants exactly what the code uses: no call left out, nothing extra. */
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, parse } from 'yaml';
import { REQUIRED_PERMISSIONS } from '../../src/service/permissions.js';

const DEPLOY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../deploy');

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
interface RbacDoc {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

function docs(file: string): RbacDoc[] {
  return parseAllDocuments(readFileSync(path.join(DEPLOY, file), 'utf8')).map((d) => d.toJS() as RbacDoc);
}

function grants(rules: readonly Rule[], scope: string): Set<string> {
  const out = new Set<string>();
  for (const r of rules)
    for (const g of r.apiGroups)
      for (const res of r.resources) for (const v of r.verbs) out.add(`${scope} ${g}/${res} ${v}`);
  return out;
}

describe('deploy/ RBAC', () => {
  const rbac = docs('rbac.yaml');
  const clusterRole = rbac.find((d) => d.kind === 'ClusterRole');
  const role = rbac.find((d) => d.kind === 'Role');
  const granted = new Set([...grants(clusterRole?.rules ?? [], 'cluster'), ...grants(role?.rules ?? [], 'namespace')]);
  const required = new Set(
    REQUIRED_PERMISSIONS.flatMap((p) => p.verbs.map((v) => `${p.scope} ${p.apiGroup}/${p.resource} ${v}`)),
  );

  it('grants every call the code makes', () => {
    assert.deepEqual([...required].filter((x) => !granted.has(x)).sort(), []);
  });

  it('grants nothing the code does not use (least privilege)', () => {
    assert.deepEqual([...granted].filter((x) => !required.has(x)).sort(), []);
  });

  it('never uses a wildcard', () => {
    for (const r of [...(clusterRole?.rules ?? []), ...(role?.rules ?? [])]) {
      for (const x of [...r.apiGroups, ...r.resources, ...r.verbs]) assert.notEqual(x, '*');
    }
  });

  it('binds both roles to the drydock ServiceAccount in drydock-system', () => {
    for (const kind of ['ClusterRoleBinding', 'RoleBinding']) {
      const b = rbac.find((d) => d.kind === kind);
      assert.deepEqual(b?.subjects, [{ kind: 'ServiceAccount', name: 'drydock', namespace: 'drydock-system' }]);
    }
    assert.equal(role?.metadata.namespace, 'drydock-system');
  });

  it('runs two replicas with leader election in its own namespace, as that ServiceAccount', () => {
    const d = parse(readFileSync(path.join(DEPLOY, 'deployment.yaml'), 'utf8')) as {
      spec: {
        replicas: number;
        template: {
          spec: {
            serviceAccountName: string;
            containers: { args: string[]; env: { name: string; value?: string; valueFrom?: unknown }[] }[];
          };
        };
      };
    };
    assert.equal(d.spec.replicas, 2);
    assert.equal(d.spec.template.spec.serviceAccountName, 'drydock');
    const c = d.spec.template.spec.containers[0];
    assert.deepEqual(c?.args, ['run']);
    const env = new Map(c?.env.map((e) => [e.name, e]));
    assert.equal(env.get('DRYDOCK_LEADER_ELECT')?.value, 'true');
    assert.deepEqual(env.get('DRYDOCK_NAMESPACE')?.valueFrom, { fieldRef: { fieldPath: 'metadata.namespace' } });
  });

  it('kustomization lists every manifest, and each exists', () => {
    const k = parse(readFileSync(path.join(DEPLOY, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    for (const r of k.resources) assert.ok(existsSync(path.join(DEPLOY, r)), r);
    assert.deepEqual([...k.resources].sort(), [
      'deployment.yaml',
      'namespace.yaml',
      'plan-reader.yaml',
      'rbac.yaml',
      'service.yaml',
      'serviceaccount.yaml',
    ]);
  });

  it('plan-reader.yaml (CI running drydock plan) reads everything drydock lists and writes nothing', () => {
    const reader = docs('plan-reader.yaml');
    const rules = reader.find((d) => d.kind === 'ClusterRole')?.rules ?? [];
    const readerGrants = grants(rules, 'cluster');
    for (const g of readerGrants) assert.match(g, / (get|list|watch)$/, `a read-only role grants ${g}`);
    const lists = REQUIRED_PERMISSIONS.filter((p) => p.scope === 'cluster' && p.verbs.includes('list'));
    assert.ok(lists.length >= 4);
    for (const p of lists)
      assert.ok(readerGrants.has(`cluster ${p.apiGroup}/${p.resource} list`), `${p.apiGroup}/${p.resource} list`);
    assert.deepEqual(reader.find((d) => d.kind === 'ClusterRoleBinding')?.subjects, [
      { kind: 'ServiceAccount', name: 'drydock-plan', namespace: 'drydock-system' },
    ]);
  });
});
