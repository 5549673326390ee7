/**
 * CSS class names of the Git panel and the History panel.
 */

/**
 * Classes of the Git side panel.
 */
export namespace CSS {
  export const panel = 'jp-TeraxGit';
  export const title = 'jp-TeraxGit-title';
  export const view = 'jp-TeraxGit-view';
  export const scroller = 'jp-TeraxGit-scroller';
  export const message = 'jp-TeraxGit-message';
  export const branchBar = 'jp-TeraxGit-branchBar';
  export const branchButton = 'jp-TeraxGit-branchButton';
  export const branchName = 'jp-TeraxGit-branchName';
  export const upstream = 'jp-TeraxGit-upstream';
  export const remoteBar = 'jp-TeraxGit-remoteBar';
  export const remoteButton = 'jp-TeraxGit-remoteButton';
  export const badge = 'jp-TeraxGit-badge';
  export const progress = 'jp-TeraxGit-progress';
  export const alert = 'jp-TeraxGit-alert';
  export const notice = 'jp-TeraxGit-notice';
  export const trust = 'jp-TeraxGit-trust';
  export const commitBox = 'jp-TeraxGit-commitBox';
  export const commitInput = 'jp-TeraxGit-commitInput';
  export const commitOptions = 'jp-TeraxGit-commitOptions';
  export const commitButton = 'jp-TeraxGit-commitButton';
  export const group = 'jp-TeraxGit-group';
  export const groupHeader = 'jp-TeraxGit-groupHeader';
  export const count = 'jp-TeraxGit-count';
  export const file = 'jp-TeraxGit-file';
  export const fileName = 'jp-TeraxGit-fileName';
  export const fileDir = 'jp-TeraxGit-fileDir';
  export const ltrText = 'jp-TeraxGit-ltrText';
  export const code = 'jp-TeraxGit-code';
  export const actions = 'jp-TeraxGit-actions';
  export const action = 'jp-TeraxGit-action';
  export const caret = 'jp-TeraxGit-caret';
  export const switcher = 'jp-TeraxGit-switcher';
  export const switcherInput = 'jp-TeraxGit-switcherInput';
  export const switcherList = 'jp-TeraxGit-switcherList';
  export const switcherItem = 'jp-TeraxGit-switcherItem';
  export const switcherHeading = 'jp-TeraxGit-switcherHeading';
  export const empty = 'jp-TeraxGit-empty';
}

/**
 * Classes of the diff view (shared by both panels).
 */
export namespace DiffCSS {
  export const diff = 'jp-TeraxDiff';
  export const note = 'jp-TeraxDiff-note';
  export const hunk = 'jp-TeraxDiff-hunk';
  export const hunkHeader = 'jp-TeraxDiff-hunkHeader';
  export const hunkTitle = 'jp-TeraxDiff-hunkTitle';
  export const line = 'jp-TeraxDiff-line';
  export const number = 'jp-TeraxDiff-number';
  export const sign = 'jp-TeraxDiff-sign';
  export const text = 'jp-TeraxDiff-text';
  export const selectionBar = 'jp-TeraxDiff-selectionBar';
  export const button = 'jp-TeraxDiff-button';
  export const conflict = 'jp-TeraxDiff-conflict';
}

/**
 * Classes of the diff tab in the main area, and the panel's forms.
 */
export namespace DiffTabCSS {
  export const tab = 'jp-TeraxGitDiff';
  export const header = 'jp-TeraxGitDiff-header';
  export const path = 'jp-TeraxGitDiff-path';
  export const body = 'jp-TeraxGitDiff-body';
  export const empty = 'jp-TeraxGitDiff-empty';
  export const operationBar = 'jp-TeraxGit-operation';
  export const identity = 'jp-TeraxGit-identity';
}

/**
 * Classes of the History panel.
 */
export namespace HistoryCSS {
  export const panel = 'jp-TeraxHistory';
  export const search = 'jp-TeraxHistory-search';
  export const field = 'jp-TeraxHistory-field';
  export const input = 'jp-TeraxHistory-input';
  export const summary = 'jp-TeraxHistory-summary';
  export const body = 'jp-TeraxHistory-body';
  export const list = 'jp-TeraxHistory-list';
  export const spacer = 'jp-TeraxHistory-spacer';
  export const row = 'jp-TeraxHistory-row';
  export const graph = 'jp-TeraxHistory-graph';
  export const subject = 'jp-TeraxHistory-subject';
  export const author = 'jp-TeraxHistory-author';
  export const date = 'jp-TeraxHistory-date';
  export const oid = 'jp-TeraxHistory-oid';
  export const ref = 'jp-TeraxHistory-ref';
  export const detail = 'jp-TeraxHistory-detail';
  export const detailHeader = 'jp-TeraxHistory-detailHeader';
  export const meta = 'jp-TeraxHistory-meta';
  export const body_ = 'jp-TeraxHistory-message';
  export const files = 'jp-TeraxHistory-files';
  export const fileRow = 'jp-TeraxHistory-file';
  export const stats = 'jp-TeraxHistory-stats';
  export const add = 'jp-TeraxHistory-add';
  export const del = 'jp-TeraxHistory-del';
  export const empty = 'jp-TeraxHistory-empty';
  export const progress = 'jp-TeraxHistory-progress';
}
