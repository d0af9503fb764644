/**
 * Everything `drydock sim-cloud` starts, as one call: configuration, persisted state, the
 * cluster the Nodes join, and the HTTP API. The sandbox calls it in-process; the command line
 * wraps it in a process.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import { SimCloud } from '../cloud/sim/cloud.js';
import type { Clock } from '../cloud/sim/clock.js';
import { loadSimConfig, type SimCloudConfig } from '../cloud/sim/config.js';
import { startSimHost, type SimHost } from './host.js';
import { startSimMco, type SimMco } from './mco.js';
import { KubeNodeRegistry, MemoryNodeRegistry, type NodeRegistry } from '../cloud/sim/nodes.js';
import { startSimServer } from '../cloud/sim/server.js';
import { FileStateStore } from '../cloud/sim/state.js';

export interface SimCloudRunOptions {
  /** A groups.yaml path, or a configuration already parsed. */
  readonly config: string | SimCloudConfig;
  /** Where the state file lives; created if missing. */
  readonly stateDir: string;
  /** The cluster the instances join; undefined keeps Nodes in memory only. */
  readonly kubeconfigPath?: string;
  /** The same cluster as a KubeConfig (tests); kubeconfigPath wins. */
  readonly kubeConfig?: KubeConfig;
  /** Overrides the registry made from the cluster (tests). */
  readonly nodes?: NodeRegistry;
  readonly host?: string;
  /** Default 0: any free port. */
  readonly port?: number;
  readonly logger?: Logger;
  readonly clock?: Clock;
}

export interface RunningSimCloud {
  readonly cloud: SimCloud;
  /** The API's base URL, for SimHttpProvider. */
  readonly url: string;
  readonly port: number;
  /** Stops the API, then the cloud (state is already saved after every change). */
  stop(): Promise<void>;
}

export async function runSimCloud(options: SimCloudRunOptions): Promise<RunningSimCloud> {
  const config = typeof options.config === 'string' ? await loadSimConfig(options.config) : options.config;
  const kc = clusterConfig(options);
  const nodes = options.nodes ?? (kc === undefined ? new MemoryNodeRegistry() : new KubeNodeRegistry(kc));
  const cloud = await SimCloud.open({
    config,
    store: new FileStateStore(options.stateDir),
    nodes,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  let server;
  // With a cluster, the simulator also plays the hosts behind its nodes.
  let host: SimHost | undefined;
  // And, when asked, the Machine Config Operator of an OpenShift cluster.
  let mco: SimMco | undefined;
  try {
    const logger = options.logger ?? pino({ level: 'silent' });
    if (kc !== undefined)
      host = startSimHost({
        kubeConfig: kc,
        config: config.host,
        bottlerocket: () => cloud.bottlerocketGroups(),
        logger,
      });
    if (kc !== undefined && config.mco.enabled)
      mco = startSimMco({ kubeConfig: kc, config: config.mco, rebootSeconds: config.host.rebootSeconds, logger });
    server = await startSimServer({
      cloud,
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.port === undefined ? {} : { port: options.port }),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  } catch (err) {
    await mco?.stop();
    await host?.stop();
    await cloud.close();
    throw err;
  }
  const running = server;
  return {
    cloud,
    url: running.url,
    port: running.port,
    stop: async () => {
      await running.close();
      await mco?.stop();
      await host?.stop();
      await cloud.close();
    },
  };
}

function clusterConfig(options: SimCloudRunOptions): KubeConfig | undefined {
  if (options.kubeconfigPath !== undefined) {
    const kc = new KubeConfig();
    kc.loadFromFile(options.kubeconfigPath);
    return kc;
  }
  return options.kubeConfig;
}
