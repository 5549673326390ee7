"""The one error tree of terax_jupyter, and the table that maps it to HTTP status.

Managers and the security layer raise only these. Handlers never build an error
response by hand: the base handler looks the class up in ``HTTP_STATUS`` along
its method resolution order and writes ``{"message", "reason"}``.

    TeraxError                      500  something we did not foresee went wrong
    ├── InvalidRequest              400  the request itself is malformed
    │   ├── InvalidPath             400  empty, control bytes, unusable form
    │   └── InvalidPattern          400  a search pattern or glob that does not compile
    ├── AccessDenied                403  the security layer refuses
    │   ├── PathDenied              403  the deny-list matched (secrets, system dirs)
    │   ├── OutsideWorkspace        403  the canonical path is in no workspace root
    │   ├── ReadOnlyMode            403  an admin set the server read-only
    │   ├── CommandDenied           403  the shell command guard refused a command
    │   ├── ProtectedPath           403  the target is a workspace root or similar
    │   └── PathChanged             409  a path changed between its check and its use (a race)
    ├── NotFound                    404  no such file, directory, session, ...
    ├── Conflict                    409  the world changed under the caller
    │   ├── AlreadyExists           409  the target exists and overwrite was not asked
    │   ├── StaleVersion            409  the caller's etag no longer matches
    │   ├── NotEmpty                409  a directory still has entries
    │   └── ReplayRefused           409  a browser replay check refused; reason says which
    ├── TooLarge                    413  over a size cap; the message names the cap
    ├── Unsupported                 415  binary where text is needed, unknown encoding
    ├── Timeout                     504  an operation ran past its time limit
    ├── Unavailable                 503  a required tool or service is missing
    ├── BrowserError                502  the headless browser failed (crashed, page error)
    └── ProviderError               502  a model provider failed; the message says what to do
        ├── ProviderAuthFailed      502  the provider refused the key (401/403)
        ├── RateLimited             502  429 after the bounded retries; carries retry_after
        ├── ModelNotFound           502  the provider does not know the model
        ├── ProviderUnreachable     502  nothing answers at the provider's address
        ├── ProviderTimeout         504  the provider did not answer in time
        └── StreamCut               502  the answer stopped before its end
"""

from __future__ import annotations


class TeraxError(Exception):
    """Base of every error terax_jupyter raises on purpose.

    ``message`` is written for a person and may be shown in the UI as is;
    ``reason`` is a short stable code for programs (``"path_denied"``).
    """

    reason = "internal_error"

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason


class InvalidRequest(TeraxError):
    reason = "invalid_request"


class InvalidPath(InvalidRequest):
    reason = "invalid_path"


class InvalidPattern(InvalidRequest):
    reason = "invalid_pattern"


class AccessDenied(TeraxError):
    reason = "access_denied"


class PathDenied(AccessDenied):
    reason = "path_denied"


class OutsideWorkspace(AccessDenied):
    reason = "outside_workspace"


class ReadOnlyMode(AccessDenied):
    reason = "read_only"


class CommandDenied(AccessDenied):
    reason = "command_denied"


class ProtectedPath(AccessDenied):
    reason = "protected_path"


class PathChanged(AccessDenied):
    """A path changed between the check and its use (a swapped-in symlink, a moved folder)."""

    reason = "path_changed"


class NotFound(TeraxError):
    reason = "not_found"


class Conflict(TeraxError):
    reason = "conflict"


class AlreadyExists(Conflict):
    reason = "already_exists"


class StaleVersion(Conflict):
    reason = "stale_version"


class NotEmpty(Conflict):
    reason = "not_empty"


class TooLarge(TeraxError):
    reason = "too_large"


class Unsupported(TeraxError):
    reason = "unsupported"


class Timeout(TeraxError):
    reason = "timeout"


class Unavailable(TeraxError):
    reason = "unavailable"


class BrowserError(TeraxError):
    """The headless browser could not do what was asked (not started, crashed, page error)."""

    reason = "browser_error"


class ReplayRefused(Conflict):
    """A browser replay was refused before doing anything more; ``reason`` names the check
    (``scope_mismatch``, ``ttl_expired``, ``precondition_failed``, ``target_missing``, ...)."""

    reason = "replay_refused"


class ProviderError(TeraxError):
    """A model provider failed. ``provider`` is the provider's id (``"openai"``, ``"ollama"``)."""

    reason = "provider_error"

    def __init__(
        self, message: str, *, reason: str | None = None, provider: str | None = None
    ) -> None:
        super().__init__(message, reason=reason)
        self.provider = provider


class ProviderAuthFailed(ProviderError):
    reason = "bad_key"


class RateLimited(ProviderError):
    """The provider kept answering 429; ``retry_after`` is its last hint in seconds, if any."""

    reason = "rate_limited"

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        provider: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, reason=reason, provider=provider)
        self.retry_after = retry_after


class ModelNotFound(ProviderError):
    reason = "model_not_found"


class ProviderUnreachable(ProviderError):
    reason = "provider_unreachable"


class ProviderTimeout(ProviderError):
    reason = "provider_timeout"


class StreamCut(ProviderError):
    reason = "stream_cut"


HTTP_STATUS: dict[type[TeraxError], int] = {
    TeraxError: 500,
    InvalidRequest: 400,
    InvalidPath: 400,
    InvalidPattern: 400,
    AccessDenied: 403,
    PathDenied: 403,
    OutsideWorkspace: 403,
    ReadOnlyMode: 403,
    CommandDenied: 403,
    ProtectedPath: 403,
    # Refused like any denial, but answered as the race it is: the caller may retry.
    PathChanged: 409,
    NotFound: 404,
    Conflict: 409,
    AlreadyExists: 409,
    StaleVersion: 409,
    NotEmpty: 409,
    TooLarge: 413,
    Unsupported: 415,
    Timeout: 504,
    Unavailable: 503,
    BrowserError: 502,
    ReplayRefused: 409,
    ProviderError: 502,
    ProviderAuthFailed: 502,
    RateLimited: 502,
    ModelNotFound: 502,
    ProviderUnreachable: 502,
    ProviderTimeout: 504,
    StreamCut: 502,
}


def http_status_for(error: TeraxError) -> int:
    """The HTTP status of an error: the nearest class along its MRO that has an entry."""
    for cls in type(error).__mro__:
        status = HTTP_STATUS.get(cls)
        if status is not None:
            return status
    return 500
