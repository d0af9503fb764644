/**
 * The simulated hosts: what a kubelet and its machine do for KWOK nodes (run the Jobs drydock
 * pins to them, reboot, come back with a new bootID), and the process that runs the sim cloud
 * with its hosts. Not a cloud: the cloud's simulation is src/cloud/sim/.
 */
export { runSimCloud, type RunningSimCloud, type SimCloudRunOptions } from './process.js';
export { startSimHost, type SimHost } from './host.js';
export { startSimMco, type SimMco } from './mco.js';
