/**
 * A rollout waiting for an approval: its status file and the README's "needs a person" section
 * show the exact Approval file to merge, its path and its content, from the plan through the
 * service's report to the status branch's files.
 */
import { strict as assert } from 'node:assert';
import { parse } from 'yaml';
import { plan } from '../../src/plan/index.js';
import { ANNOTATIONS, nodeOpRecordKey } from '../../src/protocol/keys.js';
import { buildStatus } from '../../src/service/status.js';
import { reportFromSnapshot } from '../../src/service/source-adapter.js';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import type { DesiredState } from '../../src/spec/model.js';
import type { ObservedState } from '../../src/observe/types.js';
import { at, cloudGroup, desired, node, nodeImage, observed, policy, scalingGroup, workers } from '../plan/fixtures.js';
import { nodeOp } from '../plan/nodeop/fixtures.js';
import { V1, V2 } from '../plan/helpers.js';

function docs(want: DesiredState, world: ObservedState, root = '') {
  const p = plan(want, world, at(0));
  return renderStatusDocs(
    reportFromSnapshot(buildStatus({ cluster: 'prod', sourceCommit: 'a'.repeat(40), plan: p }), root),
  );
}

const IMAGE_APPROVAL = `# Approves NodeImage/workers at image img:v2, stage start.
# It counts once merged into the tracked branch; the author of that commit is the approver.
# Another image needs a new approval: this one does not carry over.
apiVersion: drydock.dev/v1alpha1
kind: Approval
metadata:
  name: workers-start
spec:
  target:
    kind: NodeImage
    name: workers
  image: img:v2
  stage: start
`;

describe('status: the approval file a waiting rollout needs', () => {
  const w = workers(2, V1);
  const world = observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] });
  const want = desired({
    scalingGroups: [scalingGroup('workers', 'workers')],
    nodeImages: [nodeImage('workers', V2, { approval: { required: 'start' } })],
  });

  it('the status file holds its exact path and content', () => {
    const doc = parse(docs(want, world).get('status/NodeImage/workers.yaml') ?? '') as Record<string, unknown>;
    assert.deepEqual(doc.approvalFile, { path: 'approvals/workers-start.yaml', content: IMAGE_APPROVAL });
  });

  it('the README shows the path and the content under the wait, as a fenced block inside the item', () => {
    const readme = docs(want, world).get('README.md') ?? '';
    const indented = IMAGE_APPROVAL.trimEnd()
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n');
    assert.ok(
      readme.includes(
        '`drydock approve NodeImage/workers --stage start` writes the file.\n\n' +
          '  Merge `approvals/workers-start.yaml` with exactly this content:\n\n' +
          `  \`\`\`yaml\n${indented}\n  \`\`\`\n`,
      ),
      readme,
    );
  });

  it('the path is the repository path when the specs live under --path', () => {
    const doc = parse(docs(want, world, 'fleet').get('status/NodeImage/workers.yaml') ?? '') as Record<string, unknown>;
    assert.equal((doc.approvalFile as { path: string }).path, 'fleet/approvals/workers-start.yaml');
  });

  it('a NodeOp approval names its exact revision, after the canary', () => {
    const op = nodeOp('patch', {
      revision: 'patch-r7',
      rollout: policy({ approval: { required: 'afterCanary' }, canary: { nodes: 1, soakSeconds: 0 } }),
    });
    const done = node('w-0', 'sim://w-0', {
      annotations: { [nodeOpRecordKey('patch')]: 'patch-r7', [ANNOTATIONS.doneAt]: new Date(0).toISOString() },
    });
    const files = docs(desired({ nodeOps: [op] }), observed({ nodes: [done, node('w-1', 'sim://w-1')] }));
    const doc = parse(files.get('status/NodeOp/patch.yaml') ?? '') as Record<string, unknown>;
    const file = doc.approvalFile as { path: string; content: string } | undefined;
    assert.equal(file?.path, 'approvals/patch-after-canary.yaml', String(doc.waitingFor));
    assert.deepEqual(parse(file.content), {
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'Approval',
      metadata: { name: 'patch-after-canary' },
      spec: { target: { kind: 'NodeOp', name: 'patch' }, revision: 'patch-r7', stage: 'afterCanary' },
    });
  });

  it('nothing is shown once the approval is merged', () => {
    const approved = desired({
      ...want,
      approvals: [
        {
          kind: 'Approval',
          name: 'workers-start',
          apiVersion: 'drydock.dev/v1alpha1',
          source: { file: 'approvals/workers-start.yaml', line: 1, column: 1 },
          revision: 'a1',
          target: { kind: 'NodeImage', name: 'workers' },
          image: V2,
          stage: 'start',
        },
      ],
    });
    const doc = parse(docs(approved, world).get('status/NodeImage/workers.yaml') ?? '') as Record<string, unknown>;
    assert.equal(doc.approvalFile, undefined);
  });
});
