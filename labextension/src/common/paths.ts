/**
 * Helpers for the server's paths: relative to the server root, "/"-separated.
 */

/**
 * The last segment of a path (`"src/app.py"` -> `"app.py"`).
 */
export function basename(path: string): string {
  const trimmed = stripTrailingSlashes(path);
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

/**
 * Everything before the last segment, without the separator
 * (`"src/app.py"` -> `"src"`, `"app.py"` -> `""`).
 */
export function dirname(path: string): string {
  const trimmed = stripTrailingSlashes(path);
  const slash = trimmed.lastIndexOf('/');
  return slash <= 0 ? (slash === 0 ? '/' : '') : trimmed.slice(0, slash);
}

/**
 * The extension of the last segment, with its dot, lower-cased
 * (`"a/B.PY"` -> `".py"`; dot files such as `".env"` have none).
 */
export function extname(path: string): string {
  const name = basename(path);
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot).toLowerCase();
}

/**
 * A path and code-point positions inside it, split at the last separator.
 *
 * Used to highlight the file name and its folder separately while the
 * server reports positions in the whole path.
 */
export interface IPathParts {
  readonly name: string;
  readonly namePositions: number[];
  readonly folder: string;
  readonly folderPositions: number[];
}

/**
 * Split `path` into file name and folder, with the positions rebased.
 */
export function splitPath(
  path: string,
  positions: readonly number[] = []
): IPathParts {
  const chars = Array.from(path);
  let slash = chars.length - 1;
  while (slash >= 0 && chars[slash] !== '/') {
    slash--;
  }
  const nameStart = slash + 1;
  return {
    name: chars.slice(nameStart).join(''),
    namePositions: positions
      .filter(p => p >= nameStart && p < chars.length)
      .map(p => p - nameStart),
    folder: slash > 0 ? chars.slice(0, slash).join('') : '',
    folderPositions: positions.filter(p => p >= 0 && p < slash)
  };
}

function stripTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 1 && path[end - 1] === '/') {
    end--;
  }
  return path.slice(0, end);
}
