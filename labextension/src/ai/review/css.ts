/**
 * CSS class names of the review of an AI edit.
 */

/**
 * Classes of the review tab, its hunk list and the merge view.
 */
export namespace CSS {
  export const panel = 'jp-TeraxAiReview';
  export const header = 'jp-TeraxAiReview-header';
  export const titleRow = 'jp-TeraxAiReview-titleRow';
  export const path = 'jp-TeraxAiReview-path';
  export const ltrText = 'jp-TeraxAiReview-ltrText';
  export const summary = 'jp-TeraxAiReview-summary';
  export const status = 'jp-TeraxAiReview-status';
  export const actions = 'jp-TeraxAiReview-actions';
  export const button = 'jp-TeraxAiReview-button';
  export const primary = 'jp-mod-primary';
  export const notice = 'jp-TeraxAiReview-notice';
  export const body = 'jp-TeraxAiReview-body';
  export const list = 'jp-TeraxAiReview-hunks';
  export const hunk = 'jp-TeraxAiReview-hunk';
  export const hunkGo = 'jp-TeraxAiReview-hunkGo';
  export const hunkTitle = 'jp-TeraxAiReview-hunkTitle';
  export const hunkMeta = 'jp-TeraxAiReview-hunkMeta';
  export const added = 'jp-TeraxAiReview-added';
  export const removed = 'jp-TeraxAiReview-removed';
  export const choice = 'jp-TeraxAiReview-choice';
  export const choiceButton = 'jp-TeraxAiReview-choiceButton';
  export const merge = 'jp-TeraxAiReview-merge';
  export const sides = 'jp-TeraxAiReview-sides';
  export const side = 'jp-TeraxAiReview-side';
  export const scroller = 'jp-TeraxAiReview-scroller';
  export const rawDiff = 'jp-TeraxAiReview-rawDiff';
  export const rejectedLine = 'jp-TeraxAiReview-rejectedLine';
  export const activeLine = 'jp-TeraxAiReview-activeLine';
  export const hunkGutter = 'jp-TeraxAiReview-hunkGutter';
  export const hunkMarker = 'jp-TeraxAiReview-hunkMarker';
  export const cells = 'jp-TeraxAiReview-cells';
  export const cell = 'jp-TeraxAiReview-cell';
  export const cellHeader = 'jp-TeraxAiReview-cellHeader';
  export const cellType = 'jp-TeraxAiReview-cellType';
  export const unit = 'jp-TeraxAiReview-unit';
  export const unitBar = 'jp-TeraxAiReview-unitBar';
  export const unitLines = 'jp-TeraxAiReview-unitLines';
  export const active = 'jp-mod-active';
  export const rejected = 'jp-mod-rejected';
}
