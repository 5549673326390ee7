/**
 * Icons of the AI panel.
 */
import { LabIcon } from '@jupyterlab/ui-components';

/**
 * The agent: a speech bubble with a spark.
 */
export const aiIcon = new LabIcon({
  name: 'terax-jupyter:ai',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16" height="16">
  <g class="jp-icon3" style="fill: none" stroke="#616161" stroke-width="1.8" stroke-linejoin="round" stroke-linecap="round">
    <path d="M4 5.5h16v10.5H10l-4.5 3.5V16H4z"/>
    <path d="M12 7.8l1 2.2 2.2 1-2.2 1-1 2.2-1-2.2-2.2-1 2.2-1z"/>
  </g>
</svg>`
});

/**
 * Send (an arrow up).
 */
export const sendIcon = new LabIcon({
  name: 'terax-jupyter:ai-send',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <g class="jp-icon3" style="fill: none" stroke="#616161" stroke-width="1.6" stroke-linecap="round" stroke-linejoin="round">
    <path d="M8 13V3.5M3.8 7.5L8 3.3l4.2 4.2"/>
  </g>
</svg>`
});

/**
 * A history of sessions (stacked lines).
 */
export const sessionsIcon = new LabIcon({
  name: 'terax-jupyter:ai-sessions',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <g class="jp-icon3" style="fill: none" stroke="#616161" stroke-width="1.4" stroke-linecap="round">
    <path d="M2.5 4h11M2.5 8h11M2.5 12h7"/>
  </g>
</svg>`
});
