import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { processStartTicks, stopLeftovers, Supervisor } from '../../src/sandbox/children.js';
import { isAlive } from '../../src/sandbox/layout.js';
import { delay } from '../../src/sandbox/wait.js';
import { tempDir } from '../support/git-server.js';

const silent = pino({ level: 'silent' });

/** A node process that starts a grandchild, prints its pid, then waits (and ignores SIGTERM when asked). */
function parentScript(ignoreTerm: boolean): string {
  return [
    "const { spawn } = require('node:child_process');",
    "const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });",
    'console.log(`grandchild ${g.pid}`);',
    ignoreTerm ? "process.on('SIGTERM', () => {});" : '',
    'setInterval(() => {}, 1000);',
  ].join('\n');
}

async function grandchildPid(logFile: string): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const m = existsSync(logFile) ? /grandchild (\d+)/.exec(readFileSync(logFile, 'utf8')) : null;
    if (m?.[1] !== undefined) return Number(m[1]);
    await delay(50);
  }
  throw new Error(`no grandchild pid in ${logFile}`);
}

describe('sandbox supervised processes', function () {
  this.timeout(20_000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('drydock-children-');
  });
  afterEach(() => tmp.remove());

  it('stops every process it started, grandchildren included, even one ignoring SIGTERM', async () => {
    const sup = new Supervisor(tmp.dir, path.join(tmp.dir, 'pids.json'), silent);
    const polite = sup.start({ name: 'polite', command: process.execPath, args: ['-e', parentScript(false)] });
    const stubborn = sup.start({ name: 'stubborn', command: process.execPath, args: ['-e', parentScript(true)] });
    const pids = [polite.pid, stubborn.pid, await grandchildPid(polite.logFile), await grandchildPid(stubborn.logFile)];
    assert.ok(pids.every(isAlive));
    await sup.stopAll(500);
    await delay(100);
    assert.deepEqual(pids.filter(isAlive), []);
    assert.equal(existsSync(path.join(tmp.dir, 'pids.json')), false);
    assert.equal(sup.failure(), undefined, 'a requested stop is not a failure');
  });

  it('reports a process that exits on its own, naming its log', async () => {
    const sup = new Supervisor(tmp.dir, path.join(tmp.dir, 'pids.json'), silent);
    const child = sup.start({
      name: 'crasher',
      command: process.execPath,
      args: ['-e', 'console.error("boom"); process.exit(3)'],
    });
    await child.exited;
    const failure = sup.failure();
    assert.equal(failure?.code, 'ProcessExited');
    assert.deepEqual(failure?.data, {
      process: 'crasher',
      exitCode: 3,
      signal: null,
      log: path.join(tmp.dir, 'crasher.log'),
      lastProblem: 'boom',
    });
    assert.match(readFileSync(child.logFile, 'utf8'), /boom/);
    await sup.stopAll(500);
  });

  it('does not count a finished one-shot command as a failure', async () => {
    const sup = new Supervisor(tmp.dir, path.join(tmp.dir, 'pids.json'), silent);
    const child = sup.start({
      name: 'build',
      command: process.execPath,
      args: ['-e', 'process.exit(1)'],
      oneShot: true,
    });
    assert.deepEqual(await child.exited, { code: 1, signal: null });
    assert.equal(sup.failure(), undefined);
  });

  it('a re-run stops what a killed run left behind, and nothing else', async () => {
    const pidFile = path.join(tmp.dir, 'pids.json');
    const sup = new Supervisor(tmp.dir, pidFile, silent);
    const left = sup.start({ name: 'left', command: process.execPath, args: ['-e', parentScript(false)] });
    const grandchild = await grandchildPid(left.logFile);
    // A record whose start time does not match stands for a pid that was reused: never signalled.
    const records = JSON.parse(readFileSync(pidFile, 'utf8')) as unknown[];
    writeFileSync(
      pidFile,
      JSON.stringify([
        ...records,
        { name: 'reused', pid: process.pid, startTicks: (processStartTicks(process.pid) ?? 0) + 1 },
      ]),
    );
    assert.deepEqual(await stopLeftovers(pidFile, silent), ['left']);
    await delay(100);
    assert.equal(isAlive(left.pid), false);
    assert.equal(isAlive(grandchild), false);
    assert.equal(existsSync(pidFile), false);
  });
});
