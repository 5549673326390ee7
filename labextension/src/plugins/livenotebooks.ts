/**
 * Outputs of the agent's cell runs, taken into the notebooks open in this
 * page: the page tells the server which notebooks it has open (so the server
 * writes nothing under them) and sets each run cell's outputs, execution
 * count and executed-source hash in the notebook's shared model, as if the
 * user had run it.
 */
import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import type { ISignal } from '@lumino/signaling';
import type { Widget } from '@lumino/widgets';

import { type ILiveCellEvent, liveNotebooksURL } from '../api/kernels';

const RETRY_MS = [1000, 2000, 5000, 10000, 30000];

/**
 * A cell of a shared notebook, as far as landing outputs needs it.
 */
interface ILiveCell {
  readonly id: string;
  getSource(): string;
  setOutputs?(outputs: unknown[]): void;
  setExecutionCount?(count: number | null): void;
  getMetadata?(key: string): unknown;
  setMetadata?(key: string, value: unknown): void;
}

interface ILiveNotebook {
  context?: {
    path?: unknown;
    model?: { sharedModel?: { cells?: readonly ILiveCell[] } };
  };
}

function notebookPath(widget: Widget): string | null {
  const path = (widget as unknown as ILiveNotebook).context?.path;
  return typeof path === 'string' && path.toLowerCase().endsWith('.ipynb')
    ? path
    : null;
}

export const liveNotebooksPlugin: JupyterFrontEndPlugin<void> = {
  id: 'terax-jupyter:live-notebooks',
  description:
    "Takes the outputs of the agent's cell runs into the notebooks open in Lab.",
  autoStart: true,
  activate: (app: JupyterFrontEnd): void => {
    const settings = app.serviceManager.serverSettings;
    let socket: WebSocket | null = null;
    let failures = 0;
    let sent = '';

    const openNotebooks = (): Map<string, Widget> => {
      const open = new Map<string, Widget>();
      for (const widget of app.shell.widgets('main')) {
        const path = notebookPath(widget);
        if (path) {
          open.set(path, widget);
        }
      }
      return open;
    };

    const announce = (): void => {
      const paths = [...openNotebooks().keys()].sort();
      const frame = JSON.stringify({ type: 'open', paths });
      if (socket?.readyState === WebSocket.OPEN && frame !== sent) {
        socket.send(frame);
        sent = frame;
      }
    };

    const land = (event: ILiveCellEvent): void => {
      const widget = openNotebooks().get(event.path);
      const cells =
        (widget as unknown as ILiveNotebook | undefined)?.context?.model
          ?.sharedModel?.cells ?? [];
      const cell = cells.find(c => c.id === event.cell_id);
      if (!cell) {
        return;
      }
      cell.setOutputs?.(event.outputs);
      if (event.status !== 'queued' && event.status !== 'running') {
        cell.setExecutionCount?.(event.execution_count ?? null);
        const terax = (cell.getMetadata?.('terax') ?? {}) as Record<
          string,
          unknown
        >;
        cell.setMetadata?.('terax', {
          ...terax,
          executed_source_hash: event.executed_hash
        });
      }
    };

    const connect = (): void => {
      const next = new settings.WebSocket(liveNotebooksURL(settings));
      socket = next;
      sent = '';
      next.onopen = () => {
        failures = 0;
        announce();
      };
      next.onmessage = message => {
        const event = JSON.parse(String(message.data)) as ILiveCellEvent;
        if (event.type === 'cell') {
          land(event);
        }
      };
      next.onclose = () => {
        if (socket !== next) {
          return;
        }
        socket = null;
        const delay = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)];
        failures += 1;
        setTimeout(connect, delay);
      };
    };

    // Lab's shell says when tabs open or close; a rename shows on the next tick.
    const shell = app.shell as unknown as {
      layoutModified?: ISignal<unknown, void>;
    };
    shell.layoutModified?.connect(announce);
    setInterval(announce, 3000);
    void app.restored.then(connect);
  }
};
