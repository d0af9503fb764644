/** A commit id as people read it: its first seven hex digits, as git prints it; `absent` when there is none. */
export function shortCommit(commit: string | undefined, absent = 'none'): string {
  return commit ? commit.slice(0, 7) : absent;
}
