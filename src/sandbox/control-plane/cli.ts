// `npm run control-plane`: a local control plane in the foreground until Ctrl-C.
//
//   npm run control-plane [-- --data-dir <dir>]
//
// Prints `export KUBECONFIG=...` and `export PATH=...` on stdout; progress goes to stderr.
import { ControlPlaneError, fakeNode, resolveBinDir, startControlPlane, type ControlPlane } from './index.js';

function usage(): never {
  process.stderr.write('usage: npm run control-plane [-- --data-dir <dir>] [--nodes <n>]\n');
  process.exit(2);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  let dataDir: string | undefined;
  let nodes = 0;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--data-dir') dataDir = args[++i] ?? usage();
    else if (a === '--nodes') nodes = Number(args[++i] ?? usage());
    else if (a === '-h' || a === '--help') usage();
    else usage();
  }
  if (!Number.isInteger(nodes) || nodes < 0) usage();

  let binDir: string;
  try {
    binDir = resolveBinDir();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 3;
  }

  let cp: ControlPlane | undefined; // eslint-disable-line prefer-const -- assigned after the signal handlers that read it are installed
  let stopping = false;
  const shutdown = (sig: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`control-plane: ${sig}: stopping\n`);
    void (cp?.stop() ?? Promise.resolve()).finally(() => process.exit(0));
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  cp = await startControlPlane({ binDir, ...(dataDir ? { dataDir } : {}) });
  if (stopping) {
    await cp.stop();
    return 0;
  }
  if (nodes > 0) {
    const { CoreV1Api } = await import('@kubernetes/client-node');
    const core = cp.adminKubeConfig().makeApiClient(CoreV1Api);
    for (let n = 1; n <= nodes; n++) await core.createNode({ body: fakeNode(`kwok-node-${n}`) });
    process.stderr.write(`control-plane: created ${nodes} KWOK node(s) kwok-node-1..${nodes}\n`);
  }
  process.stdout.write(`export KUBECONFIG=${cp.kubeconfigPath}\nexport PATH=${cp.binDir}:$PATH\n`);
  process.stderr.write(
    `control-plane: ready in ${cp.startupMs} ms; logs in ${cp.dataDir}/logs. Ctrl-C stops everything.\n` +
      'control-plane: a KWOK node is any Node annotated kwok.x-k8s.io/node=fake (see --nodes <n>)\n',
  );
  // keep the event loop alive until a signal arrives
  setInterval(() => undefined, 1 << 30);
  return await new Promise<number>(() => undefined);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof ControlPlaneError ? err.message : ((err as Error).stack ?? String(err))}\n`);
    process.exit(1);
  },
);
