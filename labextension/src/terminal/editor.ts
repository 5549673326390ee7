/**
 * CodeMirror pieces of the input line: grey inline suggestions, shell
 * highlighting in Lab's editor colours, and a theme from the terminal font.
 */
import { HighlightStyle } from '@codemirror/language';
import { Annotation, StateEffect, StateField } from '@codemirror/state';
import {
  Decoration,
  EditorView,
  WidgetType,
  type DecorationSet
} from '@codemirror/view';
import { tags } from '@lezer/highlight';

import { CSS } from './css';

/**
 * The editor's font, from the terminal settings.
 */
export interface IInputFont {
  fontFamily: string;
  fontSize: number;
  lineHeight: number;
}

/**
 * Changes made by history navigation (they do not end it).
 */
export const fromHistory = Annotation.define<boolean>();

/**
 * Set the grey suggestion after the text.
 */
export const setGhost = StateEffect.define<string>();

class GhostWidget extends WidgetType {
  constructor(readonly text: string) {
    super();
  }

  override eq(other: GhostWidget): boolean {
    return other.text === this.text;
  }

  toDOM(): HTMLElement {
    const span = document.createElement('span');
    span.className = CSS.ghost;
    span.textContent = this.text;
    span.setAttribute('aria-hidden', 'true');
    return span;
  }

  override ignoreEvent(): boolean {
    return false;
  }
}

export const ghostField = StateField.define<string>({
  create: () => '',
  update(value, transaction) {
    for (const effect of transaction.effects) {
      if (effect.is(setGhost)) {
        return effect.value;
      }
    }
    return value;
  },
  provide: field =>
    EditorView.decorations.compute([field, 'doc'], (state): DecorationSet => {
      const text = state.field(field);
      if (!text) {
        return Decoration.none;
      }
      return Decoration.set([
        Decoration.widget({
          widget: new GhostWidget(text),
          side: 1
        }).range(state.doc.length)
      ]);
    })
});

/**
 * Shell tokens in the colours of Lab's editor theme.
 */
export const SHELL_HIGHLIGHT = HighlightStyle.define([
  { tag: tags.keyword, color: 'var(--jp-mirror-editor-keyword-color)' },
  { tag: tags.string, color: 'var(--jp-mirror-editor-string-color)' },
  {
    tag: tags.special(tags.string),
    color: 'var(--jp-mirror-editor-string-2-color)'
  },
  {
    tag: tags.comment,
    color: 'var(--jp-mirror-editor-comment-color)',
    fontStyle: 'italic'
  },
  { tag: tags.number, color: 'var(--jp-mirror-editor-number-color)' },
  { tag: tags.atom, color: 'var(--jp-mirror-editor-atom-color)' },
  {
    tag: tags.special(tags.variableName),
    color: 'var(--jp-mirror-editor-variable-2-color)'
  },
  {
    tag: tags.standard(tags.variableName),
    color: 'var(--jp-mirror-editor-builtin-color)'
  },
  {
    tag: tags.definition(tags.variableName),
    color: 'var(--jp-mirror-editor-def-color)'
  },
  { tag: tags.operator, color: 'var(--jp-mirror-editor-operator-color)' },
  { tag: tags.attributeName, color: 'var(--jp-mirror-editor-attribute-color)' }
]);

export function fontTheme(font: IInputFont) {
  const family = font.fontFamily || 'var(--jp-code-font-family)';
  return EditorView.theme({
    '&': {
      color: 'var(--jp-ui-font-color0)',
      backgroundColor: 'transparent',
      fontSize: `${font.fontSize}px`
    },
    '&.cm-focused': { outline: 'none' },
    '.cm-scroller': {
      fontFamily: family,
      lineHeight: String(font.lineHeight),
      maxHeight: `${Math.round(font.fontSize * font.lineHeight * 8)}px`,
      overflow: 'auto'
    },
    '.cm-content': {
      padding: '0',
      caretColor: 'var(--jp-editor-cursor-color)'
    },
    '.cm-line': { padding: '0' },
    '.cm-cursor, .cm-dropCursor': {
      borderLeftColor: 'var(--jp-editor-cursor-color)',
      borderLeftWidth: '2px'
    },
    '&.cm-focused .cm-selectionBackground, .cm-selectionBackground': {
      backgroundColor: 'var(--jp-editor-selected-focused-background)'
    },
    '.cm-placeholder': { color: 'var(--jp-ui-font-color3)' },
    '.cm-tooltip.cm-tooltip-autocomplete': {
      fontFamily: family,
      fontSize: `${font.fontSize}px`
    }
  });
}
