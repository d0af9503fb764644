/**
 * Which test runs or checks each shell block of the docs. docs.test.ts fails for a `sh` block
 * no entry claims, for an entry that matches no block, and for an entry whose test does not
 * read that page: a command shown in the docs is never left untested.
 *
 * - run: the test runs the block's commands as written (placeholders filled in);
 * - compared: the test compares the block, line for line, with what drydock prints, and another
 *   test runs those printed lines (test/sandbox/scenario.test.ts);
 * - checked: the commands cannot run in the suite (a registry push, a cloud's CLI, a run of many
 *   minutes); the test checks what they name: files, variables, images, the same command elsewhere.
 */
export interface Covered {
  readonly page: string;
  /** Text only that block holds. */
  readonly marker: string;
  /** The test file, repository-relative. */
  readonly by: string;
  readonly how: 'run' | 'compared' | 'checked';
}

const COMMANDS = 'test/docs/commands.test.ts';
const DOCS = 'test/docs/docs.test.ts';

export const COVERED: readonly Covered[] = [
  { page: 'README.md', marker: 'npm ci && npm test', by: DOCS, how: 'checked' },
  { page: 'docs/getting-started.md', marker: 'npm ci && npx drydock sandbox', by: DOCS, how: 'checked' },
  {
    page: 'docs/getting-started.md',
    marker: 'export KUBECONFIG=.state/sandbox',
    by: 'test/sandbox/outcome.test.ts',
    how: 'compared',
  },
  { page: 'docs/concepts/status-branch.md', marker: 'npx drydock status --repo', by: COMMANDS, how: 'run' },
  { page: 'docs/guides/deploy.md', marker: 'docker build -f deploy/Dockerfile', by: DOCS, how: 'checked' },
  { page: 'docs/guides/deploy.md', marker: 'kubectl apply -k my-cluster/', by: COMMANDS, how: 'run' },
  { page: 'docs/guides/clouds.md', marker: 'gcloud iam roles create', by: DOCS, how: 'checked' },
  { page: 'docs/guides/clouds.md', marker: 'az role definition create', by: DOCS, how: 'checked' },
  { page: 'docs/guides/ci.md', marker: 'create token drydock-plan', by: COMMANDS, how: 'run' },
  { page: 'docs/reference/service.md', marker: 'npx drydock run', by: COMMANDS, how: 'run' },
  { page: 'docs/reference/errors.md', marker: 'npx drydock validate examples-repo', by: DOCS, how: 'run' },
  { page: 'docs/reference/sim-cloud.md', marker: 'npx drydock sim-cloud', by: COMMANDS, how: 'run' },
  { page: 'docs/contributing/README.md', marker: 'npm ci && npm test', by: DOCS, how: 'checked' },
  { page: 'docs/contributing/testing.md', marker: 'npm run control-plane', by: COMMANDS, how: 'run' },
  { page: 'docs/contributing/reliability.md', marker: 'crash.test.js', by: DOCS, how: 'checked' },
  { page: 'docs/contributing/reliability.md', marker: 'faults.test.js', by: DOCS, how: 'checked' },
  { page: 'docs/contributing/reliability.md', marker: 'hostile-loader.test.js', by: DOCS, how: 'checked' },
];
