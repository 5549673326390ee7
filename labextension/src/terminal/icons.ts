/**
 * Icons of the Terax terminal.
 */
import { LabIcon } from '@jupyterlab/ui-components';

/**
 * The Terax terminal (tabs, launcher, menus): a terminal window whose lines
 * are grouped into command blocks, distinct from Lab's own terminal icon.
 */
export const teraxTerminalIcon = new LabIcon({
  name: 'terax-jupyter:terminal',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16" height="16">
  <rect x="1.5" y="2.5" width="21" height="19" rx="3.5" fill="#17212b"/>
  <rect x="1.5" y="2.5" width="21" height="19" rx="3.5" fill="none" stroke="#2f9e8f" stroke-width="1"/>
  <rect x="4.5" y="6.5" width="1.6" height="5" rx="0.8" fill="#3fb950"/>
  <rect x="4.5" y="13.5" width="1.6" height="5" rx="0.8" fill="#f85149"/>
  <path d="M8.4 7.4l2.4 1.7-2.4 1.7" fill="none" stroke="#e6edf3" stroke-width="1.4" stroke-linecap="round" stroke-linejoin="round"/>
  <path d="M12.3 10.8h4.4" stroke="#8b949e" stroke-width="1.4" stroke-linecap="round"/>
  <path d="M8.4 14.4l2.4 1.7-2.4 1.7" fill="none" stroke="#e6edf3" stroke-width="1.4" stroke-linecap="round" stroke-linejoin="round"/>
  <path d="M12.3 17.8h6.6" stroke="#8b949e" stroke-width="1.4" stroke-linecap="round"/>
</svg>`
});

/**
 * "Ask Terax": a sparkle.
 */
export const askTeraxIcon = new LabIcon({
  name: 'terax-jupyter:ask',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <path class="jp-icon3" fill="#616161" d="M6.5 1.5l1.2 3.3a2 2 0 0 0 1.2 1.2l3.3 1.2-3.3 1.2a2 2 0 0 0-1.2 1.2L6.5 12.9 5.3 9.6a2 2 0 0 0-1.2-1.2L.8 7.2l3.3-1.2a2 2 0 0 0 1.2-1.2z"/>
  <path class="jp-icon3" fill="#616161" d="M12.6 9.8l.55 1.45a1 1 0 0 0 .6.6l1.45.55-1.45.55a1 1 0 0 0-.6.6l-.55 1.45-.55-1.45a1 1 0 0 0-.6-.6l-1.45-.55 1.45-.55a1 1 0 0 0 .6-.6z"/>
</svg>`
});

/**
 * "Copy output": a page of text lines.
 */
export const copyOutputIcon = new LabIcon({
  name: 'terax-jupyter:copy-output',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <rect class="jp-icon3" x="2.5" y="1.5" width="9" height="11" rx="1.5" fill="none" stroke="#616161" stroke-width="1.2"/>
  <path class="jp-icon3" d="M4.8 4.6h4.4M4.8 7h4.4M4.8 9.4h2.6" stroke="#616161" stroke-width="1.2" stroke-linecap="round"/>
  <path class="jp-icon3" d="M13.5 4.5v8.5a1.5 1.5 0 0 1-1.5 1.5H5.5" fill="none" stroke="#616161" stroke-width="1.2" stroke-linecap="round"/>
</svg>`
});

/**
 * "Blocks": the outline side view of a pane.
 */
export const blocksIcon = new LabIcon({
  name: 'terax-jupyter:blocks',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <rect class="jp-icon3" x="1.5" y="2" width="13" height="5" rx="1.2" fill="none" stroke="#616161" stroke-width="1.2"/>
  <rect class="jp-icon3" x="1.5" y="9" width="13" height="5" rx="1.2" fill="none" stroke="#616161" stroke-width="1.2"/>
  <path class="jp-icon3" d="M4 4.5h5M4 11.5h7" stroke="#616161" stroke-width="1.2" stroke-linecap="round"/>
</svg>`
});
