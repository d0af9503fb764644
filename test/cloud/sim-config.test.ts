import { strict as assert } from 'node:assert';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  DEFAULT_FAULTS,
  loadSimConfig,
  parseSimConfig,
  parseSimConfigText,
  SimConfigError,
} from '../../src/cloud/sim/config.js';
import { imageLabelValue } from '../../src/cloud/sim/nodes.js';

function problemsOf(fn: () => unknown): SimConfigError['data']['problems'] {
  try {
    fn();
  } catch (err) {
    if (err instanceof SimConfigError) return err.data.problems;
    throw err;
  }
  assert.fail('expected a SimConfigError');
}

describe('sim cloud configuration', () => {
  it('fills in defaults', () => {
    const config = parseSimConfig({ groups: [{ id: 'workers', image: 'os-v1' }] });
    assert.deepEqual(config, {
      bootDelaySeconds: 5,
      terminateDelaySeconds: 3,
      quota: {},
      faults: DEFAULT_FAULTS,
      host: { rebootSeconds: 5, jobRunSeconds: 2, failJobsOnNodes: [] },
      mco: {
        enabled: false,
        degradedNodes: [],
        degradedReason: 'simulated failure applying the machine config',
        controlPlaneSeconds: 0,
      },
      groups: [
        {
          id: 'workers',
          role: 'worker',
          size: 0,
          image: 'os-v1',
          labels: {},
          resources: { cpu: '4', memory: '16Gi', pods: '110' },
        },
      ],
    });
  });

  it("takes the hosts' reboot time, Job run time and failing nodes", () => {
    const config = parseSimConfig({ groups: [], host: { rebootSeconds: 1.5, failJobsOnNodes: ['workers-i-0002'] } });
    assert.deepEqual(config.host, { rebootSeconds: 1.5, jobRunSeconds: 2, failJobsOnNodes: ['workers-i-0002'] });
  });

  const invalid: Array<[string, unknown, string, RegExp]> = [
    ['no groups', {}, '', /missing required field "groups"/],
    ['unknown host field', { groups: [], host: { rebootSecs: 1 } }, '/host', /unknown field "rebootSecs"/],
    ['negative reboot time', { groups: [], host: { rebootSeconds: -1 } }, '/host/rebootSeconds', />= 0/],
    ['unknown field', { groups: [], bootDelay: 3 }, '', /unknown field "bootDelay"/],
    ['empty image', { groups: [{ id: 'w', image: '' }] }, '/groups/0/image', /must NOT have fewer than 1 characters/],
    ['bad role', { groups: [{ id: 'w', image: 'a', role: 'master' }] }, '/groups/0/role', /"worker", "control-plane"/],
    ['negative size', { groups: [{ id: 'w', image: 'a', size: -1 }] }, '/groups/0/size', />= 0/],
    ['bad group id', { groups: [{ id: 'Workers', image: 'a' }] }, '/groups/0/id', /sim groupId "Workers"/],
    [
      'duplicate id',
      {
        groups: [
          { id: 'w', image: 'a' },
          { id: 'w', image: 'b' },
        ],
      },
      '/groups/1/id',
      /defined twice/,
    ],
    [
      'bad label value',
      { groups: [{ id: 'w', image: 'a', labels: { pool: 'a b' } }] },
      '/groups/0/labels',
      /not a valid Kubernetes label value/,
    ],
    [
      'bad label key',
      { groups: [{ id: 'w', image: 'a', labels: { '-x': 'y' } }] },
      '/groups/0/labels',
      /label key "-x"/,
    ],
    [
      'size over quota',
      { groups: [{ id: 'w', image: 'a', size: 3 }], quota: { maxInstancesPerGroup: 2 } },
      '/groups/0/size',
      /exceeds quota/,
    ],
    [
      'sizes over total quota',
      {
        groups: [
          { id: 'a', image: 'a', size: 2 },
          { id: 'b', image: 'a', size: 2 },
        ],
        quota: { maxInstancesTotal: 3 },
      },
      '/quota/maxInstancesTotal',
      /add up to 4/,
    ],
    ['rate above 1', { groups: [], faults: { throttleRate: 1.5 } }, '/faults/throttleRate', /<= 1/],
    [
      'latency min > max',
      { groups: [], faults: { latencyMs: { min: 5, max: 1 } } },
      '/faults/latencyMs',
      /min must not be larger/,
    ],
    [
      'bad quantity',
      { groups: [{ id: 'w', image: 'a', resources: { memory: 'lots' } }] },
      '/groups/0/resources/memory',
      /quantity/,
    ],
  ];
  for (const [name, input, pathExpected, message] of invalid) {
    it(`refuses ${name}`, () => {
      const problems = problemsOf(() => parseSimConfig(input));
      assert.ok(
        problems.some((p) => p.path === pathExpected && message.test(p.message)),
        `no problem at ${JSON.stringify(pathExpected)} matching ${message}: ${JSON.stringify(problems)}`,
      );
    });
  }

  it('reports YAML problems with file, line and column', () => {
    const text = ['groups:', '  - id: workers', '    image: os-v1', '    size: three', ''].join('\n');
    assert.throws(
      () => parseSimConfigText(text, 'groups.yaml'),
      (err: unknown) => {
        assert.ok(err instanceof SimConfigError);
        assert.equal(err.code, 'InvalidSimConfig');
        assert.deepEqual(err.data.problems, [
          { path: '/groups/0/size', message: 'must be integer', line: 4, column: 11 },
        ]);
        assert.equal(err.message, 'groups.yaml:4:11: /groups/0/size: must be integer');
        return true;
      },
    );
  });

  it('reports YAML syntax errors with a position', () => {
    const problems = problemsOf(() => parseSimConfigText('groups: [\n', 'groups.yaml'));
    assert.ok(
      problems.length > 0 && problems.every((p) => p.line !== undefined && p.message.startsWith('YAML: ')),
      JSON.stringify(problems),
    );
  });

  it('a missing file names the file and the flag to fix', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'drydock-simcfg-'));
    try {
      await assert.rejects(
        loadSimConfig(path.join(dir, 'nope.yaml')),
        (err: unknown) => err instanceof SimConfigError && /nope\.yaml: file not found; .*--config/.test(err.message),
      );
      await writeFile(path.join(dir, 'ok.yaml'), 'groups:\n  - {id: w, image: a, size: 2}\n');
      assert.equal((await loadSimConfig(path.join(dir, 'ok.yaml'))).groups[0]?.size, 2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('image label values', () => {
    const cases: Array<[string, RegExp]> = [
      ['os-v1', /^os-v1$/],
      ['ref/main/stream/stable/v2.14.0', /^ref-main-stream-stable-v2\.14\.0-[0-9a-f]{8}$/],
      ['ghcr.io/org/os:v2', /^ghcr\.io-org-os-v2-[0-9a-f]{8}$/],
      ['x'.repeat(100), /^x{52}-[0-9a-f]{8}$/],
      ['///', /^[0-9a-f]{8}$/],
    ];
    for (const [image, expected] of cases) {
      it(`${image.slice(0, 40)} → ${expected}`, () => {
        const value = imageLabelValue(image);
        assert.match(value, expected);
        assert.ok(value.length <= 63);
      });
    }
    it('distinct images keep distinct labels', () => {
      assert.notEqual(imageLabelValue('a/b'), imageLabelValue('a:b'));
    });
  });
});
