import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createScreen, guardOutput } from '../../src/sandbox/terminal.js';
import type { SandboxSnapshot } from '../../src/sandbox/view.js';

/** Just enough of a terminal to replay the live view: lines, "cursor up n lines" and "clear below". */
function replay(output: string): string[] {
  const screen: string[] = [''];
  let row = 0;
  // eslint-disable-next-line no-control-regex
  for (const token of output.split(/(\u001b\[[0-9;?]*[A-Za-z]|\n)/)) {
    if (token === '\n') {
      row++;
      if (screen[row] === undefined) screen[row] = '';
      // eslint-disable-next-line no-control-regex -- a terminal's cursor-up sequence starts with ESC
    } else if (/^\u001b\[\d+F$/.test(token)) {
      row = Math.max(0, row - Number(token.slice(2, -1)));
    } else if (token === '\u001b[0J') {
      screen.length = row + 1;
      screen[row] = '';
    } else if (!token.startsWith('\u001b')) {
      screen[row] = (screen[row] ?? '') + token;
    }
  }
  return screen.filter((l, i) => l !== '' || i < screen.length - 1);
}

const snapshot = (headline: string): SandboxSnapshot => ({
  now: '2024-01-01T00:00:10Z',
  startedAt: '2024-01-01T00:00:00Z',
  headline,
  steps: [],
  specs: [{ kind: 'NodeImage', name: 'worker', phase: 'Complete', done: 6, total: 6 }],
  nodes: [],
});

describe('sandbox terminal', () => {
  it('a message printed while the view is live leaves no stale view above the next one', () => {
    let written = '';
    const screen = createScreen({ write: (t: string) => (written += t), isTTY: true, columns: 80, rows: 40 });
    screen.show(snapshot('running (Ctrl-C stops everything)'));
    screen.print(['SIGINT: stopping every process it started (Ctrl-C again to exit at once)…']);
    screen.show(snapshot('stopping'));
    screen.close();
    const lines = replay(written);
    assert.deepEqual(
      lines.filter((l) => l.startsWith('drydock sandbox')),
      ['drydock sandbox · up 10s · stopping'],
      lines.join('\n'),
    );
    assert.ok(
      lines.includes('SIGINT: stopping every process it started (Ctrl-C again to exit at once)…'),
      lines.join('\n'),
    );
  });

  it('a reader that went away (EPIPE) makes writes no-ops instead of ending the process', async () => {
    // A real pipe whose reader exits at once, like `| tee log` after Ctrl-C.
    const reader = spawn('true', [], { stdio: ['pipe', 'ignore', 'ignore'] });
    await once(reader, 'exit');
    const out = guardOutput(reader.stdin as unknown as NodeJS.WriteStream);
    for (let i = 0; i < 200 && !out.gone; i++) {
      out.write('x'.repeat(65536));
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(out.gone, true);
    assert.equal(out.write('after\n'), false);
  });
});
