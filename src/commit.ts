/** A commit id as people read it: its first seven hex digits, as git prints it; `absent` when there is none. */
export function shortCommit(commit: string | undefined, absent = 'none'): string {
  return commit ? commit.slice(0, 7) : absent;
}

/** A revision as people read it: a Git commit id shortened as git does, other names (a directory's hash) as they are. */
export function shortRevision(revision: string): string {
  return /^[0-9a-f]{40}$/.test(revision) ? shortCommit(revision) : revision;
}

/** Whether two ids, either of them shortened (seven digits at least), name the same commit. */
export function sameCommit(a: string | undefined, b: string): boolean {
  return a !== undefined && a.length >= 7 && (b.startsWith(a) || a.startsWith(b));
}
