/**
 * `drydock run`'s image flags as commander parses them and as the planner is then told: each
 * from its flag or its environment variable, drydock's defaults without either, and a value no
 * kubelet could pull refused before the service starts.
 */
import assert from 'node:assert/strict';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.js';
import { planOptionsFrom } from '../../src/cli/actions/run.js';
import type { RunFlags } from '../../src/cli/flags.js';
import { OptionError } from '../../src/service/options.js';

const ENV = ['DRYDOCK_REBOOT_IMAGE', 'DRYDOCK_BOTTLEROCKET_IMAGE'] as const;

/** The flags `drydock run ARGS` hands its implementation (which is not started). */
async function parse(args: string[], env: Partial<Record<(typeof ENV)[number], string>> = {}): Promise<RunFlags> {
  const saved = ENV.map((k) => [k, process.env[k]] as const);
  for (const k of ENV) delete process.env[k];
  Object.assign(process.env, env);
  try {
    const program = buildProgram(() => undefined);
    const run = program.commands.find((c) => c.name() === 'run') as Command;
    let flags: RunFlags | undefined;
    run.action((f: RunFlags) => {
      flags = f;
    });
    await program.parseAsync(['node', 'drydock', 'run', '--repo', '/srv/fleet', ...args]);
    assert.ok(flags, 'the run action was reached');
    return flags;
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('drydock run: the images of node Jobs and reboot pods', () => {
  it('without flags: busybox for the reboot pod, curl for Bottlerocket, in the namespace of --namespace', async () => {
    assert.deepEqual(planOptionsFrom(await parse([])), {
      jobNamespace: 'kube-system',
      rebootImage: 'busybox:1.36',
      bottlerocketImage: 'curlimages/curl:8.10.1',
    });
  });

  it('--reboot-image and --bottlerocket-image reach the planner, each its own', async () => {
    const flags = await parse([
      '--namespace',
      'drydock-system',
      '--reboot-image',
      'mirror.example/busybox:1.37',
      '--bottlerocket-image',
      'mirror.example/curl:8.11.0',
    ]);
    assert.deepEqual(planOptionsFrom(flags), {
      jobNamespace: 'drydock-system',
      rebootImage: 'mirror.example/busybox:1.37',
      bottlerocketImage: 'mirror.example/curl:8.11.0',
    });
  });

  it('DRYDOCK_REBOOT_IMAGE and DRYDOCK_BOTTLEROCKET_IMAGE stand for the flags, which win', async () => {
    const env = { DRYDOCK_REBOOT_IMAGE: 'env.example/busybox:1', DRYDOCK_BOTTLEROCKET_IMAGE: 'env.example/curl:1' };
    const fromEnv = planOptionsFrom(await parse([], env));
    assert.equal(fromEnv.rebootImage, 'env.example/busybox:1');
    assert.equal(fromEnv.bottlerocketImage, 'env.example/curl:1');
    const flagWins = planOptionsFrom(await parse(['--bottlerocket-image', 'flag.example/curl:2'], env));
    assert.equal(flagWins.bottlerocketImage, 'flag.example/curl:2');
    assert.equal(flagWins.rebootImage, 'env.example/busybox:1');
  });

  for (const [flag, value] of [
    ['--reboot-image', ''],
    ['--bottlerocket-image', 'curl 8'],
  ] as const) {
    it(`${flag} ${JSON.stringify(value)} is refused, naming the flag`, async () => {
      const flags = await parse([flag, value]);
      assert.throws(
        () => planOptionsFrom(flags),
        (err: unknown) => err instanceof OptionError && err.message.startsWith(`${flag} ${JSON.stringify(value)}`),
      );
    });
  }
});
