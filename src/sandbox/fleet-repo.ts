/**
 * The sandbox's fleet repository: a bare copy of examples-repo/ served by the local Git
 * server, in which drydock tracks `main` and writes its status branch. Everything here is
 * native git, the way a person would do it, so what the sandbox does can be repeated by hand.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isMap, isScalar, parseAllDocuments } from 'yaml';
import { SandboxError } from './errors.js';

export const FLEET_REPO = 'fleet.git';
export const TRACKED_BRANCH = 'main';
export const DEFAULT_STATUS_BRANCH = 'drydock/status';

/** Who the sandbox commits as; the scenario's commit is recognisable by it. */
export const SANDBOX_AUTHOR = { name: 'drydock sandbox', email: 'sandbox@drydock.invalid' } as const;

function gitEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GIT_AUTHOR_NAME: SANDBOX_AUTHOR.name,
    GIT_AUTHOR_EMAIL: SANDBOX_AUTHOR.email,
    GIT_COMMITTER_NAME: SANDBOX_AUTHOR.name,
    GIT_COMMITTER_EMAIL: SANDBOX_AUTHOR.email,
    GIT_TERMINAL_PROMPT: '0',
  };
}

/** Runs native git; throws StepFailed with git's own words. A person's global config may sign commits: not here. */
export function git(args: readonly string[], options: { readonly cwd?: string; readonly step: string }): string {
  const r = spawnSync('git', ['-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main', ...args], {
    cwd: options.cwd,
    env: gitEnv(),
    encoding: 'utf8',
  });
  if (r.error !== undefined) {
    throw new SandboxError('MissingPiece', `${options.step}: git could not be run (${r.error.message}); install git`, {
      step: options.step,
    });
  }
  if (r.status !== 0) {
    throw new SandboxError('StepFailed', `${options.step}: git ${args[0] ?? ''} failed: ${r.stderr.trim()}`, {
      step: options.step,
    });
  }
  return r.stdout.trim();
}

/** git that may fail: undefined instead of an error (a branch that does not exist yet). */
function gitMaybe(args: readonly string[], options: { readonly raw?: boolean } = {}): string | undefined {
  const r = spawnSync('git', [...args], { env: gitEnv(), encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  return options.raw === true ? r.stdout : r.stdout.trim();
}

export function fleetRepoPath(gitRoot: string): string {
  return path.join(gitRoot, FLEET_REPO);
}

/**
 * Creates fleet.git from `examplesDir` unless it already has a `main` branch (a resumed
 * sandbox keeps its history and the changes a person pushed). Returns whether it was created.
 */
export function seedFleetRepo(gitRoot: string, examplesDir: string, workDir: string): { readonly created: boolean } {
  const step = 'create the fleet repository';
  const bare = fleetRepoPath(gitRoot);
  if (
    existsSync(bare) &&
    gitMaybe(['--git-dir', bare, 'rev-parse', '--verify', '--quiet', `refs/heads/${TRACKED_BRANCH}`]) !== undefined
  ) {
    return { created: false };
  }
  if (!existsSync(examplesDir) || readdirSync(examplesDir).length === 0) {
    throw new SandboxError(
      'MissingPiece',
      `${step}: ${examplesDir} is missing or empty; it holds the specs the sandbox starts from`,
      { step },
    );
  }
  rmSync(bare, { recursive: true, force: true });
  git(['init', '--quiet', '--bare', `--initial-branch=${TRACKED_BRANCH}`, bare], { step });
  const clone = mkdtempSync(path.join(workDir, 'seed-'));
  try {
    git(['init', '--quiet', `--initial-branch=${TRACKED_BRANCH}`, clone], { step });
    cpSync(examplesDir, clone, { recursive: true });
    git(['add', '--all'], { cwd: clone, step });
    git(['commit', '--quiet', '-m', 'Fleet specs from drydock examples-repo'], { cwd: clone, step });
    git(['push', '--quiet', bare, `HEAD:refs/heads/${TRACKED_BRANCH}`], { cwd: clone, step });
  } finally {
    rmSync(clone, { recursive: true, force: true });
  }
  return { created: true };
}

export interface BranchHead {
  readonly commit: string;
  readonly short: string;
  readonly subject: string;
  /** Trailer values by key, e.g. Drydock-Source. */
  readonly trailers: Readonly<Record<string, string>>;
}

/** The head of a branch of the bare repository, or undefined when the branch does not exist. */
export function readBranch(bare: string, branch: string): BranchHead | undefined {
  const out = gitMaybe([
    '--git-dir',
    bare,
    'log',
    '-1',
    '--format=%H%n%h%n%s%n%(trailers:only,unfold)',
    `refs/heads/${branch}`,
    '--',
  ]);
  if (out === undefined || out === '') return undefined;
  const [commit = '', short = '', subject = '', ...rest] = out.split('\n');
  const trailers: Record<string, string> = {};
  for (const line of rest) {
    const colon = line.indexOf(':');
    if (colon > 0) trailers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return { commit, short, subject, trailers };
}

/** Every file under `dir/` on `branch`, path → text. Empty when the branch does not exist. */
export function readTree(bare: string, branch: string, dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const list = gitMaybe(['--git-dir', bare, 'ls-tree', '-r', '--name-only', `refs/heads/${branch}`, '--', dir]);
  for (const file of (list ?? '').split('\n').filter((f) => f !== '')) {
    const text = gitMaybe(['--git-dir', bare, 'show', `refs/heads/${branch}:${file}`], { raw: true });
    if (text !== undefined) files.set(file, text);
  }
  return files;
}

/**
 * The next version of an image: its last number counted up (sandbox/node:1.29.3 →
 * sandbox/node:1.29.4, os-v1 → os-v2), or "-2" appended when it has no number. Only the tag
 * (after the last "/" and ":") is considered, so registry ports and paths stay as they are.
 */
export function nextImage(image: string): string {
  const nameEnd = image.lastIndexOf('/') + 1;
  const colon = image.indexOf(':', nameEnd);
  const at = image.indexOf('@', nameEnd);
  if (at >= 0) return `${image.slice(0, at)}-2`; // a digest names one exact image: give it a new name
  const tagStart = colon >= 0 ? colon + 1 : nameEnd;
  const tag = image.slice(tagStart);
  const m = /(\d+)(\D*)$/.exec(tag);
  if (m === null || m[1] === undefined) return `${image}-2`;
  const bumped = String(Number(m[1]) + 1).padStart(m[1].length, '0');
  return image.slice(0, tagStart) + tag.slice(0, m.index) + bumped + (m[2] ?? '');
}

export interface ImageChange {
  readonly nodeImage: string;
  readonly file: string;
  readonly from: string;
  readonly to: string;
}

function yamlFiles(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === '.git') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...yamlFiles(full, base));
    else if (/\.ya?ml$/.test(entry.name)) out.push(full);
  }
  return out.sort();
}

/**
 * Sets spec.image of each named NodeImage in a working tree, keeping the rest of each file
 * (comments, order) as it was. Every name must be found, or nothing is written.
 */
export function setNodeImages(worktree: string, images: ReadonlyMap<string, string>): ImageChange[] {
  const changes: ImageChange[] = [];
  const writes = new Map<string, string>();
  for (const file of yamlFiles(worktree)) {
    const docs = parseAllDocuments(readFileSync(file, 'utf8'));
    if (!Array.isArray(docs)) continue;
    let changed = false;
    for (const doc of docs) {
      const contents = doc.contents;
      if (!isMap(contents) || doc.get('kind') !== 'NodeImage') continue;
      const name = doc.getIn(['metadata', 'name']);
      const to = typeof name === 'string' ? images.get(name) : undefined;
      const from = doc.getIn(['spec', 'image'], true);
      if (typeof name !== 'string' || to === undefined || !isScalar(from) || typeof from.value !== 'string') continue;
      changes.push({ nodeImage: name, file: path.relative(worktree, file), from: from.value, to });
      doc.setIn(['spec', 'image'], to);
      changed = true;
    }
    if (changed) writes.set(file, docs.map((d) => d.toString()).join(''));
  }
  const missing = [...images.keys()].filter((n) => !changes.some((c) => c.nodeImage === n));
  if (missing.length > 0) {
    throw new SandboxError(
      'StepFailed',
      `no NodeImage named ${missing.join(', ')} with a spec.image in the fleet repository`,
      {
        step: 'commit the image change',
      },
    );
  }
  for (const [file, text] of writes) writeFileSync(file, text);
  return changes;
}

/** Reads spec.image of every NodeImage on the tracked branch (name → image). */
export function readNodeImages(worktree: string): Map<string, string> {
  const images = new Map<string, string>();
  for (const file of yamlFiles(worktree)) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      if (!isMap(doc.contents) || doc.get('kind') !== 'NodeImage') continue;
      const name = doc.getIn(['metadata', 'name']);
      const image = doc.getIn(['spec', 'image']);
      if (typeof name === 'string' && typeof image === 'string') images.set(name, image);
    }
  }
  return images;
}

/**
 * What a person does: clone the tracked branch, edit, commit, push. `edit` changes the clone
 * and returns the commit message. Returns the new commit and what `edit` returned with it.
 */
function commitAndPush<T>(
  bare: string,
  workDir: string,
  step: string,
  edit: (clone: string) => { readonly message: string; readonly result: T },
): { readonly commit: string; readonly result: T } {
  const clone = mkdtempSync(path.join(workDir, 'change-'));
  try {
    git(['clone', '--quiet', '--branch', TRACKED_BRANCH, bare, clone], { step });
    const { message, result } = edit(clone);
    git(['add', '--all'], { cwd: clone, step });
    git(['commit', '--quiet', '-m', message], { cwd: clone, step });
    git(['push', '--quiet', 'origin', `HEAD:refs/heads/${TRACKED_BRANCH}`], { cwd: clone, step });
    return { commit: git(['rev-parse', 'HEAD'], { cwd: clone, step }), result };
  } finally {
    rmSync(clone, { recursive: true, force: true });
  }
}

/**
 * An upgrade: edit the NodeImages. `choose` gets the current images and returns the new ones.
 * Returns the new commit and the changes made.
 */
export function commitImageChange(
  bare: string,
  workDir: string,
  choose: (current: ReadonlyMap<string, string>) => ReadonlyMap<string, string>,
): { readonly commit: string; readonly changes: readonly ImageChange[] } {
  const { commit, result } = commitAndPush(bare, workDir, 'commit the image change', (clone) => {
    const changes = setNodeImages(clone, choose(readNodeImages(clone)));
    const summary = changes.map((c) => `${c.nodeImage} ${c.from} → ${c.to}`).join(', ');
    return { message: `Upgrade node images: ${summary}`, result: changes };
  });
  return { commit, changes: result };
}

/** A new spec file (`file` relative to the repository's root), committed and pushed with `message`. */
export function commitSpecFile(bare: string, workDir: string, file: string, text: string, message: string): string {
  return commitAndPush(bare, workDir, `commit ${file}`, (clone) => {
    mkdirSync(path.dirname(path.join(clone, file)), { recursive: true });
    writeFileSync(path.join(clone, file), text);
    return { message, result: undefined };
  }).commit;
}
