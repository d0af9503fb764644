/**
 * The checks `--scenario pr` makes of each step's output, on text written out by hand as a
 * person would read it: a good comment passes, and each thing a broken plan could get wrong
 * fails with its own words.
 */
import { strict as assert } from 'node:assert';
import {
  approvalProblems,
  approvalWaitProblems,
  commentApproval,
  commentProblems,
  type BranchChange,
} from '../../src/sandbox/scenario-pr-checks.js';
import type { ApprovalWanted } from '../../src/plan/types.js';
import type { SpecView } from '../../src/sandbox/view.js';

const change: BranchChange = {
  nodeImage: 'worker',
  file: 'images/worker.yaml',
  from: 'os:v1.0.0',
  to: 'os:v1.0.1',
  nodes: 6,
  canaryNodes: 1,
};

const approvalYaml = `# Approves NodeImage/worker at image os:v1.0.1, stage afterCanary.
apiVersion: drydock.dev/v1alpha1
kind: Approval
metadata:
  name: worker-after-canary
spec:
  target:
    kind: NodeImage
    name: worker
  image: os:v1.0.1
  stage: afterCanary
`;

const comment = `<!-- drydock-plan -->
### drydock plan — ⛔ needs a person

Cluster \`sandbox\`: \`sandbox-pr\` (\`bbbbbbb\`) against \`main\` (\`aaaaaaa\`), planned at 2026-03-02T10:00:00.000Z.

#### What changes

- **NodeImage/worker** (\`images/worker.yaml:5\`): image os:v1.0.0 → os:v1.0.1; rollout.approval.required none → afterCanary; rollout.canary.soak 1m → 10s; 6 nodes in 1 group will be replaced in 6 waves, canary first; ETA 9 min once approved

#### Approvals needed

To let **NodeImage/worker** go on (stage \`afterCanary\`), merge \`approvals/worker-after-canary.yaml\` (\`drydock approve NodeImage/worker --stage afterCanary\` writes it):

\`\`\`yaml
${approvalYaml}\`\`\`
`;

describe('sandbox --scenario pr: the checks of each step', () => {
  it('a comment that says it all passes, and its approval is read off it', () => {
    assert.deepEqual(commentProblems(comment, change), []);
    assert.deepEqual(commentApproval(comment, 'worker'), {
      path: 'approvals/worker-after-canary.yaml',
      content: approvalYaml,
    });
  });

  const broken: Array<[string, (c: string) => string, RegExp]> = [
    ['no marker', (c) => c.replace('<!-- drydock-plan -->\n', ''), /does not open with the marker/],
    [
      'the old image wrong',
      (c) => c.replace('os:v1.0.0 →', 'os:v0.9 →'),
      /does not say "image os:v1\.0\.0 → os:v1\.0\.1"/,
    ],
    [
      'no approval policy change',
      (c) => c.replace('rollout.approval.required none → afterCanary; ', ''),
      /approval policy/,
    ],
    ['the node count wrong', (c) => c.replace('6 nodes in 1 group', '5 nodes in 1 group'), /says 5 nodes .* has 6/],
    ['not canary first', (c) => c.replace(', canary first', ''), /how many nodes are replaced, canary first/],
    [
      '"updated in place" for a replace',
      (c) => c.replace('will be replaced', 'will be updated in place'),
      /canary first/,
    ],
    ['no approval section', (c) => c.slice(0, c.indexOf('#### Approvals')), /names no afterCanary Approval file/],
    [
      'the approval for the old image',
      (c) => c.replace('image: os:v1.0.1', 'image: os:v1.0.0'),
      /approves image os:v1\.0\.0, not os:v1\.0\.1/,
    ],
    [
      'another file',
      (c) => c.replace('images/worker.yaml:5', 'images/other.yaml:5'),
      /no line for NodeImage\/worker in images\/worker\.yaml/,
    ],
  ];
  for (const [name, edit, expected] of broken) {
    it(`a comment with ${name} fails`, () => {
      const problems = commentProblems(edit(comment), change);
      assert.ok(
        problems.some((p) => expected.test(p)),
        problems.join('\n'),
      );
    });
  }

  it('the Approval drydock approve wrote must be for the new image, the NodeImage, and afterCanary', () => {
    assert.deepEqual(approvalProblems('f.yaml', approvalYaml, change), []);
    assert.deepEqual(approvalProblems('f.yaml', approvalYaml.replace('stage: afterCanary', 'stage: start'), change), [
      'f.yaml is for stage start, not afterCanary',
    ]);
    assert.deepEqual(approvalProblems('f.yaml', approvalYaml.replace('name: worker\n', 'name: other\n'), change), [
      'f.yaml targets NodeImage/other, not NodeImage/worker',
    ]);
    assert.deepEqual(approvalProblems('f.yaml', 'kind: NodeOp\n', change), ['f.yaml is a NodeOp, not an Approval']);
  });

  const wait = 'approval needed (after the canary wave): merge approvals/worker-after-canary.yaml (drydock approve …)';
  const wanted = (stage: ApprovalWanted['stage'], path: string): ApprovalWanted => ({
    stage,
    path,
    target: { kind: 'NodeImage', name: 'worker', revision: 'r1', image: change.to },
  });
  const spec = (extra: Partial<SpecView>): SpecView => ({
    kind: 'NodeImage',
    name: 'worker',
    phase: 'Waiting',
    done: 1,
    total: 6,
    waitingFor: wait,
    approvalWanted: wanted('afterCanary', 'approvals/worker-after-canary.yaml'),
    ...extra,
  });
  it('the rollout waits for that file after exactly the canary, as its status says it, not its words', () => {
    const file = 'approvals/worker-after-canary.yaml';
    assert.deepEqual(approvalWaitProblems(spec({}), change, file), []);
    assert.deepEqual(approvalWaitProblems(spec({ done: 3 }), change, file), [
      'NodeImage/worker has 3/6 done while waiting, expected the 1 canary node(s)',
    ]);
    // The words say after the canary; the status asks for the start approval.
    assert.match(
      approvalWaitProblems(spec({ approvalWanted: wanted('start', 'approvals/worker-start.yaml') }), change, file)[0] ??
        '',
      /not the afterCanary approval/,
    );
    // The words say an approval; the status wants none.
    assert.match(
      approvalWaitProblems(spec({ approvalWanted: undefined }), change, file)[0] ?? '',
      /not the afterCanary/,
    );
    assert.match(
      approvalWaitProblems(spec({}), change, 'approvals/other.yaml')[0] ?? '',
      /waits for approvals\/worker-after-canary.yaml, not approvals\/other.yaml/,
    );
    assert.deepEqual(approvalWaitProblems(undefined, change, file), [
      'the status branch has no status for NodeImage/worker',
    ]);
  });
});
