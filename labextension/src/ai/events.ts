/**
 * One events socket per AI session on the page: the panel's live session
 * feeds the frames its socket receives, and a review of the same session
 * follows them instead of opening a second socket (it opens its own only
 * while no socket of the page follows the session).
 */
import { DisposableDelegate, type IDisposable } from '@lumino/disposable';

/**
 * Takes each frame (the text of one message) of the session's socket.
 */
export type FrameListener = (frame: string) => void;

/**
 * A socket that follows a session hands its frames on through this.
 */
export interface IEventFeed extends IDisposable {
  emit(frame: string): void;
}

interface ISubscriber {
  listener: FrameListener;
  /** The last feed of the session stopped. */
  ended: () => void;
}

interface ISessionEntry {
  feeds: Set<IEventFeed>;
  subscribers: Set<ISubscriber>;
}

/**
 * The sessions whose events a socket of the page follows.
 */
export class SessionEventHub {
  /**
   * Feed the frames of a socket that follows `sessionId`, until the feed is
   * disposed.
   */
  feed(sessionId: string): IEventFeed {
    const entry = this._entry(sessionId);
    let disposed = false;
    const feed: IEventFeed = {
      get isDisposed(): boolean {
        return disposed;
      },
      emit: frame => {
        if (disposed) {
          return;
        }
        for (const subscriber of [...entry.subscribers]) {
          try {
            subscriber.listener(frame);
          } catch (error) {
            // A subscriber's failure must not stop the socket's own reader.
            console.error('Terax: an events subscriber failed.', error);
          }
        }
      },
      dispose: () => {
        if (disposed) {
          return;
        }
        disposed = true;
        entry.feeds.delete(feed);
        if (entry.feeds.size === 0) {
          this._sessions.delete(sessionId);
          for (const subscriber of [...entry.subscribers]) {
            subscriber.ended();
          }
          entry.subscribers.clear();
        }
      }
    };
    entry.feeds.add(feed);
    return feed;
  }

  /**
   * Follow the frames of a session through a socket that feeds them; null
   * when none does (open a socket then). `ended` is called when the last
   * feed stops: the subscription is over, open a socket then.
   */
  subscribe(
    sessionId: string,
    listener: FrameListener,
    ended: () => void
  ): IDisposable | null {
    const entry = this._sessions.get(sessionId);
    if (!entry || entry.feeds.size === 0) {
      return null;
    }
    const subscriber: ISubscriber = { listener, ended };
    entry.subscribers.add(subscriber);
    return new DisposableDelegate(() => entry.subscribers.delete(subscriber));
  }

  /**
   * Whether a socket of the page follows the session.
   */
  follows(sessionId: string): boolean {
    return (this._sessions.get(sessionId)?.feeds.size ?? 0) > 0;
  }

  private _entry(sessionId: string): ISessionEntry {
    let entry = this._sessions.get(sessionId);
    if (!entry) {
      entry = { feeds: new Set(), subscribers: new Set() };
      this._sessions.set(sessionId, entry);
    }
    return entry;
  }

  private readonly _sessions = new Map<string, ISessionEntry>();
}

/**
 * The page's hub.
 */
export const sessionEvents = new SessionEventHub();
