/**
 * The merge view of a review: the current file beside the proposed one
 * (CodeMirror's `MergeView`, read-only), each changed chunk tied to the
 * server hunk whose old lines hold it, rejected hunks dimmed and the active
 * one marked, with a hunk number in the proposed side's gutter.
 */
import {
  Compartment,
  EditorState,
  RangeSet,
  RangeSetBuilder,
  StateEffect,
  StateField,
  type Extension
} from '@codemirror/state';
import {
  Decoration,
  EditorView,
  gutter,
  GutterMarker,
  lineNumbers,
  type DecorationSet
} from '@codemirror/view';
import { MergeView, type Chunk } from '@codemirror/merge';
import type {
  IEditorLanguageRegistry,
  IEditorThemeRegistry
} from '@jupyterlab/codemirror';
import { PathExt } from '@jupyterlab/coreutils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Signal, type ISignal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { hunkForLines, type IHunk } from '../../common/ai/hunks';
import { CSS } from './css';

/**
 * A chunk of the merge view and the hunk it belongs to.
 */
interface IChunkOfHunk {
  chunk: Chunk;
  hunk: number;
}

interface IMarks {
  decorations: DecorationSet;
  markers: RangeSet<GutterMarker>;
}

const setMarks = StateEffect.define<IMarks>();

const marksField = StateField.define<IMarks>({
  create: () => ({ decorations: Decoration.none, markers: RangeSet.empty }),
  update: (value, transaction) => {
    for (const effect of transaction.effects) {
      if (effect.is(setMarks)) {
        return effect.value;
      }
    }
    return value;
  },
  provide: field => EditorView.decorations.from(field, v => v.decorations)
});

class HunkMarker extends GutterMarker {
  constructor(
    readonly hunk: number,
    readonly label: string,
    readonly state: 'accepted' | 'rejected',
    readonly active: boolean
  ) {
    super();
  }

  override eq(other: GutterMarker): boolean {
    return (
      other instanceof HunkMarker &&
      other.hunk === this.hunk &&
      other.state === this.state &&
      other.active === this.active &&
      other.label === this.label
    );
  }

  override toDOM(): Node {
    const node = document.createElement('span');
    node.className = CSS.hunkMarker;
    node.textContent = String(this.hunk + 1);
    node.title = this.label;
    node.dataset.hunk = String(this.hunk);
    node.dataset.state = this.state;
    if (this.active) {
      node.classList.add(CSS.active);
    }
    return node;
  }
}

const rejectedLine = Decoration.line({ class: CSS.rejectedLine });
const activeLine = Decoration.line({ class: CSS.activeLine });
const activeRejectedLine = Decoration.line({
  class: `${CSS.rejectedLine} ${CSS.activeLine}`
});

/**
 * The merge view widget.
 */
export class ReviewMergeView extends Widget {
  constructor(options: ReviewMergeView.IOptions) {
    super();
    this._options = options;
    const trans = options.trans;
    this.addClass(CSS.merge);
    const sides = document.createElement('div');
    sides.className = CSS.sides;
    this._labelA = document.createElement('div');
    this._labelA.className = CSS.side;
    this._labelA.textContent = trans.__('Current');
    this._labelB = document.createElement('div');
    this._labelB.className = CSS.side;
    this._labelB.textContent = trans.__('Proposed');
    sides.append(this._labelA, this._labelB);
    this._scroller = document.createElement('div');
    this._scroller.className = CSS.scroller;
    this.node.append(sides, this._scroller);
  }

  /**
   * Emits the hunk whose number was clicked in the gutter.
   */
  get hunkClicked(): ISignal<this, number> {
    return this._hunkClicked;
  }

  /**
   * The hunk of each chunk, in document order (for tests and navigation).
   */
  get chunkHunks(): number[] {
    return this._chunks.map(c => c.hunk);
  }

  /**
   * Show two texts; rebuilds the editors.
   */
  setContent(options: {
    path: string;
    original: string;
    proposed: string;
    hunks: readonly IHunk[];
    /** The file did not exist before the change. */
    isNew: boolean;
    /** The change is on disk already: the left side is the file before it. */
    written: boolean;
  }): void {
    this._merge?.destroy();
    const { trans } = this._options;
    this._hunks = options.hunks;
    this._labelA.textContent = options.written
      ? options.isNew
        ? trans.__('Before (no file)')
        : trans.__('Before')
      : options.isNew
        ? trans.__('Current (no file yet)')
        : trans.__('Current');
    const side = (label: string): Extension => [
      EditorState.lineSeparator.of('\n'),
      EditorState.readOnly.of(true),
      EditorState.tabSize.of(4),
      lineNumbers(),
      this._theme.of(this._themeExtension()),
      this._language.of([]),
      marksField,
      EditorView.contentAttributes.of({ 'aria-label': label })
    ];
    const markerGutter = gutter({
      class: CSS.hunkGutter,
      markers: view => view.state.field(marksField).markers,
      domEventHandlers: {
        mousedown: (view, line) => {
          const hunk = this._markerAt(view, line.from);
          if (hunk >= 0) {
            this._hunkClicked.emit(hunk);
            return true;
          }
          return false;
        }
      }
    });
    const name = PathExt.basename(options.path);
    this._merge = new MergeView({
      a: {
        doc: options.original,
        extensions: side(trans.__('Current %1', name))
      },
      b: {
        doc: options.proposed,
        extensions: [side(trans.__('Proposed %1', name)), markerGutter]
      },
      parent: this._scroller,
      gutter: true,
      highlightChanges: true,
      collapseUnchanged: { margin: 3, minSize: 6 }
    });
    const docA = this._merge.a.state.doc;
    this._chunks = this._merge.chunks.map(chunk => {
      const first = docA.lineAt(chunk.fromA).number;
      const last =
        chunk.fromA === chunk.toA ? first - 1 : docA.lineAt(chunk.endA).number;
      return { chunk, hunk: hunkForLines(options.hunks, first, last) };
    });
    this._applyMarks();
    void this._loadLanguage(options.path);
  }

  /**
   * Mark the rejected hunks and the active one.
   */
  setMarks(rejected: ReadonlySet<number>, active: number): void {
    this._rejected = rejected;
    this._active = active;
    this._applyMarks();
  }

  /**
   * Follow Lab's theme (the merge colours have light and dark variants).
   */
  setDark(dark: boolean): void {
    if (dark === this._dark) {
      return;
    }
    this._dark = dark;
    for (const view of this._views()) {
      view.dispatch({
        effects: this._theme.reconfigure(this._themeExtension())
      });
    }
  }

  /**
   * Scroll the first chunk of a hunk to the top of the view.
   */
  scrollToHunk(hunk: number, smooth = true): void {
    const merge = this._merge;
    if (!merge) {
      return;
    }
    const found = this._chunks.find(c => c.hunk === hunk);
    let view = merge.b;
    let pos: number;
    if (found) {
      pos = found.chunk.fromB;
    } else {
      const info = this._hunks.find(h => h.index === hunk);
      if (!info) {
        return;
      }
      view = merge.a;
      const doc = view.state.doc;
      pos = doc.line(Math.max(1, Math.min(doc.lines, info.old_start))).from;
    }
    const scroller = merge.dom;
    const offset =
      view.documentTop -
      scroller.getBoundingClientRect().top +
      scroller.scrollTop;
    const top = Math.max(0, offset + view.lineBlockAt(pos).top - 48);
    scroller.scrollTo({ top, behavior: smooth ? 'smooth' : 'auto' });
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._merge?.destroy();
    this._merge = null;
    Signal.clearData(this);
    super.dispose();
  }

  private _views(): EditorView[] {
    return this._merge ? [this._merge.a, this._merge.b] : [];
  }

  private _themeExtension(): Extension {
    return [
      EditorView.darkTheme.of(this._dark),
      this._options.themes?.defaultTheme() ?? []
    ];
  }

  private async _loadLanguage(path: string): Promise<void> {
    const registry = this._options.languages;
    if (!registry) {
      return;
    }
    const merge = this._merge;
    try {
      const found = registry.findByFileName(PathExt.basename(path));
      const language = found ? await registry.getLanguage(found) : null;
      if (!language?.support || merge !== this._merge || !merge) {
        return;
      }
      for (const view of [merge.a, merge.b]) {
        view.dispatch({
          effects: this._language.reconfigure(language.support)
        });
      }
    } catch (error) {
      console.warn('Terax: no syntax highlighting for', path, error);
    }
  }

  private _markerAt(view: EditorView, from: number): number {
    let hunk = -1;
    view.state
      .field(marksField)
      .markers.between(from, from, (_from, _to, marker) => {
        if (marker instanceof HunkMarker) {
          hunk = marker.hunk;
          return false;
        }
        return undefined;
      });
    return hunk;
  }

  private _applyMarks(): void {
    const merge = this._merge;
    if (!merge) {
      return;
    }
    const { trans } = this._options;
    const lines = (view: EditorView, side: 'a' | 'b'): DecorationSet => {
      const builder = new RangeSetBuilder<Decoration>();
      const doc = view.state.doc;
      for (const { chunk, hunk } of this._chunks) {
        const rejected = this._rejected.has(hunk);
        const active = hunk === this._active;
        if (!rejected && !active) {
          continue;
        }
        const from = side === 'a' ? chunk.fromA : chunk.fromB;
        const to = side === 'a' ? chunk.toA : chunk.toB;
        if (from === to) {
          continue;
        }
        const end = side === 'a' ? chunk.endA : chunk.endB;
        const deco = rejected
          ? active
            ? activeRejectedLine
            : rejectedLine
          : activeLine;
        for (let line = doc.lineAt(from); ; line = doc.line(line.number + 1)) {
          builder.add(line.from, line.from, deco);
          if (line.to >= end || line.number >= doc.lines) {
            break;
          }
        }
      }
      return builder.finish();
    };
    const markers = (): RangeSet<GutterMarker> => {
      const builder = new RangeSetBuilder<GutterMarker>();
      const doc = merge.b.state.doc;
      const seen = new Set<number>();
      for (const { chunk, hunk } of this._chunks) {
        if (seen.has(hunk) || hunk < 0) {
          continue;
        }
        seen.add(hunk);
        const rejected = this._rejected.has(hunk);
        const label = rejected
          ? trans.__('Hunk %1: rejected', hunk + 1)
          : trans.__('Hunk %1: accepted', hunk + 1);
        const at = doc.lineAt(Math.min(chunk.fromB, doc.length)).from;
        builder.add(
          at,
          at,
          new HunkMarker(
            hunk,
            label,
            rejected ? 'rejected' : 'accepted',
            hunk === this._active
          )
        );
      }
      return builder.finish();
    };
    merge.a.dispatch({
      effects: setMarks.of({
        decorations: lines(merge.a, 'a'),
        markers: RangeSet.empty
      })
    });
    merge.b.dispatch({
      effects: setMarks.of({
        decorations: lines(merge.b, 'b'),
        markers: markers()
      })
    });
  }

  private _options: ReviewMergeView.IOptions;
  private _merge: MergeView | null = null;
  private _chunks: IChunkOfHunk[] = [];
  private _hunks: readonly IHunk[] = [];
  private _rejected: ReadonlySet<number> = new Set();
  private _active = -1;
  private _dark = false;
  private _theme = new Compartment();
  private _language = new Compartment();
  private _labelA: HTMLElement;
  private _labelB: HTMLElement;
  private _scroller: HTMLElement;
  private _hunkClicked = new Signal<this, number>(this);
}

/**
 * The namespace of {@link ReviewMergeView}.
 */
export namespace ReviewMergeView {
  export interface IOptions {
    trans: TranslationBundle;
    languages?: IEditorLanguageRegistry | null;
    themes?: IEditorThemeRegistry | null;
  }
}
