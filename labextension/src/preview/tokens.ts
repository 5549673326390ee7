/**
 * Public tokens of the web preview.
 */
import type { IWidgetTracker } from '@jupyterlab/apputils';
import { Token } from '@lumino/coreutils';
import type { Widget } from '@lumino/widgets';

/**
 * The web preview tabs of the page.
 */
export interface ITeraxPreview {
  /**
   * The preview tabs.
   */
  readonly tracker: IWidgetTracker<Widget>;
  /**
   * Show a page in a preview tab: a port (`5173`), a URL of this machine's
   * loopback (`http://localhost:5173/app`, shown through the server's
   * proxy) or an external http(s) URL (shown in a sandbox). A preview of
   * the same dev server is reused. Rejects an address it cannot show.
   */
  open(address: string | number): Promise<Widget>;
}

/**
 * The web preview token.
 */
export const ITeraxPreview = new Token<ITeraxPreview>(
  'terax-jupyter:ITeraxPreview',
  'Preview tabs of dev servers (through the server proxy) and web pages.'
);
