/**
 * The container as shipped, read statically: it runs as a numeric non-root user on the current
 * Node LTS, with a read-only root filesystem, no privilege escalation and no capabilities, and
 * every path drydock writes is a volume; the notifications' Secret is mounted, read-only and
 * optional, where drydock looks for it by default. The LTS is the one the unit suites also run under
 * (scripts/node-lts.sh), and engines promises it.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { parse } from 'yaml';
import { DEFAULT_SECRETS_DIR } from '../../src/notify/secrets.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');

interface Container {
  env: { name: string; value?: string }[];
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface PodSpec {
  securityContext?: Record<string, unknown>;
  containers: Container[];
  volumes?: { name: string; emptyDir?: unknown; secret?: { secretName?: string; optional?: boolean } }[];
}

const ltsVersion = /DRYDOCK_NODE_LTS_VERSION:-(\d+\.\d+\.\d+)/.exec(read('scripts/node-lts.sh'))?.[1] ?? '';

describe('the container (deploy/Dockerfile, deploy/deployment.yaml)', () => {
  const dockerfile = read('deploy/Dockerfile');
  const pod = (parse(read('deploy/deployment.yaml')) as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
  const container = pod.containers[0]!;

  it('builds and runs on the Node LTS the unit suites run under, which engines allows', () => {
    assert.ok(semver.valid(ltsVersion), `scripts/node-lts.sh pins ${ltsVersion}`);
    const bases = [...dockerfile.matchAll(/^FROM node:(\d+)-slim/gm)].map((m) => Number(m[1]));
    assert.equal(bases.length, 2, 'a build and a runtime stage, both on node:<major>-slim');
    for (const major of bases) assert.equal(major, semver.major(ltsVersion));
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    assert.ok(semver.satisfies(ltsVersion, engines), `engines ${engines} leaves out ${ltsVersion}`);
  });

  it('the image runs as a numeric non-root user', () => {
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1] ?? '');
    const last = users.at(-1) ?? '';
    assert.match(last, /^[1-9]\d*:[1-9]\d*$/, `USER ${last}`);
    // The runtime stage (after the last FROM) sets it.
    assert.ok(dockerfile.lastIndexOf('USER') > dockerfile.lastIndexOf('FROM'));
  });

  it('the pod is non-root, read-only, unprivileged, without capabilities', () => {
    assert.equal(pod.securityContext?.['runAsNonRoot'], true);
    assert.ok(Number(pod.securityContext?.['runAsUser']) > 0);
    assert.deepEqual(pod.securityContext?.['seccompProfile'], { type: 'RuntimeDefault' });
    assert.equal(container.securityContext?.['readOnlyRootFilesystem'], true);
    assert.equal(container.securityContext?.['allowPrivilegeEscalation'], false);
    assert.deepEqual(container.securityContext?.['capabilities'], { drop: ['ALL'] });
    assert.notEqual(container.securityContext?.['privileged'], true);
  });

  it('the runtime image holds assets/, where the Bottlerocket update Job reads its script', () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('FROM'));
    assert.match(runtime, /^COPY (--from=build \/app\/)?assets \.\/assets$/m);
  });

  it('every path drydock writes is a mounted volume: its Git cache and /tmp', () => {
    const cache = container.env.find((e) => e.name === 'DRYDOCK_CACHE_DIR')?.value;
    assert.ok(cache, 'DRYDOCK_CACHE_DIR is set, so the cache is not under $HOME on the read-only root');
    const mounts = new Map((container.volumeMounts ?? []).map((m) => [m.mountPath, m.name]));
    const volumes = new Set((pod.volumes ?? []).filter((v) => v.emptyDir !== undefined).map((v) => v.name));
    for (const dir of [cache, '/tmp']) {
      const volume = mounts.get(dir);
      assert.ok(volume !== undefined && volumes.has(volume), `${dir} is an emptyDir volume`);
    }
  });

  it('the notification Secret is mounted where --notify-secrets-dir looks by default, read-only, optional', () => {
    const mount = (container.volumeMounts ?? []).find((m) => m.mountPath === DEFAULT_SECRETS_DIR);
    assert.ok(mount, `a volume at ${DEFAULT_SECRETS_DIR}`);
    assert.equal(mount.readOnly, true);
    const volume = (pod.volumes ?? []).find((v) => v.name === mount.name);
    assert.deepEqual(volume?.secret, { secretName: 'drydock-notify', optional: true }, 'the pods start without it');
  });
});
