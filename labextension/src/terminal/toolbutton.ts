/**
 * The small icon button of the terminal's find bar and block outline.
 */
import type { LabIcon } from '@jupyterlab/ui-components';

import { CSS } from './css';

/**
 * A button showing `icon`, named `label` (its tooltip and accessible name),
 * that calls `onClick` when clicked.
 */
export function toolButton(
  icon: LabIcon,
  label: string,
  onClick: () => void
): HTMLButtonElement {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = CSS.findButton;
  button.title = label;
  button.setAttribute('aria-label', label);
  icon.element({ container: button, tag: 'span' });
  button.addEventListener('click', onClick);
  return button;
}
