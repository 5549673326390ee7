/**
 * CSS class names of what the administrator's policy locks (style/policy.css).
 */
export namespace CSS {
  /** A note at the top of a panel: read-only, a feature turned off. */
  export const banner = 'jp-TeraxPolicy-banner';
  /** "Set by your administrator" next to a setting. */
  export const locked = 'jp-TeraxPolicy-locked';
  /** A panel whose feature is off: the message in place of its content. */
  export const off = 'jp-TeraxPolicy-off';
}
