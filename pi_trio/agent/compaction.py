"""Context compaction's parts, for a strategy of one's own.

``Agent(policy=RunPolicy(compaction=Compaction(...)))`` (all in ``pi_trio.agent``) is
all most programs need. The pieces it is made of are here: ``estimate_tokens`` (about four characters per
token) and ``TokenEstimate`` (a transcript's size, kept up to date as it grows, from the
newest reported usage on), ``plan_compaction`` (where to cut, as a ``CompactionPlan``),
``serialize_conversation`` (the text the summarizer reads: no thinking, tool results cut
to ``TOOL_RESULT_SUMMARY_CHARS``), ``compacted_transcript`` (the system head, the summary,
the kept messages), the summary message (``summary_message``, ``is_summary_message``:
a user message whose one text block is ``SUMMARY_PREFIX + summary + SUMMARY_SUFFIX``),
and the default prompts. ``SummarizeHook``, the type of ``Compaction.summarize``, and
the ``CompactionRequest`` it is called with are in ``pi_trio.agent.hooks``.
"""

from __future__ import annotations

from ._compaction import CHARS_PER_TOKEN as CHARS_PER_TOKEN
from ._compaction import CompactionPlan as CompactionPlan
from ._compaction import TokenEstimate as TokenEstimate
from ._compaction import compacted_transcript as compacted_transcript
from ._compaction import estimate_tokens as estimate_tokens
from ._compaction import plan_compaction as plan_compaction
from ._summaries import SUMMARIZER_SYSTEM_PROMPT as SUMMARIZER_SYSTEM_PROMPT
from ._summaries import SUMMARY_PREFIX as SUMMARY_PREFIX
from ._summaries import SUMMARY_PROMPT as SUMMARY_PROMPT
from ._summaries import SUMMARY_SUFFIX as SUMMARY_SUFFIX
from ._summaries import TOOL_RESULT_SUMMARY_CHARS as TOOL_RESULT_SUMMARY_CHARS
from ._summaries import TURN_PREFIX_PROMPT as TURN_PREFIX_PROMPT
from ._summaries import UPDATE_PROMPT as UPDATE_PROMPT
from ._summaries import is_summary_message as is_summary_message
from ._summaries import serialize_conversation as serialize_conversation
from ._summaries import summary_message as summary_message

__all__ = [
    "CHARS_PER_TOKEN",
    "SUMMARIZER_SYSTEM_PROMPT",
    "SUMMARY_PREFIX",
    "SUMMARY_PROMPT",
    "SUMMARY_SUFFIX",
    "TOOL_RESULT_SUMMARY_CHARS",
    "TURN_PREFIX_PROMPT",
    "UPDATE_PROMPT",
    "CompactionPlan",
    "TokenEstimate",
    "compacted_transcript",
    "estimate_tokens",
    "is_summary_message",
    "plan_compaction",
    "serialize_conversation",
    "summary_message",
]
