/**
 * Icons of the Git panels.
 */
import { LabIcon } from '@jupyterlab/ui-components';

/**
 * Source control: a branch forking off a line of commits.
 */
export const gitIcon = new LabIcon({
  name: 'terax-jupyter:git',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16" height="16">
  <g class="jp-icon3" style="fill: none" stroke="#616161" stroke-width="1.8" stroke-linecap="round">
    <circle cx="6" cy="5" r="2.2"/>
    <circle cx="6" cy="19" r="2.2"/>
    <circle cx="18" cy="7" r="2.2"/>
    <path d="M6 7.2v9.6"/>
    <path d="M18 9.2c0 4.5-6 4-10.4 8"/>
  </g>
</svg>`
});

/**
 * A branch (the branch button and the switcher).
 */
export const branchIcon = new LabIcon({
  name: 'terax-jupyter:git-branch',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <g class="jp-icon3" style="fill: none" stroke="#616161" stroke-width="1.3" stroke-linecap="round">
    <circle cx="4.5" cy="3.5" r="1.6"/>
    <circle cx="4.5" cy="12.5" r="1.6"/>
    <circle cx="11.5" cy="4.5" r="1.6"/>
    <path d="M4.5 5.1v5.8"/>
    <path d="M11.5 6.1c0 3-4 2.6-6.6 5"/>
  </g>
</svg>`
});

/**
 * A commit on a line (History).
 */
export const commitIcon = new LabIcon({
  name: 'terax-jupyter:git-commit',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <g class="jp-icon3" style="fill: none" stroke="#616161" stroke-width="1.3">
    <circle cx="8" cy="8" r="2.6"/>
    <path d="M1 8h4.4M10.6 8H15"/>
  </g>
</svg>`
});

/**
 * Stage (a plus) and unstage (a minus), drawn to match Lab's icons.
 */
export const stageIcon = new LabIcon({
  name: 'terax-jupyter:git-stage',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <path class="jp-icon3" style="fill: none" stroke="#616161" stroke-width="1.4" stroke-linecap="round" d="M8 3.5v9M3.5 8h9"/>
</svg>`
});

export const unstageIcon = new LabIcon({
  name: 'terax-jupyter:git-unstage',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <path class="jp-icon3" style="fill: none" stroke="#616161" stroke-width="1.4" stroke-linecap="round" d="M3.5 8h9"/>
</svg>`
});

/**
 * Discard: an arrow turning back.
 */
export const discardIcon = new LabIcon({
  name: 'terax-jupyter:git-discard',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <g class="jp-icon3" style="fill: none" stroke="#616161" stroke-width="1.4" stroke-linecap="round" stroke-linejoin="round">
    <path d="M5.5 3.5L2.5 6.5l3 3"/>
    <path d="M2.5 6.5h6.5a4 4 0 0 1 0 8H6"/>
  </g>
</svg>`
});

/**
 * Fetch, pull and push arrows.
 */
export const fetchIcon = new LabIcon({
  name: 'terax-jupyter:git-fetch',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <g class="jp-icon3" style="fill: none" stroke="#616161" stroke-width="1.4" stroke-linecap="round" stroke-linejoin="round">
    <path d="M13.5 8a5.5 5.5 0 1 1-1.6-3.9"/>
    <path d="M12.5 1.8v2.8H9.7"/>
  </g>
</svg>`
});

export const pullIcon = new LabIcon({
  name: 'terax-jupyter:git-pull',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <g class="jp-icon3" style="fill: none" stroke="#616161" stroke-width="1.4" stroke-linecap="round" stroke-linejoin="round">
    <path d="M8 2v10M4 8.5l4 4 4-4"/>
    <path d="M3 14.5h10"/>
  </g>
</svg>`
});

export const pushIcon = new LabIcon({
  name: 'terax-jupyter:git-push',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <g class="jp-icon3" style="fill: none" stroke="#616161" stroke-width="1.4" stroke-linecap="round" stroke-linejoin="round">
    <path d="M8 14V4M4 7.5l4-4 4 4"/>
    <path d="M3 1.5h10"/>
  </g>
</svg>`
});
