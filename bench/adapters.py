"""signoff's framework adapters against each framework's own HITL, on the anchors' workload.

    .venv/bin/python bench/adapters.py [--n 100] [--k 5] [--reps 5] [--fw pydantic_ai,...]

The workload (../shared/bench-anchors/README.md): a deterministic, history-driven fake
model asks for one `run(cmd="echo step-NNNNN")` call per turn, N times, then says "done";
the tool returns 200 bytes; call i needs approval iff i % K == 0; every decision is approve.
At each pause the driver drops every object, builds fresh ones, loads the state, approves
and goes on. Modes, per framework:

    bare      no HITL at all (LangGraph: also no checkpointer)
    bare_ckpt LangGraph only: no HITL, with the SqliteSaver every pause needs
    native    the framework's own HITL, state persisted durably at each pause
              (Pydantic AI / Agents SDK: JSON file, write + fsync + rename; LangGraph: SqliteSaver)
    never     signoff's adapter installed, policy never asks (K = 0)
    signoff   signoff's adapter: asked calls are signoff requests in SQLite, approved
              through the store (as `signoff approve` does), resumed by a fresh adapter

Each configuration runs in its own fresh process, repetitions interleaved; medians. The
measured window starts from a collected heap (`gc.collect()`), the same in every mode.
Figures: total wall, cycle (model returns call i -> next model call entered, at a gated
i), ungated step, bytes passed to write() over the run (/proc/self/io wchar).
`<fw>_never_vs_bare` = never / bare wall (LangGraph: / bare_ckpt, the framework without HITL
but with the checkpointer its pauses need; / bare is reported beside it);
`<fw>_cycle_vs_native` = signoff / native cycle median. Each ratio is taken within one
repetition (the two runs minutes apart at most, so a machine that slows down or speeds up
between repetitions moves both), and the median of those ratios is reported; the table
shows each configuration's median.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, ClassVar

FRAMEWORKS = ("pydantic_ai", "langgraph", "openai_agents")
MODES = {
    "pydantic_ai": ("bare", "native", "never", "signoff"),
    "langgraph": ("bare", "bare_ckpt", "native", "never", "signoff"),
    "openai_agents": ("bare", "native", "never", "signoff"),
}
PROMPT = "run the workload"
FILLER = "the quick brown fox jumps over the lazy dog; " * 8


# --------------------------------------------------------------------------- workload


def cmd(i: int) -> str:
    return f"echo step-{i:05d}"


def output(command: str) -> str:
    return (f"$ {command}\nexit_code=0\nstdout: " + FILLER)[:200]


def gated(command: str, k: int) -> bool:
    return k > 0 and int(command.rsplit("-", 1)[1]) % k == 0


class Rec:
    """Timestamps by the number of tool results the model saw (first entry / exit)."""

    enter: ClassVar[dict[int, float]] = {}
    exit: ClassVar[dict[int, float]] = {}
    tools: ClassVar[list[str]] = []

    @classmethod
    def model_in(cls, c: int) -> None:
        cls.enter.setdefault(c, time.perf_counter())

    @classmethod
    def model_out(cls, c: int) -> None:
        cls.exit.setdefault(c, time.perf_counter())


def tool_body(command: str) -> str:
    Rec.tools.append(command)
    return output(command)


def signoff_policy(workspace: Path, k: int) -> Any:
    from signoff import Settings
    from signoff.policy import Policy
    from signoff.tools import ToolSpec

    # i % 5 == 0 iff the step number ends in 0 or 5; K = 0 keeps a rule that never matches
    ask = ["run(cmd=*0)", "run(cmd=*5)"] if k == 5 else ["run(cmd=never-*)"]
    if k not in (0, 5):
        raise SystemExit("--k: signoff's policy here is written for K = 5 (or 0)")
    policy = Policy(Settings.from_rules(ask=ask, allow=["run"]), workspace=workspace)
    policy.registry.add(ToolSpec(name="run", tier="external"))
    return policy


def approve_all(db: str, request_ids: Any) -> None:
    """Decide as another process would: open the store, approve, close."""
    from signoff.approvals import decide
    from signoff.models import Decision
    from signoff.store import open_store

    store = open_store(db)
    try:
        for request_id in request_ids:
            decide(store, request_id, Decision("approve"), actor="bench")
    finally:
        store.close()


def durable_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- Pydantic AI


def pydantic_reply(n: int) -> Callable[..., Any]:
    """The scripted model's turn for Pydantic AI's `FunctionModel`: call i+1 after i tool
    results, "done" after N."""
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        c = sum(
            isinstance(p, ToolReturnPart)
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
        )
        Rec.model_in(c)
        if c < n:
            out = ModelResponse(
                parts=[ToolCallPart("run", {"cmd": cmd(c + 1)}, tool_call_id=f"call_{c + 1:05d}")]
            )
        else:
            out = ModelResponse(parts=[TextPart("done")])
        Rec.model_out(c)
        return out

    return reply


def pydantic_ai(mode: str, n: int, k: int, work: Path) -> None:
    from pydantic_ai import Agent, RunContext
    from pydantic_ai.exceptions import ApprovalRequired
    from pydantic_ai.messages import (
        ModelMessagesTypeAdapter,
    )
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
    from pydantic_ai.usage import UsageLimits
    from pydantic_core import to_json

    globals()["RunContext"] = RunContext  # the tool's annotation is read from module globals

    reply = pydantic_reply(n)
    limits = UsageLimits(request_limit=None)

    def agent(hitl: bool, capabilities: list[Any] | None = None) -> Agent[None, Any]:
        async def run(ctx: RunContext[None], cmd: str) -> str:
            """Run a shell command (fake)."""
            if hitl and gated(cmd, k) and not ctx.tool_call_approved:
                raise ApprovalRequired()
            return tool_body(cmd)

        return Agent(
            FunctionModel(reply),
            tools=[run],
            capabilities=capabilities or [],
            output_type=[str, DeferredToolRequests] if (hitl or capabilities) else str,
        )

    if mode == "bare":
        asyncio.run(agent(False).run(PROMPT, usage_limits=limits))
        return
    if mode == "native":
        state = work / "state.json"
        result = asyncio.run(agent(True).run(PROMPT, usage_limits=limits))
        while isinstance(result.output, DeferredToolRequests):
            doc = {
                "messages": json.loads(ModelMessagesTypeAdapter.dump_json(result.all_messages())),
                "ids": [c.tool_call_id for c in result.output.approvals],
            }
            durable_write(state, json.dumps(doc))
            del result
            loaded = json.loads(state.read_text())
            history = ModelMessagesTypeAdapter.validate_python(loaded["messages"])
            results = DeferredToolResults(approvals={i: True for i in loaded["ids"]})
            result = asyncio.run(
                agent(True).run(
                    message_history=history, deferred_tool_results=results, usage_limits=limits
                )
            )
        assert to_json(result.output)
        return
    from signoff.adapters.pydantic_ai import Signoff

    db = str(work / "signoff.db")

    def build() -> tuple[Agent[None, Any], Signoff]:
        so = Signoff(store=db, policy=signoff_policy(work, 0 if mode == "never" else k))
        return agent(False, [so]), so

    a, so = build()
    out = asyncio.run(so.run(a, PROMPT, thread="bench", usage_limits=limits))
    while out.status == "paused":
        del a, so
        approve_all(db, out.requests)
        a, so = build()
        out = asyncio.run(so.resume(a, thread="bench", usage_limits=limits))


# --------------------------------------------------------------------------- LangGraph


def langgraph(mode: str, n: int, k: int, work: Path) -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command

    class Scripted(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kw: Any) -> Scripted:
            return self

        def _generate(
            self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> ChatResult:
            c = sum(isinstance(m, ToolMessage) for m in messages)
            Rec.model_in(c)
            if c < n:
                call = {
                    "name": "run",
                    "args": {"cmd": cmd(c + 1)},
                    "id": f"call_{c + 1:05d}",
                    "type": "tool_call",
                }
                msg = AIMessage(content="", tool_calls=[call])
            else:
                msg = AIMessage(content="done")
            Rec.model_out(c)
            return ChatResult(generations=[ChatGeneration(message=msg)])

    @tool
    def run(cmd: str) -> str:
        """Run a shell command (fake)."""
        return tool_body(cmd)

    config: dict[str, Any] = {
        "configurable": {"thread_id": "bench"},
        "recursion_limit": 10 * n + 100,
    }
    start = {"messages": [{"role": "user", "content": PROMPT}]}
    if mode == "bare":
        create_agent(Scripted(), tools=[run]).invoke(start, config)
        return

    def saver() -> tuple[sqlite3.Connection, Any]:
        conn = sqlite3.connect(str(work / "graph.db"), check_same_thread=False)
        return conn, SqliteSaver(conn)

    if mode in ("bare_ckpt", "native"):

        def build() -> tuple[sqlite3.Connection, Any]:
            conn, ckpt = saver()
            middleware = []
            if mode == "native":
                when = InterruptOnConfig(
                    allowed_decisions=["approve", "reject"],
                    when=lambda req: gated(req.tool_call["args"]["cmd"], k),
                )
                middleware = [HumanInTheLoopMiddleware(interrupt_on={"run": when})]
            graph = create_agent(Scripted(), tools=[run], middleware=middleware, checkpointer=ckpt)
            return conn, graph

        conn, graph = build()
        out = graph.invoke(start, config)
        while "__interrupt__" in out:
            conn.close()
            del graph
            conn, graph = build()
            out = graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
        conn.close()
        return
    from signoff.adapters.langgraph import SignoffMiddleware, resume_decided

    db = str(work / "signoff.db")

    def build_so() -> tuple[sqlite3.Connection, Any, SignoffMiddleware]:
        conn, ckpt = saver()
        so = SignoffMiddleware(store=db, policy=signoff_policy(work, 0 if mode == "never" else k))
        graph = create_agent(Scripted(), tools=[run], middleware=[so], checkpointer=ckpt)
        return conn, graph, so

    conn, graph, so = build_so()
    out = graph.invoke(start, config)
    while out is not None and "__interrupt__" in out:
        ids = [i.value["signoff_request"] for i in out["__interrupt__"]]
        conn.close()
        del graph, so
        approve_all(db, ids)
        conn, graph, so = build_so()
        out = resume_decided(graph, so, thread_id="bench", config=config)
    conn.close()


# --------------------------------------------------------------------------- OpenAI Agents


def openai_agents(mode: str, n: int, k: int, work: Path) -> None:
    from agents import Agent, Runner, RunState, function_tool, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    set_tracing_disabled(True)

    class Scripted(Model):
        async def get_response(
            self, system_instructions: Any, input: Any, *a: Any, **kw: Any
        ) -> ModelResponse:
            items = [] if isinstance(input, str) else input
            c = sum(
                (i.get("type") if isinstance(i, dict) else getattr(i, "type", None))
                == "function_call_output"
                for i in items
            )
            Rec.model_in(c)
            if c < n:
                out: list[Any] = [
                    ResponseFunctionToolCall(
                        type="function_call",
                        id=f"fc_{c + 1:05d}",
                        call_id=f"call_{c + 1:05d}",
                        name="run",
                        arguments=json.dumps({"cmd": cmd(c + 1)}),
                        status="completed",
                    )
                ]
            else:
                text = ResponseOutputText(type="output_text", text="done", annotations=[])
                out = [
                    ResponseOutputMessage(
                        type="message", id="m", role="assistant", status="completed", content=[text]
                    )
                ]
            Rec.model_out(c)
            return ModelResponse(output=out, usage=Usage(), response_id=None)

        def stream_response(self, *a: Any, **kw: Any) -> Any:
            raise NotImplementedError

    async def run(cmd: str) -> str:
        """Run a shell command (fake)."""
        return tool_body(cmd)

    turns = 2 * n + 10

    def agent(needs: Any = False) -> Agent[Any]:
        return Agent(
            name="bench", model=Scripted(), tools=[function_tool(run, needs_approval=needs)]
        )

    if mode == "bare":
        asyncio.run(Runner.run(agent(), PROMPT, max_turns=turns))
        return
    if mode == "native":

        async def needs(ctx: Any, params: dict[str, Any], call_id: str) -> bool:
            return gated(params["cmd"], k)

        async def drive() -> None:
            state_file = work / "state.json"
            result = await Runner.run(agent(needs), PROMPT, max_turns=turns)
            while result.interruptions:
                durable_write(state_file, json.dumps(result.to_state().to_json()))
                del result
                fresh = agent(needs)
                state = await RunState.from_json(fresh, json.loads(state_file.read_text()))
                for item in state.get_interruptions():
                    state.approve(item)
                result = await Runner.run(fresh, state, max_turns=turns)

        asyncio.run(drive())
        return
    from signoff.adapters.openai_agents import Signoff

    db = str(work / "signoff.db")

    def build() -> tuple[Agent[Any], Signoff]:
        so = Signoff(store=db, policy=signoff_policy(work, 0 if mode == "never" else k))
        tools = so.guarded([function_tool(run)])
        return Agent(name="bench", model=Scripted(), tools=list(tools)), so

    a, so = build()
    out = asyncio.run(so.run(a, PROMPT, thread="bench", max_turns=turns))
    while out.status == "paused":
        del a, so
        approve_all(db, out.requests)
        a, so = build()
        out = asyncio.run(so.resume(a, thread="bench", max_turns=turns))


# --------------------------------------------------------------------------- measuring


def wchar() -> int:
    with open("/proc/self/io") as fh:
        for line in fh:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    return 0


def one(
    fw: str,
    mode: str,
    n: int,
    k: int,
    around: Callable[[], AbstractContextManager[None]] = nullcontext,
) -> dict[str, Any]:
    """One run in this process (after a small warm-up run in a scratch directory);
    `around` wraps the measured run alone (bench/adapters_instructions.py counts it)."""
    drive = {"pydantic_ai": pydantic_ai, "langgraph": langgraph, "openai_agents": openai_agents}[fw]
    eff_k = 0 if mode in ("bare", "bare_ckpt", "never") else k
    warm = Path(tempfile.mkdtemp(prefix="adapters-warm-"))
    try:
        drive(mode, 10, k if eff_k else 0, warm)
    finally:
        shutil.rmtree(warm, ignore_errors=True)
    Rec.enter, Rec.exit, Rec.tools = {}, {}, []
    work = Path(tempfile.mkdtemp(prefix="adapters-"))
    try:
        if mode in ("never", "signoff"):  # a project's store exists before its runs
            from signoff.store import open_store

            open_store(str(work / "signoff.db")).close()
        # Every mode starts from a collected heap: the warm-up (and, for signoff's modes,
        # its import) leaves the collector a different debt in each mode, which it would
        # otherwise pay as a full collection inside one mode's window and not another's.
        gc.collect()
        before = wchar()
        t0 = time.perf_counter()
        with around():
            drive(mode, n, eff_k, work)
        wall = time.perf_counter() - t0
        written = wchar() - before
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if Rec.tools != [cmd(i) for i in range(1, n + 1)]:
        raise SystemExit(f"{fw}/{mode}: the tool ran {len(Rec.tools)} times, not 1..{n} once each")
    cycles = [Rec.enter[i] - Rec.exit[i - 1] for i in range(1, n + 1) if eff_k and i % eff_k == 0]
    steps = [
        Rec.enter[i] - Rec.exit[i - 1] for i in range(1, n + 1) if not (eff_k and i % eff_k == 0)
    ]
    return {
        "wall_s": wall,
        "cycle_ms": statistics.median(cycles) * 1e3 if cycles else None,
        "step_ms": statistics.median(steps) * 1e3 if steps else None,
        "wchar": written,
    }


def median(values: list[Any]) -> Any:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--fw", default=",".join(FRAMEWORKS))
    parser.add_argument("--one", nargs=2, metavar=("FW", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], args.one[1], args.n, args.k)))
        return
    # The keys file of a config directory of the bench's own, made afresh: the user's
    # grows by one entry for every store location it ever saw (each run's temporary
    # stores among them), and every store open reads it.
    config = tempfile.mkdtemp(prefix="adapters-config-")
    os.environ["SIGNOFF_CONFIG_DIR"] = config
    frameworks = [f for f in args.fw.split(",") if f]
    configs = [(fw, mode) for fw in frameworks for mode in MODES[fw]]
    raw: dict[tuple[str, str], list[dict[str, Any]]] = {c: [] for c in configs}
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    for _ in range(args.reps):
        order = configs[:]
        random.shuffle(order)
        for fw, mode in order:
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--one",
                    fw,
                    mode,
                    "--n",
                    str(args.n),
                    "--k",
                    str(args.k),
                ],
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
            if done.returncode != 0:
                raise SystemExit(f"{fw}/{mode} failed:\n{done.stderr[-3000:]}")
            raw[(fw, mode)].append(json.loads(done.stdout.splitlines()[-1]))
    shutil.rmtree(config, ignore_errors=True)
    med = {
        c: {key: median([r[key] for r in rs]) for key in ("wall_s", "cycle_ms", "step_ms", "wchar")}
        for c, rs in raw.items()
    }
    print(f"N={args.n} K={args.k} reps={args.reps} (medians; each run in a fresh process)\n")
    print(f"| {'framework':13} | {'mode':9} | wall (s) | cycle (ms) | step (ms) | written (KiB) |")
    print(f"|{'-' * 15}|{'-' * 11}|---------:|-----------:|----------:|--------------:|")
    for (fw, mode), m in med.items():
        cycle = f"{m['cycle_ms']:.1f}" if m["cycle_ms"] is not None else "-"
        print(
            f"| {fw:13} | {mode:9} | {m['wall_s']:8.3f} | {cycle:>10} | {m['step_ms']:9.2f} "
            f"| {m['wchar'] / 1024:13.0f} |"
        )
    summary: dict[str, Any] = {"n": args.n, "k": args.k, "reps": args.reps}

    def paired(fw: str, mode: str, base: str, key: str) -> float:
        """The median over repetitions of mode / base, each from the same repetition."""
        pairs = zip(raw[(fw, mode)], raw[(fw, base)], strict=True)
        return round(statistics.median(a[key] / b[key] for a, b in pairs), 3)

    for fw in frameworks:
        base = "bare_ckpt" if fw == "langgraph" else "bare"
        summary[f"{fw}_never_vs_bare"] = paired(fw, "never", base, "wall_s")
        summary[f"{fw}_cycle_vs_native"] = paired(fw, "signoff", "native", "cycle_ms")
        summary[f"{fw}_bytes_vs_native"] = round(
            med[(fw, "signoff")]["wchar"] / max(1, med[(fw, "native")]["wchar"]), 3
        )
        summary[f"{fw}_cycle_ms"] = round(med[(fw, "signoff")]["cycle_ms"], 2)
        summary[f"{fw}_native_cycle_ms"] = round(med[(fw, "native")]["cycle_ms"], 2)
    if "langgraph" in frameworks:
        summary["langgraph_never_vs_bare_without_checkpointer"] = paired(
            "langgraph", "never", "bare", "wall_s"
        )
    print()
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
