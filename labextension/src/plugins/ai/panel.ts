/**
 * The AI panel in the right sidebar: added and restored, and what other
 * plugins and the commands do with it (open, attach, new session).
 */
import type {
  ILabShell,
  ILayoutRestorer,
  JupyterFrontEnd
} from '@jupyterlab/application';

import type { AiPanel, AiPanelModel, ITeraxAi } from '../../ai';
import type { Attachment } from '../../common/ai/chat';

/**
 * The panel as the commands drive it.
 */
export interface IAiPanelActions extends ITeraxAi {
  readonly panel: AiPanel;
  readonly model: AiPanelModel;
  /** The sidebar shows the panel. */
  isOpen(): boolean;
  /** Collapse the right sidebar. */
  collapse(): void;
}

/**
 * Add the panel to the right sidebar, where the restorer finds it after a
 * reload; its sessions load once it shows.
 */
export function restoreLayout(
  app: JupyterFrontEnd,
  restorer: ILayoutRestorer | null,
  panel: AiPanel,
  model: AiPanelModel
): void {
  app.shell.add(panel, 'right', { rank: 150, type: 'Terax AI' });
  restorer?.add(panel, panel.id);
  if (panel.isVisible) {
    void model.start();
  }
}

/**
 * Open, attach and new session on the panel.
 */
export function panelActions(
  app: JupyterFrontEnd,
  labShell: ILabShell | null,
  panel: AiPanel,
  model: AiPanelModel
): IAiPanelActions {
  const open = (): void => {
    app.shell.activateById(panel.id);
    void model.start();
    panel.focusComposer();
  };
  return {
    panel,
    model,
    open,
    attach: (attachment: Attachment): void => {
      model.attach(attachment);
      if (model.view !== 'chat') {
        model.setView('chat');
      }
      open();
    },
    newSession: async () => {
      open();
      await model.newSession();
    },
    isOpen: () =>
      labShell ? !labShell.rightCollapsed && panel.isVisible : panel.isVisible,
    collapse: () => labShell?.collapseRight()
  };
}
