/**
 * CPU time and resident memory of this process's child processes (the control plane's etcd,
 * kube-apiserver, controller manager, scheduler and KWOK), read from /proc: at scale the
 * question is which of them limits the machine, and drydock's own share is process.cpuUsage().
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface Usage {
  /** user + system CPU seconds since the process started */
  cpuS: number;
  rssMiB: number;
}

const TICKS_PER_SECOND = 100;
const WATCHED = new Set(['etcd', 'kube-apiserver', 'kube-controller', 'kube-scheduler', 'kwok']);

function usageOf(pid: string): { name: string; ppid: number; usage: Usage } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm is in parentheses and may hold spaces; the fields after it are space-separated
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    const cpuS = (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
    return { name, ppid: Number(f[1]), usage: { cpuS, rssMiB: rssKiB / 1024 } };
  } catch {
    return undefined; // gone meanwhile, or not ours to read
  }
}

/**
 * CPU seconds of this process's children that have exited and been waited for (cutime and
 * cstime in /proc/self/stat): the Git server's `git http-backend` and `git upload-pack` or
 * `receive-pack` for each fetch and push, which no long-lived process accounts for. A child
 * stopped during the span (a drydock restarted) adds its whole life here, so spans that
 * restart one say so.
 */
function reapedChildren(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[13]) + Number(f[14])) / TICKS_PER_SECOND;
  } catch {
    return undefined; // not Linux
  }
}

/** The control plane's components that are children of this process, by name; and `others` (label → pid). */
export function componentUsage(others: Record<string, number | undefined> = {}): Record<string, Usage> {
  const out: Record<string, Usage> = {};
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    const p = usageOf(pid);
    if (p && p.ppid === process.pid && WATCHED.has(p.name)) out[p.name] = p.usage;
  }
  for (const [label, pid] of Object.entries(others)) {
    const p = pid === undefined ? undefined : usageOf(String(pid));
    if (p) out[label] = p.usage;
  }
  const self = process.cpuUsage();
  out['bench process'] = { cpuS: (self.user + self.system) / 1e6, rssMiB: process.memoryUsage().rss / 2 ** 20 };
  const reaped = reapedChildren();
  if (reaped !== undefined) out['short-lived children'] = { cpuS: reaped, rssMiB: 0 };
  return out;
}

/** One line per component: CPU seconds since `since` and resident memory now (where it has one). */
export function describeUsage(now: Record<string, Usage>, since: Record<string, Usage> = {}): string {
  return Object.entries(now)
    .map(
      ([n, u]) =>
        `${n} ${(u.cpuS - (since[n]?.cpuS ?? 0)).toFixed(0)} s CPU${u.rssMiB > 0 ? `, ${u.rssMiB.toFixed(0)} MiB` : ''}`,
    )
    .join('; ');
}

/**
 * This process's resident memory by kind of mapping, MiB, from /proc/self/smaps: the main
 * allocator's heap (`[heap]`, malloc), other anonymous mappings (V8's heap pages, thread
 * arenas, large mallocs) and file mappings (code). Where the resident set above the JS heap is.
 */
export function residentByMapping(): { malloc: number; anonymous: number; files: number } {
  const out = { malloc: 0, anonymous: 0, files: 0 };
  let kind: keyof typeof out = 'anonymous';
  try {
    for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
      const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
      if (header) {
        const name = header[2] ?? '';
        kind = name === '[heap]' ? 'malloc' : name.startsWith('/') ? 'files' : 'anonymous';
      } else if (line.startsWith('Rss:')) out[kind] += Number(/(\d+)/.exec(line)?.[1] ?? 0) / 1024;
    }
  } catch {
    // Not Linux: nothing to tell.
  }
  return out;
}
