/**
 * The Git side panel: branch and remote bar, commit box, the changes
 * grouped as git sees them; the file clicked opens its diff in a main-area
 * tab (difftab.tsx).
 */
import type { ITranslator, TranslationBundle } from '@jupyterlab/translation';
import {
  caretDownIcon,
  caretRightIcon,
  historyIcon,
  type LabIcon,
  linkIcon,
  refreshIcon,
  SidePanel,
  ToolbarButton,
  UseSignal
} from '@jupyterlab/ui-components';
import { ReactWidget } from '@jupyterlab/ui-components';
import { Panel, Widget } from '@lumino/widgets';
import * as React from 'react';

import type { IGitStatus, IGitStatusEntry } from '../api/git';
import {
  type GroupId,
  groupStatus,
  headLabel,
  messageSubject,
  pushPlan,
  splitEntryPath,
  statusCode
} from '../common/git/status';
import { BranchSwitcher } from './branches';
import type { GitOperationAction } from '../api/git';
import { CSS, DiffTabCSS } from './css';
import {
  branchIcon,
  discardIcon,
  fetchIcon,
  pullIcon,
  pushIcon,
  stageIcon,
  unstageIcon
} from './icons';
import type { GitModel } from './model';
import { lockIcon } from '../policy/icons';
import { CSS as POLICY_CSS } from '../policy/css';

/**
 * What the panel asks of the application.
 */
export interface IGitPanelHost {
  /** Open a repository file in an editor. */
  openFile(repositoryPath: string): void;
  /** Open the History panel. */
  openHistory(): void;
  /** The last commit's message, for amending. */
  lastMessage(): Promise<string>;
  /** Show the diff tab (the model's open file). */
  showDiff(): void;
  /** Ask before something that loses work; resolves true to go ahead. */
  confirm(title: string, body: string, label: string): Promise<boolean>;
}

/**
 * The side panel.
 */
export class GitPanel extends SidePanel {
  constructor(options: GitPanel.IOptions) {
    super({ content: new Panel(), translator: options.translator });
    const { trans, model } = options;
    this.model = model;
    this.id = 'terax-git';
    this.addClass(CSS.panel);
    this.title.icon = options.icon;
    this.title.caption = trans.__('Git');

    const heading = new Widget({ node: document.createElement('h2') });
    heading.node.textContent = trans.__('Git');
    heading.addClass(CSS.title);
    this.header.addWidget(heading);

    this.toolbar.addItem(
      'history',
      new ToolbarButton({
        icon: historyIcon,
        tooltip: trans.__('Show History (Alt+Shift+H)'),
        onClick: () => options.host.openHistory()
      })
    );
    this.toolbar.addItem(
      'refresh',
      new ToolbarButton({
        icon: refreshIcon,
        tooltip: trans.__('Refresh'),
        onClick: () => void model.refresh(true)
      })
    );

    this._view = new GitView(options);
    this.addWidget(this._view);
  }

  readonly model: GitModel;

  /**
   * Focus the commit message.
   */
  focusCommit(): void {
    this._view.focusCommit();
  }

  /**
   * Open the branch switcher.
   */
  openSwitcher(): void {
    this._view.setSwitcher(true);
  }

  protected override onAfterShow(): void {
    // Changes inside .git (a commit from a terminal) raise no file events.
    void this.model.refresh();
  }

  private readonly _view: GitView;
}

/**
 * A namespace for GitPanel statics.
 */
export namespace GitPanel {
  export interface IOptions {
    model: GitModel;
    trans: TranslationBundle;
    translator: ITranslator;
    icon: LabIcon;
    host: IGitPanelHost;
    /** Why push is off (the administrator's policy), or null. */
    pushOff?: string | null;
    /** Why nothing can change (a read-only server), or null. */
    readOnly?: string | null;
  }
}

class GitView extends ReactWidget {
  constructor(options: GitPanel.IOptions) {
    super();
    this._options = options;
    this.addClass(CSS.view);
  }

  focusCommit(): void {
    const focus = (): void =>
      this.node
        .querySelector<HTMLTextAreaElement>(`.${CSS.commitInput}`)
        ?.focus();
    focus();
    // Rendered after the next update when the panel was just shown.
    requestAnimationFrame(focus);
  }

  setSwitcher(open: boolean): void {
    if (open && !this._switcher) {
      void this._options.model.loadBranches();
    }
    this._switcher = open;
    this.update();
  }

  protected override render(): JSX.Element {
    const { model } = this._options;
    return (
      <UseSignal signal={model.changed} initialSender={model}>
        {() => (
          <GitComponent
            {...this._options}
            switcher={this._switcher}
            onSwitcher={open => this.setSwitcher(open)}
          />
        )}
      </UseSignal>
    );
  }

  private readonly _options: GitPanel.IOptions;
  private _switcher = false;
}

interface IGitProps extends GitPanel.IOptions {
  switcher: boolean;
  onSwitcher: (open: boolean) => void;
}

function GitComponent(props: IGitProps): JSX.Element {
  const { model, trans } = props;

  if (model.state === 'none') {
    return (
      <div className={CSS.message}>
        <p>
          {model.noneReason
            ? model.noneReason
            : model.path
              ? trans.__('“%1” is not inside a git repository.', model.path)
              : trans.__('The workspace folder is not a git repository.')}
        </p>
        <p>
          {trans.__(
            'Open a folder of a repository in the file browser to see its changes here.'
          )}
        </p>
      </div>
    );
  }
  if (model.state === 'error' || !model.status) {
    return (
      <div className={CSS.message}>
        {model.error ? (
          <div className={CSS.alert} role="alert">
            <strong>{model.error.title}</strong> {model.error.message}
          </div>
        ) : (
          <p>{trans.__('Reading the repository…')}</p>
        )}
      </div>
    );
  }
  const remoteBusy =
    model.isBusy('fetch') || model.isBusy('pull') || model.isBusy('push');
  return (
    <div className={CSS.scroller}>
      {props.readOnly ? (
        <div className={POLICY_CSS.banner} data-policy="read_only" role="note">
          <lockIcon.react tag="span" />
          <span>
            <strong>{trans.__('Read-only')}</strong> · {props.readOnly}
          </span>
        </div>
      ) : null}
      <BranchBar {...props} />
      <TrustBar {...props} />
      <div
        className={CSS.progress}
        data-active={remoteBusy || model.isBusy('checkout') ? 'true' : 'false'}
        aria-hidden="true"
      />
      {model.error ? (
        <div
          className={CSS.alert}
          role="alert"
          data-reason={model.error.reason}
        >
          <div>
            <strong>{model.error.title}</strong>
          </div>
          <div className={`${CSS.alert}-text`}>{model.error.message}</div>
          <button
            type="button"
            className={`${CSS.alert}-close`}
            aria-label={trans.__('Dismiss')}
            title={trans.__('Dismiss')}
            onClick={() => model.dismissError()}
          >
            ×
          </button>
        </div>
      ) : null}
      {model.notice ? (
        <div className={CSS.notice} role="status">
          <pre>{model.notice}</pre>
          <button
            type="button"
            className={`${CSS.alert}-close`}
            aria-label={trans.__('Dismiss')}
            title={trans.__('Dismiss')}
            onClick={() => model.dismissNotice()}
          >
            ×
          </button>
        </div>
      ) : null}
      {model.skippedHooks ? (
        <div className={CSS.notice} role="status" data-kind="hooks-skipped">
          <div>
            {trans._n(
              'The %2 hook did not run: this repository is not trusted.',
              'The hooks %2 did not run: this repository is not trusted.',
              model.skippedHooks.hooks.length,
              model.skippedHooks.hooks.join(', ')
            )}
          </div>
          <button
            type="button"
            className={`${CSS.alert}-close`}
            aria-label={trans.__('Dismiss')}
            title={trans.__('Dismiss')}
            onClick={() => model.dismissNotice()}
          >
            ×
          </button>
        </div>
      ) : null}
      {model.status.index_locked ? (
        <div className={CSS.alert} role="alert" data-reason="index_locked">
          {trans.__(
            'Another git process is running (.git/index.lock exists). If none is, remove that file.'
          )}
        </div>
      ) : null}
      {model.status.operation ? <OperationBar {...props} /> : null}
      {props.readOnly ? null : <CommitBox {...props} />}
      <Changes {...props} />
    </div>
  );
}

function operationNote(
  operation: NonNullable<IGitStatus['operation']>,
  trans: IGitProps['trans']
): string {
  switch (operation) {
    case 'merge':
      return trans.__(
        'A merge is in progress: resolve the conflicts, stage them, then continue (or abort the merge).'
      );
    case 'rebase':
      return trans.__(
        'A rebase is in progress: resolve the conflicts, stage them, then continue (or skip this commit, or abort the rebase).'
      );
    case 'cherry-pick':
      return trans.__(
        'A cherry-pick is in progress: resolve the conflicts, stage them, then continue (or skip, or abort).'
      );
    case 'revert':
      return trans.__(
        'A revert is in progress: resolve the conflicts, stage them, then continue (or skip, or abort).'
      );
    case 'bisect':
      return trans.__(
        'A bisect is in progress: mark commits with git bisect good / bad in a terminal, or end it here.'
      );
  }
}

/**
 * The operation in progress, with its continue / skip / abort buttons.
 */
function OperationBar(props: IGitProps): JSX.Element {
  const { model, trans, host } = props;
  const status = model.status!;
  const operation = status.operation!;
  const conflicts = status.conflicted.length;
  const busy = model.isBusy();
  const names: Record<typeof operation, string> = {
    merge: trans.__('merge'),
    rebase: trans.__('rebase'),
    'cherry-pick': trans.__('cherry-pick'),
    revert: trans.__('revert'),
    bisect: trans.__('bisect')
  };
  const actions: GitOperationAction[] =
    operation === 'bisect'
      ? ['reset']
      : operation === 'merge'
        ? ['continue', 'abort']
        : ['continue', 'skip', 'abort'];
  const labels: Record<GitOperationAction, string> = {
    continue: trans.__('Continue'),
    skip: trans.__('Skip Commit'),
    abort: trans.__('Abort'),
    reset: trans.__('End Bisect')
  };
  const run = async (action: GitOperationAction): Promise<void> => {
    if (action === 'abort' || action === 'skip') {
      const ok = await host.confirm(
        action === 'abort'
          ? trans.__('Abort the %1?', names[operation])
          : trans.__('Skip this commit?'),
        action === 'abort'
          ? trans.__(
              'The branch goes back to where it was before the %1; conflict resolutions made so far are lost.',
              names[operation]
            )
          : trans.__(
              'The commit being applied is left out, with the resolutions made to it.'
            ),
        labels[action]
      );
      if (!ok) {
        return;
      }
    }
    await model.operationAction(action);
  };
  return (
    <div
      className={`${CSS.alert} ${DiffTabCSS.operationBar}`}
      role="status"
      data-reason="operation"
      data-operation={operation}
    >
      <div>{operationNote(operation, trans)}</div>
      <div className={`${DiffTabCSS.operationBar}-actions`}>
        {actions.map(action => {
          const blocked = action === 'continue' && conflicts > 0;
          return (
            <button
              key={action}
              type="button"
              className={`${DiffTabCSS.operationBar}-button`}
              data-action={action}
              data-kind={action === 'continue' ? 'primary' : undefined}
              disabled={busy || blocked}
              title={
                blocked
                  ? trans._n(
                      'Resolve the %1 conflicted file first',
                      'Resolve the %1 conflicted files first',
                      conflicts,
                      conflicts
                    )
                  : `git ${operation === 'bisect' ? 'bisect reset' : `${operation} --${action}`}`
              }
              onClick={() => void run(action)}
            >
              {labels[action]}
            </button>
          );
        })}
      </div>
    </div>
  );
}

/**
 * user.name and user.email, asked for when a commit failed without them.
 */
function IdentityForm(props: IGitProps & { onSaved: () => void }): JSX.Element {
  const { model, trans } = props;
  const [name, setName] = React.useState('');
  const [email, setEmail] = React.useState('');
  const [global, setGlobal] = React.useState(false);
  const valid = !!name.trim() && /^[^\s<>@]+@[^\s<>]+$/.test(email.trim());
  const save = async (): Promise<void> => {
    if (!valid) {
      return;
    }
    if (
      await model.saveIdentity(
        name.trim(),
        email.trim(),
        global ? 'global' : 'local'
      )
    ) {
      props.onSaved();
    }
  };
  return (
    <form
      className={DiffTabCSS.identity}
      aria-label={trans.__('Your git identity')}
      onSubmit={event => {
        event.preventDefault();
        void save();
      }}
    >
      <div className={`${DiffTabCSS.identity}-text`}>
        {trans.__(
          'git needs your name and email to record as the author of commits.'
        )}
      </div>
      <input
        type="text"
        data-field="name"
        placeholder={trans.__('Name')}
        aria-label={trans.__('Name')}
        autoComplete="name"
        value={name}
        onChange={event => setName(event.currentTarget.value)}
      />
      <input
        type="email"
        data-field="email"
        placeholder={trans.__('Email')}
        aria-label={trans.__('Email')}
        autoComplete="email"
        value={email}
        onChange={event => setEmail(event.currentTarget.value)}
      />
      <label
        title={trans.__(
          'Saved in your own git configuration (~/.gitconfig) instead of this repository'
        )}
      >
        <input
          type="checkbox"
          data-option="global"
          checked={global}
          onChange={event => setGlobal(event.currentTarget.checked)}
        />
        {trans.__('Use for all my repositories')}
      </label>
      <button
        type="submit"
        className={CSS.commitButton}
        disabled={!valid || model.isBusy('identity')}
      >
        {trans.__('Save and Commit')}
      </button>
    </form>
  );
}

function BranchBar(props: IGitProps): JSX.Element {
  const { model, trans } = props;
  const status = model.status!;
  const branch = status.branch;
  const head = headLabel(branch);
  const remotes = (model.repository?.remotes ?? []).map(r => r.name);
  const plan = pushPlan(branch, remotes);
  const pushOff = props.pushOff ?? null;
  const headText =
    head.kind === 'detached'
      ? trans.__('HEAD detached at %1', head.text)
      : head.text;
  let pushTitle: string;
  switch (plan.kind) {
    case 'set-upstream':
      pushTitle = trans.__(
        'Push “%1” to %2 and set it as upstream (%2/%1)',
        plan.branch,
        plan.remote
      );
      break;
    case 'push':
      pushTitle = trans._n(
        'Push %1 commit to %2',
        'Push %1 commits to %2',
        plan.ahead,
        plan.upstream
      );
      break;
    case 'up-to-date':
      pushTitle = trans.__(
        'Nothing to push: up to date with %1',
        plan.upstream
      );
      break;
    default:
      pushTitle = branch.detached
        ? trans.__('Cannot push a detached HEAD')
        : trans.__('No remote to push to');
  }
  const noRemote = remotes.length === 0;
  const pullTitle = branch.upstream
    ? branch.behind
      ? trans._n(
          'Pull %1 commit from %2 (fast-forward)',
          'Pull %1 commits from %2 (fast-forward)',
          branch.behind,
          branch.upstream
        )
      : trans.__('Pull from %1 (fast-forward)', branch.upstream)
    : trans.__('This branch has no upstream to pull from');
  return (
    <div className={CSS.branchBar}>
      <div className={`${CSS.branchBar}-row`}>
        <button
          type="button"
          className={CSS.branchButton}
          data-kind={head.kind}
          aria-haspopup="dialog"
          aria-expanded={props.switcher}
          title={trans.__('Switch branch (Alt+Shift+B)')}
          onClick={() => props.onSwitcher(!props.switcher)}
        >
          <branchIcon.react tag="span" />
          <span className={CSS.branchName}>{headText}</span>
          {head.kind === 'unborn' ? (
            <span className={CSS.upstream}>{trans.__('no commits yet')}</span>
          ) : null}
          <caretDownIcon.react tag="span" />
        </button>
        <div className={CSS.remoteBar}>
          <RemoteButton
            icon={fetchIcon}
            label={trans.__('Fetch')}
            title={
              noRemote
                ? trans.__('No remote configured')
                : trans.__('Fetch from all remotes')
            }
            busy={model.isBusy('fetch')}
            disabled={noRemote || model.isBusy() || !!props.readOnly}
            operation="fetch"
            onClick={() => void model.remote('fetch')}
          />
          <RemoteButton
            icon={pullIcon}
            label={trans.__('Pull')}
            title={pullTitle}
            count={branch.behind}
            busy={model.isBusy('pull')}
            disabled={!branch.upstream || model.isBusy() || !!props.readOnly}
            operation="pull"
            onClick={() => void model.remote('pull')}
          />
          <RemoteButton
            icon={pushIcon}
            label={trans.__('Push')}
            title={pushOff ? trans.__('Push: %1', pushOff) : pushTitle}
            count={branch.ahead}
            busy={model.isBusy('push')}
            disabled={
              plan.kind === 'unavailable' ||
              model.isBusy() ||
              !!pushOff ||
              !!props.readOnly
            }
            operation="push"
            marker={plan.kind === 'set-upstream' ? '*' : undefined}
            onClick={() => void model.remote('push')}
          />
        </div>
      </div>
      <div className={CSS.upstream} data-upstream={branch.upstream ?? ''}>
        {branch.upstream
          ? branch.ahead || branch.behind
            ? trans.__(
                '%1 · %2 ahead, %3 behind',
                branch.upstream,
                branch.ahead,
                branch.behind
              )
            : trans.__('%1 · up to date', branch.upstream)
          : plan.kind === 'set-upstream'
            ? trans.__(
                'No upstream · Push will publish to %1/%2',
                plan.remote,
                plan.branch
              )
            : noRemote
              ? trans.__('No remote')
              : trans.__('No upstream')}
      </div>
      {props.switcher ? (
        <BranchSwitcher
          branches={model.branches}
          trans={trans}
          onClose={() => props.onSwitcher(false)}
          onCheckout={name => {
            props.onSwitcher(false);
            void model.checkout(name);
          }}
          onCreate={name => {
            props.onSwitcher(false);
            void model.createBranch(name);
          }}
        />
      ) : null}
    </div>
  );
}

/**
 * What trusting the repository would change, when it names programs: untrusted
 * a bar with a Trust button; trusted a quieter line to revoke it.
 */
function TrustBar(props: IGitProps): JSX.Element | null {
  const { model, trans } = props;
  const trust = model.trust;
  if (!trust || (!trust.programs.length && !trust.hooks.length)) {
    return null;
  }
  const named = [
    ...trust.hooks.map(hook => trans.__('the %1 hook', hook)),
    ...trust.programs.map(program => program.key)
  ];
  const shown = named.slice(0, 4).join(', ');
  const more =
    named.length > 4 ? trans.__(' and %1 more', named.length - 4) : '';
  if (trust.trusted) {
    return (
      <div className={CSS.trust} data-trusted="true">
        <span className={`${CSS.trust}-text`}>
          {trust.source === 'admin'
            ? trans.__(
                'Trusted by the administrator: its hooks and filters run.'
              )
            : trans.__('Trusted: its hooks and filters run.')}
        </span>
        {trust.can_change ? (
          <button
            type="button"
            className={`${CSS.trust}-button`}
            disabled={model.isBusy('trust')}
            onClick={() => void model.setTrusted(false)}
          >
            {trans.__('Stop trusting')}
          </button>
        ) : null}
      </div>
    );
  }
  return (
    <div className={CSS.trust} data-trusted="false" role="note">
      <div className={`${CSS.trust}-text`}>
        <strong>{trans.__('Restricted mode:')}</strong>{' '}
        {trans.__(
          'git runs none of the programs this repository names (%1%2).',
          shown,
          more
        )}
      </div>
      {trust.can_change ? (
        <button
          type="button"
          className={`${CSS.trust}-button`}
          disabled={model.isBusy('trust')}
          onClick={() => void model.setTrusted(true)}
        >
          {trans.__('Trust…')}
        </button>
      ) : null}
    </div>
  );
}

function RemoteButton(props: {
  icon: LabIcon;
  label: string;
  title: string;
  operation: string;
  busy: boolean;
  disabled: boolean;
  count?: number;
  marker?: string;
  onClick: () => void;
}): JSX.Element {
  return (
    <button
      type="button"
      className={CSS.remoteButton}
      data-operation={props.operation}
      data-busy={props.busy ? 'true' : undefined}
      title={props.title}
      aria-label={props.title}
      disabled={props.disabled}
      onClick={props.onClick}
    >
      <props.icon.react tag="span" />
      {props.count ? (
        <span className={CSS.badge} data-operation={props.operation}>
          {props.count}
        </span>
      ) : null}
      {props.marker ? (
        <span className={CSS.badge} data-kind="marker">
          {props.marker}
        </span>
      ) : null}
    </button>
  );
}

function CommitBox(props: IGitProps): JSX.Element {
  const { model, trans, host } = props;
  const [message, setMessage] = React.useState('');
  const [amend, setAmend] = React.useState(false);
  const [signoff, setSignoff] = React.useState(false);
  const status = model.status!;
  const staged = status.staged.length;
  const branchName = status.branch.detached
    ? trans.__('detached HEAD')
    : (status.branch.head ?? '');
  const canCommit =
    !!messageSubject(message) &&
    (staged > 0 || amend) &&
    !model.isBusy('commit') &&
    status.conflicted.length === 0;
  const isMac = /Mac/.test(navigator.platform);
  const keyHint = isMac ? '⌘↩' : 'Ctrl+Enter';

  const doCommit = async (): Promise<void> => {
    if (!canCommit) {
      return;
    }
    const result = await model.commit(message, { amend, signoff });
    if (result) {
      setMessage('');
      setAmend(false);
    }
  };

  const onAmend = async (checked: boolean): Promise<void> => {
    setAmend(checked);
    if (checked && !message.trim()) {
      try {
        setMessage(await host.lastMessage());
      } catch {
        // Amending still works; the user types the message.
      }
    }
  };

  let buttonLabel = amend ? trans.__('Amend') : trans.__('Commit');
  if (model.isBusy('commit')) {
    buttonLabel = trans.__('Committing…');
  }
  let reason = '';
  if (status.conflicted.length) {
    reason = trans.__('Resolve the conflicts first');
  } else if (!staged && !amend) {
    reason = trans.__('Stage changes to commit');
  } else if (!messageSubject(message)) {
    reason = trans.__('Write a commit message');
  }

  return (
    <div className={CSS.commitBox}>
      {model.identityNeeded ? (
        <IdentityForm {...props} onSaved={() => void doCommit()} />
      ) : null}
      <textarea
        className={CSS.commitInput}
        rows={Math.min(8, Math.max(2, message.split('\n').length))}
        placeholder={
          branchName
            ? trans.__('Message (%1 to commit on “%2”)', keyHint, branchName)
            : trans.__('Message (%1 to commit)', keyHint)
        }
        aria-label={trans.__('Commit message')}
        spellCheck={true}
        value={message}
        onChange={event => setMessage(event.currentTarget.value)}
        onKeyDown={event => {
          if (
            event.key === 'Enter' &&
            (event.ctrlKey || event.metaKey) &&
            !event.altKey
          ) {
            event.preventDefault();
            event.stopPropagation();
            void doCommit();
          }
        }}
      />
      <div className={CSS.commitOptions}>
        <label title={trans.__('Replace the last commit with this one')}>
          <input
            type="checkbox"
            checked={amend}
            data-option="amend"
            onChange={event => void onAmend(event.currentTarget.checked)}
          />
          {trans.__('Amend')}
        </label>
        <label title={trans.__('Add a Signed-off-by line')}>
          <input
            type="checkbox"
            checked={signoff}
            data-option="signoff"
            onChange={event => setSignoff(event.currentTarget.checked)}
          />
          {trans.__('Sign-off')}
        </label>
        <button
          type="button"
          className={CSS.commitButton}
          disabled={!canCommit}
          title={reason || `${buttonLabel} (${keyHint})`}
          onClick={() => void doCommit()}
        >
          {buttonLabel}
        </button>
      </div>
    </div>
  );
}

function Changes(props: IGitProps): JSX.Element {
  const { model, trans } = props;
  const status = model.status!;
  const groups = groupStatus(status);
  const [collapsed, setCollapsed] = React.useState<Set<GroupId>>(new Set());
  if (!groups.length) {
    return (
      <div className={CSS.empty} data-clean="true">
        {trans.__('No changes. The working tree is clean.')}
      </div>
    );
  }
  const toggle = (id: GroupId): void => {
    const next = new Set(collapsed);
    if (next.has(id)) {
      next.delete(id);
    } else {
      next.add(id);
    }
    setCollapsed(next);
  };
  return (
    <div role="tree" aria-label={trans.__('Changes')}>
      {groups.map(group => (
        <Group
          key={group.id}
          {...props}
          id={group.id}
          entries={group.entries}
          collapsed={collapsed.has(group.id)}
          onToggle={() => toggle(group.id)}
        />
      ))}
    </div>
  );
}

function Group(
  props: IGitProps & {
    id: GroupId;
    entries: IGitStatusEntry[];
    collapsed: boolean;
    onToggle: () => void;
  }
): JSX.Element {
  const { model, trans, id, entries } = props;
  const titles: Record<GroupId, string> = {
    conflicted: trans.__('Merge Conflicts'),
    staged: trans.__('Staged Changes'),
    unstaged: trans.__('Changes'),
    untracked: trans.__('Untracked Files')
  };
  const paths = entries.map(e => e.path);
  const busy = model.isBusy();
  const Caret = props.collapsed ? caretRightIcon : caretDownIcon;
  return (
    <div className={CSS.group} data-group={id} role="group">
      <div
        className={CSS.groupHeader}
        role="treeitem"
        aria-expanded={!props.collapsed}
        tabIndex={0}
        onClick={props.onToggle}
        onKeyDown={event => {
          if (event.key === 'Enter' || event.key === ' ') {
            event.preventDefault();
            props.onToggle();
          }
        }}
      >
        <Caret.react tag="span" className={CSS.caret} />
        <span className={`${CSS.groupHeader}-title`}>{titles[id]}</span>
        <span className={CSS.actions}>
          {id === 'staged' ? (
            <ActionButton
              icon={unstageIcon}
              title={trans.__('Unstage All')}
              action="unstage-all"
              disabled={busy}
              onClick={() => void model.unstageFiles(paths)}
            />
          ) : null}
          {id === 'unstaged' || id === 'untracked' ? (
            <ActionButton
              icon={discardIcon}
              title={trans.__('Discard All')}
              action="discard-all"
              disabled={busy}
              onClick={() =>
                void model.discardFiles(
                  entries.filter(e => !e.submodule).map(e => e.path)
                )
              }
            />
          ) : null}
          {id !== 'staged' ? (
            <ActionButton
              icon={stageIcon}
              title={
                id === 'conflicted'
                  ? trans.__('Mark All Resolved (stage)')
                  : trans.__('Stage All')
              }
              action="stage-all"
              disabled={busy}
              onClick={() => void model.stageFiles(paths)}
            />
          ) : null}
        </span>
        <span className={CSS.count}>{entries.length}</span>
      </div>
      {props.collapsed
        ? null
        : entries.map(entry => (
            <FileRow key={entry.path} {...props} entry={entry} group={id} />
          ))}
    </div>
  );
}

function FileRow(
  props: IGitProps & { entry: IGitStatusEntry; group: GroupId }
): JSX.Element {
  const { model, trans, entry, group, host } = props;
  const { name, dir } = splitEntryPath(entry.path);
  const open =
    model.selected?.path === entry.path && model.selected.group === group;
  const busy = model.isBusy();
  const code = statusCode(entry.status);
  const statusTitles: Record<string, string> = {
    added: trans.__('Added'),
    modified: trans.__('Modified'),
    deleted: trans.__('Deleted'),
    renamed: trans.__('Renamed'),
    copied: trans.__('Copied'),
    typechange: trans.__('Type changed'),
    unmerged: trans.__('Conflicted'),
    untracked: trans.__('Untracked')
  };
  const canDiff = !entry.denied && !entry.submodule;
  const show = (): void => {
    model.open({ path: entry.path, group });
    host.showDiff();
  };
  return (
    <>
      <div
        className={CSS.file}
        role="treeitem"
        aria-selected={open}
        tabIndex={0}
        data-path={entry.path}
        data-status={entry.status}
        title={
          entry.old_path
            ? `${entry.old_path} → ${entry.path}`
            : entry.denied
              ? trans.__('%1 (protected: its content is not shown)', entry.path)
              : entry.path
        }
        onClick={() => canDiff && show()}
        onDoubleClick={() =>
          entry.status !== 'deleted' && host.openFile(entry.path)
        }
        onKeyDown={event => {
          if (event.target !== event.currentTarget) {
            return;
          }
          if (event.key === 'Enter' || event.key === ' ') {
            event.preventDefault();
            if (canDiff) {
              show();
            }
          }
        }}
      >
        <span
          className={CSS.fileName}
          data-deleted={entry.status === 'deleted'}
        >
          {name}
        </span>
        <span className={CSS.fileDir}>
          {/* The folder is cut at its start (rtl); its text stays left to right. */}
          <bdi className={CSS.ltrText}>
            {entry.old_path ? `${entry.old_path} → ` : ''}
            {dir}
          </bdi>
        </span>
        <span className={CSS.actions}>
          {entry.status !== 'deleted' ? (
            <ActionButton
              icon={linkIcon}
              title={trans.__('Open File')}
              action="open"
              onClick={() => host.openFile(entry.path)}
            />
          ) : null}
          {group === 'unstaged' || group === 'untracked' ? (
            <ActionButton
              icon={discardIcon}
              title={trans.__('Discard Changes')}
              action="discard"
              disabled={busy || entry.submodule}
              onClick={() => void model.discardFiles([entry.path])}
            />
          ) : null}
          {group === 'staged' ? (
            <ActionButton
              icon={unstageIcon}
              title={trans.__('Unstage')}
              action="unstage"
              disabled={busy}
              onClick={() => void model.unstageFiles([entry.path])}
            />
          ) : (
            <ActionButton
              icon={stageIcon}
              title={
                group === 'conflicted'
                  ? trans.__('Mark Resolved (stage)')
                  : trans.__('Stage')
              }
              action="stage"
              disabled={busy}
              onClick={() => void model.stageFiles([entry.path])}
            />
          )}
        </span>
        <span
          className={CSS.code}
          data-status={entry.status}
          title={statusTitles[entry.status] ?? entry.status}
        >
          {code}
        </span>
      </div>
    </>
  );
}

function ActionButton(props: {
  icon: LabIcon;
  title: string;
  action: string;
  disabled?: boolean;
  onClick: () => void;
}): JSX.Element {
  return (
    <button
      type="button"
      className={CSS.action}
      data-action={props.action}
      title={props.title}
      aria-label={props.title}
      disabled={props.disabled}
      onClick={event => {
        event.stopPropagation();
        props.onClick();
      }}
      onDoubleClick={event => event.stopPropagation()}
    >
      <props.icon.react tag="span" />
    </button>
  );
}
