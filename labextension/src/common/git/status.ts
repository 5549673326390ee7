/**
 * A repository status as the Git panel lists it: groups in a fixed order,
 * one-letter codes, and what the branch line and the push button say.
 */

/**
 * The part of a status entry this module needs.
 */
export interface IStatusEntryLike {
  path: string;
  old_path: string | null;
  status: string;
}

/**
 * The part of a status this module needs.
 */
export interface IStatusLike<E extends IStatusEntryLike = IStatusEntryLike> {
  branch: IBranchLike;
  staged: readonly E[];
  unstaged: readonly E[];
  untracked: readonly E[];
  conflicted: readonly E[];
}

/**
 * The branch part of a status.
 */
export interface IBranchLike {
  head: string | null;
  oid: string | null;
  detached: boolean;
  unborn: boolean;
  upstream: string | null;
  ahead: number;
  behind: number;
}

/**
 * The groups of the changes list, in display order.
 */
export type GroupId = 'conflicted' | 'staged' | 'unstaged' | 'untracked';

/**
 * The display order of the groups.
 */
export const GROUP_ORDER: readonly GroupId[] = [
  'conflicted',
  'staged',
  'unstaged',
  'untracked'
];

/**
 * One group of files.
 */
export interface IStatusGroup<E extends IStatusEntryLike> {
  id: GroupId;
  entries: E[];
}

/**
 * The non-empty groups, files sorted by path (case-insensitive, then
 * exact) so a refresh never reorders what did not change.
 */
export function groupStatus<E extends IStatusEntryLike>(
  status: IStatusLike<E>
): IStatusGroup<E>[] {
  const groups: IStatusGroup<E>[] = [];
  for (const id of GROUP_ORDER) {
    const entries = [...status[id]].sort(comparePaths);
    if (entries.length) {
      groups.push({ id, entries });
    }
  }
  return groups;
}

/**
 * Order of paths in the list.
 */
export function comparePaths(a: IStatusEntryLike, b: IStatusEntryLike): number {
  const x = a.path.toLowerCase();
  const y = b.path.toLowerCase();
  if (x !== y) {
    return x < y ? -1 : 1;
  }
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

const CODES: Record<string, string> = {
  added: 'A',
  modified: 'M',
  deleted: 'D',
  renamed: 'R',
  copied: 'C',
  typechange: 'T',
  unmerged: 'U',
  untracked: 'U'
};

/**
 * The one-letter code of a status (as git and editors show it).
 */
export function statusCode(status: string): string {
  return CODES[status] ?? '?';
}

/**
 * The total number of changed files (a file staged and modified again
 * counts once).
 */
export function changeCount(status: IStatusLike): number {
  const paths = new Set<string>();
  for (const id of GROUP_ORDER) {
    for (const entry of status[id]) {
      paths.add(entry.path);
    }
  }
  return paths.size;
}

/**
 * A short commit id.
 */
export function shortOid(oid: string | null, length = 7): string {
  return oid ? oid.slice(0, length) : '';
}

/**
 * What the branch button shows: the branch, or the commit of a detached
 * HEAD. `kind` lets the view translate and style it.
 */
export function headLabel(branch: IBranchLike): {
  kind: 'branch' | 'detached' | 'unborn';
  text: string;
} {
  if (branch.detached) {
    return { kind: 'detached', text: shortOid(branch.oid) };
  }
  if (branch.unborn) {
    return { kind: 'unborn', text: branch.head ?? '' };
  }
  return { kind: 'branch', text: branch.head ?? shortOid(branch.oid) };
}

/**
 * What pushing does now.
 */
export type PushPlan =
  /** Detached HEAD or no remote: there is nothing to push to. */
  | { kind: 'unavailable' }
  /** No upstream: the push creates `remote/branch` and tracks it. */
  | { kind: 'set-upstream'; remote: string; branch: string }
  /** Commits to send. */
  | { kind: 'push'; upstream: string; ahead: number }
  /** Up to date (a push does nothing). */
  | { kind: 'up-to-date'; upstream: string };

/**
 * Decide what the push button says, from the branch and the remotes.
 * `remotes` are names; `origin` is preferred when several exist.
 */
export function pushPlan(
  branch: IBranchLike,
  remotes: readonly string[]
): PushPlan {
  if (branch.detached || !branch.head) {
    return { kind: 'unavailable' };
  }
  if (!branch.upstream) {
    if (!remotes.length) {
      return { kind: 'unavailable' };
    }
    const remote = remotes.includes('origin') ? 'origin' : remotes[0];
    return { kind: 'set-upstream', remote, branch: branch.head };
  }
  if (branch.ahead > 0) {
    return { kind: 'push', upstream: branch.upstream, ahead: branch.ahead };
  }
  return { kind: 'up-to-date', upstream: branch.upstream };
}

/**
 * Split a repository path into its name and folder for the list.
 */
export function splitEntryPath(path: string): { name: string; dir: string } {
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
  const slash = trimmed.lastIndexOf('/');
  if (slash < 0) {
    return { name: trimmed, dir: '' };
  }
  return { name: trimmed.slice(slash + 1), dir: trimmed.slice(0, slash) };
}

/**
 * The first line of a commit message is its subject; a message with only
 * white space is empty.
 */
export function messageSubject(message: string): string {
  for (const line of message.split('\n')) {
    if (line.trim()) {
      return line.trim();
    }
  }
  return '';
}
