/**
 * deploy/'s RBAC, statically: no wildcards, bound to drydock's ServiceAccount, and the plan
 * reader's read-only role. That it grants exactly the calls drydock makes is proven on the real
 * API server from the calls recorded in an end-to-end run: test/e2e/security.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, parse } from 'yaml';
import { RBAC_JOB_NAMESPACE } from '../../src/spec/index.js';

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

  it("lets drydock create Jobs in the one namespace validate's job-namespace warning names", () => {
    assert.equal(role?.metadata.namespace, RBAC_JOB_NAMESPACE);
    const jobs = grants(role?.rules ?? [], 'ns');
    for (const verb of ['create', 'get', 'delete']) assert.ok(jobs.has(`ns batch/jobs ${verb}`), verb);
    assert.ok(jobs.has('ns /pods list'));
    const roles = rbac.filter((d) => d.kind === 'Role' && (d.rules ?? []).some((r) => r.resources.includes('jobs')));
    assert.deepEqual(
      roles.map((d) => d.metadata.namespace),
      [RBAC_JOB_NAMESPACE],
    );
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
    const lists = [...grants(clusterRole?.rules ?? [], 'cluster')].filter((g) => g.endsWith(' list'));
    assert.ok(lists.length >= 4);
    for (const g of lists) assert.ok(readerGrants.has(g), g);
    assert.deepEqual(reader.find((d) => d.kind === 'ClusterRoleBinding')?.subjects, [
      { kind: 'ServiceAccount', name: 'drydock-plan', namespace: 'drydock-system' },
    ]);
  });
});
