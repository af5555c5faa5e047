"""AWS credentials and SigV4 signing for Bedrock, through botocore (the ``bedrock`` extra).

``resolve_credentials`` finds the credentials the original finds: AWS keys from the
request's ``env`` or the process environment unless a profile was named for the request,
else botocore's credential chain (profile, SSO, shared files, container and instance
metadata, web identity) for the named or ambient profile. The chain does blocking I/O
(files, metadata endpoints), so it runs in a worker thread; its sessions are kept
(``SESSION_CACHE_SIZE``) so that refreshable credentials refresh themselves instead of
being fetched again per request. ``clean_credentials`` puts them through the same check
as an API key (a value read from a file often ends in a newline). ``SigV4Signer`` signs
one request with frozen credentials; the HTTP shell calls it before every attempt, so each
retry carries a fresh signature.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Final

import anyio.to_thread
import botocore.session
import httpx2
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import ReadOnlyCredentials
from botocore.exceptions import BotoCoreError, ProfileNotFound

from .._errors import ProviderError
from .._keys._secrets import clean_api_key

__all__ = [
    "SESSION_CACHE_SIZE",
    "SIGNING_NAME",
    "AwsIdentity",
    "SigV4Signer",
    "clean_credentials",
    "profile_region",
    "resolve_credentials",
]

SIGNING_NAME: Final = "bedrock"
# botocore sessions kept, one per profile and config-file location.
SESSION_CACHE_SIZE: Final = 16
# Headers covered by the signature besides the X-Amz-* ones botocore adds.
_SIGNED: Final = ("host", "content-type")
_SIGNATURE_HEADERS: Final = ("Authorization", "X-Amz-Date", "X-Amz-Security-Token")
_NO_CREDENTIALS: Final = (
    "No AWS credentials found for Amazon Bedrock: set AWS_PROFILE, AWS_ACCESS_KEY_ID and "
    "AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK (or pass api_key), or configure "
    "the AWS credential chain (aws configure / aws sso login)"
)

# What the first three fields of the credentials are (access key, secret key, token) and
# where they come from, for the error of a malformed one.
_CREDENTIAL_PARTS: Final = (
    ("AWS access key id", "AWS_ACCESS_KEY_ID"),
    ("AWS secret access key", "AWS_SECRET_ACCESS_KEY"),
    ("AWS session token", "AWS_SESSION_TOKEN"),
)

_sessions: dict[tuple[str | None, ...], botocore.session.Session] = {}
_sessions_lock = threading.Lock()


class AwsIdentity:
    """Frozen credentials and, when the chain was asked, the profile's region."""

    __slots__ = ("credentials", "profile_region")

    def __init__(self, credentials: ReadOnlyCredentials, profile_region: str | None) -> None:
        self.credentials = credentials
        self.profile_region = profile_region


def _read(env: Mapping[str, str] | None, name: str) -> str | None:
    return (env or {}).get(name) or os.environ.get(name) or None


def _session(profile: str | None) -> botocore.session.Session:
    key = (
        profile,
        os.environ.get("AWS_CONFIG_FILE"),
        os.environ.get("AWS_SHARED_CREDENTIALS_FILE"),
    )
    with _sessions_lock:
        session = _sessions.get(key)
        if session is None:
            if len(_sessions) >= SESSION_CACHE_SIZE:
                _sessions.pop(next(iter(_sessions)))
            session = _sessions[key] = botocore.session.Session(profile=profile)
        return session


def _from_chain(profile: str | None) -> AwsIdentity:
    """Blocking: botocore's chain for ``profile`` (``None``: the ambient one)."""
    try:
        session = _session(profile)
        credentials = session.get_credentials()
        frozen = credentials.get_frozen_credentials() if credentials is not None else None
        region = session.get_config_variable("region")
    except ProfileNotFound as exc:
        raise ProviderError(
            f"AWS profile {profile!r} is not in the AWS config files ({exc}); "
            "check AWS_PROFILE or the profile option, or run `aws configure --profile`"
        ) from exc
    except BotoCoreError as exc:
        raise ProviderError(f"Could not load AWS credentials for Amazon Bedrock: {exc}") from exc
    if frozen is None or not frozen.access_key or not frozen.secret_key:
        raise ProviderError(_NO_CREDENTIALS)
    return AwsIdentity(frozen, region if isinstance(region, str) and region else None)


async def resolve_credentials(
    env: Mapping[str, str] | None, profile: str | None, *, skip_auth: bool = False
) -> AwsIdentity:
    """The credentials to sign with. ``profile`` is the one named for this request (it
    wins over keys in the environment); ``skip_auth`` gives placeholder keys for proxies
    that need no authentication (``AWS_BEDROCK_SKIP_AUTH=1``)."""
    if skip_auth:
        return AwsIdentity(ReadOnlyCredentials("dummy-access-key", "dummy-secret-key", None), None)
    access_key = _read(env, "AWS_ACCESS_KEY_ID")
    secret_key = _read(env, "AWS_SECRET_ACCESS_KEY")
    if profile is None and access_key and secret_key:
        token = _read(env, "AWS_SESSION_TOKEN")
        return AwsIdentity(ReadOnlyCredentials(access_key, secret_key, token), None)
    chain_profile = profile or _read(None, "AWS_PROFILE")
    return await anyio.to_thread.run_sync(_from_chain, chain_profile, abandon_on_cancel=True)


def clean_credentials(credentials: ReadOnlyCredentials, provider: str) -> ReadOnlyCredentials:
    """``credentials`` with each part through ``clean_api_key``: surrounding whitespace
    stripped (a newline would break the signature or a header), any other whitespace,
    control or non-ASCII character refused with an error naming the part and the provider,
    never the value."""
    parts = list(credentials)
    for index, (what, variable) in enumerate(_CREDENTIAL_PARTS):  # the first three fields
        value = parts[index]
        if value is not None:
            sources = [
                f"{variable} (the request's env or the process environment)",
                "the AWS profile",
            ]
            parts[index] = clean_api_key(value, provider, what=what, sources=sources)
    return ReadOnlyCredentials(*parts)


def _region_of(profile: str | None) -> str | None:
    try:
        region = _session(profile).get_config_variable("region")
    except BotoCoreError as exc:
        raise ProviderError(f"Could not read the AWS config for Amazon Bedrock: {exc}") from exc
    return region if isinstance(region, str) and region else None


async def profile_region(profile: str | None) -> str | None:
    """The region configured for ``profile`` (``None``: the ambient one), read in a
    worker thread (the AWS config files)."""
    return await anyio.to_thread.run_sync(_region_of, profile, abandon_on_cancel=True)


class SigV4Signer:
    """Signs a request for Bedrock in ``region`` (the ``PrepareRequest`` hook): the host,
    the content type, the body and the time of signing are covered."""

    __slots__ = ("_credentials", "region")

    def __init__(self, credentials: ReadOnlyCredentials, region: str) -> None:
        self._credentials = credentials
        self.region = region

    def __call__(self, request: httpx2.Request) -> None:
        headers = {name: request.headers[name] for name in _SIGNED if name in request.headers}
        aws = AWSRequest(
            method=request.method, url=str(request.url), data=request.content, headers=headers
        )
        SigV4Auth(self._credentials, SIGNING_NAME, self.region).add_auth(aws)
        for name in _SIGNATURE_HEADERS:
            value = aws.headers.get(name)
            if value is not None:
                request.headers[name] = value
