/**
 * Terminal reports: what a terminal sends back when output asks it
 * something (colours, modes, device attributes, the cursor position, window
 * sizes, its version). They go to the program as if typed.
 */

/**
 * One report as xterm.js writes it: a CSI answer (cursor position `R`,
 * device attributes `c`, status `n`, modes `$y`, window sizes `t`, the kitty
 * keyboard flags `?u`), an OSC answer (colours, clipboard) or a DCS one
 * (settings, version, capabilities).
 */
const REPORTS =
  // eslint-disable-next-line no-control-regex
  /^(?:\x1b\[[?>=]?[\d;]*\$?[Rcnyt]|\x1b\[\?\d*u|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1bP[^\x1b]*\x1b\\)+$/;

/**
 * Whether `data` (one `onData` event) is nothing but terminal reports.
 *
 * Keys and mouse events never take these forms (arrows and function keys end
 * in a letter or `~`, mouse reports in `M` or `m`), so what the user types
 * while a replay is being written still goes through.
 */
export function isTerminalReport(data: string): boolean {
  return data.length > 2 && data.charCodeAt(0) === 0x1b && REPORTS.test(data);
}
