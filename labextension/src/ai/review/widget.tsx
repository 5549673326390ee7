/**
 * The review tab of an AI edit: a header with the file, the approval's
 * status and the actions, the list of hunks to accept or reject, and the
 * merge view of the current file beside the proposed one.
 */
import type {
  IEditorLanguageRegistry,
  IEditorThemeRegistry
} from '@jupyterlab/codemirror';
import type { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import { Panel } from '@lumino/widgets';
import * as React from 'react';

import type { IAiApproval, IAiHunk } from '../../api/ai';
import { changedLines, hunkCounts } from '../../common/ai/hunks';
import { CSS } from './css';
import { ReviewMergeView } from './mergeview';
import type { IReviewOutcome, IReviewTexts, ReviewModel } from './model';
import { NotebookChangeList } from './notebookview';

export { CSS } from './css';

/**
 * The content of a review tab.
 */
export class ReviewPanel extends Panel {
  constructor(options: ReviewPanel.IOptions) {
    super();
    this.model = options.model;
    const trans = options.trans;
    this.addClass(CSS.panel);
    this.node.tabIndex = -1;

    this._header = new ViewWidget(() => (
      <ReviewHeader
        model={this.model}
        trans={trans}
        onApply={() => void this.apply()}
      />
    ));
    this._header.addClass(CSS.header);
    this.addWidget(this._header);

    const body = new Panel();
    body.addClass(CSS.body);
    this._list = new ViewWidget(() => (
      <HunkList
        model={this.model}
        trans={trans}
        active={this._active}
        onActivate={hunk => this.showHunk(hunk)}
      />
    ));
    this._list.addClass(CSS.list);
    this._cells = new ViewWidget(() => (
      <NotebookChangeList
        model={this.model}
        trans={trans}
        active={this._active}
        onActivate={hunk => this.showHunk(hunk)}
      />
    ));
    this._cells.addClass(CSS.cells + '-host');
    this._merge = new ReviewMergeView({
      trans,
      languages: options.languages,
      themes: options.themes
    });
    this._merge.setDark(options.dark ?? false);
    this._merge.hunkClicked.connect((_, hunk) => this.showHunk(hunk));
    body.addWidget(this._list);
    body.addWidget(this._cells);
    body.addWidget(this._merge);
    this.addWidget(body);

    this.model.changed.connect(this._onModelChanged, this);
  }

  readonly model: ReviewModel;

  /**
   * The hunk the keyboard commands act on (-1: none).
   */
  get activeHunk(): number {
    return this._active;
  }

  /**
   * The hunk of each chunk of the merge view (for tests).
   */
  get chunkHunks(): number[] {
    return this._merge.chunkHunks;
  }

  /**
   * Make a hunk the active one and scroll the merge view to it.
   */
  showHunk(hunk: number): void {
    if (!this.model.hunks.some(h => h.index === hunk)) {
      return;
    }
    this._active = hunk;
    this._refreshMarks();
    this._merge.scrollToHunk(hunk);
    this._list.update();
    this._cells.update();
    requestAnimationFrame(() =>
      this._cells.node
        .querySelector(`[data-hunk="${hunk}"]`)
        ?.scrollIntoView({ block: 'nearest' })
    );
  }

  /**
   * Move the active hunk by `delta` (wrapping).
   */
  step(delta: number): void {
    const hunks = this.model.hunks;
    if (!hunks.length) {
      return;
    }
    const at = hunks.findIndex(h => h.index === this._active);
    const next =
      at < 0
        ? delta > 0
          ? 0
          : hunks.length - 1
        : (at + delta + hunks.length) % hunks.length;
    this.showHunk(hunks[next].index);
  }

  /**
   * Accept or reject the active hunk, then go to the next one.
   */
  decideActive(accepted: boolean): void {
    if (this._active < 0 || !this.model.editable) {
      return;
    }
    this.model.setAccepted(this._active, accepted);
    const hunks = this.model.hunks;
    const at = hunks.findIndex(h => h.index === this._active);
    if (at >= 0 && at < hunks.length - 1) {
      this.showHunk(hunks[at + 1].index);
    }
  }

  async apply(): Promise<void> {
    await this.model.apply();
  }

  /**
   * Follow Lab's light or dark theme.
   */
  setDark(dark: boolean): void {
    this._merge.setDark(dark);
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.dispose();
    super.dispose();
  }

  private _onModelChanged(): void {
    const texts = this.model.texts;
    if (texts !== this._texts) {
      this._texts = texts;
      if (texts) {
        this._merge.show();
        this._merge.setContent({
          path: this.model.path,
          original: texts.original,
          proposed: texts.proposed,
          hunks: this.model.hunks,
          isNew: texts.isNew,
          written: texts.written
        });
        if (!this._shown) {
          this._shown = true;
          const first = this.model.hunks[0];
          if (first) {
            this._active = first.index;
          }
        }
      } else {
        this._merge.hide();
      }
    }
    if (this.model.notebookChange) {
      // Shown cell by cell: there is no one file to put side by side.
      this._merge.hide();
      if (!this._shown) {
        this._shown = true;
        this._active = this.model.hunks[0]?.index ?? -1;
      }
    }
    this._refreshMarks();
    this._header.update();
    this._list.update();
    this._cells.update();
  }

  private _refreshMarks(): void {
    const rejected = new Set(
      this.model.hunks
        .map(h => h.index)
        .filter(index => !this.model.isAccepted(index))
    );
    this._merge.setMarks(rejected, this._active);
  }

  private _active = -1;
  private _texts: IReviewTexts | null = null;
  private _shown = false;
  private _header: ViewWidget;
  private _list: ViewWidget;
  private _cells: ViewWidget;
  private _merge: ReviewMergeView;
}

/**
 * A React view rendered again on every `update()`.
 */
class ViewWidget extends ReactWidget {
  constructor(private readonly _render: () => JSX.Element) {
    super();
  }

  protected render(): JSX.Element {
    return this._render();
  }
}

/**
 * The namespace of {@link ReviewPanel}.
 */
export namespace ReviewPanel {
  export interface IOptions {
    model: ReviewModel;
    trans: TranslationBundle;
    languages?: IEditorLanguageRegistry | null;
    themes?: IEditorThemeRegistry | null;
    dark?: boolean;
  }
}

interface IViewProps {
  model: ReviewModel;
  trans: TranslationBundle;
}

/**
 * The status of an approval in words.
 */
function statusText(approval: IAiApproval, trans: TranslationBundle): string {
  switch (approval.status) {
    case 'pending':
      return trans.__('Waiting for your review');
    case 'queued':
      return trans.__('Queued in the plan');
    case 'approved':
      return trans.__('Approved');
    case 'partially_approved':
      return trans.__('Partially approved');
    case 'denied':
      return trans.__('Denied');
    case 'expired':
      return trans.__('Expired');
    case 'discarded':
      return trans.__('Discarded');
    default:
      return approval.status;
  }
}

function outcomeText(
  outcome: IReviewOutcome,
  path: string,
  trans: TranslationBundle
): string {
  switch (outcome.status) {
    case 'applied':
      return outcome.applied !== undefined && outcome.total !== undefined
        ? trans.__(
            'Applied %1 of %2 hunks to %3.',
            outcome.applied,
            outcome.total,
            path
          )
        : trans.__('Applied to %1.', path);
    case 'denied':
      return trans.__('Denied: nothing was written.');
    case 'sent':
      return trans.__('Decision sent; the agent writes the file.');
    default:
      return outcome.message
        ? trans.__('Not applied: %1', outcome.message)
        : trans.__('Not applied.');
  }
}

/**
 * The size of the change and the tool: `+2 −2 · 2 hunks · multi_edit`.
 */
function summaryText(model: ReviewModel, trans: TranslationBundle): string {
  const approval = model.approval;
  if (!approval) {
    return '';
  }
  let added = 0;
  let removed = 0;
  for (const hunk of model.hunks) {
    const counts = hunkCounts(hunk);
    added += counts.added;
    removed += counts.removed;
  }
  const parts = [
    `+${added} −${removed}`,
    trans._n('%1 hunk', '%1 hunks', model.hunks.length)
  ];
  if (model.texts?.isNew) {
    parts.push(trans.__('new file'));
  }
  parts.push(approval.tool);
  return parts.join(' · ');
}

function ReviewHeader(
  props: IViewProps & { onApply: () => void }
): JSX.Element {
  const { model, trans } = props;
  const approval = model.approval;
  const hunks = model.hunks;
  const accepted = hunks.filter(h => model.isAccepted(h.index)).length;
  const problem = model.problem;
  const notices: JSX.Element[] = [];

  if (model.mode === 'loading') {
    notices.push(
      <div key="loading" className={CSS.notice} aria-busy="true">
        {trans.__('Loading…')}
      </div>
    );
  }
  if (problem) {
    let text: string;
    switch (problem.kind) {
      case 'not_an_edit':
        text = trans.__('This approval is not a change to a file.');
        break;
      case 'binary':
        text = trans.__('The file is binary; there is no text to compare.');
        break;
      case 'changed':
        text = trans.__(
          'The file changed since this change was proposed (line %1 differs), so it cannot be applied. Deny it and ask the agent to read the file again.',
          problem.line
        );
        break;
      default:
        text = trans.__('Could not load the review: %1', problem.message);
    }
    notices.push(
      <div key="problem" className={CSS.notice} role="alert" data-kind="error">
        {text}
      </div>
    );
  }
  if (model.mode === 'queued') {
    notices.push(
      <div key="queued" className={CSS.notice} data-kind="info">
        {trans.__(
          'This change is part of a plan, which is applied as a whole from the AI panel. The hunks you accept here are used when the plan is applied.'
        )}
      </div>
    );
  }
  const outcome = model.outcome;
  if (outcome) {
    notices.push(
      <div
        key="outcome"
        className={CSS.notice}
        role={outcome.status === 'failed' ? 'alert' : 'status'}
        data-kind={outcome.status === 'failed' ? 'error' : 'success'}
        data-outcome={outcome.status}
      >
        {outcomeText(outcome, model.path, trans)}
      </div>
    );
  } else if (model.mode === 'decided' && approval) {
    notices.push(
      <div key="decided" className={CSS.notice} data-kind="info">
        {trans.__('This change was decided already; the review is read-only.')}
      </div>
    );
  }

  let applyLabel = trans.__('Apply');
  let applyHint = trans.__('Write the accepted hunks (%1)', 'Ctrl+Enter');
  if (hunks.length && accepted === 0) {
    applyLabel = trans.__('Deny Change');
    applyHint = trans.__('No hunk is accepted: deny the whole change');
  } else if (accepted < hunks.length) {
    applyLabel = trans.__('Apply %1 of %2 Hunks', accepted, hunks.length);
  }
  const editable = model.editable;

  return (
    <>
      <div className={CSS.titleRow}>
        <span className={CSS.path} title={model.path}>
          <bdi className={CSS.ltrText}>{model.path || trans.__('Review')}</bdi>
        </span>
        {approval ? (
          <span className={CSS.summary} title={approval.proposal.summary}>
            {summaryText(model, trans)}
          </span>
        ) : null}
        {approval ? (
          <span
            className={CSS.status}
            data-status={approval.status}
            aria-live="polite"
          >
            {statusText(approval, trans)}
          </span>
        ) : null}
        <span className={CSS.actions}>
          {hunks.length > 1 &&
          (model.mode === 'pending' || model.mode === 'queued') ? (
            <>
              <button
                type="button"
                className={CSS.button}
                data-action="accept-all"
                disabled={!editable}
                onClick={() => model.acceptAll()}
              >
                {trans.__('Accept All')}
              </button>
              <button
                type="button"
                className={CSS.button}
                data-action="reject-all"
                disabled={!editable}
                onClick={() => model.rejectAll()}
              >
                {trans.__('Reject All')}
              </button>
            </>
          ) : null}
          {model.mode === 'pending' || (model.busy && !outcome) ? (
            <button
              type="button"
              className={`${CSS.button} ${CSS.primary}`}
              data-action="apply"
              title={applyHint}
              disabled={!model.canApply}
              aria-busy={model.busy}
              onClick={props.onApply}
            >
              {model.busy ? trans.__('Applying…') : applyLabel}
            </button>
          ) : null}
        </span>
      </div>
      {notices}
      {!model.texts && !model.notebookChange && approval?.proposal.diff ? (
        <pre className={CSS.rawDiff} aria-label={trans.__('Proposed diff')}>
          {approval.proposal.diff}
        </pre>
      ) : null}
    </>
  );
}

function HunkList(
  props: IViewProps & {
    active: number;
    onActivate: (hunk: number) => void;
  }
): JSX.Element | null {
  const { model, trans } = props;
  const hunks = model.hunks;
  if (!hunks.length || !model.texts) {
    return null;
  }
  return (
    <ol aria-label={trans.__('Hunks')}>
      {hunks.map(hunk => (
        <HunkItem
          key={hunk.index}
          hunk={hunk}
          model={model}
          trans={trans}
          active={hunk.index === props.active}
          onActivate={props.onActivate}
        />
      ))}
    </ol>
  );
}

/**
 * Where a hunk changes the file: `line 2`, `lines 4–6`, `after line 9`.
 */
function whereText(hunk: IAiHunk, trans: TranslationBundle): string {
  const { first, last } = changedLines(hunk);
  if (last < first) {
    return first <= 1
      ? trans.__('at the start')
      : trans.__('after line %1', first - 1);
  }
  if (first === last) {
    return trans.__('line %1', first);
  }
  return trans.__('lines %1–%2', first, last);
}

function HunkItem(props: {
  hunk: IAiHunk;
  model: ReviewModel;
  trans: TranslationBundle;
  active: boolean;
  onActivate: (hunk: number) => void;
}): JSX.Element {
  const { hunk, model, trans } = props;
  const accepted = model.isAccepted(hunk.index);
  const { added, removed } = hunkCounts(hunk);
  const number = hunk.index + 1;
  const editable = model.editable;
  const classes = [CSS.hunk];
  if (props.active) {
    classes.push(CSS.active);
  }
  if (!accepted) {
    classes.push(CSS.rejected);
  }
  return (
    <li
      className={classes.join(' ')}
      data-hunk={hunk.index}
      data-state={accepted ? 'accepted' : 'rejected'}
      aria-current={props.active ? 'true' : undefined}
    >
      <button
        type="button"
        className={CSS.hunkGo}
        title={trans.__('Show hunk %1', number)}
        onClick={() => props.onActivate(hunk.index)}
      >
        <span className={CSS.hunkTitle}>{trans.__('Hunk %1', number)}</span>
        <span className={CSS.hunkMeta}>
          {whereText(hunk, trans)}
          <span className={CSS.added} aria-label={trans.__('%1 added', added)}>
            +{added}
          </span>
          <span
            className={CSS.removed}
            aria-label={trans.__('%1 removed', removed)}
          >
            −{removed}
          </span>
        </span>
      </button>
      <span
        className={CSS.choice}
        role="group"
        aria-label={trans.__('Hunk %1', number)}
      >
        <button
          type="button"
          className={CSS.choiceButton}
          data-action="accept"
          aria-pressed={accepted}
          disabled={!editable}
          onClick={() => model.setAccepted(hunk.index, true)}
        >
          {trans.__('Accept')}
        </button>
        <button
          type="button"
          className={CSS.choiceButton}
          data-action="reject"
          aria-pressed={!accepted}
          disabled={!editable}
          onClick={() => model.setAccepted(hunk.index, false)}
        >
          {trans.__('Reject')}
        </button>
      </span>
    </li>
  );
}
