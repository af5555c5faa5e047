"""OpenTelemetry traces and metrics for agent runs, after the GenAI semantic conventions,
pi 1.6's own vocabulary (``instrument(vocabulary="pi")``, ``traced_provider``), or both.

Needs the ``otel`` extra (``pip install 'pi-trio[otel]'``: the OpenTelemetry API and
SDK). ``import pi_trio`` never imports OpenTelemetry; only this module does::

    from pi_trio.otel import instrument

    uninstrument = instrument(agent)      # or instrument() for every Agent made from now on
    ...
    uninstrument()
"""

try:
    import opentelemetry.metrics
    import opentelemetry.trace  # noqa: F401
except ImportError as exc:  # pragma: no cover - the extra is part of the test install
    raise ImportError(
        "pi_trio.otel needs the OpenTelemetry API: pip install 'pi-trio[otel]' "
        "(opentelemetry-api and opentelemetry-sdk)"
    ) from exc

from ._instrument import instrument as instrument
from ._pi_listener import traced_provider as traced_provider
from ._telemetry import CAPTURE_CONTENT_ENV as CAPTURE_CONTENT_ENV
from ._telemetry import INSTRUMENTATION_NAME as INSTRUMENTATION_NAME

__all__ = ["CAPTURE_CONTENT_ENV", "INSTRUMENTATION_NAME", "instrument", "traced_provider"]
