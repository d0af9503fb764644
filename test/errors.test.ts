import { strict as assert } from 'node:assert';
import { CodedError } from '../src/errors.js';
import { SimConfigError } from '../src/cloud/sim/config.js';
import { SimStateError } from '../src/cloud/sim/state.js';
import { KubeConfigError } from '../src/observe/kube.js';
import { ControlPlaneError } from '../src/sandbox/control-plane/errors.js';
import { GitServerError } from '../src/sandbox/git-server.js';
import { ListenError } from '../src/service/http.js';
import { OptionError } from '../src/service/options.js';
import { GitSourceError } from '../src/source/errors.js';

describe('errors: one base, one JSON shape, one retry vocabulary', () => {
  const cases: Array<[CodedError<string, object>, string, string]> = [
    [new GitSourceError('auth', 'bad credentials', { url: 'https://example.com/r.git' }), 'GitSourceError', 'auth'],
    [new OptionError('--resync "x" is not a duration', { flag: '--resync', value: 'x' }), 'OptionError', 'option'],
    [new KubeConfigError('no kubeconfig', { file: 'kc' }), 'KubeConfigError', 'kubeconfig'],
    [
      new SimConfigError({ file: 'sim.yaml', problems: [{ path: '/groups', message: 'required' }] }),
      'SimConfigError',
      'InvalidSimConfig',
    ],
    [new SimStateError('state unreadable', { file: 'state.json' }), 'SimStateError', 'InvalidSimState'],
    [new ControlPlaneError('etcd', 'exited'), 'ControlPlaneError', 'control-plane'],
    [new GitServerError('no git', {}), 'GitServerError', 'git-server'],
    [new ListenError('bad --listen', { listen: 'x' }), 'ListenError', 'listen'],
  ];
  for (const [err, name, code] of cases) {
    it(`${name}: a CodedError with code ${code}, serialised with name, code, message and data`, () => {
      assert.ok(err instanceof CodedError);
      assert.ok(err instanceof Error);
      assert.equal(err.name, name);
      assert.equal(err.code, code);
      assert.deepEqual(JSON.parse(JSON.stringify(err)), { name, code, message: err.message, data: err.data });
    });
  }

  it('the Git source says stalled for what needs a person and transient for the rest', () => {
    assert.equal(new GitSourceError('auth', 'x').retry, 'stalled');
    assert.equal(new GitSourceError('unreachable', 'x').retry, 'transient');
  });

  it('ControlPlaneError keeps naming its step and log', () => {
    const err = new ControlPlaneError('etcd', 'exited', { logFile: '/nonexistent/etcd.log' });
    assert.equal(err.step, 'etcd');
    assert.equal(err.logFile, '/nonexistent/etcd.log');
  });
});
