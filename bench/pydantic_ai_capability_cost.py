"""What one capability costs Pydantic AI itself, per extension point (callgrind instructions).

    .venv/bin/python bench/pydantic_ai_capability_cost.py [--n 40] [--ways bare,empty,...]

`bench/adapters.py`'s Pydantic AI workload (N tool calls, a scripted model, the same tool
body), never asking, with no signoff code at all: only the extension point signoff could
use, doing nothing. Each way runs once under `valgrind --tool=callgrind`, in its own
process, after a warm-up run; the counters cover the measured run alone.

    bare         no capability (the bench's `bare`)
    empty        a capability that overrides nothing
    wrap_execute a capability whose `wrap_tool_execute` awaits the handler
    wrap_toolset a capability whose `get_wrapper_toolset` wraps the tools in a pass-through
                 `WrapperToolset` (its `call_tool` awaits the wrapped one)
    agent_toolset no capability: the tools passed as `toolsets=[...]` in such a wrapper
    vanished     a capability that wraps the toolset but returns an empty
                 `CombinedCapability` from `for_run` (so it takes no part in the run: the
                 cost of the output type `[str, DeferredToolRequests]` alone)

Ratios are against `bare`. Needs valgrind.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WAYS = ("bare", "empty", "wrap_execute", "wrap_toolset", "agent_toolset", "vanished")


def _module(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def drive(way: str, n: int, workload: Any) -> None:
    """One agent run of `n` calls with the extension point `way` doing nothing."""
    from pydantic_ai import Agent, RunContext
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.capabilities.combined import CombinedCapability
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.tools import DeferredToolRequests
    from pydantic_ai.toolsets import AbstractToolset, FunctionToolset, WrapperToolset
    from pydantic_ai.usage import UsageLimits

    class Passing(WrapperToolset[Any]):
        async def call_tool(self, name: str, tool_args: Any, ctx: Any, tool: Any) -> Any:
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)

    class Empty(AbstractCapability[Any]):
        pass

    class WrapExecute(AbstractCapability[Any]):
        async def wrap_tool_execute(self, ctx: Any, *, handler: Any, args: Any, **_: Any) -> Any:
            return await handler(args)

    class WrapToolset(AbstractCapability[Any]):
        def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any]:
            return Passing(toolset)

    class Vanished(WrapToolset):
        async def for_run(self, ctx: Any) -> AbstractCapability[Any]:
            return CombinedCapability([])

    reply = workload.pydantic_reply(n)  # bench/adapters.py's scripted model

    async def run(ctx: RunContext[None], cmd: str) -> str:
        """Run a shell command (fake)."""
        return str(workload.tool_body(cmd))

    globals()["RunContext"] = RunContext  # the tool's annotation is read from module globals
    kinds = {"empty": Empty, "wrap_execute": WrapExecute, "wrap_toolset": WrapToolset}
    kinds["vanished"] = Vanished
    if way == "agent_toolset":
        agent: Agent[None, Any] = Agent(
            FunctionModel(reply),
            toolsets=[Passing(FunctionToolset([run]))],
            output_type=[str, DeferredToolRequests],
        )
    elif way == "bare":
        agent = Agent(FunctionModel(reply), tools=[run], output_type=str)
    else:
        agent = Agent(
            FunctionModel(reply),
            tools=[run],
            capabilities=[kinds[way]()],
            output_type=[str, DeferredToolRequests],
        )
    out = asyncio.run(agent.run("run the workload", usage_limits=UsageLimits(request_limit=None)))
    if out.output != "done":
        raise SystemExit(f"{way}: the run ended with {out.output!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=40, help="tool calls per run (default 40)")
    parser.add_argument(
        "--ways", default=",".join(WAYS), help="comma-separated, e.g. bare,wrap_execute"
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # the child, under callgrind
        workload = _module("adapters")
        drive(args.one, 10, workload)
        gc.collect()
        with _module("adapters_instructions")._counted():
            drive(args.one, args.n, workload)
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("valgrind (with callgrind_control) is needed: apt-get install valgrind")
    counter = _module("adapters_instructions")
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="capability-cost-") as tmp:
        for way in args.ways.split(","):
            child = [__file__, "--one", way, "--n", str(args.n)]
            counts[way] = counter.callgrind_count(child, Path(tmp), way)
            print(f"{way:<14} {counts[way] / 1e6:>9.1f} M", flush=True)
    if "bare" in counts:
        ratios = {f"{w}_vs_bare_instr": round(c / counts["bare"], 4) for w, c in counts.items()}
        print(json.dumps({"n": args.n, **ratios}))


if __name__ == "__main__":
    main()
