/**
 * The fleet's members read from their status branches: when each was written, and since when a
 * spec has said Complete at its revision (walked back through the branch), parsed once per tip.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SpecStatus } from '../../src/plan/types.js';
import { renderStatusDocs } from '../../src/report/status-docs.js';
import { FleetStatusReader } from '../../src/source/fleet-status.js';
import { GitSource } from '../../src/source/git-source.js';
import { specStatus } from '../support/spec-status.js';

const REV = 'a1b2c3d4e5f60718';
const T = (minute: number): string => `2026-03-01T10:${String(minute).padStart(2, '0')}:00Z`;

describe('FleetStatusReader', () => {
  let repo: string;
  const git = (date: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=drydock', '-c', 'user.email=d@example.org', ...args], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, GIT_COMMITTER_DATE: date, GIT_AUTHOR_DATE: date },
    }).trim();
  /** One status commit of cluster dev at `date` reporting `spec`. */
  const report = (date: string, spec: SpecStatus): void => {
    rmSync(path.join(repo, 'status'), { recursive: true, force: true });
    for (const [file, text] of renderStatusDocs({ cluster: 'dev', specs: [spec] })) {
      mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
      writeFileSync(path.join(repo, file), text);
    }
    git(date, 'add', '-A');
    git(date, 'commit', '-qm', 'status');
  };

  beforeEach(() => {
    repo = mkdtempSync(path.join(tmpdir(), 'drydock-fleet-status-'));
    git(T(0), 'init', '-q', '-b', 'drydock/status-dev');
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it('dates Complete from the first of the unbroken run of commits saying so, not from the tip', async () => {
    report(T(1), specStatus('NodeImage', 'worker', { revision: 'old0000000000000', phase: 'Complete' }));
    report(T(2), specStatus('NodeImage', 'worker', { revision: REV, phase: 'Progressing' }));
    report(T(3), specStatus('NodeImage', 'worker', { revision: REV, phase: 'Complete' }));
    report(T(4), specStatus('NodeImage', 'worker', { revision: REV, phase: 'Complete', nodes: [], eta: 'x' }));
    const reader = new FleetStatusReader(new GitSource({ repo }));
    const got = await reader.read([
      { cluster: 'dev', branch: 'drydock/status-dev' },
      { cluster: 'eu', branch: 'drydock/status-eu' },
    ]);
    assert.deepEqual(got.get('dev'), {
      writtenAt: Date.parse(T(4)),
      specs: new Map([['NodeImage/worker', { revision: REV, phase: 'Complete', completeSince: Date.parse(T(3)) }]]),
    });
    assert.equal(got.has('eu'), false, 'a branch that does not exist gives no report: unreachable');
  });

  it('parses a tip once, and keeps the Complete date across later tips that still say so', async () => {
    report(T(1), specStatus('NodeImage', 'worker', { revision: REV, phase: 'Complete' }));
    const reader = new FleetStatusReader(new GitSource({ repo }));
    const members = [{ cluster: 'dev', branch: 'drydock/status-dev' }];
    await reader.read(members);
    await reader.read(members);
    assert.equal(reader.parsed, 1);
    report(T(9), specStatus('NodeImage', 'worker', { revision: REV, phase: 'Complete', eta: 'heartbeat' }));
    const got = (await reader.read(members)).get('dev');
    assert.equal(reader.parsed, 2);
    assert.equal(got?.writtenAt, Date.parse(T(9)));
    assert.equal(got?.specs.get('NodeImage/worker')?.completeSince, Date.parse(T(1)));
  });
});
