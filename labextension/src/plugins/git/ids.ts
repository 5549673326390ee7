/**
 * The source-control plugin's id and command ids.
 */

export const PLUGIN_ID = 'terax-jupyter:git';

/**
 * Command IDs of source control.
 */
export namespace CommandIDs {
  export const openPanel = 'terax:git-panel';
  export const history = 'terax:git-history';
  export const commit = 'terax:git-commit';
  export const switchBranch = 'terax:git-switch-branch';
  export const fetch = 'terax:git-fetch';
  export const pull = 'terax:git-pull';
  export const push = 'terax:git-push';
  export const refresh = 'terax:git-refresh';
  export const trust = 'terax:git-trust';
}
