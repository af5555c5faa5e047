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

import json
import threading
import warnings
from typing import Any, Final

import anyio.to_thread
import google.auth
import google.auth.exceptions
from google.auth.credentials import Credentials
from google.auth.transport.requests import Request
from google.oauth2 import credentials as user_credentials
from google.oauth2 import service_account

from .._errors import ProviderError

__all__ = ["CLOUD_PLATFORM_SCOPE", "CREDENTIALS_CACHE_SIZE", "adc_headers"]

CLOUD_PLATFORM_SCOPE: Final = "https://www.googleapis.com/auth/cloud-platform"
# Credentials kept, one per key file.
CREDENTIALS_CACHE_SIZE: Final = 16

_cache: dict[str | None, Credentials] = {}
_lock = threading.Lock()


def _from_file(key_file: str) -> Any:
    """The credentials of a key file, by its ``type``: service accounts and user
    credentials through their own loaders, other kinds (external accounts, impersonation)
    through google-auth's generic one, which its own ADC search uses for this variable
    too (with its warning about untrusted files silenced, as there)."""
    scopes = [CLOUD_PLATFORM_SCOPE]
    try:
        with open(key_file, encoding="utf-8") as file:
            info = json.load(file)
    except (OSError, ValueError) as exc:
        raise google.auth.exceptions.DefaultCredentialsError(
            f"GOOGLE_APPLICATION_CREDENTIALS names {key_file!r}, which is not a readable "
            f"JSON key file: {exc}"
        ) from exc
    kind = info.get("type") if isinstance(info, dict) else None
    if kind == "service_account":
        return service_account.Credentials.from_service_account_info(info, scopes=scopes)
    if kind == "authorized_user":
        return user_credentials.Credentials.from_authorized_user_info(info, scopes=scopes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        credentials, _ = google.auth.load_credentials_from_dict(info, scopes=scopes)
    return credentials


def _load(key_file: str | None) -> Credentials:
    if key_file is not None:
        credentials = _from_file(key_file)
    else:
        credentials, _ = google.auth.default(scopes=[CLOUD_PLATFORM_SCOPE])
    return credentials  # type: ignore[no-any-return]


def _apply(credentials: Credentials) -> dict[str, str]:
    headers: dict[str, str] = {}
    credentials.apply(headers)
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
                transport = Request()
                try:
                    credentials.refresh(transport)
                finally:
                    transport.session.close()  # its pooled connection goes with it
            return _apply(credentials)
    except google.auth.exceptions.DefaultCredentialsError as exc:
        raise ProviderError(
            f"Vertex AI found no usable Application Default Credentials ({exc}); run "
            "`gcloud auth application-default login`, set GOOGLE_APPLICATION_CREDENTIALS to "
            "a service-account key file, or pass an API key (GOOGLE_CLOUD_API_KEY)"
        ) from exc
    except google.auth.exceptions.GoogleAuthError as exc:
        raise ProviderError(f"Vertex AI could not get an access token: {exc}") from exc
    except ValueError as exc:  # a key file of the right type with fields missing
        raise ProviderError(f"Vertex AI could not read its credentials: {exc}") from exc


async def adc_headers(key_file: str | None) -> dict[str, str]:
    """The authentication headers for one Vertex request (see the module docstring)."""
    credentials = _cache.get(key_file)
    if credentials is not None and credentials.valid:
        return _apply(credentials)
    return await anyio.to_thread.run_sync(_refreshed, key_file, abandon_on_cancel=True)
