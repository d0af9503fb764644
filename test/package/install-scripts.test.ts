/**
 * npm (11.16 on) ends `npm ci` with a warning for every dependency whose install script the
 * project has not reviewed in package.json's `allowScripts`, and a later npm skips the scripts
 * it does not name. Every package of the lockfile with an install script is decided there.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(path.join(root, file), 'utf8')) as T;
}

describe('install scripts', () => {
  it("every dependency with an install script is allowed or denied in package.json's allowScripts", () => {
    const lock = readJson<{ packages: Record<string, { hasInstallScript?: boolean }> }>('package-lock.json');
    const decided = readJson<{ allowScripts?: Record<string, boolean> }>('package.json').allowScripts ?? {};
    const names = Object.entries(lock.packages)
      .filter(([where, p]) => where !== '' && p.hasInstallScript === true)
      .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length));
    assert.ok(names.length > 0, 'the lockfile records install scripts (hasInstallScript)');
    const undecided = [...new Set(names)].filter(
      (n) => !Object.keys(decided).some((k) => k.replace(/(.)@.*$/, '$1') === n),
    );
    assert.deepEqual(undecided, []);
  });
});
