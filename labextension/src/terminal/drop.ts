/**
 * Files dragged from Lab's file browser onto a terminal pane.
 */
import type { Drag } from '@lumino/dragdrop';

/**
 * The mime type of the file browser's drags (the dragged paths).
 */
const CONTENTS_MIME = 'application/x-jupyter-icontents';

/**
 * Accepts file-browser drags on a node and hands over the dropped paths.
 */
export class FileDropTarget {
  constructor(
    private readonly _node: HTMLElement,
    private readonly _options: {
      /** Set on the node while a drag hovers it. */
      className: string;
      onDrop: (paths: string[]) => void;
    }
  ) {
    for (const type of EVENTS) {
      _node.addEventListener(type, this);
    }
  }

  handleEvent(event: Event): void {
    const drag = event as Drag.Event;
    if (event.type === 'lm-dragleave') {
      this._node.classList.remove(this._options.className);
      return;
    }
    if (!drag.mimeData?.hasData(CONTENTS_MIME)) {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
    // The browser offers "move" only; nothing moves, the paths are typed.
    drag.dropAction = drag.proposedAction;
    if (event.type === 'lm-drop') {
      this._node.classList.remove(this._options.className);
      const data = drag.mimeData.getData(CONTENTS_MIME) as unknown;
      const paths = (Array.isArray(data) ? data : [data]).filter(
        (path): path is string => typeof path === 'string'
      );
      if (paths.length > 0) {
        this._options.onDrop(paths);
      }
    } else {
      this._node.classList.add(this._options.className);
    }
  }

  dispose(): void {
    for (const type of EVENTS) {
      this._node.removeEventListener(type, this);
    }
  }
}

const EVENTS = ['lm-dragenter', 'lm-dragleave', 'lm-dragover', 'lm-drop'];
