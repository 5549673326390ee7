/**
 * The shell integration's marks in the terminal byte stream: OSC 133
 * (prompt, input, command, end) and OSC 7 (working folder).
 */

/**
 * What an OSC 133 mark says.
 *
 * - `A`: a prompt starts;
 * - `B`: the prompt ends, the user types;
 * - `C`: a command starts, its output follows;
 * - `D`: the command ended (with its exit code when the shell knows it).
 */
export type ShellMark =
  | { kind: 'A'; nonce: string }
  | { kind: 'B'; nonce: string }
  | { kind: 'C'; nonce: string; command: string }
  | { kind: 'D'; nonce: string; exitCode: number | null };

/**
 * Parse the payload of an OSC 133 sequence (what follows `133;`), e.g.
 * `C;nonce=ab12;cmdline_url=echo%20hi` or `D;1;nonce=ab12`.
 *
 * Returns `null` for letters this integration does not speak.
 */
export function parseShellMark(data: string): ShellMark | null {
  const parts = data.split(';');
  const kind = parts[0];
  const named: Record<string, string> = {};
  const positional: string[] = [];
  for (const part of parts.slice(1)) {
    const equals = part.indexOf('=');
    if (equals > 0) {
      named[part.slice(0, equals)] = part.slice(equals + 1);
    } else {
      positional.push(part);
    }
  }
  const nonce = named.nonce ?? '';
  switch (kind) {
    case 'A':
    case 'B':
      return { kind, nonce };
    case 'C':
      return { kind, nonce, command: percentDecode(named.cmdline_url ?? '') };
    case 'D': {
      const text = positional[0] ?? '';
      return {
        kind,
        nonce,
        exitCode: /^-?\d{1,9}$/.test(text) ? Number(text) : null
      };
    }
    default:
      return null;
  }
}

/**
 * Whether a mark comes from the shell integration: its nonce is the one the
 * server gave this session (a program could print fake marks).
 */
export function isTrusted(mark: ShellMark, nonce: string): boolean {
  return nonce !== '' && mark.nonce === nonce;
}

/**
 * The folder an OSC 7 payload names (`file://host/some%20path`), or null.
 */
export function parseWorkingDirectory(data: string): string | null {
  const match = /^file:\/\/[^/]*(\/.*)$/.exec(data);
  if (!match) {
    return null;
  }
  const path = percentDecode(match[1]);
  // A Windows drive path comes as /C:/Users/...
  return /^\/[A-Za-z]:\//.test(path) ? path.slice(1) : path;
}

/**
 * Decode `%XX` escapes as UTF-8; malformed escapes stay as they are.
 */
export function percentDecode(text: string): string {
  if (!text.includes('%')) {
    return text;
  }
  try {
    return decodeURIComponent(text);
  } catch {
    // Invalid UTF-8 or a stray "%": decode each run of escapes on its own,
    // and show bytes that are not UTF-8 as U+FFFD.
    return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, run => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run
          .slice(1)
          .split('%')
          .map(hex => {
            const byte = parseInt(hex, 16);
            return byte < 0x80 ? String.fromCharCode(byte) : '\uFFFD';
          })
          .join('');
      }
    });
  }
}
