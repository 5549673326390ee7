/**
 * Plugin of the review of AI edits: the `terax:ai-review` command (a
 * main-area tab per approval: merge view, hunks to accept or reject, Apply)
 * and the keyboard commands of the review.
 */
import {
  ILayoutRestorer,
  type JupyterFrontEnd,
  type JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  IThemeManager,
  MainAreaWidget,
  WidgetTracker
} from '@jupyterlab/apputils';
import {
  IEditorLanguageRegistry,
  IEditorThemeRegistry
} from '@jupyterlab/codemirror';
import { PathExt } from '@jupyterlab/coreutils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import {
  type IRoomDocumentLike,
  type ISharedNotebookLike,
  ReviewModel,
  ReviewPanel,
  reviewIcon,
  saveThroughRoom,
  setOpenNotebookFinder
} from '../ai/review';
import { PALETTE_CATEGORY, TRANSLATION_DOMAIN } from './constants';

/**
 * Command IDs of the review of AI edits.
 */
export namespace CommandIDs {
  /** Open the review of an approval: args `{approvalId: string}`. */
  export const review = 'terax:ai-review';
  export const nextHunk = 'terax:ai-review-next-hunk';
  export const previousHunk = 'terax:ai-review-previous-hunk';
  export const acceptHunk = 'terax:ai-review-accept-hunk';
  export const rejectHunk = 'terax:ai-review-reject-hunk';
  export const apply = 'terax:ai-review-apply';
}

const PLUGIN_ID = 'terax-jupyter:ai-review';
const NAMESPACE = 'terax-ai-review';

type ReviewWidget = MainAreaWidget<ReviewPanel>;

/**
 * The review plugin.
 */
export const aiReviewPlugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description:
    'Review an edit the AI agent proposes: side by side, hunk by hunk, then apply.',
  autoStart: true,
  optional: [
    IDocumentManager,
    ICommandPalette,
    ILayoutRestorer,
    IThemeManager,
    ITranslator,
    IEditorLanguageRegistry,
    IEditorThemeRegistry
  ],
  activate: (
    app: JupyterFrontEnd,
    docManager: IDocumentManager | null,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    themeManager: IThemeManager | null,
    translator: ITranslator | null,
    languages: IEditorLanguageRegistry | null,
    themes: IEditorThemeRegistry | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const { commands, shell } = app;
    const settings = app.serviceManager.serverSettings;
    const tracker = new WidgetTracker<ReviewWidget>({ namespace: NAMESPACE });

    const isDark = (): boolean => {
      const theme = themeManager?.theme;
      if (themeManager && theme) {
        return !themeManager.isLight(theme);
      }
      return document.body.dataset.jpThemeLight === 'false';
    };
    themeManager?.themeChanged.connect(() => {
      const dark = isDark();
      tracker.forEach(widget => widget.content.setDark(dark));
    });

    // An editor open on the file shows what the agent wrote (unless it has
    // unsaved changes of its own: those are the user's to keep).
    const reloadEditors = (path: string): void => {
      const widget = docManager?.findWidget(path);
      if (widget && !widget.context.model.dirty) {
        void widget.context.revert().catch(error => {
          console.warn('Terax: could not reload', path, error);
        });
      }
    };

    // A notebook change set goes through the notebook open in Lab, if it is.
    setOpenNotebookFinder(path => {
      const widget = docManager?.findWidget(path);
      const model = widget?.context.model as
        { sharedModel?: unknown; collaborative?: boolean } | undefined;
      const shared = model?.sharedModel as
        Partial<ISharedNotebookLike> | undefined;
      if (
        !widget ||
        !shared ||
        !Array.isArray(shared.cells) ||
        !shared.insertCell
      ) {
        return null;
      }
      const save = () => widget.context.save();
      return {
        sharedModel: shared as ISharedNotebookLike,
        // With real-time collaboration the server's room saves the notebook.
        save: model?.collaborative
          ? () => saveThroughRoom(shared as unknown as IRoomDocumentLike, save)
          : save
      };
    });

    const open = async (approvalId: string): Promise<ReviewWidget> => {
      const existing = tracker.find(
        widget => widget.content.model.approvalId === approvalId
      );
      if (existing) {
        shell.activateById(existing.id);
        void existing.content.model.load();
        return existing;
      }
      const model = new ReviewModel({ approvalId, settings });
      const content = new ReviewPanel({
        model,
        trans,
        languages,
        themes,
        dark: isDark()
      });
      const widget = new MainAreaWidget({ content });
      widget.id = `terax-ai-review-${Math.random().toString(36).slice(2, 10)}`;
      widget.addClass('jp-TeraxAiReview-tab');
      widget.title.label = trans.__('Review');
      widget.title.icon = reviewIcon;
      widget.title.closable = true;
      // The review has its own header with the actions.
      widget.toolbar.hide();
      model.changed.connect(() => {
        if (model.path) {
          widget.title.label = trans.__(
            'Review: %1',
            PathExt.basename(model.path)
          );
          widget.title.caption = trans.__('Review of %1', model.path);
        }
        void tracker.save(widget);
        commands.notifyCommandChanged();
      });
      model.fileWritten.connect((_, path) => reloadEditors(path));
      await tracker.add(widget);
      shell.add(widget, 'main', { type: 'AI Review' });
      shell.activateById(widget.id);
      content.node.focus();
      await model.load();
      return widget;
    };

    restorer
      ?.restore(tracker, {
        command: CommandIDs.review,
        args: widget => ({ approvalId: widget.content.model.approvalId }),
        name: widget => widget.content.model.approvalId
      })
      .catch(reason => {
        console.error('Could not restore the AI reviews.', reason);
      });

    /** The review in the current tab, if the current tab is one. */
    const current = (): ReviewPanel | null => {
      const widget = tracker.currentWidget;
      return widget && widget === shell.currentWidget ? widget.content : null;
    };

    commands.addCommand(CommandIDs.review, {
      label: trans.__('Review AI Edit'),
      caption: trans.__(
        'Compare an edit the agent proposes with the file and choose its hunks'
      ),
      describedBy: {
        args: {
          type: 'object',
          properties: {
            approvalId: {
              type: 'string',
              description: 'The id of the approval (pending or queued).'
            }
          },
          required: ['approvalId']
        }
      },
      execute: async args => {
        const approvalId = args.approvalId;
        if (typeof approvalId !== 'string' || !approvalId) {
          throw new Error('terax:ai-review needs an approvalId.');
        }
        await open(approvalId);
      }
    });
    commands.addCommand(CommandIDs.nextHunk, {
      label: trans.__('Next Hunk'),
      caption: trans.__('Go to the next hunk of the AI edit'),
      isEnabled: () => current() !== null,
      execute: () => current()?.step(1)
    });
    commands.addCommand(CommandIDs.previousHunk, {
      label: trans.__('Previous Hunk'),
      caption: trans.__('Go to the previous hunk of the AI edit'),
      isEnabled: () => current() !== null,
      execute: () => current()?.step(-1)
    });
    commands.addCommand(CommandIDs.acceptHunk, {
      label: trans.__('Accept Hunk'),
      caption: trans.__('Accept the current hunk and go to the next'),
      isEnabled: () => current()?.model.editable ?? false,
      execute: () => current()?.decideActive(true)
    });
    commands.addCommand(CommandIDs.rejectHunk, {
      label: trans.__('Reject Hunk'),
      caption: trans.__('Reject the current hunk and go to the next'),
      isEnabled: () => current()?.model.editable ?? false,
      execute: () => current()?.decideActive(false)
    });
    commands.addCommand(CommandIDs.apply, {
      label: trans.__('Apply Reviewed AI Edit'),
      caption: trans.__('Send the accepted hunks to the agent'),
      isEnabled: () => current()?.model.canApply ?? false,
      execute: () => current()?.apply()
    });
    tracker.currentChanged.connect(() => commands.notifyCommandChanged());

    for (const command of [
      CommandIDs.nextHunk,
      CommandIDs.previousHunk,
      CommandIDs.acceptHunk,
      CommandIDs.rejectHunk,
      CommandIDs.apply
    ]) {
      palette?.addItem({ command, category: trans.__(PALETTE_CATEGORY) });
    }
  }
};
