"""The built-in HTTP providers, one module per api, each defining ``API_PROVIDER``.

They are imported on first use of their api (``pi_trio.ai._registry``). ``_http`` holds the
shared plumbing (keys, headers, hooks, the POST with retries, HTTP error texts, SSE reading
and the run wrapper), ``_sse`` the sans-IO SSE parser, ``_simple`` the shared mapping of the
unified ``*_simple`` options.
"""
