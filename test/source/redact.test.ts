import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { redactText, redactUrl, resolveCredentials, splitUrlCredentials } from '../../src/source/index.js';
import { tempDir } from '../support/git-server.js';

describe('credentials never leave the process', () => {
  const urls: Array<[string, string]> = [
    ['https://alice:pw@git.example.com/org/repo.git', 'https://git.example.com/org/repo.git'],
    ['https://ghp_token123@git.example.com/r.git', 'https://git.example.com/r.git'],
    ['https://git.example.com/r.git?access_token=abc&x=1', 'https://git.example.com/r.git?access_token=***&x=1'],
    ['http://127.0.0.1:8080/r.git', 'http://127.0.0.1:8080/r.git'],
  ];
  for (const [input, want] of urls) it(`redactUrl(${want})`, () => assert.equal(redactUrl(input), want));

  it('scrubs user info and known secrets from free text', () => {
    assert.equal(
      redactText('failed: https://u:p4ss@h/x and token s3cr3t!', ['s3cr3t!']),
      'failed: https://***@h/x and token ***',
    );
  });

  it('splits credentials off a URL; a lone user name is a token', () => {
    assert.deepEqual(splitUrlCredentials('https://bob:p%40ss@h/r.git'), {
      url: 'https://h/r.git',
      credentials: { username: 'bob', password: 'p@ss' },
    });
    assert.deepEqual(splitUrlCredentials('https://tok@h/r.git'), {
      url: 'https://h/r.git',
      credentials: { username: 'x-access-token', password: 'tok' },
    });
  });

  const env: Array<{ name: string; env: NodeJS.ProcessEnv; want: unknown }> = [
    { name: 'token', env: { DRYDOCK_GIT_TOKEN: 't0k' }, want: { username: 'x-access-token', password: 't0k' } },
    {
      name: 'token with user',
      env: { DRYDOCK_GIT_TOKEN: 't0k', DRYDOCK_GIT_USERNAME: 'ci' },
      want: { username: 'ci', password: 't0k' },
    },
    {
      name: 'user and password',
      env: { DRYDOCK_GIT_USERNAME: 'ci', DRYDOCK_GIT_PASSWORD: 'pw' },
      want: { username: 'ci', password: 'pw' },
    },
    { name: 'nothing', env: {}, want: undefined },
  ];
  for (const c of env)
    it(`credentials from the environment: ${c.name}`, () =>
      assert.deepEqual(resolveCredentials({ env: c.env }), c.want));

  it('reads a token file, and says which file is missing without its content', () => {
    const t = tempDir();
    const file = path.join(t.dir, 'token');
    writeFileSync(file, 'file-token\n');
    assert.deepEqual(resolveCredentials({ env: { DRYDOCK_GIT_TOKEN: 'env' }, tokenFile: file }), {
      username: 'x-access-token',
      password: 'file-token',
    });
    assert.throws(() => resolveCredentials({ env: {}, tokenFile: path.join(t.dir, 'missing') }), {
      code: 'credentials',
      message: /cannot read the token file .*missing \(ENOENT\)/,
    });
    assert.throws(() => resolveCredentials({ env: { DRYDOCK_GIT_PASSWORD: 'pw' } }), {
      code: 'credentials',
      message: /no user name/,
    });
    t.remove();
  });
});
