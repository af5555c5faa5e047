"""The built-in HTTP providers, one module per api, each defining ``API_PROVIDER``.

They are imported on first use of their api (``pi_trio.ai._stream._registry``). Shared by all of
them: ``_http`` (keys, headers, hooks, the POST with retries, SSE reading and the run
wrapper ``run_provider`` / ``ProviderRun``), ``_http_errors`` (HTTP failure texts and
retry rules), ``_sse`` (the sans-IO SSE parser) and ``_simple`` (the mapping of the unified
``*_simple`` options: context-clamped max tokens and thinking budgets).
"""
