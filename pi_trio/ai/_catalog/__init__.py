"""The model catalog: the original's data, shipped as one file, and the look-ups over it.

``_data`` reads ``_catalog.bin`` (written by ``scripts/generate_catalog.py``, never by hand);
``_models`` answers ``get_model`` and its relatives, costs and thinking levels."""
