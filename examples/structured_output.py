"""Ask a run for a typed answer, offline: a faux model answers once with a wrong field
and is corrected, then answers through the final_result tool.
Run: python examples/structured_output.py"""

import msgspec
import trio

from pi_trio.agent import Agent, OutputSettings
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call


class Weather(msgspec.Struct):
    """Tomorrow's weather in a city."""

    city: str
    temp_c: float
    sky: str


async def main():
    faux = FauxProvider()  # a scripted model; with a real one, drop stream_fn
    faux.set_responses(
        [
            faux_assistant_message('{"city": "Oslo", "temp_c": "mild", "sky": "clear"}'),
            faux_assistant_message('{"city": "Oslo", "temp_c": 12.5, "sky": "clear"}'),
            faux_assistant_message(
                [faux_tool_call("final_result", {"city": "Rome", "temp_c": 24, "sky": "sunny"})],
                stop_reason="toolUse",
            ),
        ]
    )
    # native: the answer's text is the JSON (mode="auto" picks it when the model takes a
    # JSON schema)
    agent = Agent(model=faux.get_model(), stream_fn=faux, output=OutputSettings(mode="native"))
    result = await agent.prompt("Weather in Oslo tomorrow?", output_type=Weather)
    print(result.output)
    print(agent.state.messages[-2].content[0].text)  # what the model was told

    # tool: the model calls final_result with the answer as its arguments
    agent.output = OutputSettings(mode="tool")
    result = await agent.prompt("And in Rome?", output_type=Weather)
    print(result.output)


if __name__ == "__main__":
    trio.run(main)
