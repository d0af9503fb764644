/**
 * The docs, held to the code: every shell block is run or checked by a test (registry.ts), every
 * relative link resolves (to the heading it names, if any), every spec shown is one `drydock
 * validate` accepts, and the commands no test can run (a registry push, a cloud's CLI, runs of
 * many minutes) name files, variables and images that exist. The commands that need a cluster
 * run in commands.test.ts.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import GithubSlugger from 'github-slugger';
import { parse, parseAllDocuments } from 'yaml';
import { KINDS, REFUSED } from '../../src/spec/kinds.js';
import { directorySource, formatErrorsText, loadFromDirectory, type LoadResult } from '../../src/spec/index.js';
import { loadFleet } from '../../src/spec/fleet.js';
import { block, blocks, command, commands, pages, readPage, root } from './blocks.js';
import { COVERED } from './registry.js';

const exists = (rel: string): boolean => existsSync(path.join(root, rel));

/** Markdown without its fenced blocks: a line in one is neither a heading nor a link. */
const outsideFences = (markdown: string): string => markdown.replace(/^```[\s\S]*?^```$/gm, '');

/** A page's text outside code: fenced blocks and inline code spans hold no links. */
function prose(page: string): string {
  return outsideFences(readPage(page)).replace(/`[^`\n]*`/g, '');
}

/**
 * Every heading's anchor on a page, as GitHub makes it (github-slugger: the heading's text, a
 * link's text but not its target, lower case, punctuation dropped; a repeated one ends in -1, ...).
 */
function headingAnchors(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  return new Set(
    [...outsideFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)].map((m) =>
      slugger.slug((m[1] ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')),
    ),
  );
}

/** A block that is a fleet's file, named by its first line: `# fleet/fleet.yaml`, `# fleet/approvals/x.yaml`. */
const FLEET_BLOCK = /^# (fleet\/[\w./-]+\.yaml)\n/;

describe('the docs', () => {
  describe('every shell block is run or checked by a test', () => {
    for (const page of pages()) {
      for (const b of blocks(page).filter((x) => x.lang === 'sh')) {
        it(`${page}:${b.line}`, () => {
          const claims = COVERED.filter((c) => c.page === page && b.text.includes(c.marker));
          assert.equal(
            claims.length,
            1,
            `${page}:${b.line}: ${claims.length} entries of test/docs/registry.ts claim it`,
          );
        });
      }
    }
    for (const c of COVERED) {
      it(`${c.page} "${c.marker}" is ${c.how} by ${c.by}, which reads that page`, () => {
        const found = blocks(c.page).filter((b) => b.lang === 'sh' && b.text.includes(c.marker));
        assert.equal(found.length, 1, `${c.page} has ${found.length} sh blocks holding ${JSON.stringify(c.marker)}`);
        assert.ok(exists(c.by), `${c.by} does not exist`);
        assert.ok(readFileSync(path.join(root, c.by), 'utf8').includes(c.page), `${c.by} never names ${c.page}`);
      });
    }
  });

  describe('every relative link points to a file that exists, and to a heading of it', () => {
    for (const page of pages()) {
      it(page, () => {
        const missing: string[] = [];
        for (const m of prose(page).matchAll(/\]\(([^)\s]+)\)/g)) {
          const [target = '', anchor] = (m[1] ?? '').split('#');
          if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
          const rel = target === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), target));
          if (!exists(rel)) missing.push(`${m[1] ?? ''} (${rel})`);
          else if (anchor !== undefined && rel.endsWith('.md') && !headingAnchors(readPage(rel)).has(anchor))
            missing.push(`${m[1] ?? ''}: ${rel} has no heading #${anchor}`);
        }
        assert.deepEqual(missing, [], `${page} links to files or headings that do not exist`);
      });
    }

    it("reads a heading's anchor from its text, not a link's target inside it", () => {
      const page = '# Top\n\n## See [the `plan`](plan.md) now\n\n```sh\n# not a heading\n```\n\n## Top\n';
      assert.deepEqual([...headingAnchors(page)], ['top', 'see-the-plan-now', 'top-1']);
    });
  });

  // A page's spec blocks are one repository: a block may name a spec another block of the page shows.
  // The specs reference is generated from examples-repo/'s files, which are validated as the whole
  // repository they belong to (test/cli/validate.test.ts), and names specs its page does not show.
  describe('every spec shown is valid, and every refused kind is refused', () => {
    const known = new Set([...Object.keys(KINDS), ...Object.keys(REFUSED)]);
    type Doc = { apiVersion?: string; kind?: string } | null;
    for (const page of pages().filter((p) => p !== 'docs/reference/specs.md')) {
      const specs = blocks(page)
        .filter((b) => b.lang === 'yaml' && !FLEET_BLOCK.test(b.text))
        .map((b) => ({ b, docs: parseAllDocuments(b.text).map((d) => d.toJS() as Doc) }))
        .filter(
          ({ b, docs }) =>
            b.text.startsWith('# drydock.yaml\n') ||
            docs.some((d) => d?.apiVersion !== undefined && known.has(d.apiVersion)),
        );
      if (specs.length === 0) continue;
      const refused = (docs: Doc[]): boolean =>
        docs.some((d) => d?.kind !== undefined && REFUSED[d.apiVersion ?? '']?.[d.kind] !== undefined);
      const load = async (files: readonly (readonly [string, string])[]): Promise<LoadResult> => {
        const dir = mkdtempSync(path.join(tmpdir(), 'drydock-docs-spec-'));
        try {
          for (const [name, text] of files) writeFileSync(path.join(dir, name), text);
          return await loadFromDirectory(dir);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      };
      const accepted = specs.filter((s) => !refused(s.docs));
      if (accepted.length > 0)
        it(`${page}: ${accepted.map((s) => `:${s.b.line}`).join(' ')}`, async () => {
          const r = await load(
            accepted.map((s) => [
              s.b.text.startsWith('# drydock.yaml\n') ? 'drydock.yaml' : `block-${s.b.line}.yaml`,
              s.b.text,
            ]),
          );
          assert.ok(r.ok, r.ok ? '' : `${page}:\n${formatErrorsText(r.errors)}`);
        });
      for (const s of specs.filter((x) => refused(x.docs)))
        it(`${page}:${s.b.line} is refused`, async () => {
          const r = await load([['spec.yaml', s.b.text]]);
          assert.equal(r.ok, false, `${page}:${s.b.line} shows a refused kind that was accepted`);
        });
    }
  });

  // A fleet's files are not specs: a page's fleet file and its approvals are read as one fleet.
  describe('every fleet file shown is valid', () => {
    for (const page of pages()) {
      const shown = blocks(page).filter((b) => b.lang === 'yaml' && FLEET_BLOCK.test(b.text));
      if (shown.length === 0) continue;
      it(`${page}: ${shown.map((b) => `:${b.line}`).join(' ')}`, async () => {
        const dir = mkdtempSync(path.join(tmpdir(), 'drydock-docs-fleet-'));
        try {
          for (const b of shown) {
            const file = FLEET_BLOCK.exec(b.text)![1]!;
            mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
            writeFileSync(path.join(dir, file), b.text);
          }
          const r = await loadFleet(directorySource(dir));
          assert.ok(
            r?.ok,
            r === undefined ? `${page} shows no fleet/fleet.yaml` : formatErrorsText(r.ok ? [] : r.errors),
          );
          assert.equal(r.approvals.length, shown.length - 1, `${page}: every approval shown counts`);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  });

  const drydock = (args: readonly string[]): { status: number | null; out: string } => {
    const r = spawnSync(process.execPath, [path.join(root, 'bin', 'drydock.js'), ...args], {
      cwd: root,
      encoding: 'utf8',
    });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  };

  it('docs/reference/errors.md: drydock validate, as written, accepts examples-repo', () => {
    const lines = commands(block('docs/reference/errors.md', 'npx drydock validate examples-repo'));
    assert.ok(lines.length >= 2);
    for (const line of lines) {
      const args = line.split(/\s+/);
      assert.deepEqual(args.slice(0, 3), ['npx', 'drydock', 'validate'], line);
      const r = drydock(args.slice(2));
      assert.equal(r.status, 0, `${line}\n${r.out}`);
    }
  });

  describe('commands the suite cannot run name what exists', () => {
    /** Every `DRYDOCK_*` a command sets is read by the code, the tests or the scripts. */
    const read = (dir: string): string[] =>
      readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
        const rel = path.join(dir, e.name);
        if (e.isDirectory()) return read(rel);
        return /\.(ts|sh|mjs)$/.test(e.name) ? [readFileSync(path.join(root, rel), 'utf8')] : [];
      });
    const sources = ['src', 'test', 'scripts'].flatMap(read);
    const readSomewhere = (name: string): boolean => sources.some((s) => s.includes(name));
    /** Every repository path a command names exists (dist/test/*.js: its TypeScript source). */
    const pathsOf = (line: string): string[] =>
      [...line.matchAll(/(?:^|\s|@)((?:deploy|scripts|dist|schemas|node_modules)\/[\w./-]+)/g)].map((m) => m[1] ?? '');
    const source = (rel: string): string => (rel.startsWith('dist/test/') ? rel.slice(5).replace(/\.js$/, '.ts') : rel);

    for (const c of COVERED.filter((x) => x.how === 'checked')) {
      it(`${c.page} "${c.marker}"`, () => {
        for (const line of commands(block(c.page, c.marker))) {
          for (const p of pathsOf(line)) assert.ok(exists(source(p)), `${c.page}: ${line}: ${p} does not exist`);
          for (const [, name] of line.matchAll(/\b(DRYDOCK_[A-Z_]+)=/g))
            assert.ok(readSomewhere(name ?? ''), `${c.page}: ${line}: nothing reads ${name ?? ''}`);
        }
      });
    }

    it('docs/contributing/reliability.md, testing.md: `npx mocha FILE` runs only FILE (.mocharc.json names no spec)', () => {
      // A spec in the config is added to the files named on the command line: every command in
      // the docs that runs one file would run the whole suite.
      const rc = JSON.parse(readFileSync(path.join(root, '.mocharc.json'), 'utf8')) as Record<string, unknown>;
      assert.equal(rc['spec'], undefined);
    });

    it('README.md, docs/contributing/README.md: the test command is what .ci/run runs', () => {
      const ci = readFileSync(path.join(root, '.ci/run'), 'utf8').trimEnd().split('\n').at(-1);
      for (const page of ['README.md', 'docs/contributing/README.md'])
        assert.equal(command(block(page, 'npm ci && npm test'), 'npm ci && npm test'), ci);
    });

    it('README.md, docs/getting-started.md: the sandbox command is the same, and bin/drydock.js is drydock', () => {
      const readme = command(block('README.md', 'npm ci && npx drydock sandbox'), 'npm ci && npx drydock sandbox');
      const page = command(block('docs/getting-started.md', 'npm ci && npx drydock sandbox'), 'npm ci');
      assert.equal(page, readme);
      const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> };
      assert.equal(pkg.bin['drydock'], 'bin/drydock.js');
      // test/sandbox/scenario.test.ts runs `bin/drydock.js sandbox`; here, that the command exists.
      const help = drydock(['sandbox', '--help']);
      assert.equal(help.status, 0, help.out);
    });

    it('docs/guides/deploy.md: the image built and pushed is the one the overlay names', () => {
      const lines = commands(block('docs/guides/deploy.md', 'docker build -f deploy/Dockerfile'));
      const built = /-t (\S+) \.$/.exec(lines.find((l) => l.startsWith('docker build')) ?? '')?.[1];
      const pushed = /^docker push (\S+)$/.exec(lines.find((l) => l.startsWith('docker push')) ?? '')?.[1];
      assert.ok(built !== undefined && built === pushed, lines.join('\n'));
      const overlay = parse(block('docs/guides/deploy.md', '# my-cluster/kustomization.yaml', 'yaml')) as {
        images: { name: string; newName: string; newTag: string }[];
      };
      const image = overlay.images.find((i) => i.name === 'drydock');
      assert.equal(`${image?.newName ?? ''}:${image?.newTag ?? ''}`, built);
      const deployment = readFileSync(path.join(root, 'deploy/deployment.yaml'), 'utf8');
      assert.match(deployment, /^ {10}image: drydock$/m, "the overlay's images entry names deploy's image");
    });

    it("docs/guides/clouds.md: the roles the gcloud and az commands create are the components' own", () => {
      const gcloud = command(block('docs/guides/clouds.md', 'gcloud iam roles create'), 'gcloud');
      assert.match(gcloud, /--file deploy\/components\/gcp\/role\.yaml$/);
      const gcp = parse(readFileSync(path.join(root, 'deploy/components/gcp/role.yaml'), 'utf8')) as {
        includedPermissions: string[];
      };
      assert.ok(gcp.includedPermissions.includes('compute.instanceGroupManagers.update'));
      const az = command(block('docs/guides/clouds.md', 'az role definition create'), 'az');
      assert.match(az, /--role-definition @deploy\/components\/azure\/role\.json$/);
      const azure = JSON.parse(readFileSync(path.join(root, 'deploy/components/azure/role.json'), 'utf8')) as {
        Actions?: string[];
        actions?: string[];
      };
      assert.ok((azure.Actions ?? azure.actions ?? []).includes('Microsoft.Compute/virtualMachineScaleSets/read'));
    });
  });
});
