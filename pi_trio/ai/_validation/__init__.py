"""Tool-argument validation as pi 1.6 does it: coercion, the original's JSON Schema dialect, a
compiled fast path, and the original's error texts. ``_validate`` is the public half; the rest
(``_engine`` and what it compiles) is imported on the first validation."""
