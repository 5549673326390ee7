"""What a failed provider call means for a person: the ProviderError that says what to do."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import httpx
import httpx_sse

from terax_jupyter.exceptions import (
    ModelNotFound,
    ProviderAuthFailed,
    ProviderError,
    ProviderTimeout,
    ProviderUnreachable,
    RateLimited,
    StreamCut,
    TeraxError,
)
from terax_jupyter.security.redact import REDACTED
from terax_jupyter.security.redact import redact as redact_shapes
from terax_jupyter.services.ai.providers.retry import (
    RETRY_STATUSES,
    RetryableFailure,
    retry_after,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

    from terax_jupyter.security.redact import Redactor
    from terax_jupyter.services.ai.providers.base import ProviderConfig

MAX_DETAIL = 300  # characters of the provider's own message kept in ours
MAX_ERROR_BODY = 64 * 1024  # bytes of an error answer read to find that message

# A provider's way of saying the model does not exist (OpenAI, Groq, Ollama, vLLM, ...).
_MISSING_MODEL = re.compile(
    r"model_not_found|\bmodel\b[^.\n]{0,120}?\b(?:not found|does not exist|doesn't exist|"
    r"not exist|is not available|unavailable)|\b(?:unknown|invalid|no such|unsupported) model\b",
    re.IGNORECASE,
)
_TOO_LONG = re.compile(
    r"context_length_exceeded|prompt is too long|maximum context length|context window|"
    r"too many tokens|reduce the length",
    re.IGNORECASE,
)


def redactor_for(api_key: str | None, redactor: Redactor | None) -> Callable[[str], str]:
    """A redaction function that removes ``api_key`` even when no redactor knows it yet."""

    def redact(text: str) -> str:
        if api_key and len(api_key) >= 4:
            text = text.replace(api_key, REDACTED)
        return redactor.redact(text) if redactor is not None else redact_shapes(text)

    return redact


def origin_of(base_url: str) -> str:
    """``scheme://host[:port]`` of a base URL, as people write it (no path, no userinfo)."""
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL:
        return base_url
    host = url.host
    if ":" in host:
        host = f"[{host}]"
    return f"{url.scheme}://{host}" + (f":{url.port}" if url.port is not None else "")


def provider_message(body: str, redact: Callable[[str], str] = redact_shapes) -> str:
    """The provider's own words from an error body (``error.message``, ``error``,
    ``message``, ``detail``), redacted and shortened; the raw text if it is no JSON."""
    text = ""
    try:
        data: Any = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, list) and data:
        data = data[0]  # Gemini wraps its error in a list
    if isinstance(data, dict):
        inner = data.get("error", data)
        if isinstance(inner, str):
            text = inner
        elif isinstance(inner, dict):
            for name in ("message", "detail", "error", "msg"):
                value = inner.get(name)
                if isinstance(value, str) and value:
                    text = value
                    break
        if not text and isinstance(data.get("detail"), str):
            text = data["detail"]
        if not text:
            # Validation errors of FastAPI servers: Mistral's 422 ({"message": {"detail":
            # [...]}}), vLLM's ({"detail": [...]}).
            nested = inner.get("message") if isinstance(inner, dict) else None
            holder = nested if isinstance(nested, dict) else data
            text = _validation_detail(holder.get("detail"))
    elif data is None and body.lstrip()[:1] != "<":  # not HTML pages
        text = body
    text = " ".join(redact(text).split())
    return text if len(text) <= MAX_DETAIL else text[: MAX_DETAIL - 1] + "…"


def _validation_detail(detail: Any) -> str:
    """``body.stream_options: Extra inputs are not permitted; ...`` from a pydantic list."""
    if not isinstance(detail, list):
        return ""
    parts = []
    for item in detail[:5]:
        if isinstance(item, dict) and isinstance(item.get("msg"), str):
            loc = item.get("loc")
            where = ".".join(str(p) for p in loc) if isinstance(loc, list) else ""
            parts.append(f"{where}: {item['msg']}" if where else item["msg"])
    return "; ".join(parts)


def _says(label: str, detail: str) -> str:
    return f" {label} says: {detail}" if detail else ""


def map_error(
    config: ProviderConfig,
    failure: httpx.Response | BaseException,
    *,
    body: str = "",
    model: str | None = None,
    started: bool = False,
    redact: Callable[[str], str] = redact_shapes,
) -> TeraxError:
    """The error to raise for an error answer (``failure`` a response, ``body`` its text)
    or an exception of a call. Refusals of the guarded network (``AccessDenied``,
    ``InvalidRequest``) and our own errors come back unchanged. Never holds the key."""
    if isinstance(failure, httpx.Response):
        return _from_response(config, failure, body, model, redact)
    if isinstance(failure, TeraxError):
        return failure
    return _from_exception(config, failure, started)


def _from_response(
    config: ProviderConfig,
    response: httpx.Response,
    body: str,
    model: str | None,
    redact: Callable[[str], str],
) -> TeraxError:
    status = response.status_code
    label = config.label
    detail = provider_message(body, redact)
    if status in (401, 403):
        if config.key_name:
            message = (
                f"The {label} key was refused ({status}). Check {config.key_name} in Terax "
                "settings: it may be mistyped, revoked, or without access to this model."
            )
        else:
            message = (
                f"{label} refused the request ({status}): it wants a key. Give the provider a "
                "key name in Terax settings and store the key under that name."
            )
        return ProviderAuthFailed(message, provider=config.id)
    if status == 429:
        wait = retry_after(response.headers)
        hint = f" It asks to wait {wait:.0f} s." if wait is not None else ""
        return RateLimited(
            f"{label} is limiting requests (429).{hint} Wait a little and try again, or check "
            f"the plan's rate limits and quota.{_says(label, detail)}",
            provider=config.id,
            retry_after=wait,
        )
    names_model = bool(_MISSING_MODEL.search(body))
    if status == 404 and model is None and not names_model:
        return ProviderError(
            f"{label} has nothing at {response.request.url.path}: check the base URL "
            f"({config.base_url}).",
            reason="endpoint_not_found",
            provider=config.id,
        )
    if model is not None and (status == 404 or (400 <= status < 500 and names_model)):
        hint = "" if names_model else f" (or the base URL {config.base_url} is wrong)"
        return ModelNotFound(
            f"{label} has no model '{redact(model)}'{hint}. Check the name, or pick one of "
            f"the models {label} lists.{_says(label, detail)}",
            provider=config.id,
        )
    if 300 <= status < 400:
        location = redact(response.headers.get("location", "elsewhere"))
        return ProviderError(
            f"{label} redirects to {location} ({status}): set the provider's base URL to where "
            "it points.",
            reason="provider_redirect",
            provider=config.id,
        )
    if status in RETRY_STATUSES:
        return ProviderError(
            f"{label} is overloaded or failing ({status}). Try again in a moment."
            f"{_says(label, detail)}",
            reason="provider_unavailable",
            provider=config.id,
        )
    if 400 <= status < 500 and _TOO_LONG.search(body):
        return ProviderError(
            f"The conversation is longer than the model's context window.{_says(label, detail)}",
            reason="context_too_long",
            provider=config.id,
        )
    phrase = detail or response.reason_phrase or "no details"
    return ProviderError(f"{label} answered {status}: {phrase}", provider=config.id)


def _from_exception(config: ProviderConfig, error: BaseException, started: bool) -> TeraxError:
    label = config.label
    origin = origin_of(config.base_url)
    if isinstance(error, httpx.TimeoutException):
        if isinstance(error, (httpx.ConnectTimeout, httpx.PoolTimeout)):
            what = f"connecting to {origin}"
        elif isinstance(error, httpx.WriteTimeout):
            what = "sending the request"
        else:
            what = "the next part of the answer" if started else "the answer to begin"
        return ProviderTimeout(
            f"{label} took too long ({what}). Try again; a slow model may need a longer timeout.",
            provider=config.id,
        )
    if isinstance(error, httpx.ConnectError):
        if config.local:
            product = config.product or "the server"
            message = f"Nothing answers at {origin} — is {product} running?"
        else:
            message = (
                f"{label} cannot be reached at {origin}: check the network connection and the "
                "provider's base URL."
            )
        return ProviderUnreachable(message, provider=config.id)
    if isinstance(error, httpx_sse.SSEError):
        return ProviderError(
            f"{label} did not answer with an event stream; is {config.base_url} the right "
            "base URL?",
            reason="bad_response",
            provider=config.id,
        )
    if isinstance(error, (httpx.NetworkError, httpx.RemoteProtocolError)):
        return stream_cut(config, started=started)
    return ProviderError(
        f"The request to {label} failed ({type(error).__name__}).", provider=config.id
    )


def stream_cut(config: ProviderConfig, *, started: bool = True) -> StreamCut:
    """The error of an answer that ended without its end marker, or a dropped connection."""
    if not started:
        return StreamCut(
            f"{config.label} closed the connection without answering. Try again.",
            provider=config.id,
        )
    return StreamCut(
        f"The answer from {config.label} stopped before its end (the connection closed). "
        "Try again.",
        provider=config.id,
    )


def bad_response(config: ProviderConfig, what: str) -> ProviderError:
    return ProviderError(
        f"{config.label} sent something that is not its API's format ({what}).",
        reason="bad_response",
        provider=config.id,
    )


def decode_event(config: ProviderConfig, data: str) -> dict[str, Any]:
    """One SSE data field as a JSON object, or ``bad_response``."""
    try:
        value = json.loads(data)
    except ValueError:
        raise bad_response(config, "an event that is not JSON") from None
    if not isinstance(value, dict):
        raise bad_response(config, "an event that is not a JSON object")
    return value


def parse_arguments(name: str, text: str) -> tuple[dict[str, Any], str | None]:
    """A tool call's argument text as ``(arguments, None)``, or ``({}, problem)`` when it
    is not a JSON object (the problem is told to the model, which may call again)."""
    if not text.strip():
        return {}, None  # a call without arguments often streams none at all
    try:
        value = json.loads(text)
    except ValueError as error:
        return {}, f"The arguments for {name} are not valid JSON ({error}); send a JSON object."
    if not isinstance(value, dict):
        return {}, (f"The arguments for {name} must be a JSON object, not {type(value).__name__}.")
    return value, None


class ProviderCall:
    """One HTTP call to a provider (one attempt): what it raises becomes a ProviderError.

    Used as ``with call:`` around the request and its streaming; ``started`` turns true once
    the answer's status was good, so a connection lost after that is a ``StreamCut``.
    """

    def __init__(
        self,
        config: ProviderConfig,
        *,
        redact: Callable[[str], str],
        model: str | None = None,
    ) -> None:
        self.config = config
        self.redact = redact
        self.model = model
        self.started = False

    def __enter__(self) -> ProviderCall:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if isinstance(error, httpx.HTTPError):
            raise map_error(self.config, error, started=self.started) from None

    async def check(self, response: httpx.Response, *, stream: bool) -> None:
        """Raise for an error answer (``RetryableFailure`` for 429 and overloaded ones);
        for a stream, also for an answer that is no event stream."""
        if response.is_success:
            if stream and not _is_event_stream(response):
                body = await read_capped(response)
                error = _embedded_error(self, response, body)
                raise error if error is not None else _not_a_stream(self.config, response)
            self.started = True
            return
        body = await read_capped(response)
        error = map_error(self.config, response, body=body, model=self.model, redact=self.redact)
        if response.status_code in RETRY_STATUSES:
            raise RetryableFailure(error, retry_after(response.headers))
        raise error

    def event_error(self, error: dict[str, Any] | str, *, status: int | None = None) -> None:
        """Raise for an error a provider sent inside the stream (as an event)."""
        label, provider = self.config.label, self.config.id
        text = json.dumps({"error": error})
        detail = provider_message(text, self.redact)
        if status == 429:
            raise RetryableFailure(
                RateLimited(
                    f"{label} is limiting requests. Wait a little and try again, or check the "
                    f"plan's rate limits and quota.{_says(label, detail)}",
                    provider=provider,
                )
            )
        if status is not None and status in RETRY_STATUSES:
            raise RetryableFailure(
                ProviderError(
                    f"{label} is overloaded or failing. Try again in a moment."
                    f"{_says(label, detail)}",
                    reason="provider_unavailable",
                    provider=provider,
                )
            )
        raise ProviderError(
            f"{label} stopped the answer with an error: {detail or 'no details'}",
            provider=provider,
        )


async def read_capped(response: httpx.Response, limit: int = MAX_ERROR_BODY) -> str:
    """The start of a response body as text (an error answer may be huge, or endless)."""
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= limit:
            break
    return bytes(data[:limit]).decode("utf-8", errors="replace")


def _is_event_stream(response: httpx.Response) -> bool:
    content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    return content_type == "text/event-stream"


def _embedded_error(call: ProviderCall, response: httpx.Response, body: str) -> TeraxError | None:
    """A JSON error object sent with a success status (some OpenAI-compatible servers)."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, dict) and data.get("error"):
        detail = provider_message(body, call.redact)
        if _MISSING_MODEL.search(body) and call.model is not None:
            return ModelNotFound(
                f"{call.config.label} has no model '{call.redact(call.model)}'."
                f"{_says(call.config.label, detail)}",
                provider=call.config.id,
            )
        return ProviderError(
            f"{call.config.label} answered with an error: {detail or 'no details'}",
            provider=call.config.id,
        )
    return None


def _not_a_stream(config: ProviderConfig, response: httpx.Response) -> ProviderError:
    content_type = response.headers.get("content-type", "") or "no content type"
    return ProviderError(
        f"{config.label} did not answer with an event stream ({content_type[:60]}); is "
        f"{config.base_url} the right base URL?",
        reason="bad_response",
        provider=config.id,
    )
