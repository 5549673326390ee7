/**
 * The gutter beside a terminal: one bar per block on screen, from its header
 * line to its last output line, coloured by how the block ended. Nodes are
 * reused from one frame to the next.
 */
import { type BlockStatus, CSS } from './css';

/**
 * One bar, in buffer lines.
 */
export interface IGutterBar {
  from: number;
  to: number;
  status: BlockStatus;
  selected: boolean;
  title: string;
}

/**
 * Draw the bars that reach the screen (`top` is the first buffer line on
 * screen, `rows` its height in lines, `cell` a line's height in pixels).
 */
export function drawGutter(
  gutter: HTMLElement,
  bars: Iterable<IGutterBar>,
  screen: { top: number; rows: number; cell: number }
): void {
  const { top, rows, cell } = screen;
  const bottom = top + rows - 1;
  let used = 0;
  for (const bar of bars) {
    if (bar.to < top || bar.from > bottom) {
      continue;
    }
    const start = Math.max(bar.from, top);
    const end = Math.min(bar.to, bottom);
    let node = gutter.children[used] as HTMLElement | undefined;
    if (!node) {
      node = document.createElement('div');
      node.className = CSS.gutterBar;
      gutter.appendChild(node);
    }
    used++;
    node.style.transform = `translateY(${(start - top) * cell}px)`;
    node.style.height = `${(end - start + 1) * cell}px`;
    node.dataset.status = bar.status;
    node.classList.toggle(CSS.selected, bar.selected);
    node.title = bar.title;
    node.hidden = false;
  }
  for (let index = used; index < gutter.children.length; index++) {
    (gutter.children[index] as HTMLElement).hidden = true;
  }
}
