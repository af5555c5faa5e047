"""Google Application Default Credentials for Vertex AI, through google-auth (the
``vertex`` extra).

``adc_headers(key_file)`` gives the headers that authenticate one request
(``authorization: Bearer …``, and ``x-goog-user-project`` when the credentials name a
quota project). Credentials are loaded once per key file (``None``: google-auth's own
search: ``GOOGLE_APPLICATION_CREDENTIALS``, the gcloud ADC file, the metadata server)
and kept; their token is reused until google-auth deems it expired, then refreshed.
google-auth is synchronous, so loading and refreshing run in a worker thread (one at a
time per process, so concurrent requests share one refresh) that a cancelled request
leaves behind rather than waits for.
"""

from __future__ import annotations

import threading
from typing import Any, Final

import anyio.to_thread
import google.auth
import google.auth.exceptions
from google.auth.credentials import Credentials
from google.auth.transport.requests import Request

from .._errors import ProviderError

__all__ = ["CLOUD_PLATFORM_SCOPE", "CREDENTIALS_CACHE_SIZE", "adc_headers"]

CLOUD_PLATFORM_SCOPE: Final = "https://www.googleapis.com/auth/cloud-platform"
# Credentials kept, one per key file.
CREDENTIALS_CACHE_SIZE: Final = 16

_cache: dict[str | None, Credentials] = {}
_lock = threading.Lock()


def _load(key_file: str | None) -> Credentials:
    scopes = [CLOUD_PLATFORM_SCOPE]
    credentials: Any
    if key_file is not None:
        credentials, _ = google.auth.load_credentials_from_file(  # type: ignore[no-untyped-call]
            key_file, scopes=scopes
        )
    else:
        credentials, _ = google.auth.default(scopes=scopes)
    return credentials  # type: ignore[no-any-return]


def _apply(credentials: Credentials) -> dict[str, str]:
    headers: dict[str, str] = {}
    credentials.apply(headers)  # type: ignore[no-untyped-call]
    return headers


def _refreshed(key_file: str | None) -> dict[str, str]:
    """Blocking: load (once) and refresh (when needed) the credentials of ``key_file``."""
    try:
        with _lock:
            credentials = _cache.get(key_file)
            if credentials is None:
                credentials = _load(key_file)
                if len(_cache) >= CREDENTIALS_CACHE_SIZE:
                    _cache.pop(next(iter(_cache)))
                _cache[key_file] = credentials
            if not credentials.valid:
                credentials.refresh(Request())  # type: ignore[no-untyped-call]
            return _apply(credentials)
    except google.auth.exceptions.DefaultCredentialsError as exc:
        raise ProviderError(
            f"Vertex AI found no usable Application Default Credentials ({exc}); run "
            "`gcloud auth application-default login`, set GOOGLE_APPLICATION_CREDENTIALS to "
            "a service-account key file, or pass an API key (GOOGLE_CLOUD_API_KEY)"
        ) from exc
    except google.auth.exceptions.GoogleAuthError as exc:
        raise ProviderError(f"Vertex AI could not get an access token: {exc}") from exc


async def adc_headers(key_file: str | None) -> dict[str, str]:
    """The authentication headers for one Vertex request (see the module docstring)."""
    credentials = _cache.get(key_file)
    if credentials is not None and credentials.valid:
        return _apply(credentials)
    return await anyio.to_thread.run_sync(_refreshed, key_file, abandon_on_cancel=True)
