"""Transcripts: what their system messages declare, and how one is handed to a model.

``_system`` replays the system prompt and the declared tools from the system messages;
``_history`` answers providers' questions about that history of declarations;
``_transform`` makes a transcript safe to replay to another model."""
