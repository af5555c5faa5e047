"""Messages, events and models in the original runtime's JSON.

``_codec`` has ``to_json`` / ``from_json``; ``_lossless`` keeps unknown fields in place, guided
by the decoding plans of ``_wire_plans``; ``_jsnum`` spells numbers as JavaScript does;
``_depth`` bounds the nesting of every document decoded from outside; ``_where`` finds the
line of a wrong field for errors about files."""
