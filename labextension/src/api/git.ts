/**
 * REST client of the git area (`/terax/api/git/...`): status, structured
 * diffs, staging by file, hunk or line, commits, remotes, branches and the
 * paginated history with its graph lanes.
 */
import { ServerConnection } from '@jupyterlab/services';

import { apiURL, requestAPI, TeraxAPIError } from './request';

/**
 * Connection options every call accepts.
 */
export interface IGitCallOptions {
  signal?: AbortSignal;
  settings?: ServerConnection.ISettings;
}

/**
 * Where HEAD points.
 */
export interface IGitHead {
  branch: string | null;
  oid: string | null;
  detached: boolean;
  /** A repository without commits yet. */
  unborn: boolean;
}

/**
 * A configured remote.
 */
export interface IGitRemote {
  name: string;
  url: string;
  /** The remote's web page (GitHub, GitLab, ...), when known. */
  web_url: string | null;
}

/**
 * A program setting of the repository's own configuration.
 */
export interface IGitProgramSetting {
  key: string;
  value: string;
}

/**
 * Whether git runs the programs a repository names (its hooks, filters,
 * fsmonitor, signing and ssh programs). Untrusted, none of them runs.
 */
export interface IGitTrust {
  trusted: boolean;
  /** Who trusts it: the user, or the administrator's configuration. */
  source: 'user' | 'admin' | null;
  trusted_by: string | null;
  trusted_at: string | null;
  /** Whether the user may change it here. */
  can_change: boolean;
  /** What the repository's own configuration names. */
  programs: IGitProgramSetting[];
  /** Hooks present in its hooks folder. */
  hooks: string[];
}

/**
 * The answer of `GET git/repository`.
 */
export interface IGitRepository {
  /** Absolute path of the work tree. */
  root: string;
  /** The work tree relative to the server root ("" when the same). */
  relative_root: string;
  head: IGitHead;
  remotes: IGitRemote[];
  trust: IGitTrust;
}

/**
 * What changed about a file.
 */
export type GitFileStatus =
  | 'added'
  | 'modified'
  | 'deleted'
  | 'renamed'
  | 'copied'
  | 'typechange'
  | 'unmerged'
  | 'untracked';

/**
 * One file of a status group.
 */
export interface IGitStatusEntry {
  /** Repository-relative, "/"-separated. */
  path: string;
  old_path: string | null;
  status: GitFileStatus;
  submodule: boolean;
  /** A protected file (secrets): listed, its content never sent. */
  denied: boolean;
}

/**
 * The branch part of a status.
 */
export interface IGitBranchStatus {
  head: string | null;
  oid: string | null;
  detached: boolean;
  unborn: boolean;
  /** E.g. `origin/main`; null when the branch tracks nothing. */
  upstream: string | null;
  ahead: number;
  behind: number;
}

/**
 * The answer of `GET git/status` (and of every operation that changes it).
 */
export interface IGitStatus {
  root: string;
  branch: IGitBranchStatus;
  staged: IGitStatusEntry[];
  unstaged: IGitStatusEntry[];
  untracked: IGitStatusEntry[];
  conflicted: IGitStatusEntry[];
  /** `.git/index.lock` exists: another git process is running (or died). */
  index_locked: boolean;
  /** A merge, rebase, cherry-pick, revert or bisect stopped half way, if any. */
  operation?: 'merge' | 'rebase' | 'cherry-pick' | 'revert' | 'bisect' | null;
  /** Untracked files not listed (in `.ipynb_checkpoints` folders, by default). */
  hidden_untracked?: number;
}

/**
 * Which two states a diff compares.
 */
export type GitDiffSource = 'worktree' | 'index' | 'commit';

/**
 * One line of a hunk; `old`/`new` are 1-based line numbers.
 */
export interface IGitDiffLine {
  kind: 'context' | 'add' | 'delete';
  old: number | null;
  new: number | null;
  text: string;
  no_newline: boolean;
}

/**
 * One hunk of a file diff.
 */
export interface IGitHunk {
  index: number;
  header: string;
  old_start: number;
  old_lines: number;
  new_start: number;
  new_lines: number;
  lines: IGitDiffLine[];
}

/**
 * The structured diff of one file.
 */
export interface IGitFileDiff {
  file: string;
  old_file: string | null;
  source: GitDiffSource;
  /** `conflicted`: the hunks compare HEAD with the work-tree file (markers and all). */
  status: GitFileStatus | 'conflicted' | 'unmodified';
  binary: boolean;
  too_large: boolean;
  size: number;
  hunks: IGitHunk[];
  /** Identifies the exact diff the selection refers to. */
  fingerprint: string;
  /** A conflicted file's sides (base: stage 1, ours: 2, theirs: 3). */
  conflict?: IGitConflict | null;
}

/**
 * One side of a conflicted file as the index holds it.
 */
export interface IGitConflictSide {
  /** False: this side deleted the file. */
  present: boolean;
  binary: boolean;
  too_large: boolean;
  size: number;
  text: string | null;
}

/**
 * The sides of a conflicted file and the conflict regions left in it.
 */
export interface IGitConflict {
  sides: {
    base: IGitConflictSide;
    ours: IGitConflictSide;
    theirs: IGitConflictSide;
  };
  regions: number;
  operation: IGitStatus['operation'];
}

/**
 * What can be done with the operation in progress.
 */
export type GitOperationAction = 'continue' | 'abort' | 'skip' | 'reset';

/**
 * The answer of `POST git/operation`.
 */
export interface IGitOperationResult {
  operation: string;
  action: GitOperationAction;
  output: string;
  /** git stopped again on conflicts (the next commit of a rebase). */
  stopped: boolean;
  trusted: boolean;
  hooks_skipped: string[];
  status: IGitStatus;
}

/**
 * The name and email git commits with (null: not set).
 */
export interface IGitIdentity {
  name: string | null;
  email: string | null;
  name_scope: string | null;
  email_scope: string | null;
  configured: boolean;
}

/**
 * Part of a file diff to act on: a whole hunk, or some of its changed lines
 * (indices into the hunk's `lines`).
 */
export interface IGitHunkSelection {
  hunk: number;
  lines?: number[];
}

/**
 * The body of stage, unstage and discard: whole files or a selection in one
 * file's diff.
 */
export type GitChangeRequest =
  | { files: string[] }
  | { file: string; fingerprint: string; selection: IGitHunkSelection[] };

/**
 * What a discard would lose, sent with the `confirmation_required` reply.
 */
export interface IGitDiscardSummary {
  files: number | string[];
  lines_lost: number;
}

/**
 * The answer of `POST git/commit`.
 */
export interface IGitCommitResult {
  oid: string;
  summary: string;
  /** Whether the repository is trusted (its hooks ran). */
  trusted: boolean;
  /** Hooks the repository has that did not run (it is not trusted). */
  hooks_skipped: string[];
  status: IGitStatus;
}

/**
 * The answer of fetch, pull and push.
 */
export interface IGitRemoteResult {
  output: string;
  trusted: boolean;
  hooks_skipped: string[];
  status: IGitStatus;
}

/**
 * A local branch.
 */
export interface IGitLocalBranch {
  name: string;
  oid: string;
  upstream: string | null;
  ahead: number;
  behind: number;
  subject: string;
}

/**
 * A remote-tracking branch.
 */
export interface IGitRemoteBranch {
  /** E.g. `origin/feature`. */
  name: string;
  remote: string;
  oid: string;
}

/**
 * The answer of `GET git/branches`.
 */
export interface IGitBranches {
  current: string | null;
  detached: boolean;
  local: IGitLocalBranch[];
  remote: IGitRemoteBranch[];
}

/**
 * A ref pointing at a commit.
 */
export interface IGitRef {
  kind: 'head' | 'branch' | 'remote' | 'tag';
  name: string;
}

/**
 * One row of the commit graph as the server sends it:
 * `[column, color, first, m, ...merges, r, ...removed, ...opened]`, read
 * from the lanes above it (common/gitgraph.ts decodes it).
 */
export type IGitGraphRow = number[];

/**
 * Which refs the history starts from: branches, remote branches, tags and
 * HEAD (the default; pull-request and review refs left out), every ref, or
 * local branches and HEAD.
 */
export type GitLogRefs = 'branches' | 'all' | 'local';

/**
 * A commit of the history list.
 */
export interface IGitCommit {
  oid: string;
  short: string;
  parents: string[];
  author: string;
  email: string;
  /** ISO 8601 with offset. */
  date: string;
  subject: string;
  refs: IGitRef[];
  /** Null in a flat (filtered) list. */
  graph: IGitGraphRow | null;
}

/**
 * The answer of `GET git/log`.
 */
export interface IGitLogPage {
  commits: IGitCommit[];
  /** Where the next page starts; null at the end. */
  cursor: string | null;
  total_known: number;
  /** False when a filter made the graph flat (no lanes). */
  graph?: boolean;
  /** With the graph: the lane colours above the page's first row. */
  lanes?: number[];
}

/**
 * Filters of the history.
 */
export interface IGitLogQuery {
  /** One ref; the refs of `refs` when absent. */
  ref?: string;
  refs?: GitLogRefs;
  cursor?: string | null;
  limit?: number;
  /** Text in the commit message. */
  query?: string;
  author?: string;
  /** Commits touching this repository-relative path. */
  file?: string;
}

/**
 * A file changed by a commit.
 */
export interface IGitCommitFile {
  path: string;
  old_path: string | null;
  status: GitFileStatus;
  additions: number;
  deletions: number;
  binary: boolean;
}

/**
 * The answer of `GET git/commit`.
 */
export interface IGitCommitDetail {
  oid: string;
  parents: string[];
  author: string;
  email: string;
  date: string;
  committer: string;
  committer_date: string;
  message: string;
  refs: IGitRef[];
  files: IGitCommitFile[];
  stats: { files: number; additions: number; deletions: number };
  web_url: string | null;
}

const get = <T>(
  endpoint: string,
  query: Record<string, string | number | boolean | undefined>,
  options: IGitCallOptions
): Promise<T> =>
  requestAPI<T>(`git/${endpoint}`, {
    query,
    signal: options.signal,
    settings: options.settings
  });

const post = <T>(
  endpoint: string,
  body: object,
  options: IGitCallOptions
): Promise<T> =>
  requestAPI<T>(`git/${endpoint}`, {
    method: 'POST',
    body: JSON.stringify(body),
    signal: options.signal,
    settings: options.settings
  });

/**
 * The repository containing `path` (404 `not_a_repository` when none).
 */
export function getRepository(
  path: string,
  options: IGitCallOptions = {}
): Promise<IGitRepository> {
  return get('repository', { path }, options);
}

/**
 * Whether the repository containing `path` is trusted.
 */
export function getTrust(
  path: string,
  options: IGitCallOptions = {}
): Promise<IGitTrust> {
  return get('trust', { path }, options);
}

/**
 * Trust the repository containing `path` (its hooks and the programs its own
 * configuration names run), or stop trusting it.
 */
export function setTrust(
  path: string,
  trusted: boolean,
  options: IGitCallOptions = {}
): Promise<IGitTrust> {
  return requestAPI<IGitTrust>('git/trust', {
    method: 'PUT',
    body: JSON.stringify({ path, trusted }),
    signal: options.signal,
    settings: options.settings
  });
}

/**
 * The status of the repository containing `path`.
 */
export function getStatus(
  path: string,
  options: IGitCallOptions = {}
): Promise<IGitStatus> {
  return get('status', { path }, options);
}

/**
 * The structured diff of one file.
 */
export function getDiff(
  path: string,
  file: string,
  source: GitDiffSource,
  options: IGitCallOptions & { commit?: string; context?: number } = {}
): Promise<IGitFileDiff> {
  return get(
    'diff',
    { path, file, source, commit: options.commit, context: options.context },
    options
  );
}

/**
 * Stage whole files or a selection of one file's worktree diff.
 */
export function stage(
  path: string,
  change: GitChangeRequest,
  options: IGitCallOptions = {}
): Promise<IGitStatus> {
  return post('stage', { path, ...change }, options);
}

/**
 * Unstage whole files or a selection of one file's index diff.
 */
export function unstage(
  path: string,
  change: GitChangeRequest,
  options: IGitCallOptions = {}
): Promise<IGitStatus> {
  return post('unstage', { path, ...change }, options);
}

/**
 * The server's answer to a discard without a token: what would be lost and
 * the token that confirms exactly that.
 */
export interface IGitDiscardConfirmation {
  message: string;
  confirm: string;
  summary: IGitDiscardSummary;
}

/**
 * The outcome of {@link discard}: done, or a confirmation to ask for.
 */
export type GitDiscardResult =
  | { done: true; status: IGitStatus }
  | { done: false; confirmation: IGitDiscardConfirmation };

/**
 * Discard work-tree changes. Without `confirm` the server answers with a
 * confirmation (409 `confirmation_required`); repeat with its token.
 *
 * @throws TeraxAPIError for any other error (`stale_diff` when the file
 *   changed after the token was issued).
 */
export async function discard(
  path: string,
  change: GitChangeRequest,
  confirm?: string,
  options: IGitCallOptions = {}
): Promise<GitDiscardResult> {
  const settings = options.settings ?? ServerConnection.makeSettings();
  const response = await ServerConnection.makeRequest(
    apiURL('git/discard', settings),
    {
      method: 'POST',
      body: JSON.stringify({ path, ...change, confirm }),
      signal: options.signal
    },
    settings
  );
  if (response.status === 409) {
    // The body carries the token, which TeraxAPIError does not keep.
    const text = await response.text();
    let body: Partial<IGitDiscardConfirmation> & {
      reason?: string;
    } = {};
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: reported below with the status line.
    }
    if (body.reason === 'confirmation_required' && body.confirm) {
      return {
        done: false,
        confirmation: {
          message: body.message ?? '',
          confirm: body.confirm,
          summary: body.summary ?? { files: 0, lines_lost: 0 }
        }
      };
    }
    throw new TeraxAPIError(
      response,
      body.message || `${response.status} ${response.statusText}`,
      body.reason ?? ''
    );
  }
  if (!response.ok) {
    throw await TeraxAPIError.fromResponse(response);
  }
  return { done: true, status: (await response.json()) as IGitStatus };
}

/**
 * Commit the index.
 */
export function commit(
  path: string,
  message: string,
  flags: { amend?: boolean; signoff?: boolean } = {},
  options: IGitCallOptions = {}
): Promise<IGitCommitResult> {
  return post(
    'commit',
    { path, message, amend: !!flags.amend, signoff: !!flags.signoff },
    options
  );
}

/**
 * Resolve conflicted files with our or their version (git's sense), staged.
 */
export function resolveConflict(
  path: string,
  files: string[],
  side: 'ours' | 'theirs',
  options: IGitCallOptions = {}
): Promise<IGitStatus> {
  return post('resolve', { path, files, side }, options);
}

/**
 * Continue, abort or skip the operation in progress (`reset` ends a bisect).
 */
export function operationAction(
  path: string,
  operation: NonNullable<IGitStatus['operation']>,
  action: GitOperationAction,
  options: IGitCallOptions = {}
): Promise<IGitOperationResult> {
  return post('operation', { path, operation, action }, options);
}

/**
 * The identity git commits with in the repository of `path`.
 */
export function getIdentity(
  path: string,
  options: IGitCallOptions = {}
): Promise<IGitIdentity> {
  return get('identity', { path }, options);
}

/**
 * Set user.name and user.email for the repository or for the user (global).
 */
export function setIdentity(
  path: string,
  identity: { name: string; email: string; scope: 'local' | 'global' },
  options: IGitCallOptions = {}
): Promise<IGitIdentity> {
  return requestAPI<IGitIdentity>('git/identity', {
    method: 'PUT',
    body: JSON.stringify({ path, ...identity }),
    signal: options.signal,
    settings: options.settings
  });
}

/**
 * A network operation with the remote.
 */
export type GitRemoteOperation = 'fetch' | 'pull' | 'push';

/**
 * Fetch, pull (fast-forward only) or push (setting the upstream when missing).
 */
export function remoteOperation(
  operation: GitRemoteOperation,
  path: string,
  target: { remote?: string; branch?: string } = {},
  options: IGitCallOptions = {}
): Promise<IGitRemoteResult> {
  return post(operation, { path, ...target }, options);
}

/**
 * Local and remote branches.
 */
export function getBranches(
  path: string,
  options: IGitCallOptions = {}
): Promise<IGitBranches> {
  return get('branches', { path }, options);
}

/**
 * Create a branch (and switch to it when `checkout`).
 */
export function createBranch(
  path: string,
  name: string,
  flags: { startPoint?: string; checkout?: boolean } = {},
  options: IGitCallOptions = {}
): Promise<IGitBranches> {
  return post(
    'branches',
    {
      path,
      name,
      start_point: flags.startPoint,
      checkout: flags.checkout ?? true
    },
    options
  );
}

/**
 * Switch to a local branch, or to a new one tracking a remote branch.
 */
export function checkout(
  path: string,
  branch: string,
  options: IGitCallOptions = {}
): Promise<IGitStatus> {
  return post('checkout', { path, branch }, options);
}

/**
 * One page of the history.
 */
export function getLog(
  path: string,
  query: IGitLogQuery = {},
  options: IGitCallOptions = {}
): Promise<IGitLogPage> {
  return get(
    'log',
    {
      path,
      ref: query.ref || undefined,
      refs: query.refs || undefined,
      cursor: query.cursor ?? undefined,
      limit: query.limit,
      query: query.query || undefined,
      author: query.author || undefined,
      file: query.file || undefined
    },
    options
  );
}

/**
 * A commit with its message, changed files and web URL.
 */
export function getCommit(
  path: string,
  oid: string,
  options: IGitCallOptions = {}
): Promise<IGitCommitDetail> {
  return get('commit', { path, oid }, options);
}
