/**
 * Plugin of source control: the Git side panel (following the file
 * browser's folder), the History main-area panel, and their commands.
 */
import {
  ILabShell,
  ILayoutRestorer,
  type JupyterFrontEnd,
  type JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  Dialog,
  ICommandPalette,
  MainAreaWidget,
  showDialog,
  WidgetTracker
} from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import type { ISignal } from '@lumino/signaling';
import * as React from 'react';

import {
  getCommit,
  type IGitDiscardConfirmation,
  type IGitTrust
} from '../api/git';
import {
  commitIcon,
  FileWatcher,
  GitDiffView,
  GitModel,
  GitPanel,
  gitIcon,
  HistoryModel,
  HistoryView,
  type OperationTitles
} from '../git';
import { ITeraxPolicy } from '../policy/tokens';
import { PALETTE_CATEGORY, TRANSLATION_DOMAIN } from './constants';

/**
 * Command IDs of source control.
 */
export namespace CommandIDs {
  export const openPanel = 'terax:git-panel';
  export const history = 'terax:git-history';
  export const commit = 'terax:git-commit';
  export const switchBranch = 'terax:git-switch-branch';
  export const fetch = 'terax:git-fetch';
  export const pull = 'terax:git-pull';
  export const push = 'terax:git-push';
  export const refresh = 'terax:git-refresh';
  export const trust = 'terax:git-trust';
}

const PLUGIN_ID = 'terax-jupyter:git';
const HISTORY_NAMESPACE = 'terax-git-history';

/**
 * The file browser as far as this plugin needs it (not a dependency: the
 * panel follows it when it is there).
 */
interface IFileBrowserLike {
  model?: {
    path?: unknown;
    pathChanged?: ISignal<unknown, unknown>;
  };
}

/**
 * The source-control plugin.
 */
export const gitPlugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'Git panel with hunk and line staging, and the commit history.',
  autoStart: true,
  optional: [
    ICommandPalette,
    ILabShell,
    ILayoutRestorer,
    ISettingRegistry,
    ITranslator,
    ITeraxPolicy
  ],
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    labShell: ILabShell | null,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null,
    policy: ITeraxPolicy | null
  ): void => {
    const resolvedTranslator = translator ?? nullTranslator;
    const trans = resolvedTranslator.load(TRANSLATION_DOMAIN);
    const pushOffReason = policy?.offReason('git_push') ?? null;
    const pushOff = pushOffReason ? trans.__(pushOffReason) : null;
    const readOnly = policy?.readOnly
      ? trans.__('Set by your administrator: nothing can be changed here.')
      : null;
    const { commands, shell } = app;
    const settings = app.serviceManager.serverSettings;
    let pageSize = 300;

    const titles: OperationTitles = {
      stage: trans.__('Could not stage'),
      unstage: trans.__('Could not unstage'),
      discard: trans.__('Could not discard'),
      commit: trans.__('Could not commit'),
      fetch: trans.__('Fetch failed'),
      pull: trans.__('Pull failed'),
      push: trans.__('Push failed'),
      checkout: trans.__('Could not switch branch'),
      branch: trans.__('Could not create the branch'),
      refresh: trans.__('Could not read the repository'),
      diff: trans.__('Could not show the diff'),
      trust: trans.__('Could not change the trust of the repository'),
      resolve: trans.__('Could not resolve the conflict'),
      operation: trans.__('Could not do that'),
      identity: trans.__('Could not save your identity')
    };

    // What trusting lets run, said before the user decides (as a workspace
    // trust prompt does).
    const confirmTrust = async (
      root: string,
      trust: IGitTrust
    ): Promise<boolean> => {
      const named = [
        ...trust.hooks.map(hook => trans.__('hook: %1', hook)),
        ...trust.programs.map(p => `${p.key} = ${p.value}`)
      ];
      const shown = named.slice(0, 12);
      const body = React.createElement(
        'div',
        { className: 'jp-TeraxGit-confirm jp-TeraxGit-trustDialog' },
        React.createElement(
          'p',
          null,
          trans.__(
            'Trusting %1 lets git run the programs this repository chooses: its hooks (when you commit, push, pull or switch branch), the filter drivers and fsmonitor its own configuration names (also when its status is read), and the signing, ssh and credential programs set in its configuration.',
            root
          )
        ),
        shown.length
          ? React.createElement(
              'ul',
              null,
              ...shown.map(item =>
                React.createElement('li', { key: item }, item)
              ),
              named.length > shown.length
                ? React.createElement(
                    'li',
                    { key: '…' },
                    trans.__('and %1 more', named.length - shown.length)
                  )
                : null
            )
          : null,
        React.createElement(
          'p',
          { className: 'jp-TeraxGit-confirm-warning' },
          trans.__(
            'Trust only a repository whose files and .git folder you control: a cloned project or an unpacked archive can name any program.'
          )
        )
      );
      const result = await showDialog({
        title: trans.__('Trust this repository?'),
        body,
        buttons: [
          Dialog.cancelButton({ label: trans.__('Keep restricted') }),
          Dialog.warnButton({ label: trans.__('Trust') })
        ],
        defaultButton: 0
      });
      return result.button.accept;
    };

    const confirmDiscard = async (
      confirmation: IGitDiscardConfirmation
    ): Promise<boolean> => {
      const { summary } = confirmation;
      const files = Array.isArray(summary.files) ? summary.files : [];
      const fileCount = Array.isArray(summary.files)
        ? summary.files.length
        : Number(summary.files) || 0;
      const shown = files.slice(0, 8);
      const body = React.createElement(
        'div',
        { className: 'jp-TeraxGit-confirm' },
        React.createElement(
          'p',
          null,
          summary.lines_lost > 0
            ? trans._n(
                '%1 changed line will be lost',
                '%1 changed lines will be lost',
                summary.lines_lost,
                summary.lines_lost
              ) +
                ' ' +
                trans._n('in %1 file.', 'in %1 files.', fileCount, fileCount)
            : trans._n(
                'The changes to %1 file will be lost.',
                'The changes to %1 files will be lost.',
                fileCount,
                fileCount
              )
        ),
        shown.length
          ? React.createElement(
              'ul',
              null,
              ...shown.map(file =>
                React.createElement('li', { key: file }, file)
              ),
              files.length > shown.length
                ? React.createElement(
                    'li',
                    { key: '…' },
                    trans.__('and %1 more', files.length - shown.length)
                  )
                : null
            )
          : null,
        React.createElement(
          'p',
          { className: 'jp-TeraxGit-confirm-warning' },
          trans.__('This cannot be undone.')
        )
      );
      const result = await showDialog({
        title: trans.__('Discard changes?'),
        body,
        buttons: [
          Dialog.cancelButton(),
          Dialog.warnButton({ label: trans.__('Discard') })
        ],
        defaultButton: 0
      });
      return result.button.accept;
    };

    const watcher = new FileWatcher(settings);
    const model = new GitModel({
      settings,
      watcher,
      confirmDiscard,
      confirmTrust,
      titles
    });

    const relativeToServer = (repositoryPath: string): string => {
      const relativeRoot = model.repository?.relative_root ?? '';
      return relativeRoot
        ? PathExt.join(relativeRoot, repositoryPath)
        : repositoryPath;
    };

    const openFile = (path: string): void =>
      void commands
        .execute('docmanager:open', { path: relativeToServer(path) })
        .catch(error => console.warn('Could not open', path, error));

    // The diff of the file clicked in the panel: one main-area tab, reused
    // (the sidebar is too narrow for code). Closing it closes the diff.
    let diffTab: MainAreaWidget<GitDiffView> | null = null;
    const syncDiffTitle = (): void => {
      if (!diffTab) {
        return;
      }
      const path = model.selected?.path;
      diffTab.title.label = path
        ? trans.__('Diff: %1', PathExt.basename(path))
        : trans.__('Diff');
      diffTab.title.caption = path ? trans.__('Changes of %1', path) : '';
    };
    model.changed.connect(syncDiffTitle);
    const showDiff = (): void => {
      if (!diffTab || diffTab.isDisposed) {
        const content = new GitDiffView({
          model,
          trans,
          host: { openFile }
        });
        const widget = new MainAreaWidget({ content });
        widget.id = 'terax-git-diff';
        widget.addClass('jp-TeraxGitDiff-tab');
        widget.title.icon = gitIcon;
        widget.title.closable = true;
        widget.toolbar.hide();
        widget.disposed.connect(() => {
          diffTab = null;
          if (model.selected) {
            model.select(null);
          }
        });
        diffTab = widget;
        syncDiffTitle();
      }
      if (!diffTab.isAttached) {
        shell.add(diffTab, 'main', { type: 'Git Diff' });
      }
      shell.activateById(diffTab.id);
    };

    const panel = new GitPanel({
      model,
      trans,
      translator: resolvedTranslator,
      icon: gitIcon,
      pushOff,
      readOnly,
      host: {
        openFile,
        showDiff,
        confirm: async (title, body, label) => {
          const result = await showDialog({
            title,
            body,
            buttons: [Dialog.cancelButton(), Dialog.warnButton({ label })],
            defaultButton: 0
          });
          return result.button.accept;
        },
        openHistory: () => void commands.execute(CommandIDs.history),
        lastMessage: async () => {
          const oid = model.status?.branch.oid;
          const root = model.repository?.root;
          if (!oid || !root) {
            return '';
          }
          return (await getCommit(root, oid, { settings })).message;
        }
      }
    });
    app.shell.add(panel, 'left', { rank: 200, type: 'Git' });
    restorer?.add(panel, panel.id);

    // Follow the folder of the file browser (the usual way to choose a
    // repository); the server root until it is there.
    const followFileBrowser = (): void => {
      let browser: IFileBrowserLike | null = null;
      if (labShell) {
        for (const widget of labShell.widgets('left')) {
          if (widget.id === 'filebrowser') {
            browser = widget as unknown as IFileBrowserLike;
            break;
          }
        }
      }
      const browserModel = browser?.model;
      const current = (): string =>
        typeof browserModel?.path === 'string' ? browserModel.path : '';
      model.setPath(current());
      browserModel?.pathChanged?.connect(() => model.setPath(current()));
    };
    void app.restored.then(followFileBrowser);

    // Changes inside .git (a commit from a terminal) raise no file events:
    // read the status again when the page comes back into view.
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && panel.isVisible) {
        void model.refresh();
      }
    });

    const historyTracker = new WidgetTracker<MainAreaWidget<HistoryView>>({
      namespace: HISTORY_NAMESPACE
    });

    const openHistory = async (
      path?: string
    ): Promise<MainAreaWidget<HistoryView> | null> => {
      let root = path;
      if (!root) {
        if (!model.repository) {
          await model.refresh(true);
        }
        root = model.repository?.root;
      }
      if (!root) {
        await showDialog({
          title: trans.__('No repository'),
          body: trans.__(
            'Open a folder of a git repository in the file browser first.'
          ),
          buttons: [Dialog.okButton()]
        });
        return null;
      }
      const existing = historyTracker.find(w => w.content.model.root === root);
      if (existing) {
        shell.activateById(existing.id);
        void existing.content.model.reload();
        existing.content.focusList();
        return existing;
      }
      const historyModel = new HistoryModel({ root, settings, pageSize });
      const content = new HistoryView({ model: historyModel, trans });
      const widget = new MainAreaWidget({ content });
      widget.id = `terax-git-history-${Math.random().toString(36).slice(2, 10)}`;
      widget.title.label = trans.__('History: %1', PathExt.basename(root));
      widget.title.caption = trans.__('Git history of %1', root);
      widget.title.icon = commitIcon;
      widget.title.closable = true;
      widget.disposed.connect(() => historyModel.dispose());
      const reload = (): void => void historyModel.reload();
      model.headChanged.connect(reload);
      widget.disposed.connect(() => model.headChanged.disconnect(reload));
      await historyTracker.add(widget);
      shell.add(widget, 'main', { type: 'Git History' });
      shell.activateById(widget.id);
      await historyModel.reload();
      content.focusList();
      return widget;
    };

    restorer
      ?.restore(historyTracker, {
        command: CommandIDs.history,
        args: widget => ({ path: widget.content.model.root }),
        name: widget => widget.content.model.root
      })
      .catch(reason => {
        console.error('Could not restore the Git history.', reason);
      });

    const showPanel = (): void => {
      shell.activateById(panel.id);
    };

    commands.addCommand(CommandIDs.openPanel, {
      label: trans.__('Git'),
      caption: trans.__('Show the Git panel'),
      icon: args => (args.isPalette ? undefined : gitIcon),
      execute: () => {
        showPanel();
        panel.focusCommit();
      }
    });
    commands.addCommand(CommandIDs.history, {
      label: trans.__('Git History'),
      caption: trans.__('Show the commit graph of the repository'),
      icon: args => (args.isPalette ? undefined : commitIcon),
      describedBy: {
        args: {
          type: 'object',
          properties: {
            path: {
              type: 'string',
              description: 'Absolute path of the repository work tree.'
            }
          }
        }
      },
      execute: args =>
        openHistory(typeof args.path === 'string' ? args.path : undefined)
    });
    commands.addCommand(CommandIDs.commit, {
      label: trans.__('Commit…'),
      caption:
        readOnly ?? trans.__('Write a commit message for the staged changes'),
      isEnabled: () => !readOnly,
      execute: () => {
        showPanel();
        panel.focusCommit();
      }
    });
    commands.addCommand(CommandIDs.switchBranch, {
      label: trans.__('Switch Branch…'),
      caption: readOnly ?? trans.__('Switch to another branch or create one'),
      isEnabled: () => !readOnly && model.state === 'ready',
      execute: () => {
        showPanel();
        panel.openSwitcher();
      }
    });
    const remoteCommand = (
      id: string,
      operation: 'fetch' | 'pull' | 'push',
      label: string
    ): void => {
      const off = readOnly ?? (operation === 'push' ? pushOff : null);
      commands.addCommand(id, {
        label: off ? trans.__('%1 (%2)', label, off.replace(/\.$/, '')) : label,
        caption: off ?? undefined,
        isEnabled: () =>
          !off && model.state === 'ready' && !model.isBusy(operation),
        execute: () => model.remote(operation)
      });
    };
    remoteCommand(CommandIDs.fetch, 'fetch', trans.__('Git Fetch'));
    remoteCommand(CommandIDs.pull, 'pull', trans.__('Git Pull'));
    remoteCommand(CommandIDs.push, 'push', trans.__('Git Push'));
    commands.addCommand(CommandIDs.refresh, {
      label: trans.__('Refresh Git Status'),
      execute: () => model.refresh(true)
    });
    commands.addCommand(CommandIDs.trust, {
      label: () =>
        model.trust?.trusted
          ? trans.__('Stop Trusting This Repository')
          : trans.__('Trust This Repository…'),
      caption: trans.__(
        'Whether git may run the hooks and programs this repository names'
      ),
      isEnabled: () =>
        model.state === 'ready' &&
        !!model.trust?.can_change &&
        !model.isBusy('trust'),
      execute: () => model.setTrusted(!model.trust?.trusted)
    });

    for (const command of [
      CommandIDs.openPanel,
      CommandIDs.history,
      CommandIDs.commit,
      CommandIDs.switchBranch,
      CommandIDs.fetch,
      CommandIDs.pull,
      CommandIDs.push,
      CommandIDs.refresh,
      CommandIDs.trust
    ]) {
      palette?.addItem({ command, category: trans.__(PALETTE_CATEGORY) });
    }

    if (settingRegistry) {
      void settingRegistry
        .load(PLUGIN_ID)
        .then(loaded => {
          const apply = (): void => {
            pageSize = loaded.get('historyPageSize').composite as number;
          };
          apply();
          loaded.changed.connect(apply);
        })
        .catch(reason => {
          console.error(`Could not load the settings of ${PLUGIN_ID}.`, reason);
        });
    }
  }
};
