/**
 * Icons of the web preview.
 */
import { LabIcon } from '@jupyterlab/ui-components';

/**
 * A browser window with a play mark: a page served from this machine.
 */
export const previewIcon = new LabIcon({
  name: 'terax-jupyter:preview',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <g class="jp-icon3" fill="#616161">
    <path d="M2.5 2A1.5 1.5 0 0 0 1 3.5v9A1.5 1.5 0 0 0 2.5 14h11a1.5 1.5 0 0 0 1.5-1.5v-9A1.5 1.5 0 0 0 13.5 2h-11zM2.2 5h11.6v7.5a.3.3 0 0 1-.3.3h-11a.3.3 0 0 1-.3-.3V5z"/>
    <circle cx="3.2" cy="3.5" r=".6"/>
    <circle cx="4.9" cy="3.5" r=".6"/>
    <path d="M6.6 7v4.2L10.2 9.1z"/>
  </g>
</svg>`
});

/**
 * Back: an arrow to the left.
 */
export const backIcon = new LabIcon({
  name: 'terax-jupyter:preview-back',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <path class="jp-icon3" fill="#616161" d="M7.3 3.3a.8.8 0 0 1 1.1 1.1L5.6 7.2H12.5a.8.8 0 0 1 0 1.6H5.6l2.8 2.8a.8.8 0 0 1-1.1 1.1L3.1 8.6a.8.8 0 0 1 0-1.2z"/>
</svg>`
});

/**
 * Forward: an arrow to the right.
 */
export const forwardIcon = new LabIcon({
  name: 'terax-jupyter:preview-forward',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <path class="jp-icon3" fill="#616161" d="M8.7 3.3a.8.8 0 0 0-1.1 1.1l2.8 2.8H3.5a.8.8 0 0 0 0 1.6h6.9l-2.8 2.8a.8.8 0 0 0 1.1 1.1l4.2-4.1a.8.8 0 0 0 0-1.2z"/>
</svg>`
});
