/**
 * `engines` must be a promise every installed package keeps: a dependency that needs a newer
 * Node than ours makes `npm ci` warn EBADENGINE and may break at run time on the versions we
 * claim. Checked against the lockfile, which is what `npm ci` installs.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface LockPackage {
  readonly engines?: Readonly<Record<string, string>> | readonly string[];
  readonly dev?: boolean;
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(path.join(root, file), 'utf8')) as T;
}

/** Packages of the lockfile whose engines.node does not cover every version `ours` allows. */
export function unsupportedBy(ours: string, packages: Readonly<Record<string, LockPackage>>): string[] {
  const out: string[] = [];
  for (const [where, pkg] of Object.entries(packages)) {
    // Some old packages give engines as an array of strings, which npm ignores.
    const node =
      where === '' || pkg.engines === undefined || Array.isArray(pkg.engines)
        ? undefined
        : (pkg.engines as Record<string, string>).node;
    if (node === undefined) continue;
    if (!semver.subset(ours, node))
      out.push(`${where.replace(/^node_modules\//, '')} needs node ${node}${pkg.dev === true ? ' (dev)' : ''}`);
  }
  return out.sort();
}

describe('engines', () => {
  const pkg = readJson<{ engines: { node: string } }>('package.json');
  const lock = readJson<{ packages: Record<string, LockPackage> }>('package-lock.json');

  it('the lockfile was written for the engines package.json states', () => {
    assert.deepEqual(lock.packages['']?.engines, pkg.engines);
  });

  it('every package the lockfile installs supports every Node version our engines allow', () => {
    assert.ok(semver.validRange(pkg.engines.node), `engines.node ${pkg.engines.node} is not a semver range`);
    assert.deepEqual(unsupportedBy(pkg.engines.node, lock.packages), []);
  });

  it('the check finds a dependency that needs a newer Node', () => {
    const found = unsupportedBy('>=20.19.0', {
      'node_modules/cookie': { engines: { node: '>=22' } },
      'node_modules/ok': { engines: { node: '>=18' } },
    });
    assert.deepEqual(found, ['cookie needs node >=22']);
  });
});
