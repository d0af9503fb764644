/** `drydock run` and `drydock plan` refuse bad input with exit 2 and a message that says what to do. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/drydock.js');

function drydock(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): { code: number | null; stderr: string; stdout: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    timeout: 20_000,
  });
  return { code: r.status, stderr: r.stderr, stdout: r.stdout };
}

describe('drydock run / plan: bad input', function () {
  this.timeout(30_000);
  let dir: string;
  let kubeconfig: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'drydock-cli-'));
    writeFileSync(path.join(dir, 'drydock.yaml'), 'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ncluster: c\n');
    kubeconfig = path.join(dir, 'kubeconfig');
    // A cluster nobody listens on: only reached if the flags were accepted.
    writeFileSync(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: sekret-token}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n',
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const table: { name: string; args: () => string[]; env?: NodeJS.ProcessEnv; message: RegExp }[] = [
    {
      name: 'a duration that is not one',
      args: () => [
        'run',
        '--repo',
        dir,
        '--kubeconfig',
        kubeconfig,
        '--cloud-endpoint',
        'http://127.0.0.1:1',
        '--interval',
        '5x',
      ],
      message: /--interval "5x" is not a duration; write e\.g\. 30s, 2m or 1h/,
    },
    {
      name: 'a poll schedule that is not a cron expression',
      args: () => [
        'run',
        '--repo',
        dir,
        '--kubeconfig',
        kubeconfig,
        '--cloud-endpoint',
        'http://127.0.0.1:1',
        '--poll-schedule',
        'every day',
      ],
      message: /--poll-schedule "every day" is not a cron expression; write e\.g\. '\*\/5 \* \* \* \*'/,
    },
    {
      name: 'a kubeconfig that does not exist',
      args: () => [
        'run',
        '--repo',
        dir,
        '--kubeconfig',
        path.join(dir, 'nope'),
        '--cloud-endpoint',
        'http://127.0.0.1:1',
      ],
      message: /cannot read kubeconfig .*nope.*pass --kubeconfig or set KUBECONFIG/,
    },
    {
      name: 'an endpoint that is not a URL',
      args: () => ['run', '--repo', dir, '--kubeconfig', kubeconfig, '--cloud-endpoint', 'not a url'],
      message: /--cloud-endpoint "not a url" is not a URL/,
    },
    {
      name: 'a listen address that is not host:port',
      args: () => [
        'run',
        '--repo',
        dir,
        '--kubeconfig',
        kubeconfig,
        '--cloud-endpoint',
        'http://127.0.0.1:1',
        '--listen',
        'localhost',
      ],
      message: /--listen "localhost" is not host:port; use e\.g\. :8080/,
    },
    {
      name: 'a provider drydock does not know',
      args: () => ['run', '--repo', dir, '--kubeconfig', kubeconfig, '--provider', 'openstack'],
      message: /argument 'openstack' is invalid\. Allowed choices are sim, aws, gcp, azure/,
    },
    {
      name: '--leader-elect that is not a boolean',
      args: () => [
        'run',
        '--repo',
        dir,
        '--kubeconfig',
        kubeconfig,
        '--cloud-endpoint',
        'http://127.0.0.1:1',
        '--leader-elect',
        'maybe',
      ],
      message: /--leader-elect "maybe" is not true or false/,
    },
    {
      name: 'plan against a cluster that is not there',
      args: () => ['plan', '--repo', dir, '--kubeconfig', kubeconfig, '--cloud-endpoint', 'http://127.0.0.1:1'],
      message: /drydock plan: cannot reach the cluster \(ECONNREFUSED\).*check --kubeconfig/,
    },
  ];
  for (const row of table) {
    it(`${row.name}: exit 2 with what to do`, () => {
      const r = drydock(row.args(), row.env);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, row.message);
      assert.ok(!r.stderr.includes('sekret-token'), 'no secret in the message');
      assert.ok(!/\n\s+at /.test(r.stderr), 'no stack trace');
    });
  }

  it('plan of a directory with invalid specs: exit 1, errors compiler-style', () => {
    const bad = mkdtempSync(path.join(tmpdir(), 'drydock-cli-bad-'));
    try {
      writeFileSync(
        path.join(bad, 'drydock.yaml'),
        'apiVersion: drydock.dev/v1alpha1\nkind: RepoConfig\ncluster: c\npaths: [specs]\n',
      );
      writeFileSync(path.join(bad, 'x.yaml'), 'not: [valid\n');
      const r = drydock(['plan', '--repo', bad, '--kubeconfig', kubeconfig, '--cloud-endpoint', 'http://127.0.0.1:1']);
      assert.equal(r.code, 1, r.stderr + r.stdout);
      assert.match(r.stdout, /^\S+:\d+:\d+: error: /m);
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });
});
