/**
 * The web preview plugin's id and command ids.
 */

export const PLUGIN_ID = 'terax-jupyter:preview';

/**
 * Command IDs of the web preview.
 */
export namespace CommandIDs {
  /** Open a preview: args `{port?: number, url?: string}` (none: ask). */
  export const openPreview = 'terax:open-preview';
  export const reloadPreview = 'terax:reload-preview';
}
