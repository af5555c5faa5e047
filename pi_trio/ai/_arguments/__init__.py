"""A tool call's arguments: JSON text read as it streams, and parsed once when it ends.

``_partial`` makes the best of any text (strict, repaired, partial), ``_streaming`` reads the
text piece by piece for the live previews, ``_final`` is the one parse of the finished text,
worded on failure as V8's ``JSON.parse`` words it (``_v8_errors``)."""
