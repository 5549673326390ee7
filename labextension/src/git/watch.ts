/**
 * A client of the file watch WebSocket (`/terax/api/fs/watch`): one socket
 * shared by the subscriptions, reconnected with back-off, subscriptions
 * renewed after a reconnect.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import type { IDisposable } from '@lumino/disposable';

import { API_NAMESPACE } from '../api/request';

/**
 * One file-system change; `repository` says a git repository's state (HEAD,
 * index, refs) changed, with `path` its work tree, wherever the change came from.
 */
export interface IWatchEvent {
  kind: 'created' | 'deleted' | 'modified' | 'moved' | 'repository';
  path: string;
  dest?: string;
  directory: boolean;
}

/**
 * Called with a batch of changes, or with `null` when the server dropped
 * events (or the connection was lost and renewed): rescan.
 */
export type WatchCallback = (events: IWatchEvent[] | null) => void;

interface ISubscription {
  id: string;
  path: string;
  callback: WatchCallback;
}

type ServerMessage =
  | { type: 'subscribed' | 'unsubscribed'; id: string }
  | { type: 'changes'; id: string; events: IWatchEvent[] }
  | { type: 'overflow'; id: string }
  | { type: 'error'; id: string | null; message: string; reason: string };

const MAX_BACKOFF_MS = 30_000;

/**
 * The watch connection of one page.
 */
export class FileWatcher implements IDisposable {
  constructor(settings?: ServerConnection.ISettings) {
    this._settings = settings ?? ServerConnection.makeSettings();
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /**
   * Watch a folder (relative to the server root, or absolute) recursively.
   */
  subscribe(path: string, callback: WatchCallback): IDisposable {
    const subscription: ISubscription = {
      id: `w${++this._counter}`,
      path,
      callback
    };
    this._subscriptions.set(subscription.id, subscription);
    if (this._socket?.readyState === WebSocket.OPEN) {
      this._send({
        op: 'subscribe',
        id: subscription.id,
        path,
        recursive: true
      });
    } else {
      this._connect();
    }
    let disposed = false;
    return {
      get isDisposed() {
        return disposed;
      },
      dispose: () => {
        if (disposed) {
          return;
        }
        disposed = true;
        this._subscriptions.delete(subscription.id);
        if (this._socket?.readyState === WebSocket.OPEN) {
          this._send({ op: 'unsubscribe', id: subscription.id });
        }
      }
    };
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._subscriptions.clear();
    if (this._retry !== null) {
      clearTimeout(this._retry);
    }
    this._socket?.close();
    this._socket = null;
  }

  private _url(): string {
    const settings = this._settings;
    const params: Record<string, string> = {};
    if (settings.appendToken && settings.token) {
      params.token = settings.token;
    }
    return (
      URLExt.join(settings.wsUrl, API_NAMESPACE, 'fs', 'watch') +
      URLExt.objectToQueryString(params)
    );
  }

  private _connect(): void {
    if (this._disposed || this._socket || this._retry !== null) {
      return;
    }
    const socket = new WebSocket(this._url());
    this._socket = socket;
    socket.onopen = () => {
      const reconnected = this._failures > 0 || this._everOpened;
      this._failures = 0;
      this._everOpened = true;
      for (const subscription of this._subscriptions.values()) {
        this._send({
          op: 'subscribe',
          id: subscription.id,
          path: subscription.path,
          recursive: true
        });
        if (reconnected) {
          // Changes made while the socket was down were never seen.
          subscription.callback(null);
        }
      }
    };
    socket.onmessage = event => {
      if (typeof event.data === 'string') {
        this._receive(event.data);
      }
    };
    socket.onclose = () => {
      if (this._socket !== socket) {
        return;
      }
      this._socket = null;
      if (this._disposed || this._subscriptions.size === 0) {
        return;
      }
      const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** this._failures);
      this._failures++;
      this._retry = setTimeout(() => {
        this._retry = null;
        this._connect();
      }, delay);
    };
  }

  private _receive(data: string): void {
    let message: ServerMessage;
    try {
      message = JSON.parse(data) as ServerMessage;
    } catch {
      return;
    }
    const subscription = message.id
      ? this._subscriptions.get(message.id)
      : undefined;
    if (!subscription) {
      return;
    }
    switch (message.type) {
      case 'changes':
        subscription.callback(message.events);
        break;
      case 'overflow':
        subscription.callback(null);
        break;
      case 'error':
        console.warn(
          `Terax: watching ${subscription.path} failed: ${message.message}`
        );
        break;
      default:
        break;
    }
  }

  private _send(message: object): void {
    this._socket?.send(JSON.stringify(message));
  }

  private readonly _settings: ServerConnection.ISettings;
  private readonly _subscriptions = new Map<string, ISubscription>();
  private _socket: WebSocket | null = null;
  private _retry: ReturnType<typeof setTimeout> | null = null;
  private _failures = 0;
  private _everOpened = false;
  private _counter = 0;
  private _disposed = false;
}
