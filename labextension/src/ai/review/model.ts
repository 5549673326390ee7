/**
 * The state of one review: the approval, the two texts the merge view shows,
 * which hunks are accepted, and the decision once it is sent.
 */
import { ServerConnection } from '@jupyterlab/services';
import type { IDisposable } from '@lumino/disposable';
import { Signal, type ISignal } from '@lumino/signaling';

import {
  decide,
  eventsURL,
  getApproval,
  getSession,
  type IAiApproval,
  type IAiEvent,
  type IAiHunk
} from '../../api/ai';
import { readFile } from '../../api/fs';
import type { AiEventToolCallFinished } from '../../api/openapi';
import { TeraxAPIError } from '../../api/request';
import {
  applyAll,
  decisionFor,
  HunkError,
  switchHunks
} from '../../common/ai/hunks';
import {
  type INotebookChange,
  notebookChangeOf
} from '../../common/ai/notebookchange';
import { sessionEvents } from '../events';
import { applyInOpenNotebook } from './notebookapply';
import {
  clearReviewSelection,
  reviewSelection,
  setReviewSelection
} from './selection';

/**
 * What the review can do with its approval: decide it (`pending`), choose
 * hunks for a plan that is applied as a batch (`queued`), or only show it.
 */
export type ReviewMode = 'loading' | 'pending' | 'queued' | 'decided' | 'error';

/**
 * The two sides of the merge view.
 */
export interface IReviewTexts {
  /** The file before the change. */
  original: string;
  /** The file with every hunk of the proposal. */
  proposed: string;
  /** The file did not exist before (write_file creates it). */
  isNew: boolean;
  /** The change is on disk: `original` was rebuilt from the file. */
  written: boolean;
}

/**
 * Why a review cannot show its change.
 */
export type ReviewProblem =
  | { kind: 'not_an_edit' }
  | { kind: 'binary' }
  | { kind: 'load'; message: string }
  /** The file changed since the proposal: the hunks do not fit it. */
  | { kind: 'changed'; line: number };

/**
 * What became of an Apply.
 */
export interface IReviewOutcome {
  status: 'applied' | 'denied' | 'failed' | 'sent';
  /** Hunks written and proposed, when the server says. */
  applied?: number;
  total?: number;
  /** The server's message (an error's text). */
  message?: string;
}

/**
 * How long Apply waits for the agent to write the file.
 */
const WRITE_TIMEOUT_MS = 30_000;
const MAX_RECONNECTS = 5;

/**
 * The model of a review tab.
 */
export class ReviewModel implements IDisposable {
  constructor(options: ReviewModel.IOptions) {
    this.approvalId = options.approvalId;
    this._settings = options.settings ?? ServerConnection.makeSettings();
  }

  readonly approvalId: string;

  /**
   * Emits when anything shown changes.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Emits the path of the file once the agent wrote it.
   */
  get fileWritten(): ISignal<this, string> {
    return this._fileWritten;
  }

  get mode(): ReviewMode {
    return this._mode;
  }

  get approval(): IAiApproval | null {
    return this._approval;
  }

  get path(): string {
    return this._approval?.proposal.path ?? '';
  }

  get hunks(): readonly IAiHunk[] {
    return this._approval?.proposal.hunks ?? [];
  }

  get texts(): IReviewTexts | null {
    return this._texts;
  }

  /**
   * The change set, when the approval is a notebook edit.
   */
  get notebookChange(): INotebookChange | null {
    return this._approval ? notebookChangeOf(this._approval.proposal) : null;
  }

  get problem(): ReviewProblem | null {
    return this._problem;
  }

  get outcome(): IReviewOutcome | null {
    return this._outcome;
  }

  /**
   * A decision is being sent or the write awaited.
   */
  get busy(): boolean {
    return this._busy;
  }

  /**
   * Whether the hunk choice can change.
   */
  get editable(): boolean {
    return (this._mode === 'pending' || this._mode === 'queued') && !this._busy;
  }

  get canApply(): boolean {
    return this._mode === 'pending' && !this._busy && this._approval !== null;
  }

  get accepted(): ReadonlySet<number> {
    return this._accepted;
  }

  isAccepted(hunk: number): boolean {
    return this._accepted.has(hunk);
  }

  /**
   * Accept or reject one hunk.
   */
  setAccepted(hunk: number, accepted: boolean): void {
    if (!this.editable || this._accepted.has(hunk) === accepted) {
      return;
    }
    const next = new Set(this._accepted);
    if (accepted) {
      next.add(hunk);
    } else {
      next.delete(hunk);
    }
    this._setSelection(next);
  }

  acceptAll(): void {
    if (this.editable) {
      this._setSelection(new Set(this.hunks.map(h => h.index)));
    }
  }

  rejectAll(): void {
    if (this.editable) {
      this._setSelection(new Set());
    }
  }

  /**
   * The decision Apply sends for the current choice.
   */
  decision(): ReturnType<typeof decisionFor> {
    return decisionFor(this.hunks.length, this._accepted);
  }

  /**
   * Fetch the approval and the file; keeps the outcome of an Apply.
   */
  async load(): Promise<void> {
    const generation = ++this._generation;
    try {
      const approval = await getApproval(this.approvalId);
      const { texts, problem, accepted } = await this._prepare(approval);
      if (generation !== this._generation || this._disposed) {
        return;
      }
      this._approval = approval;
      this._texts = texts;
      this._problem = problem;
      this._accepted = accepted;
      this._mode = modeOf(approval);
      if (this._mode === 'pending' || this._mode === 'queued') {
        setReviewSelection(this.approvalId, accepted);
        this._listen(approval.session_id);
      } else {
        clearReviewSelection(this.approvalId);
        this._closeSocket();
      }
    } catch (error) {
      if (generation !== this._generation || this._disposed) {
        return;
      }
      this._mode = 'error';
      this._problem = { kind: 'load', message: messageOf(error) };
    }
    this._changed.emit();
  }

  /**
   * Send the decision: the accepted hunks (all: approve; none: deny); then
   * wait for the agent to write the file and show the approval as decided.
   */
  async apply(): Promise<void> {
    const approval = this._approval;
    if (!approval || !this.canApply) {
      return;
    }
    this._busy = true;
    this._outcome = null;
    this._changed.emit();
    const decision = this.decision();
    const callId = approval.call_id;
    let written: Promise<AiEventToolCallFinished | null> | null = null;
    let inDocument = false;
    try {
      if (decision.decision === 'approve') {
        // A notebook open in Lab takes the change itself, keeping unsaved
        // edits; a conflict there stops before anything is decided.
        const hunks = 'hunks' in decision ? decision.hunks : null;
        inDocument = (await applyInOpenNotebook(approval, hunks)).open;
      }
      if (decision.decision === 'approve' && callId) {
        // Listen before deciding, so that the write cannot be missed.
        if (this._lastSeq === null) {
          this._lastSeq = (await getSession(approval.session_id)).last_seq;
          this._listen(approval.session_id);
        }
        written = this._waitForCall(callId);
      }
      const decided = await decide(this.approvalId, decision);
      if (decision.decision === 'deny') {
        this._outcome = { status: 'denied' };
      } else if (!written) {
        this._outcome = { status: 'sent' };
      } else {
        this._approval = { ...approval, ...decided };
        this._changed.emit();
        this._outcome = outcomeOf(await written);
        if (
          this._outcome.status === 'applied' &&
          approval.proposal.path &&
          !inDocument
        ) {
          this._fileWritten.emit(approval.proposal.path);
        }
      }
    } catch (error) {
      this._outcome = { status: 'failed', message: messageOf(error) };
    } finally {
      this._waiters.clear();
      this._busy = false;
    }
    await this.load();
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._closeSocket();
    for (const waiter of this._waiters.values()) {
      waiter(null);
    }
    this._waiters.clear();
    Signal.clearData(this);
  }

  private _setSelection(next: Set<number>): void {
    this._accepted = next;
    setReviewSelection(this.approvalId, next);
    this._changed.emit();
  }

  /**
   * The texts of the merge view and the choice it starts with.
   */
  private async _prepare(approval: IAiApproval): Promise<{
    texts: IReviewTexts | null;
    problem: ReviewProblem | null;
    accepted: Set<number>;
  }> {
    const proposal = approval.proposal;
    const hunks = proposal.hunks ?? [];
    const all = hunks.map(h => h.index);
    const accepted = new Set(acceptedOf(approval, all));
    if (notebookChangeOf(proposal)) {
      // Shown cell by cell from the proposal; the notebook is not read here.
      return { texts: null, problem: null, accepted };
    }
    if (
      !proposal.path ||
      (proposal.kind !== 'edit' && proposal.kind !== 'write')
    ) {
      return { texts: null, problem: { kind: 'not_an_edit' }, accepted };
    }
    let current = '';
    let exists = true;
    try {
      const file = await readFile(proposal.path, { settings: this._settings });
      if (file.binary) {
        return { texts: null, problem: { kind: 'binary' }, accepted };
      }
      current = file.content;
    } catch (error) {
      if (!(error instanceof TeraxAPIError) || error.response.status !== 404) {
        throw error;
      }
      exists = false;
    }
    try {
      // Not written yet (pending, queued, denied, or written elsewhere).
      const proposed = applyAll(current, hunks);
      return {
        texts: { original: current, proposed, isNew: !exists, written: false },
        problem: null,
        accepted
      };
    } catch (error) {
      if (!(error instanceof HunkError)) {
        throw error;
      }
      const decided =
        approval.status === 'approved' ||
        approval.status === 'partially_approved';
      if (decided) {
        // Written: take the accepted hunks out again to get the original.
        try {
          const original = switchHunks(current, hunks, accepted, []);
          return {
            texts: {
              original,
              proposed: applyAll(original, hunks),
              isNew: original === '' && hunks.every(h => h.old_lines === 0),
              written: true
            },
            problem: null,
            accepted
          };
        } catch (inner) {
          if (!(inner instanceof HunkError)) {
            throw inner;
          }
        }
      }
      return {
        texts: null,
        problem: { kind: 'changed', line: error.line },
        accepted
      };
    }
  }

  /**
   * Follow the session's events: another client may decide the approval,
   * the run may end (it expires), and Apply waits for the write.
   */
  private _listen(sessionId: string): void {
    if (this._socket || this._subscription || this._disposed) {
      return;
    }
    // The panel's socket of this session, when it follows it; else our own.
    this._subscription = sessionEvents.subscribe(
      sessionId,
      frame => this._onSharedFrame(frame),
      () => {
        this._subscription = null;
        this._listenOwn(sessionId);
      }
    );
    if (!this._subscription) {
      this._listenOwn(sessionId);
    }
  }

  /**
   * A frame of the panel's socket: it may replay events seen already.
   */
  private _onSharedFrame(frame: string): void {
    const event = JSON.parse(frame) as IAiEvent;
    if (
      event.type !== 'resync' &&
      typeof event.seq === 'number' &&
      this._lastSeq !== null &&
      event.seq <= this._lastSeq
    ) {
      return;
    }
    this._onEvent(event);
  }

  /**
   * Open a socket of our own (no socket of the page follows the session).
   */
  private _listenOwn(sessionId: string): void {
    if (this._socket || this._disposed) {
      return;
    }
    const connect = async (): Promise<void> => {
      if (this._lastSeq === null) {
        this._lastSeq = (await getSession(sessionId)).last_seq;
      }
      if (this._disposed || this._socket || this._subscription) {
        return;
      }
      const socket = new this._settings.WebSocket(
        eventsURL(sessionId, this._lastSeq, this._settings)
      );
      this._socket = socket;
      socket.onopen = () => {
        this._reconnects = 0;
      };
      socket.onmessage = message => {
        this._onEvent(JSON.parse(String(message.data)) as IAiEvent);
      };
      socket.onclose = () => {
        if (this._socket !== socket) {
          return;
        }
        this._socket = null;
        if (this._disposed || this._reconnects >= MAX_RECONNECTS) {
          return;
        }
        this._reconnects += 1;
        const delay = Math.min(8000, 250 * 2 ** this._reconnects);
        this._retry = setTimeout(() => {
          this._retry = null;
          void connect().catch(() => undefined);
        }, delay);
      };
    };
    void connect().catch(error => {
      console.warn('Terax: could not follow the AI session.', error);
    });
  }

  private _closeSocket(): void {
    if (this._retry !== null) {
      clearTimeout(this._retry);
      this._retry = null;
    }
    this._subscription?.dispose();
    this._subscription = null;
    const socket = this._socket;
    this._socket = null;
    socket?.close();
  }

  private _onEvent(event: IAiEvent): void {
    if (typeof event.seq === 'number') {
      this._lastSeq = Math.max(this._lastSeq ?? 0, event.seq);
    }
    switch (event.type) {
      case 'tool_call_finished': {
        const waiter = this._waiters.get(event.call_id);
        if (waiter) {
          this._waiters.delete(event.call_id);
          waiter(event);
        }
        return;
      }
      case 'approval_resolved':
      case 'approval_expired': {
        const id =
          event.type === 'approval_resolved'
            ? event.approval.id
            : event.approval_id;
        if (id === this.approvalId && !this._busy) {
          void this.load();
        }
        return;
      }
      case 'plan_applied':
      case 'plan_discarded':
      case 'resync':
      case 'deleted':
        if (!this._busy) {
          void this.load();
        }
        return;
      default:
        return;
    }
  }

  private _waitForCall(
    callId: string
  ): Promise<AiEventToolCallFinished | null> {
    return new Promise(resolve => {
      const timer = setTimeout(() => {
        this._waiters.delete(callId);
        resolve(null);
      }, WRITE_TIMEOUT_MS);
      this._waiters.set(callId, event => {
        clearTimeout(timer);
        resolve(event);
      });
    });
  }

  private _settings: ServerConnection.ISettings;
  private _approval: IAiApproval | null = null;
  private _texts: IReviewTexts | null = null;
  private _problem: ReviewProblem | null = null;
  private _outcome: IReviewOutcome | null = null;
  private _mode: ReviewMode = 'loading';
  private _accepted: Set<number> = new Set();
  private _busy = false;
  private _generation = 0;
  private _disposed = false;
  private _socket: WebSocket | null = null;
  private _subscription: IDisposable | null = null;
  private _retry: ReturnType<typeof setTimeout> | null = null;
  private _reconnects = 0;
  private _lastSeq: number | null = null;
  private _waiters = new Map<
    string,
    (event: AiEventToolCallFinished | null) => void
  >();
  private _changed = new Signal<this, void>(this);
  private _fileWritten = new Signal<this, string>(this);
}

/**
 * The namespace of {@link ReviewModel}.
 */
export namespace ReviewModel {
  export interface IOptions {
    approvalId: string;
    settings?: ServerConnection.ISettings;
  }
}

function modeOf(approval: IAiApproval): ReviewMode {
  switch (approval.status) {
    case 'pending':
      return 'pending';
    case 'queued':
      return 'queued';
    default:
      return 'decided';
  }
}

/**
 * The hunks a review starts with: what was decided, else what this page
 * chose before, else all of them.
 */
function acceptedOf(approval: IAiApproval, all: number[]): number[] {
  switch (approval.status) {
    case 'pending':
    case 'queued':
      return reviewSelection(approval.id) ?? all;
    case 'approved':
      return all;
    case 'partially_approved':
      return approval.decision?.hunks ?? all;
    default:
      return [];
  }
}

function outcomeOf(event: AiEventToolCallFinished | null): IReviewOutcome {
  if (!event) {
    return { status: 'sent' };
  }
  const data = event.data;
  const applied =
    typeof data.hunks_applied === 'number' ? data.hunks_applied : undefined;
  const total =
    typeof data.hunks_total === 'number' ? data.hunks_total : undefined;
  if (event.is_error || event.status === 'error') {
    return {
      status: 'failed',
      message: event.content || undefined
    };
  }
  return { status: 'applied', applied, total };
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    return error.message;
  }
  return String(error);
}
