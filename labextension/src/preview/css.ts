/**
 * CSS class names of the web preview.
 */

/**
 * Classes of the preview tab: its toolbar, frame, notice and error card.
 */
export namespace CSS {
  export const tab = 'jp-TeraxPreview-tab';
  export const panel = 'jp-TeraxPreview';
  export const address = 'jp-TeraxPreview-address';
  export const addressInput = 'jp-TeraxPreview-addressInput';
  export const body = 'jp-TeraxPreview-body';
  export const frame = 'jp-TeraxPreview-frame';
  export const progress = 'jp-TeraxPreview-progress';
  export const notice = 'jp-TeraxPreview-notice';
  export const noticeText = 'jp-TeraxPreview-noticeText';
  export const link = 'jp-TeraxPreview-link';
  export const dismiss = 'jp-TeraxPreview-dismiss';
  export const error = 'jp-TeraxPreview-error';
  export const errorCard = 'jp-TeraxPreview-errorCard';
  export const errorTitle = 'jp-TeraxPreview-errorTitle';
  export const errorMessage = 'jp-TeraxPreview-errorMessage';
  export const errorCode = 'jp-TeraxPreview-errorCode';
  export const button = 'jp-TeraxPreview-button';
  export const external = 'jp-mod-external';
  export const loading = 'jp-mod-loading';
  export const invalid = 'jp-mod-invalid';
}
