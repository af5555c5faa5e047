"""pi_trio: the Pi agent runtime on structured concurrency.

``pi_trio.ai`` makes one LLM call (types, events, providers, catalog); ``pi_trio.agent``
runs the agent loop and the stateful ``Agent``; ``pi_trio.proxy`` is the Pi proxy
protocol (client, and the server with the ``proxy`` extra); ``pi_trio.testing`` has the
faux provider; ``pi_trio.cli`` is the ``pi-trio`` command. On the public API of these:
``pi_trio.session`` saves and resumes conversations, ``pi_trio.mcp`` offers an MCP
server's tools to agents, ``pi_trio.otel`` traces runs, ``pi_trio.durable`` runs agents as
DBOS workflows and ``pi_trio.fanout`` spreads agent jobs over Ray (each its own extra).
ARCHITECTURE.md, at the top of the repository, maps the layers.
"""

__version__ = "0.1.0"
