/**
 * Parsing of the include/exclude glob fields of the search panel.
 */

/**
 * Split a comma-separated glob list, trimming blanks and dropping empties
 * (`" *.py, src/** ,"` -> `["*.py", "src/**"]`).
 *
 * A comma inside braces belongs to the glob, and braces are expanded here
 * (`"*.{ts,tsx}"` -> `["*.ts", "*.tsx"]`) because the server's list
 * parameter is itself comma-separated.
 */
export function splitGlobs(value: string): string[] {
  const globs: string[] = [];
  for (const part of splitTopLevel(value, ',')) {
    const glob = part.trim();
    if (glob) {
      for (const expanded of expandBraces(glob)) {
        if (!globs.includes(expanded)) {
          globs.push(expanded);
        }
      }
    }
  }
  return globs;
}

/**
 * Expand `{a,b}` alternatives, nested ones included; an unbalanced brace is
 * kept literally. Expansion stops at 256 results.
 */
export function expandBraces(glob: string, limit = 256): string[] {
  const open = findBraceGroup(glob);
  if (!open) {
    return [glob];
  }
  const { start, end } = open;
  const head = glob.slice(0, start);
  const tail = glob.slice(end + 1);
  const results: string[] = [];
  for (const alternative of splitTopLevel(glob.slice(start + 1, end), ',')) {
    for (const expanded of expandBraces(head + alternative + tail, limit)) {
      if (results.length >= limit) {
        return results;
      }
      results.push(expanded);
    }
  }
  return results;
}

function findBraceGroup(glob: string): { start: number; end: number } | null {
  let depth = 0;
  let start = -1;
  let sawComma = false;
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i];
    if (char === '\\') {
      i++;
    } else if (char === '{') {
      if (depth === 0) {
        start = i;
        sawComma = false;
      }
      depth++;
    } else if (char === ',' && depth === 1) {
      sawComma = true;
    } else if (char === '}' && depth > 0) {
      depth--;
      if (depth === 0 && sawComma) {
        return { start, end: i };
      }
    }
  }
  return null;
}

function splitTopLevel(value: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    if (char === '\\' && i + 1 < value.length) {
      current += char + value[i + 1];
      i++;
      continue;
    }
    if (char === '{') {
      depth++;
    } else if (char === '}' && depth > 0) {
      depth--;
    }
    if (char === separator && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}
