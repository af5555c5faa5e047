"""Test helpers: the scripted faux provider and its response builders."""

from ._faux import FauxModel as FauxModel
from ._faux import FauxProvider as FauxProvider
from ._faux import FauxResponseFactory as FauxResponseFactory
from ._faux import FauxResponseStep as FauxResponseStep
from ._faux import FauxState as FauxState
from ._faux_blocks import faux_assistant_message as faux_assistant_message
from ._faux_blocks import faux_text as faux_text
from ._faux_blocks import faux_thinking as faux_thinking
from ._faux_blocks import faux_tool_call as faux_tool_call

__all__ = [
    "FauxModel",
    "FauxProvider",
    "FauxResponseFactory",
    "FauxResponseStep",
    "FauxState",
    "faux_assistant_message",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
]
