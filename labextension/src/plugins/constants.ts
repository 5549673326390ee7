/**
 * Names shared by the plugins.
 */

/**
 * The gettext domain of the extension's strings.
 */
export const TRANSLATION_DOMAIN = 'terax_jupyter';

/**
 * The command palette category of every Terax command (translated at use).
 */
export const PALETTE_CATEGORY = 'Terax';
