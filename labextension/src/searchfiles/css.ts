/**
 * CSS class names of the Search in Files panel.
 */

/**
 * CSS classes of the panel.
 */
export namespace CSS {
  export const panel = 'jp-TeraxSearch';
  export const title = 'jp-TeraxSearch-title';
  export const view = 'jp-TeraxSearch-view';
  export const form = 'jp-TeraxSearch-form';
  export const queryBox = 'jp-TeraxSearch-queryBox';
  export const query = 'jp-TeraxSearch-query';
  export const toggle = 'jp-TeraxSearch-toggle';
  export const field = 'jp-TeraxSearch-field';
  export const fieldLabel = 'jp-TeraxSearch-fieldLabel';
  export const input = 'jp-TeraxSearch-input';
  export const error = 'jp-TeraxSearch-error';
  export const summary = 'jp-TeraxSearch-summary';
  export const warning = 'jp-TeraxSearch-warning';
  export const progress = 'jp-TeraxSearch-progress';
  export const tree = 'jp-TeraxSearch-tree';
  export const row = 'jp-TeraxSearch-row';
  export const fileRow = 'jp-TeraxSearch-fileRow';
  export const lineRow = 'jp-TeraxSearch-lineRow';
  export const moreRow = 'jp-TeraxSearch-moreRow';
  export const caret = 'jp-TeraxSearch-caret';
  export const icon = 'jp-TeraxSearch-fileIcon';
  export const fileLabel = 'jp-TeraxSearch-fileLabel';
  export const fileName = 'jp-TeraxSearch-fileName';
  export const folder = 'jp-TeraxSearch-folder';
  export const badge = 'jp-TeraxSearch-badge';
  export const lineNumber = 'jp-TeraxSearch-lineNumber';
  export const lineText = 'jp-TeraxSearch-lineText';
  export const mark = 'jp-TeraxSearch-mark';
  export const empty = 'jp-TeraxSearch-empty';
}
