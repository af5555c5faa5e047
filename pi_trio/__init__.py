"""pi_trio: the Pi agent runtime on structured concurrency.

``pi_trio.ai`` makes one LLM call (types, events, providers, catalog); ``pi_trio.agent``
runs the agent loop and the stateful ``Agent``; ``pi_trio.session`` saves and resumes
conversations; ``pi_trio.testing`` has the faux provider; ``pi_trio.mcp`` (the ``mcp``
extra) offers an MCP server's tools to agents.
"""

__version__ = "0.1.0"
