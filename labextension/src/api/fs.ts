/**
 * REST client of the file-system area (`/terax/api/fs/...`): quick-open
 * search and the streamed content search.
 */
import type { ServerConnection } from '@jupyterlab/services';

import { NdjsonSplitter } from '../common/ndjson';
import { fetchAPI, requestAPI } from './request';

/**
 * One quick-open hit.
 */
export interface IFileMatch {
  /** Relative to the server root, "/"-separated. */
  path: string;
  score: number;
  /** Code-point indices into `path` of the matched query characters. */
  positions: number[];
}

/**
 * Facts about the file index behind a search.
 */
export interface IIndexFacts {
  total_files: number;
  /** The index stopped early (very large tree). */
  truncated: boolean;
  engine: string;
  index_age_s: number;
  index_build_ms: number;
  /** A rebuild is running; results may be slightly stale. */
  refreshing: boolean;
}

/**
 * The answer of `GET fs/search`.
 */
export interface IFileSearchResponse extends IIndexFacts {
  query: string;
  results: IFileMatch[];
  elapsed_ms: number;
}

/**
 * Options of {@link searchFiles}.
 */
export interface ISearchFilesOptions {
  limit?: number;
  /** Folder to search in; the server root when absent. */
  path?: string;
  signal?: AbortSignal;
  settings?: ServerConnection.ISettings;
}

/**
 * Fuzzy file-name search; an empty query lists the shortest paths.
 */
export function searchFiles(
  query: string,
  options: ISearchFilesOptions = {}
): Promise<IFileSearchResponse> {
  return requestAPI<IFileSearchResponse>('fs/search', {
    query: { q: query, limit: options.limit ?? 50, path: options.path },
    signal: options.signal,
    settings: options.settings
  });
}

/**
 * How letter case is matched by {@link grep}.
 */
export type CaseMode = 'smart' | 'sensitive' | 'insensitive';

/**
 * A content search.
 */
export interface IGrepQuery {
  pattern: string;
  regex?: boolean;
  case?: CaseMode;
  word?: boolean;
  include?: string[];
  exclude?: string[];
  maxResults?: number;
  maxPerFile?: number;
  /** Folder to search in; the server root when absent. */
  path?: string;
}

/**
 * One matching line. `ranges` are code-point offsets into `text`; `text` is
 * a window of the line starting at code point `offset` when the line is long.
 */
export interface IGrepLine {
  /** 1-based line number. */
  line: number;
  text: string;
  ranges: Array<[number, number]>;
  offset: number;
}

/**
 * The matches of one file (a stream line of type `file`).
 */
export interface IGrepFile {
  type: 'file';
  path: string;
  matches: IGrepLine[];
  /** More matches in this file than the per-file limit. */
  truncated: boolean;
}

/**
 * The last stream line.
 */
export interface IGrepSummary {
  type: 'summary';
  files: number;
  matches: number;
  truncated: boolean;
  engine: string;
  elapsed_ms: number;
}

/**
 * Any line of the grep stream.
 */
export type GrepEvent = IGrepFile | IGrepSummary;

/**
 * Options of {@link grep}.
 */
export interface IGrepOptions {
  signal?: AbortSignal;
  settings?: ServerConnection.ISettings;
}

/**
 * Search file contents; yields each file's matches as the server finds
 * them, then the summary.
 *
 * A bad pattern rejects before the first event with a `TeraxAPIError`
 * whose `reason` is `invalid_pattern`. Aborting the signal ends the stream.
 */
export async function* grep(
  query: IGrepQuery,
  options: IGrepOptions = {}
): AsyncGenerator<GrepEvent, void, undefined> {
  const response = await fetchAPI('fs/grep', {
    query: {
      pattern: query.pattern,
      regex: query.regex ?? false,
      case: query.case ?? 'smart',
      word: query.word ?? false,
      include: query.include?.length ? query.include.join(',') : undefined,
      exclude: query.exclude?.length ? query.exclude.join(',') : undefined,
      max_results: query.maxResults,
      max_per_file: query.maxPerFile,
      path: query.path
    },
    headers: { Accept: 'application/x-ndjson' },
    signal: options.signal,
    settings: options.settings
  });
  const body = response.body;
  const decoder = new TextDecoder('utf-8');
  const splitter = new NdjsonSplitter<GrepEvent>(bytes =>
    decoder.decode(bytes)
  );
  if (!body) {
    yield* splitter.push(new Uint8Array(await response.arrayBuffer()));
    yield* splitter.flush();
    return;
  }
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        break;
      }
      yield* splitter.push(value);
    }
    yield* splitter.flush();
  } finally {
    // Stops the download when the consumer leaves early (a newer search).
    reader.cancel().catch(() => undefined);
  }
}

/**
 * One entry of a folder listing.
 */
export interface IFolderEntry {
  name: string;
  /** Relative to the server root when inside it, else absolute. */
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  /** What a symlink points at. */
  target_type: string | null;
  size: number;
  mtime_ms: number;
  hidden: boolean;
  ignored: boolean;
  /** A protected name (secrets): listed, never readable. */
  denied: boolean;
}

/**
 * The answer of `GET fs/list`.
 */
export interface IFolderListing {
  path: string;
  entries: IFolderEntry[];
}

/**
 * The entries of a folder (absolute, or relative to the server root),
 * folders first.
 */
export function listFolder(
  path: string,
  options: { signal?: AbortSignal; settings?: ServerConnection.ISettings } = {}
): Promise<IFolderListing> {
  return requestAPI<IFolderListing>('fs/list', {
    query: { path },
    signal: options.signal,
    settings: options.settings
  });
}

/**
 * A file's content (`GET fs/file`).
 */
export interface IFileContent {
  /** Relative to the server root when inside it, else absolute. */
  path: string;
  name: string;
  size: number;
  mtime_ms: number;
  /** The text, or base64 when `binary`. */
  content: string;
  /** A codec name, or `base64`. */
  encoding: string;
  binary: boolean;
  /** Send it back when writing. */
  etag: string;
}

/**
 * Read a file; `format: 'text'` refuses a binary file (`binary_file`).
 */
export function readFile(
  path: string,
  options: {
    format?: 'auto' | 'text' | 'base64';
    signal?: AbortSignal;
    settings?: ServerConnection.ISettings;
  } = {}
): Promise<IFileContent> {
  return requestAPI<IFileContent>('fs/file', {
    query: { path, format: options.format ?? 'auto' },
    signal: options.signal,
    settings: options.settings
  });
}
