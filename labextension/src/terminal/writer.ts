/**
 * Output on its way into xterm: frames are queued and written once per
 * animation frame, and each write's bytes are acknowledged to the server
 * once xterm has parsed them (the server paces the program by that).
 */
import type { Terminal } from '@xterm/xterm';

/**
 * Queued output is written at once past this size (a background browser
 * tab gets no frames).
 */
const MAX_QUEUED_BYTES = 1 << 20;
/**
 * When no animation frame comes (a background browser tab), queued output is
 * written after this long instead.
 */
const FALLBACK_MS = 250;

/**
 * The writer of one xterm.
 */
export class OutputWriter {
  constructor(
    private readonly _terminal: Terminal,
    private readonly _acknowledge: (bytes: number) => void
  ) {}

  /**
   * Queue live output for the next frame.
   */
  write(data: Uint8Array): void {
    this._queue.push(data);
    this._queued += data.length;
    if (this._queued >= MAX_QUEUED_BYTES) {
      this.flush();
    } else if (this._frame === null) {
      this._frame = requestAnimationFrame(() => this.flush());
      this._timer = setTimeout(() => this.flush(), FALLBACK_MS);
    }
  }

  /**
   * Write the scrollback replay at once (after anything queued); `parsed`
   * runs when xterm has parsed it.
   */
  writeReplay(data: Uint8Array, parsed: () => void): void {
    this.flush();
    const generation = this._generation;
    this._replaying++;
    this._terminal.write(data, () => {
      this._replaying--;
      parsed();
      this._acknowledged(data.length, generation);
    });
  }

  /**
   * Whether xterm is parsing replayed output now: what it answers meanwhile
   * answers questions asked long ago, not by the program running now.
   */
  get replaying(): boolean {
    return this._replaying > 0;
  }

  /**
   * A new attachment: drop what is queued (the replay that follows has it)
   * and reset xterm through its write queue, after what it has not parsed
   * yet; `reset` runs at that point of the stream.
   */
  restart(reset: () => void): void {
    this._cancel();
    this._queue = [];
    this._queued = 0;
    this._generation++;
    this._terminal.write('\x1bc', reset);
  }

  /**
   * Hand the queued output to xterm in one write.
   */
  flush(): void {
    this._cancel();
    const queue = this._queue;
    if (queue.length === 0) {
      return;
    }
    const size = this._queued;
    this._queue = [];
    this._queued = 0;
    const generation = this._generation;
    const done = (): void => this._acknowledged(size, generation);
    if (queue.length === 1) {
      this._terminal.write(queue[0], done);
      return;
    }
    const data = new Uint8Array(size);
    let offset = 0;
    for (const chunk of queue) {
      data.set(chunk, offset);
      offset += chunk.length;
    }
    this._terminal.write(data, done);
  }

  dispose(): void {
    this._cancel();
    this._queue = [];
    this._queued = 0;
    this._generation++;
  }

  private _acknowledged(bytes: number, generation: number): void {
    // Bytes of an earlier connection are not the current one's to ack.
    if (generation === this._generation) {
      this._acknowledge(bytes);
    }
  }

  private _cancel(): void {
    if (this._frame !== null) {
      cancelAnimationFrame(this._frame);
      this._frame = null;
    }
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private _queue: Uint8Array[] = [];
  private _queued = 0;
  private _frame: number | null = null;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _generation = 0;
  private _replaying = 0;
}
