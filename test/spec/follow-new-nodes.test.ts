/**
 * followNewNodes: a Kairos NodeOp or NodeOpUpgrade runs once, on the nodes it selected when it
 * was applied; a drydock.dev one follows new nodes unless it says otherwise (what it always did).
 * The field chooses nodes, not what runs on them: it is no part of the revision.
 */
import { strict as assert } from 'node:assert';
import { loadFromSource, writtenNamespaceWarnings, type DesiredState } from '../../src/spec/index.js';
import { memorySource } from './support.js';

const NODEOP = (apiVersion: string, extra = ''): string =>
  `apiVersion: ${apiVersion}\nkind: NodeOp\nmetadata:\n  name: hello\nspec:\n  command: ["true"]\n${extra}`;
const UPGRADE = (apiVersion: string, extra = ''): string =>
  `apiVersion: ${apiVersion}\nkind: NodeOpUpgrade\nmetadata:\n  name: up\nspec:\n  image: quay.io/kairos/ubuntu:v3.5.0\n${extra}`;

async function load(text: string): Promise<DesiredState> {
  const r = await loadFromSource(memorySource({ 'ops/op.yaml': text }));
  assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
  return r.desired;
}

describe('followNewNodes', () => {
  const table: Array<[string, string, boolean]> = [
    ['a Kairos NodeOp runs once', NODEOP('operator.kairos.io/v1alpha1'), false],
    ['a drydock.dev NodeOp follows new nodes by default', NODEOP('drydock.dev/v1alpha1'), true],
    ['a drydock.dev NodeOp may run once', NODEOP('drydock.dev/v1alpha1', '  followNewNodes: false\n'), false],
    ["a Kairos NodeOpUpgrade's NodeOp runs once", UPGRADE('operator.kairos.io/v1alpha1'), false],
    ["a drydock.dev NodeOpUpgrade's NodeOp follows new nodes", UPGRADE('drydock.dev/v1alpha1'), true],
    ['a drydock.dev NodeOpUpgrade may run once', UPGRADE('drydock.dev/v1alpha1', '  followNewNodes: false\n'), false],
  ];
  for (const [title, text, want] of table) {
    it(title, async () => {
      const ops = (await load(text)).nodeOps;
      assert.equal(ops.length, 1);
      assert.equal(ops[0]?.followNewNodes, want);
    });
  }

  it('is no part of the revision: turning it off does not run the NodeOp again where it ran', async () => {
    const follows = (await load(NODEOP('drydock.dev/v1alpha1'))).nodeOps[0];
    const once = (await load(NODEOP('drydock.dev/v1alpha1', '  followNewNodes: false\n'))).nodeOps[0];
    assert.ok(follows && once);
    assert.notEqual(follows.followNewNodes, once.followNewNodes);
    assert.equal(once.revision, follows.revision);
  });

  it("is refused in Kairos' format, which has no such field", async () => {
    const r = await loadFromSource(
      memorySource({ 'ops/op.yaml': NODEOP('operator.kairos.io/v1alpha1', '  followNewNodes: true\n') }),
    );
    assert.equal(r.ok, false);
  });
});

describe("a Kairos NodeOp's metadata.namespace", () => {
  it('is not where its Jobs run: validate warns at its line, naming the imagePullSecrets to move', async () => {
    const text = `apiVersion: operator.kairos.io/v1alpha1\nkind: NodeOp\nmetadata:\n  name: hello\n  namespace: team-a\nspec:\n  command: ["true"]\n  imagePullSecrets:\n    - name: regcred\n`;
    const d = await load(text);
    const [w, ...more] = writtenNamespaceWarnings(d);
    assert.deepEqual(more, []);
    assert.deepEqual([w?.file, w?.line, w?.code], ['ops/op.yaml', 5, 'namespace-ignored']);
    assert.match(
      w?.message ?? '',
      /NodeOp\/hello: its Jobs run in drydock's namespace .* not in metadata\.namespace team-a/,
    );
    assert.match(w?.hint ?? '', /create the imagePullSecrets it names \(regcred\) in drydock's namespace/);
  });

  it('is not part of the revision, and a spec without one gets no warning', async () => {
    const without = await load(NODEOP('operator.kairos.io/v1alpha1'));
    const within = await load(
      NODEOP('operator.kairos.io/v1alpha1').replace('  name: hello\n', '  name: hello\n  namespace: default\n'),
    );
    assert.deepEqual(writtenNamespaceWarnings(without), []);
    assert.equal(writtenNamespaceWarnings(within).length, 1);
    assert.equal(within.nodeOps[0]?.revision, without.nodeOps[0]?.revision);
  });
});
