"""How requests identify the calling app to providers: the ``User-Agent`` and attribution
headers (pi 1.6's ``ClientIdentity``).

An identity is plain data (``StreamOptions.identity``); absent fields take the defaults: a
detailed ``User-Agent`` (``pi-trio/<version> (<platform>; python/<version>; <arch>)``) and
no attribution. Attribution becomes each provider's headers: OpenRouter's
``HTTP-Referer`` / ``X-OpenRouter-Title`` / ``X-OpenRouter-Categories``, NVIDIA NIM's
``X-BILLING-INVOKE-ORIGIN``, OpenCode's ``x-opencode-client``. Identity headers sit below
the provider's, the model's and the request's headers, so configured headers win and a
``None`` request header removes one.
"""

from __future__ import annotations

import platform
import sys
from typing import Final, Literal
from urllib.parse import urlsplit

import msgspec

__all__ = [
    "ClientAttribution",
    "ClientIdentity",
    "CustomUserAgent",
    "PI_TRIO_ATTRIBUTION",
    "format_user_agent",
    "get_attribution_headers",
    "get_identity_headers",
    "merge_client_identity",
]

_VERSION: Final = "0.1.0"


class ClientAttribution(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Who requests are attributed to: an app ``name``, its ``url`` and optional
    ``categories`` (e.g. ``["cli-agent"]``)."""

    name: str
    url: str
    categories: list[str] | None = None


class CustomUserAgent(msgspec.Struct, kw_only=True):
    """A ``User-Agent`` of the app's own: ``custom`` is sent as it is."""

    custom: str


class ClientIdentity(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """How requests identify the app. ``user_agent``: ``"detailed"`` (default),
    ``"short"`` or ``CustomUserAgent(custom=...)``. ``attribution``: unset for the
    default (none), ``None`` to turn off attribution an identity it is merged over set.
    ``version``: the version in the detailed ``User-Agent``."""

    user_agent: Literal["short", "detailed"] | CustomUserAgent | msgspec.UnsetType = msgspec.UNSET
    attribution: ClientAttribution | msgspec.UnsetType | None = msgspec.UNSET
    version: str | msgspec.UnsetType = msgspec.UNSET


PI_TRIO_ATTRIBUTION: Final = ClientAttribution(
    name="pi-trio", url="https://pypi.org/project/pi-trio/", categories=["cli-agent"]
)
"""The attribution an Agent's requests carry unless its identity says otherwise."""


def merge_client_identity(*sources: ClientIdentity | None) -> ClientIdentity | None:
    """Merge identities field by field; later sources win, unset fields are skipped."""
    merged: ClientIdentity | None = None
    for source in sources:
        if source is None:
            continue
        merged = ClientIdentity() if merged is None else msgspec.structs.replace(merged)
        if source.user_agent is not msgspec.UNSET:
            merged.user_agent = source.user_agent
        if source.attribution is not msgspec.UNSET:
            merged.attribution = source.attribution
        if source.version is not msgspec.UNSET:
            merged.version = source.version
    return merged


def format_user_agent(identity: ClientIdentity | None = None) -> str:
    """The ``User-Agent`` an identity sends."""
    mode = "detailed" if identity is None else identity.user_agent
    if isinstance(mode, CustomUserAgent):
        return mode.custom
    if mode == "short":
        return "pi-trio"
    version = _VERSION
    if identity is not None and isinstance(identity.version, str):
        version = identity.version
    python = ".".join(str(part) for part in sys.version_info[:3])
    return f"pi-trio/{version} ({sys.platform}; python/{python}; {platform.machine()})"


def _host(base_url: str) -> str:
    try:
        return urlsplit(base_url).hostname or ""
    except ValueError:
        return ""


def get_attribution_headers(
    provider: str, base_url: str, identity: ClientIdentity | None = None
) -> dict[str, str]:
    """The attribution headers of ``identity`` for a request to ``provider`` at
    ``base_url`` (empty when attribution is off or the provider takes none)."""
    attribution = None if identity is None else identity.attribution
    if not isinstance(attribution, ClientAttribution):
        return {}
    if provider == "openrouter" or "openrouter.ai" in base_url:
        headers = {"HTTP-Referer": attribution.url, "X-OpenRouter-Title": attribution.name}
        if attribution.categories:
            headers["X-OpenRouter-Categories"] = ",".join(attribution.categories)
        return headers
    if provider == "nvidia" or _host(base_url) == "integrate.api.nvidia.com":
        name = attribution.name
        return {"X-BILLING-INVOKE-ORIGIN": name[:1].upper() + name[1:]}
    if provider in ("opencode", "opencode-go") or _host(base_url) == "opencode.ai":
        return {"x-opencode-client": attribution.name}
    return {}


def get_identity_headers(
    provider: str, base_url: str, identity: ClientIdentity | None = None
) -> dict[str, str]:
    """The headers an identity adds to a request: ``User-Agent`` and attribution."""
    return {
        "User-Agent": format_user_agent(identity),
        **get_attribution_headers(provider, base_url, identity),
    }
