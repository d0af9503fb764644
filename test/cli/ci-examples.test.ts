/**
 * examples-repo's CI (GitHub Actions, GitLab CI) runs drydock commands: each must exist with
 * the flags it passes, and the comment they update must be found by the marker drydock writes.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildProgram } from '../../src/cli/main.js';
import { PR_COMMENT_MARKER } from '../../src/report/pr-render.js';

const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../examples-repo');
const read = (f: string) => readFileSync(path.join(examples, f), 'utf8');

/** Every `$DRYDOCK <command> …` a CI file runs, as [command, flags]. */
function invocations(text: string): Array<[string, string[]]> {
  return [...text.matchAll(/\$DRYDOCK (\w+)([^\n|>]*)/g)].map((m) => [
    m[1]!,
    [...(m[2] ?? '').matchAll(/(--[\w-]+)/g)].map((f) => f[1]!),
  ]);
}

describe('examples-repo CI: the drydock commands it runs', () => {
  const program = buildProgram(() => undefined);
  for (const file of ['.github/workflows/drydock-plan.yaml', '.gitlab-ci.yml']) {
    it(`${file}: validate and plan --base/--head, with flags drydock has`, () => {
      const calls = invocations(read(file));
      assert.deepEqual([...new Set(calls.map(([c]) => c))].sort(), ['plan', 'validate']);
      for (const [name, flags] of calls) {
        const command = program.commands.find((c) => c.name() === name);
        assert.ok(command, name);
        const known = new Set(command.options.map((o) => o.long));
        for (const f of flags) assert.ok(known.has(f), `drydock ${name} has no ${f}`);
        if (name === 'plan')
          for (const f of ['--base', '--head', '--format']) assert.ok(flags.includes(f), `${file}: plan without ${f}`);
      }
    });
  }

  it('both find their earlier comment by the marker drydock puts first', () => {
    assert.ok(read('.github/workflows/drydock-plan.yaml').includes(`const marker = '${PR_COMMENT_MARKER}';`));
    assert.ok(read('.gitlab/drydock-comment.mjs').includes(`const MARKER = '${PR_COMMENT_MARKER}';`));
  });
});
