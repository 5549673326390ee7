/**
 * Icons of the review of AI edits.
 */
import { LabIcon } from '@jupyterlab/ui-components';

/**
 * A review tab: two columns of lines, one removed and one added.
 */
export const reviewIcon = new LabIcon({
  name: 'terax-jupyter:ai-review',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16" height="16">
  <g class="jp-icon3" style="fill: none" stroke="#616161" stroke-width="1.6" stroke-linecap="round">
    <rect x="2.5" y="3.5" width="8" height="17" rx="1.5"/>
    <rect x="13.5" y="3.5" width="8" height="17" rx="1.5"/>
    <path d="M4.8 8h3.4M4.8 16h3.4M15.8 8h3.4M15.8 16h3.4"/>
  </g>
  <path d="M4.8 12h3.4" stroke="#d73a49" stroke-width="1.8" stroke-linecap="round"/>
  <path d="M15.8 12h3.4M17.5 10.3v3.4" stroke="#2da44e" stroke-width="1.8" stroke-linecap="round"/>
</svg>`
});
