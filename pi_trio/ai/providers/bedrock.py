"""The ``bedrock-converse-stream`` provider (Amazon Bedrock):
``POST {endpoint}/model/{model id}/converse-stream``, answered as an AWS event stream.

Request building lives in ``_bedrock_request`` / ``_bedrock_models`` and the frame mapping
in ``_bedrock_events`` (sans-IO); credentials and signing in ``_bedrock_auth`` and the
binary framing in ``_eventstream``, both on botocore, loaded on the first request: without
the ``bedrock`` extra a request fails with one line naming it.

Authentication, as the original: a bearer token (``extra["bearer_token"]``, an
``api_key`` that is not a placeholder such as ``<authenticated>``, or
``AWS_BEARER_TOKEN_BEDROCK``), else SigV4 with the credentials ``_bedrock_auth`` finds
(``extra["profile"]`` or ``AWS_PROFILE`` in ``options.env`` names a profile that wins over
keys in the environment); ``AWS_BEDROCK_SKIP_AUTH=1`` signs with placeholder keys for
proxies that need none. Every attempt is signed anew. The region: the one in an ARN model
id, else ``extra["region"]`` / ``AWS_REGION`` / ``AWS_DEFAULT_REGION``, else that of a
standard endpoint in ``base_url``, else ``us-east-1`` (or the ambient ``AWS_PROFILE``'s).
A ``base_url`` that is not a standard Bedrock endpoint (a proxy, a VPC endpoint) is always
used; a standard one only while no region or ambient profile is configured.

A ``ValidationException`` saying that the request's strict tools exceed Claude's limits,
for a request that sent tools strict which only prefer it, is answered by sending the
request again with those tools non-strict (Bedrock checks the tools before it streams,
so nothing was shown yet); the message keeps a ``bedrock_strict_tools_fallback``
diagnostic and the session sends them non-strict from then on (``_strict_limits``).
"""

from __future__ import annotations

import os
import re
from contextlib import AsyncExitStack
from typing import Any, Final
from urllib.parse import quote

import anyio
import anyio.abc
import httpx2
import msgspec

from .._errors import ProviderError
from .._json._depth import decode_json
from .._stream._options import StreamOptions, ThinkingBudgets
from .._stream._registry import ApiProvider
from .._stream._stall import watching
from .._transcript._system import normalize_context
from .._types import Context, Model, now_ms
from ._bedrock_events import BedrockEventMapper, bedrock_error_text
from ._bedrock_models import configured_region, is_claude, supports_adaptive_thinking
from ._bedrock_request import build_bedrock_body, sends_preferred_strict_tools
from ._common import option_env
from ._entry import provider_stream
from ._http import ProviderRun, format_http_error, provider_event_observer, resolve_api_key
from ._http_errors import shown_error_text
from ._http_send import CLOSE_TIMEOUT_S
from ._simple import (
    adjust_max_tokens_for_thinking,
    build_base_options,
    clamp_max_tokens_to_context,
    clamp_thinking_budget_to_answer_room,
)
from ._sse import Observer
from ._strict_limits import (
    has_exceeded_strict_tool_limits,
    is_strict_tool_limit_message,
    record_strict_tools_fallback,
)

__all__ = [
    "API_PROVIDER",
    "MISSING_EXTRA_TEXT",
    "bedrock_simple_options",
    "bedrock_target",
    "stream_bedrock",
    "stream_simple_bedrock",
]

MISSING_EXTRA_TEXT: Final = (
    "Amazon Bedrock needs the bedrock extra: pip install 'pi-trio[bedrock]' "
    "(botocore is not installed)"
)
DEFAULT_REGION: Final = "us-east-1"
_ARN_REGION: Final = re.compile(r"^arn:aws(?:-[a-z0-9-]+)?:bedrock:([a-z0-9-]+):")
_STANDARD_HOST: Final = re.compile(
    r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$"
)
_PLACEHOLDER: Final = re.compile(r"^<[^>]+>$")
_RESERVED_HEADERS: Final = frozenset({"authorization", "host"})
_TOKEN_SOURCES: Final = [
    'extra["bearer_token"]',
    "the request options",
    "get_api_key",
    "AWS_BEARER_TOKEN_BEDROCK",
]


# --------------------------------------------------------------------------- target


def _standard_region(base_url: str) -> str | None:
    host = httpx2.URL(base_url).host.lower() if base_url.strip() else ""
    match = _STANDARD_HOST.match(host)
    return match.group(1) if match else None


def bedrock_target(
    model: Model, options: StreamOptions, *, ambient_profile: bool
) -> tuple[str | None, str | None]:
    """``(region, endpoint)``: ``region`` is ``None`` when only the ambient profile can
    tell it; ``endpoint`` is ``None`` for the region's standard one."""
    configured = configured_region(options)
    base_url = model.base_url.strip()
    standard = _standard_region(base_url)
    explicit = bool(base_url) and (standard is None or (configured is None and not ambient_profile))
    arn = _ARN_REGION.match(model.id)
    region: str | None
    if arn is not None:
        region = arn.group(1)
    elif configured is not None:
        region = configured
    elif standard is not None and explicit:
        region = standard
    else:
        region = None if ambient_profile else DEFAULT_REGION
    return region, (base_url.rstrip("/") if explicit else None)


def _standard_endpoint(region: str) -> str:
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"https://bedrock-runtime.{region}.{suffix}"


def _bearer_token(run: ProviderRun) -> str | None:
    options = run.options
    token = (options.extra or {}).get("bearer_token") or resolve_api_key(run.model, options)
    if not token or _PLACEHOLDER.match(token.strip()):
        token = option_env(options, "AWS_BEARER_TOKEN_BEDROCK")
    if not token:
        return None
    return run.clean_key(token, _TOKEN_SOURCES)


# --------------------------------------------------------------------------- failures


def _aws_message(body: str) -> str | None:
    try:
        data = decode_json(body)
    except msgspec.DecodeError:
        return None
    if isinstance(data, dict):
        for key in ("message", "Message"):
            value = data.get(key)
            if isinstance(value, str) and value:
                return value
    return None


class _Failure:
    """What the diagnostic of a failed response records."""

    __slots__ = ("code", "message", "request_id", "status")

    def __init__(self) -> None:
        self.status: int | None = None
        self.code: str | None = None
        self.request_id: str | None = None
        self.message: str | None = None

    def describe(self, status: int, headers: httpx2.Headers, body: str, more: bool) -> str:
        self.status = status
        self.request_id = headers.get("x-amzn-requestid")
        code = (headers.get("x-amzn-errortype") or "").partition(":")[0].strip()
        message = _aws_message(body)
        self.code = code or None
        self.message = message
        if code:
            return bedrock_error_text(code, shown_error_text(body, message, more))
        return format_http_error(status, body, message, more=more)

    def diagnostic(self) -> dict[str, Any] | None:
        details: dict[str, Any] = {}
        if self.status is not None:
            details["status"] = self.status
        if self.code is not None and self.code.endswith("Exception"):
            details["errorCode"] = self.code
        if self.request_id:
            details["requestId"] = self.request_id.strip()[:200]
        if not details:
            return None
        return {"type": "bedrock_response_failure", "timestamp": now_ms(), "details": details}

    def refused_strict_tools(self) -> bool:
        """Whether the failure says the strict tools exceed Claude's limits."""
        return self.code == "ValidationException" and is_strict_tool_limit_message(
            self.message or ""
        )


# --------------------------------------------------------------------------- the stream


async def _observe_frame(observe: Observer, name: str, payload: bytes) -> None:
    """An event frame as the AWS SDK gives it, ``{name: payload}``, to the observer."""
    try:
        value = decode_json(payload)
    except msgspec.DecodeError:
        return  # the mapper names the broken frame
    await observe({name: value})


async def _stream(run: ProviderRun, context: Context) -> None:
    try:
        from ._bedrock_auth import (
            SigV4Signer,
            clean_credentials,
            profile_region,
            resolve_credentials,
        )
        from ._eventstream import EVENTSTREAM_CONTENT_TYPE, EventStreamReader
    except ImportError as exc:
        raise ProviderError(MISSING_EXTRA_TEXT) from exc
    model, options = run.model, run.options
    context = normalize_context(context)
    ambient = bool(os.environ.get("AWS_PROFILE"))
    region, endpoint = bedrock_target(model, options, ambient_profile=ambient)
    skip_auth = option_env(options, "AWS_BEDROCK_SKIP_AUTH") == "1"
    token = None if skip_auth else _bearer_token(run)
    profile = (options.extra or {}).get("profile") or (options.env or {}).get("AWS_PROFILE")
    auth: dict[str, str] = {}
    signer: SigV4Signer | None = None
    if token is not None:
        auth["authorization"] = f"Bearer {token}"
        region = region or await profile_region(profile)
    else:
        identity = await resolve_credentials(options.env, profile, skip_auth=skip_auth)
        credentials = identity.credentials
        run.secrets.update(s for s in (credentials.secret_key, credentials.token) if s)
        credentials = clean_credentials(credentials, model.provider)
        run.secrets.update(s for s in (credentials.secret_key, credentials.token) if s)
        region = region or identity.profile_region
        if region is not None:
            signer = SigV4Signer(credentials, region)
    if region is None:
        raise ProviderError(
            "No AWS region for Amazon Bedrock: set AWS_REGION, pass extra={'region': ...}, "
            "or give the AWS profile a region"
        )
    headers = {
        name: value
        for name, value in run.headers({}).items()
        if name.lower() not in _RESERVED_HEADERS and not name.lower().startswith("x-amz-")
    }
    headers.update(auth)
    base = endpoint or _standard_endpoint(region)
    url = f"{base}/model/{quote(model.id, safe='')}/converse-stream"
    mapper = BedrockEventMapper(run.builder, model)
    failure = _Failure()
    timer = run.stall_timer()
    relax = has_exceeded_strict_tool_limits(options.session_id)
    may_relax = sends_preferred_strict_tools(model, context, options)
    try:
        async with AsyncExitStack() as stack:
            while True:
                body = build_bedrock_body(model, context, options, relax_preferred_strict=relax)
                payload = await run.on_payload(body)
                try:
                    response = await stack.enter_async_context(
                        run.open_response(
                            url,
                            headers,
                            payload,
                            accept=EVENTSTREAM_CONTENT_TYPE,
                            prepare=signer,
                            describe=failure.describe,
                            timer=timer,
                        )
                    )
                except ProviderError:
                    if relax or not may_relax or not failure.refused_strict_tools():
                        raise
                    relax = True
                    record_strict_tools_fallback(
                        run.builder.message, "bedrock", failure.message, options.session_id
                    )
                    failure = _Failure()
                    continue
                break
            failure.request_id = response.headers.get("x-amzn-requestid")
            await run.emit(run.builder.start())
            reader = EventStreamReader(response, "Bedrock", timer)
            await stack.enter_async_context(watching(timer))  # ends silent reads
            observe = provider_event_observer(model, options)
            try:
                async for frames in reader:
                    for frame in frames:
                        if observe is not None and frame.message_type == "event":
                            await _observe_frame(observe, frame.name, frame.payload)
                        events = mapper.feed(
                            frame.message_type, frame.name, frame.payload, frame.error_message
                        )
                        await run.emit_all(events)
                    if mapper.ended:
                        # the answer is complete whatever happens to the rest of the body
                        await reader.drain()
                        break
            finally:
                with anyio.move_on_after(CLOSE_TIMEOUT_S, shield=True):
                    await reader.aclose()
        await run.emit_all(mapper.finish())
    except ProviderError:
        failure.code = mapper.error_code or failure.code
        diagnostic = failure.diagnostic()
        if diagnostic is not None:
            message = run.builder.message
            message.diagnostics = [*(message.diagnostics or []), diagnostic]
        raise


@provider_stream
async def stream_bedrock(run: ProviderRun, context: Context) -> None:
    """Stream one Bedrock ConverseStream request with provider-native options:
    ``reasoning`` / ``thinking_budgets`` as given, and ``extra`` (``region``,
    ``profile``, ``bearer_token``, ``tool_choice``, ``thinking_display``,
    ``interleaved_thinking``, ``request_metadata``)."""
    await _stream(run, context)


# --------------------------------------------------------------------------- simple


def bedrock_simple_options(model: Model, context: Context, options: StreamOptions) -> StreamOptions:
    """The native options for the unified ``reasoning``: budget-based Claude gets room
    for its thinking budget in ``max_tokens`` (and the budget shrinks to leave
    ``MIN_ANSWER_TOKENS`` for the answer); other models take the level as it is."""
    base = build_base_options(model, context, options)
    level = options.reasoning
    if not level:
        return msgspec.structs.replace(base, reasoning=None)
    if not is_claude(model) or supports_adaptive_thinking(model):
        return base
    max_tokens, budget = adjust_max_tokens_for_thinking(
        base.max_tokens, model.max_tokens, level, options.thinking_budgets
    )
    max_tokens = clamp_max_tokens_to_context(model, context, max_tokens)
    key = "high" if level in ("xhigh", "max") else level
    budgets = msgspec.structs.replace(
        options.thinking_budgets or ThinkingBudgets(),
        **{key: clamp_thinking_budget_to_answer_room(budget, max_tokens)},
    )
    return msgspec.structs.replace(base, max_tokens=max_tokens, thinking_budgets=budgets)


@provider_stream
async def stream_simple_bedrock(run: ProviderRun, context: Context) -> None:
    """``stream_bedrock`` with the unified options mapped."""
    run.options = bedrock_simple_options(run.model, context, run.options)
    await _stream(run, context)


API_PROVIDER: Final = ApiProvider(
    api="bedrock-converse-stream", stream=stream_bedrock, stream_simple=stream_simple_bedrock
)
