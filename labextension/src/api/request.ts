/**
 * The one HTTP entry point of the extension's REST clients.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/**
 * Where the server extension mounts its API, below the server's base URL.
 */
export const API_NAMESPACE = 'terax/api';

/**
 * A failed API call: the server's `{"message", "reason"}` error, or a
 * response that was not JSON.
 */
export class TeraxAPIError extends ServerConnection.ResponseError {
  constructor(response: Response, message: string, reason: string) {
    super(response, message);
    this.name = 'TeraxAPIError';
    this.reason = reason;
  }

  /**
   * The machine-readable cause (`invalid_pattern`, `forbidden`, ...).
   */
  readonly reason: string;

  /**
   * Read the error body of a failed response.
   */
  static async fromResponse(response: Response): Promise<TeraxAPIError> {
    let message = `${response.status} ${response.statusText}`.trim();
    let reason = '';
    try {
      const body = (await response.json()) as {
        message?: unknown;
        reason?: unknown;
      };
      if (typeof body.message === 'string' && body.message) {
        message = body.message;
      }
      if (typeof body.reason === 'string') {
        reason = body.reason;
      }
    } catch {
      // Not JSON (a proxy page, an HTML error): keep the status line.
    }
    return new TeraxAPIError(response, message, reason);
  }
}

/**
 * Options of {@link requestAPI} and {@link fetchAPI}.
 */
export interface IRequestOptions extends RequestInit {
  /**
   * Query parameters; `undefined` values are left out.
   */
  query?: Record<string, string | number | boolean | undefined>;
  /**
   * Connection settings; the page's defaults when absent.
   */
  settings?: ServerConnection.ISettings;
}

/**
 * The URL of an API endpoint, e.g. `apiURL('fs/search', settings)`.
 */
export function apiURL(
  endpoint: string,
  settings: ServerConnection.ISettings,
  query: IRequestOptions['query'] = {}
): string {
  const params: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) {
      params[key] = String(value);
    }
  }
  const search = URLExt.objectToQueryString(params);
  return URLExt.join(settings.baseUrl, API_NAMESPACE, endpoint) + search;
}

/**
 * Send a request and return the raw response once its status is known to be
 * OK (for streamed bodies).
 *
 * @throws TeraxAPIError for an error status.
 * @throws ServerConnection.NetworkError when the server cannot be reached
 *   or the request was aborted.
 */
export async function fetchAPI(
  endpoint: string,
  options: IRequestOptions = {}
): Promise<Response> {
  const { query, settings: given, ...init } = options;
  const settings = given ?? ServerConnection.makeSettings();
  const url = apiURL(endpoint, settings, query);
  const response = await ServerConnection.makeRequest(url, init, settings);
  if (!response.ok) {
    throw await TeraxAPIError.fromResponse(response);
  }
  return response;
}

/**
 * Call a JSON endpoint of the server extension.
 *
 * @throws TeraxAPIError (a `ServerConnection.ResponseError`) for an error
 *   status or a body that is not JSON.
 */
export async function requestAPI<T>(
  endpoint: string,
  options: IRequestOptions = {}
): Promise<T> {
  const response = await fetchAPI(endpoint, options);
  if (response.status === 204) {
    return undefined as T;
  }
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new TeraxAPIError(
      response,
      `The server sent a response that is not JSON: ${text.slice(0, 80)}`,
      'invalid_response'
    );
  }
}

/**
 * Whether an error comes from an aborted request (a superseded search).
 */
export function isAbort(error: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted) {
    return true;
  }
  return error instanceof DOMException && error.name === 'AbortError';
}

/**
 * A short, human-readable message for any error from this module.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error && error.message) {
    return error.message;
  }
  return String(error);
}
