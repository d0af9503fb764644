/**
 * Generated cases of values Kubernetes, git and the clouds would refuse later
 * (corpus-kubernetes.test.ts runs them through the loader; parse-fast.test.ts holds both parsers
 * to the same reading of them).
 */
import { bad, good, type CorpusCase } from './corpus.js';
import { doc, IMAGE } from './support.js';

const q = (s: string): string => JSON.stringify(s);
const op = (spec: string): string => doc('NodeOp', 'op', `command: [/bin/true]\n${spec}`);
const bottlerocket = (image: string): string =>
  doc(
    'NodeImage',
    'br',
    `${image}\nstrategy: inPlace\nnodeSelector: {matchLabels: {a: b}}\ninPlace: {updater: bottlerocket}`,
  );

const BAD_KEYS = [
  '-app',
  'app-',
  'a b',
  'x'.repeat(64),
  'example.com/',
  '/name',
  'Example.com/app',
  'a/b/c',
  'app/',
  'ünicode',
  'app!',
];
const GOOD_KEYS = [
  'app',
  'example.com/app',
  'app.kubernetes.io/name',
  'A_b.c-D',
  'x'.repeat(63),
  `${'a'.repeat(200)}.io/${'n'.repeat(63)}`,
];
const BAD_VALUES = ['-x', 'x-', 'a b', 'x'.repeat(64), 'ü', 'a/b', 'v1:2'];
const GOOD_VALUES = ['', 'v1.0', 'A_b', 'x'.repeat(63)];

export const labels: CorpusCase[] = [
  ...BAD_KEYS.flatMap((k) => [
    bad(
      `matchLabels key ${q(k)}`,
      'op.yaml',
      op(`nodeSelector:\n  matchLabels:\n    ${q(k)}: v # here`),
      '# here',
      'schema',
      /key .* (prefix|name|has an empty)/,
    ),
    bad(
      `matchExpressions key ${q(k)}`,
      'op.yaml',
      op(`nodeSelector:\n  matchExpressions:\n  - key: ${q(k)} # here\n    operator: Exists`),
      '# here',
      'schema',
    ),
    bad(
      `metadata label key ${q(k)}`,
      'i.yaml',
      IMAGE.replace('  name: worker\n', `  name: worker\n  labels:\n    ${q(k)}: v # here\n`),
      '# here',
      'schema',
    ),
  ]),
  ...BAD_VALUES.flatMap((v) => [
    bad(
      `matchLabels value ${q(v)}`,
      'op.yaml',
      op(`nodeSelector:\n  matchLabels:\n    app: ${q(v)} # here`),
      '# here',
      'schema',
      /at most 63|must be empty/,
    ),
    bad(
      `matchExpressions value ${q(v)}`,
      'op.yaml',
      op(`nodeSelector:\n  matchExpressions:\n  - key: app\n    operator: In\n    values:\n    - ${q(v)} # here`),
      '# here',
      'schema',
    ),
    bad(
      `podSelector value ${q(v)}`,
      'i.yaml',
      IMAGE + `  rollout:\n    drain:\n      podSelector:\n        matchLabels:\n          app: ${q(v)} # here\n`,
      '# here',
      'schema',
    ),
  ]),
  ...GOOD_KEYS.map((k) =>
    good(`matchLabels key ${q(k).slice(0, 40)}`, { 'op.yaml': op(`nodeSelector:\n  matchLabels:\n    ${q(k)}: v`) }),
  ),
  ...GOOD_VALUES.map((v) =>
    good(`label value ${q(v).slice(0, 40)}`, {
      'op.yaml': op(`nodeSelector:\n  matchExpressions:\n  - key: app\n    operator: In\n    values: [${q(v)}]`),
    }),
  ),
];

const BAD_NODES = ['Node_1', 'node..a', '-n', 'n-', 'a b', 'x'.repeat(254), 'node.', 'ünode'];
const BAD_NAMESPACES = ['Kube_System', 'a.b', 'x'.repeat(64), '-ns', 'ns-'];
export const names: CorpusCase[] = [
  ...BAD_NODES.map((n) =>
    bad(
      `nodeName ${q(n).slice(0, 30)}`,
      'm.yaml',
      doc('NodeMaintenance', 'm', `nodeName: ${q(n)} # here`),
      '# here',
      'schema',
      /DNS subdomain|at most 253/,
    ),
  ),
  ...BAD_NODES.map((n) =>
    bad(
      `medik8s nodeName ${q(n).slice(0, 30)}`,
      'm.yaml',
      `apiVersion: nodemaintenance.medik8s.io/v1beta1\nkind: NodeMaintenance\nmetadata:\n  name: m\nspec:\n  nodeName: ${q(n)} # here\n`,
      '# here',
      'schema',
    ),
  ),
  ...BAD_NODES.map((n) =>
    bad(
      `Kairos targetNodes ${q(n).slice(0, 30)}`,
      'k.yaml',
      `apiVersion: operator.kairos.io/v1alpha1\nkind: NodeOp\nmetadata:\n  name: k\nspec:\n  command: [x]\n  targetNodes:\n  - ${q(n)} # here\n`,
      '# here',
      'schema',
    ),
  ),
  ...BAD_NAMESPACES.map((n) =>
    bad(
      `deploymentNamespace ${q(n).slice(0, 30)}`,
      'a.yaml',
      doc(
        'AutoscalingStrategy',
        'a',
        `enabled: true\ndeploymentName: cluster-autoscaler\ndeploymentNamespace: ${q(n)} # here`,
      ),
      '# here',
      'schema',
      /DNS label|at most 63|more than 63/,
    ),
  ),
  ...BAD_NAMESPACES.map((n) =>
    bad(
      `Job namespace ${q(n).slice(0, 30)}`,
      'g.yaml',
      doc(
        'UpgradeGate',
        'g',
        `appliesTo:\n  targets: [{kind: NodeImage}]\nbefore:\n- namespace: ${q(n)} # here\n  spec: {}`,
      ),
      '# here',
      'schema',
    ),
  ),
  good('node name worker-1.example.internal', {
    'm.yaml': doc('NodeMaintenance', 'm', 'nodeName: worker-1.example.internal'),
  }),
];

const INT32 = [
  ['backoffLimit', (v: string) => op(`backoffLimit: ${v} # here`)],
  ['concurrency', (v: string) => op(`concurrency: ${v} # here`)],
  [
    'drain.gracePeriodSeconds',
    (v: string) => IMAGE + `  rollout:\n    drain:\n      gracePeriodSeconds: ${v} # here\n`,
  ],
  ['drain.timeoutSeconds', (v: string) => IMAGE + `  rollout:\n    drain:\n      timeoutSeconds: ${v} # here\n`],
  ['canary.nodes', (v: string) => IMAGE + `  rollout:\n    canary:\n      nodes: ${v} # here\n`],
  [
    'healthGate.minReadySeconds',
    (v: string) => IMAGE + `  rollout:\n    healthGate:\n      minReadySeconds: ${v} # here\n`,
  ],
  ['maxSurge', (v: string) => IMAGE + `  rollout:\n    maxSurge: ${v} # here\n`],
] as const;
export const ints: CorpusCase[] = INT32.flatMap(([field, make]) => [
  ...['2147483648', '3000000000', '9007199254740993'].map((v) =>
    bad(`${field}: ${v}`, 'x.yaml', make(v), '# here', 'schema', /above 2147483647|not valid/),
  ),
  good(`${field}: 2147483647`, { 'x.yaml': make('2147483647') }),
]);

const DIGEST = `sha256:${'ab'.repeat(32)}`;
const BAD_IMAGES = [
  'busybox:latest\n',
  'bad image:v1',
  ' busybox',
  'Registry.example/Team/tool:v1',
  'tool:',
  'tool@sha256:short',
  'a//b',
];
const GOOD_IMAGES = [
  'busybox',
  'busybox:latest',
  'registry.example:5000/team/tool:v1.2',
  `tool@${DIGEST}`,
  `localhost/a/b:v1@${DIGEST}`,
  'Registry.Example/team/tool',
];
export const images: CorpusCase[] = [
  ...BAD_IMAGES.map((i) =>
    bad(
      `NodeOp image ${q(i)}`,
      'op.yaml',
      op(`image: ${q(i)} # here`),
      '# here',
      'schema',
      /image|whitespace|newline|lowercase/,
    ),
  ),
  ...BAD_IMAGES.map((i) =>
    bad(
      `NodeOpUpgrade image ${q(i)}`,
      'u.yaml',
      doc('NodeOpUpgrade', 'u', `image: ${q(i)} # here`),
      '# here',
      'schema',
    ),
  ),
  bad(
    'image from a | block keeps its newline',
    'op.yaml',
    op('image: | # here\n  busybox:latest'),
    '# here',
    'schema',
    /newline/,
  ),
  bad(
    'NodeImage image with a trailing newline',
    'i.yaml',
    doc('NodeImage', 'worker', 'image: "node-os:v1\\n" # here'),
    '# here',
    'schema',
    /newline/,
  ),
  bad(
    'inPlace NodeImage image that is no container image',
    'i.yaml',
    doc('NodeImage', 'worker', 'image: Node_OS:V1 # here\nstrategy: inPlace\nnodeSelector: {matchLabels: {a: b}}'),
    '# here',
    'invalid-value',
    /image reference|lowercase/,
  ),
  ...GOOD_IMAGES.map((i) => good(`NodeOp image ${q(i).slice(0, 40)}`, { 'op.yaml': op(`image: ${q(i)}`) })),
  ...['1.20.3', 'v1.20.3', 'latest'].map((v) =>
    good(`Bottlerocket NodeImage image ${v}`, { 'i.yaml': bottlerocket(`image: ${q(v)}`) }),
  ),
  ...['bottlerocket:1.20.3', '1.20', 'v1.20.3-rc1', 'Latest'].map((v) =>
    bad(
      `Bottlerocket NodeImage image ${q(v)}`,
      'i.yaml',
      bottlerocket(`image: ${q(v)} # here`),
      '# here',
      'invalid-value',
      /is not a Bottlerocket version/,
    ),
  ),
  bad(
    'Bottlerocket NodeImage with an osImage of its own',
    'i.yaml',
    doc(
      'NodeImage',
      'br',
      'image: 1.20.3\nstrategy: inPlace\nnodeSelector: {matchLabels: {a: b}}\ninPlace:\n  updater: bottlerocket\n  osImage: Bottlerocket OS 1.20.3 # here',
    ),
    '# here',
    'invalid-value',
    /verifies the node by its version/,
  ),
  bad(
    'inPlace osImage that is no regular expression',
    'i.yaml',
    doc(
      'NodeImage',
      'os',
      'image: node-os:v1\nstrategy: inPlace\nnodeSelector: {matchLabels: {a: b}}\ninPlace:\n  osImage: "/Kairos (v3/" # here',
    ),
    '# here',
    'invalid-value',
    /not a valid regular expression/,
  ),
  bad(
    'NodeOpUpgrade osImage that is no regular expression',
    'u.yaml',
    doc('NodeOpUpgrade', 'up', 'image: kairos:v3\nosImage: "/[v3/" # here'),
    '# here',
    'invalid-value',
    /not a valid regular expression/,
  ),
  bad(
    'inPlace on a replace NodeImage',
    'i.yaml',
    doc('NodeImage', 'worker', 'image: ami-1\ninPlace: {updater: bottlerocket} # here'),
    '# here',
    'invalid-value',
    /only applies to strategy inPlace/,
  ),
  good('inPlace osImage exact and as a pattern', {
    'a.yaml': doc(
      'NodeImage',
      'a',
      'image: node-os:v1\nstrategy: inPlace\nnodeSelector: {matchLabels: {a: b}}\ninPlace: {osImage: Kairos v3}',
    ),
    'b.yaml': doc('NodeOpUpgrade', 'b', 'image: kairos:v3\nosImage: "/^Kairos v3\\\\./"'),
  }),
];

const CONFIG = 'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\n';
export const stalled: CorpusCase[] = [
  ...(['0', '"0%"'] as const).flatMap((surge) =>
    (['0', '"0%"'] as const).map((unavailable) =>
      bad(
        `maxSurge ${surge} with maxUnavailable ${unavailable}`,
        'i.yaml',
        IMAGE + `  rollout:\n    maxSurge: ${surge}\n    maxUnavailable: ${unavailable} # here\n`,
        '# here',
        'invalid-value',
        /never/,
      ),
    ),
  ),
  bad(
    'maxSurge 0 over a default maxUnavailable 0',
    'i.yaml',
    IMAGE + '  rollout:\n    maxSurge: 0 # here\n',
    '# here',
    'invalid-value',
    /both 0/,
    { 'drydock.yaml': CONFIG + 'defaults:\n  rollout:\n    maxUnavailable: 0\n' },
  ),
  bad(
    'both 0 in drydock.yaml defaults',
    'drydock.yaml',
    CONFIG + 'defaults:\n  rollout:\n    maxSurge: 0\n    maxUnavailable: 0 # here\n',
    '# here',
    'invalid-value',
  ),
  good('maxSurge 0 with maxUnavailable 1', {
    'i.yaml': IMAGE + '  rollout:\n    maxSurge: 0\n    maxUnavailable: 1\n',
  }),
  good('maxSurge 1 with maxUnavailable 0', {
    'i.yaml': IMAGE + '  rollout:\n    maxSurge: 1\n    maxUnavailable: 0\n',
  }),
];

const BAD_BRANCHES = [
  'a..b',
  'a@{1}',
  'status.lock',
  'drydock/x.lock',
  'a/.hidden',
  'a b',
  'a~1',
  'a^2',
  'a:b',
  'a?',
  'a*',
  'a[x',
  'a\\\\b',
  '/a',
  'a/',
  'a.',
  '@',
  '-a',
  'a//b',
  'refs/heads/status',
  'a\\tb',
];
export const branches: CorpusCase[] = [
  ...BAD_BRANCHES.map((b) =>
    bad(
      `statusBranch "${b}"`,
      'drydock.yaml',
      CONFIG + `statusBranch: "${b}" # here\n`,
      '# here',
      'schema',
      /statusBranch/,
    ),
  ),
  ...['drydock/status', 'feature/x-1', 'a.b', 'release-1.2/status', 'a@b'].map((b) =>
    good(`statusBranch ${b}`, { 'drydock.yaml': CONFIG + `statusBranch: ${b}\n` }),
  ),
];

const SUB = '0b1f6471-1bf0-4dda-aec3-cb9272f09590';
const AZ = `/subscriptions/${SUB}/resourceGroups/rg-nodes/providers/Microsoft.Compute/virtualMachineScaleSets/workers`;
const ARN =
  'arn:aws:autoscaling:eu-central-1:123456789012:autoScalingGroup:0b1f6471-1bf0-4dda-aec3-cb9272f09590:autoScalingGroupName/workers';
const GCP = 'projects/my-project/zones/europe-west3-a/instanceGroupManagers/workers';
const group = (name: string, provider: string, id: string, marker = ''): string =>
  doc('ScalingGroup', name, `provider: ${provider}\ngroupId: ${q(id)}${marker}\nnodeImage: worker`);
const SAME: readonly (readonly [string, string, string])[] = [
  ['azure', AZ, AZ.toUpperCase().replace('/SUBSCRIPTIONS/', '/subscriptions/')],
  ['azure', AZ, AZ.toLowerCase()],
  ['azure', AZ, AZ.replace('rg-nodes', 'RG-Nodes').replace('workers', 'Workers')],
  ['aws', 'workers', ARN],
  ['aws', ARN, ARN],
  ['gcp', GCP, GCP],
];
const DIFFERENT: readonly (readonly [string, string, string])[] = [
  ['gcp', GCP, GCP.replace('europe-west3-a', 'europe-west3-b')],
  ['aws', 'workers', 'Workers'],
  ['aws', 'workers', ARN.replace(/workers$/, 'others')],
  ['azure', AZ, AZ.replace('workers', 'workers2')],
];
export const groups: CorpusCase[] = [
  ...SAME.map(([p, a, b]) =>
    bad(
      `${p} ${b.slice(-40)} names the group of ${a.slice(-40)}`,
      'b.yaml',
      group('second', p, b, ' # here'),
      '# here',
      'duplicate-group',
      /already ScalingGroup "first"/,
      { 'a.yaml': group('first', p, a), 'i.yaml': IMAGE },
    ),
  ),
  ...DIFFERENT.map(([p, a, b]) =>
    good(`${p} ${b.slice(-40)} is not ${a.slice(-40)}`, {
      'a.yaml': group('first', p, a),
      'b.yaml': group('second', p, b),
      'i.yaml': IMAGE,
    }),
  ),
];

const window = (tz: string): string =>
  doc('MaintenanceWindow', 'nights', `timeZone: ${q(tz)} # here\nschedules:\n- cron: '0 22 * * *'\n  duration: 4h`);
const LEGACY: readonly (readonly [string, RegExp])[] = [
  ['PST', /America\/Los_Angeles/],
  ['BST', /Europe\/London/],
  ['EST', /America\/New_York/],
  ['IST', /Asia\/Kolkata/],
  ['US/Pacific', /America\/Los_Angeles/],
  ['Canada/Eastern', /America\/Toronto/],
  ['GMT', /UTC/],
  ['CET', /Europe\/Berlin/],
  ['EST5EDT', /America\/New_York/],
  ['Japan', /Asia\/Tokyo/],
  ['europe/berlin', /Europe\/Berlin/],
  ['utc', /UTC/],
  ['+01:00', /zone name like/],
  ['Mars/Olympus', /zone name like/],
];
export const zones: CorpusCase[] = [
  ...LEGACY.map(([tz, meant]) => bad(`timeZone ${tz}`, 'w.yaml', window(tz), '# here', 'invalid-value', meant)),
  ...['UTC', 'Etc/UTC', 'Europe/London', 'America/Argentina/Buenos_Aires', 'Asia/Kolkata', 'Etc/GMT+5'].map((tz) =>
    good(`timeZone ${tz}`, { 'w.yaml': window(tz) }),
  ),
];

/** medik8s' spec.evictionTimeout as its CRD validates it: exported objects carry the API server's 30s. */
const medik8s = (timeout: string): string =>
  `apiVersion: nodemaintenance.medik8s.io/v1beta1\nkind: NodeMaintenance\nmetadata:\n  name: m\nspec:\n  nodeName: worker-1\n  evictionTimeout: ${timeout} # here\n`;
export const evictionTimeouts: CorpusCase[] = [
  ...['30s', '"0"', '1.5m', '500ms', '2h'].map((t) => good(`medik8s evictionTimeout ${t}`, { 'm.yaml': medik8s(t) })),
  ...['30', '1d', '-1s', '"30 s"', '1h30m'].map((t) =>
    bad(`medik8s evictionTimeout ${t}`, 'm.yaml', medik8s(t), '# here', 'schema'),
  ),
];
