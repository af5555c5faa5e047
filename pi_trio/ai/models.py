"""What a ``Model`` is made of, and what a model can do.

The parts of a ``Model`` (``ModelCost`` with its ``CostTier``s, the input limits, the
prompt cache, the thinking-level map) for writing a model of your own; the thinking
levels a model takes (``get_supported_thinking_levels``, ``clamp_thinking_level``);
``models_are_equal``; and ``supports_json_schema_output``, whether a model takes a JSON
schema for its answer. The catalog look-ups (``get_model``, ``resolve_model``…) are in
``pi_trio.ai``.
"""

from __future__ import annotations

from ._catalog._models import clamp_thinking_level as clamp_thinking_level
from ._catalog._models import get_supported_thinking_levels as get_supported_thinking_levels
from ._catalog._models import models_are_equal as models_are_equal
from ._types import CostTier as CostTier
from ._types import ModelCost as ModelCost
from ._types import ModelImageInputLimits as ModelImageInputLimits
from ._types import ModelImageResizeOptions as ModelImageResizeOptions
from ._types import ModelInputLimits as ModelInputLimits
from ._types import ModelPromptCache as ModelPromptCache
from ._types import ModelThinkingLevel as ModelThinkingLevel
from .providers._output import supports_json_schema_output as supports_json_schema_output

__all__ = [
    "CostTier",
    "ModelCost",
    "ModelImageInputLimits",
    "ModelImageResizeOptions",
    "ModelInputLimits",
    "ModelPromptCache",
    "ModelThinkingLevel",
    "clamp_thinking_level",
    "get_supported_thinking_levels",
    "models_are_equal",
    "supports_json_schema_output",
]
