"""pi_trio: the Pi agent runtime on structured concurrency.

``pi_trio.ai`` makes one LLM call (types, events, providers, catalog); ``pi_trio.agent``
runs the agent loop and the stateful ``Agent``; ``pi_trio.proxy`` is the Pi proxy
protocol (client, and the server with the ``proxy`` extra); ``pi_trio.testing`` has the
faux provider; ``pi_trio.cli`` is the ``pi-trio`` command. On the public API of these:
``pi_trio.session`` saves and resumes conversations, ``pi_trio.mcp`` offers an MCP
server's tools to agents, ``pi_trio.otel`` traces runs, ``pi_trio.durable`` runs agents as
DBOS workflows and ``pi_trio.fanout`` spreads agent jobs over Ray (each its own extra).
ARCHITECTURE.md, at the top of the repository, maps the layers.

``from pi_trio import Agent, tool`` gives the two names most programs start with (from
``pi_trio.agent``, imported on their first use, so ``import pi_trio.ai`` alone does not
pay for the agent layer).
"""

TYPE_CHECKING = False  # as typing's, without importing typing for it (type checkers know it)
__version__ = "0.1.0"
__all__ = ["Agent", "tool"]

if TYPE_CHECKING:
    from .agent import Agent as Agent
    from .agent import tool as tool
else:

    def __getattr__(name: str) -> object:
        if name not in __all__:
            raise AttributeError(f"module 'pi_trio' has no attribute {name!r}", name=name)
        from . import agent

        value = getattr(agent, name)
        globals()[name] = value  # once: the next look-up is a plain one
        return value


del TYPE_CHECKING
