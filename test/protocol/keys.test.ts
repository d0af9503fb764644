import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ANNOTATIONS, LABELS } from '../../src/protocol/keys.js';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

describe('protocol keys: one home for every drydock.dev/ key', () => {
  it('no source file but protocol/keys.ts spells a drydock.dev/ key in a string', () => {
    // A quoted key (not apiVersion drydock.dev/v1alpha1, not the sim cloud's sim.drydock.dev/ marks).
    const spelled = /['"`]drydock\.dev\/(?!v\d)[a-z-]+['"`]/;
    const offenders = sources(SRC)
      .filter((f) => !f.endsWith(path.join('protocol', 'keys.ts')))
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .flatMap((line, i) => (spelled.test(line) ? [`${path.relative(SRC, f)}:${i + 1}: ${line.trim()}`] : [])),
      );
    assert.deepEqual(offenders, []);
  });

  it('every key is under drydock.dev/ (or a well-known Kubernetes label) and no two annotations share a name', () => {
    const values = Object.values(ANNOTATIONS);
    assert.equal(new Set(values).size, values.length);
    for (const v of values) assert.match(v, /^drydock\.dev\/[a-z-]+$/);
    for (const v of Object.values(LABELS)) assert.match(v, /^(drydock\.dev|app\.kubernetes\.io)\/[a-z-]+$/);
  });
});
