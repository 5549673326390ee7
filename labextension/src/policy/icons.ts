/**
 * Icons of what the administrator's policy locks.
 */
import { LabIcon } from '@jupyterlab/ui-components';

/**
 * A padlock: a setting or feature the administrator decides.
 */
export const lockIcon = new LabIcon({
  name: 'terax-jupyter:policy-lock',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">
  <path class="jp-icon3" fill="#616161" d="M8 1.5A3.5 3.5 0 0 0 4.5 5v2H4a1.5 1.5 0 0 0-1.5 1.5v5A1.5 1.5 0 0 0 4 15h8a1.5 1.5 0 0 0 1.5-1.5v-5A1.5 1.5 0 0 0 12 7h-.5V5A3.5 3.5 0 0 0 8 1.5zM6 5a2 2 0 1 1 4 0v2H6V5zm2 4.3a1.2 1.2 0 0 1 .6 2.2v1.2H7.4v-1.2A1.2 1.2 0 0 1 8 9.3z"/>
</svg>`
});
