/**
 * Command blocks as a view sees them: one entry per trusted `133;C` mark in
 * the byte stream, matched to the server's block records by order.
 *
 * The marks place blocks exactly in the terminal (they arrive in the bytes,
 * also when the scrollback is replayed); the server's records carry what the
 * bytes do not (start time, duration, the block id to fetch its output).
 * Server block ids are consecutive. When a view attaches, the server says
 * how many blocks it has (`attached.session.blocks`), then replays the
 * scrollback, whose marks are the newest of those blocks (older marks may
 * have left the ring). So the j-th of R replayed marks is block
 * `base - (R - 1 - j)` and the i-th live mark is block `base + 1 + i`, where
 * `base` is the id of the newest block at attach time.
 */

/**
 * What the server records about a block (a subset of its JSON).
 */
export interface IServerBlock {
  id: number;
  command: string;
  cwd: string | null;
  exit_code: number | null;
  started_at: number;
  ended_at: number | null;
  duration_ms: number | null;
  running: boolean;
}

/**
 * The server keeps the first 4096 characters of a command.
 */
const MAX_COMMAND_CHARS = 4096;

/**
 * One block in the view.
 */
export interface ILedgerEntry<H> {
  /** What the view keeps for it (markers, decorations). */
  readonly handle: H;
  /** The command line, from the mark. */
  readonly command: string;
  /** The folder the command ran in, as last reported before it. */
  readonly cwd: string | null;
  /** The exit code from the end mark; undefined while running. */
  exitCode: number | null | undefined;
  /** Whether the mark came in the scrollback replay. */
  readonly replayed: boolean;
  /** Position among the replayed or among the live marks. */
  readonly order: number;
}

/**
 * The blocks of one attachment of a view to a session.
 */
export class BlockLedger<H> {
  /**
   * Blocks in stream order.
   */
  get entries(): readonly ILedgerEntry<H>[] {
    return this._entries;
  }

  /**
   * The block whose command is running, if any.
   */
  get running(): ILedgerEntry<H> | null {
    const last = this._entries[this._entries.length - 1];
    return last && last.exitCode === undefined ? last : null;
  }

  /**
   * Start over for a new attachment: the server has `count` blocks now, and
   * the marks until {@link endReplay} come from the scrollback replay.
   */
  attach(count: number): void {
    this._entries = [];
    this._infos.clear();
    this._replayCount = 0;
    this._liveCount = 0;
    this._countAtAttach = count;
    this._base = count === 0 ? 0 : null;
    this._sawLiveStart = false;
    this._replaying = count > 0;
  }

  /**
   * Whether marks are counted as replayed.
   */
  get replaying(): boolean {
    return this._replaying;
  }

  /**
   * The replay has been parsed; later marks are live.
   */
  endReplay(): void {
    this._replaying = false;
  }

  /**
   * A command started (a trusted `133;C` mark).
   */
  start(command: string, cwd: string | null, handle: H): ILedgerEntry<H> {
    const running = this.running;
    if (running) {
      // The shell lost the end mark of the previous command.
      running.exitCode = null;
    }
    const replayed = this._replaying;
    const entry: ILedgerEntry<H> = {
      handle,
      command,
      cwd,
      exitCode: undefined,
      replayed,
      order: replayed ? this._replayCount++ : this._liveCount++
    };
    this._entries.push(entry);
    return entry;
  }

  /**
   * The running command ended (a trusted `133;D` mark).
   */
  end(exitCode: number | null): ILedgerEntry<H> | null {
    const running = this.running;
    if (running) {
      running.exitCode = exitCode;
    }
    return running;
  }

  /**
   * Forget a block the terminal no longer shows (its lines were trimmed).
   */
  remove(entry: ILedgerEntry<H>): void {
    const index = this._entries.indexOf(entry);
    if (index >= 0) {
      this._entries.splice(index, 1);
    }
  }

  /**
   * The server's list of blocks, fetched after attaching.
   */
  setServerBlocks(blocks: readonly IServerBlock[]): void {
    const known = blocks.slice(0, this._countAtAttach);
    if (this._base === null && known.length > 0) {
      this._base = known[known.length - 1].id;
    }
    for (const block of blocks) {
      this._infos.set(block.id, block);
    }
  }

  /**
   * A `block` event of the stream. Returns the view's entry for it, if any.
   */
  update(block: IServerBlock, event: 'start' | 'end'): ILedgerEntry<H> | null {
    if (event === 'start' && !this._sawLiveStart) {
      this._sawLiveStart = true;
      if (this._base === null) {
        // The first block started after attaching follows the newest one.
        this._base = block.id - 1;
      }
    }
    this._infos.set(block.id, block);
    return (
      this._entries.find(entry => this.serverId(entry) === block.id) ?? null
    );
  }

  /**
   * The server's block id of an entry, once it is known.
   */
  serverId(entry: ILedgerEntry<H>): number | null {
    if (this._base === null) {
      return null;
    }
    if (entry.replayed) {
      return this._base - (this._replayCount - 1 - entry.order);
    }
    return this._base + 1 + entry.order;
  }

  /**
   * The server's record of an entry, when known and about the same command.
   */
  info(entry: ILedgerEntry<H>): IServerBlock | null {
    const id = this.serverId(entry);
    const info = id === null ? undefined : this._infos.get(id);
    if (!info) {
      return null;
    }
    return info.command === entry.command.slice(0, MAX_COMMAND_CHARS)
      ? info
      : null;
  }

  private _entries: ILedgerEntry<H>[] = [];
  private readonly _infos = new Map<number, IServerBlock>();
  private _countAtAttach = 0;
  private _replayCount = 0;
  private _liveCount = 0;
  private _base: number | null = 0;
  private _sawLiveStart = false;
  private _replaying = false;
}

/**
 * The index of the last of `count` items (sorted by line) whose line is at
 * or before `line`; -1 when none is.
 */
export function lastAtOrBefore(
  count: number,
  lineOf: (index: number) => number,
  line: number
): number {
  let low = 0;
  let high = count - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (lineOf(middle) <= line) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}
