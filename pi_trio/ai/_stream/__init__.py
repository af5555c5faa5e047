"""One call's stream of events, from the stream-function contract to the folded message.

``_options`` (request options and the stream-function contract) and ``_abort`` (the abort
signal) are what a stream function is given; ``_registry`` says which stream function serves a
model's api. ``_builder`` produces the events and ``_live`` holds the blocks still streaming;
``_consume`` applies each accepted event once (``MessageFold``, ``InlineStream``); ``_open``
runs a stream function (``open_stream``, ``complete``), unwrapping the exception groups of its
task group with ``_groups``."""
