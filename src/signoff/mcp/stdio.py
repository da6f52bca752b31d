"""The proxy's stdin and stdout as the MCP wire, read and written by the event loop.

The SDK's `stdio_server` reads each line and writes each message through a worker
thread (a thread hop per line read, per write and per flush): a few hundred
microseconds a call, which the proxy, sitting between a client and a server, pays on
every call. Here the pipes are non-blocking and served by the event loop itself. The
messages are still parsed and serialised by the SDK's own JSON-RPC models, and the
protocol (initialize, listings, calls, notifications) is the SDK's `Server.run`.

The proxy's own connections to stdio upstreams are served the same way (`upstream_stdio`):
the SDK's `stdio_client` hands each message to a writer task and each line to a reader
task through memory streams, two extra turns of the loop for every message each way.

As in the SDK, while serving, fd 0 reads the null device and fd 1 writes to stderr, so
a stray print or a child process never writes on the wire; both are restored on exit.
Where stdin or stdout is not a pipe, socket or terminal (a regular file), or the loop
is not asyncio, the SDK's own transport serves instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Self

import anyio
import mcp_types
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage

LINE_LIMIT = 1 << 28  # one message may be large (a file's content), not unbounded
EXIT_WAIT = 2.0  # seconds an upstream has to exit once its stdin closes (as in the SDK)
KILL_WAIT = 2.0  # then its process group is sent SIGTERM, and SIGKILL after this


def _streamable(fd: int) -> bool:
    """Whether asyncio can serve this descriptor as a pipe."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _flush_stray() -> None:
    """What was printed while serving goes where fd 1 points now (stderr), not onto the
    wire once it is put back."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()


def _dup_above_std(fd: int) -> int:
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


class _Stream:
    """What the SDK's stream protocols ask besides sending or receiving: closing and `async
    with` do nothing here (the pipe is closed when serving ends)."""

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        return None


class _Incoming(_Stream):
    """The client's messages, one JSON-RPC message a line (a bad line: its error)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def receive(self) -> SessionMessage | Exception:
        while True:
            line = await self._reader.readline()
            if not line:
                raise anyio.EndOfStream
            if line.strip():
                break
        try:
            message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except Exception as exc:  # the SDK answers it as a parse error
            return exc
        return SessionMessage(message)

    def __aiter__(self) -> _Incoming:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _Outgoing(_Stream):
    """Messages to the client: each written whole, in one call, so none interleave."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def send(self, item: SessionMessage, /) -> None:
        text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
        self._writer.write(text.encode("utf-8") + b"\n")
        await self._writer.drain()


@asynccontextmanager
async def _loop_pipes(
    loop: asyncio.AbstractEventLoop,
) -> AsyncIterator[tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]]:
    wire_in, wire_out = _dup_above_std(0), _dup_above_std(1)
    # the transports own (and close) a duplicate each: the wire itself is put back on 0/1
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    read_transport: asyncio.ReadTransport | None = None
    try:
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader),
            os.fdopen(_dup_above_std(wire_in), "rb", 0),
        )
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(_dup_above_std(wire_out), "wb", 0)
        )
    except BaseException:  # nothing diverted yet: 0 and 1 are as they were
        if read_transport is not None:
            read_transport.close()
        os.close(wire_in)
        os.close(wire_out)
        raise
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
    try:
        yield _Incoming(reader), _Outgoing(writer)
    finally:
        read_transport.close()
        with contextlib.suppress(OSError):  # the client is gone: nobody to write to
            await writer.drain()  # what is buffered goes out first
        write_transport.close()  # closes once its buffer is written: wait for that, a while
        for _ in range(500):
            if write_transport.get_write_buffer_size() == 0:
                break
            await asyncio.sleep(0.01)
        _flush_stray()
        for fd, wire in ((0, wire_in), (1, wire_out)):
            os.dup2(wire, fd)
            os.close(wire)
            os.set_blocking(fd, True)


@asynccontextmanager
async def stdio_wire() -> AsyncIterator[
    tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]
]:
    """(messages in, messages out) over this process's stdin and stdout."""
    try:
        loop: Any = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is None or not (_streamable(0) and _streamable(1)):
        from mcp.server.stdio import stdio_server

        async with stdio_server() as streams:
            try:
                yield streams
            finally:
                _flush_stray()
        return
    async with _loop_pipes(loop) as streams:
        yield streams


async def _exited_within(process: asyncio.subprocess.Process, seconds: float) -> bool:
    """Polled, not `wait()`: that also waits for the pipes, which a grandchild may hold."""
    deadline = asyncio.get_running_loop().time() + seconds
    while process.returncode is None:
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Close its stdin; kill its process group if it has not exited in `EXIT_WAIT`."""
    if process.stdin is not None:
        process.stdin.close()
    if await _exited_within(process, EXIT_WAIT):
        return
    _signal_group(process.pid, signal.SIGTERM)
    if not await _exited_within(process, KILL_WAIT):
        _signal_group(process.pid, signal.SIGKILL)
        await _exited_within(process, KILL_WAIT)


@asynccontextmanager
async def upstream_stdio(
    params: StdioServerParameters,
) -> AsyncIterator[tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]]:
    """An upstream MCP server started from `params` (in a session of its own, with the
    SDK's default environment under `params.env`, its stderr on ours), its stdin and
    stdout served by the event loop. Run only under asyncio (see `upstream_transport`)."""
    process = await asyncio.create_subprocess_exec(
        params.command,
        *params.args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=get_default_environment() | (params.env or {}),
        cwd=params.cwd,
        start_new_session=True,  # its children are stopped with it
        limit=LINE_LIMIT,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        yield _Incoming(process.stdout), _Outgoing(process.stdin)
    finally:
        with anyio.CancelScope(shield=True):  # the server is stopped even when cancelled
            await _stop(process)


def upstream_transport(params: StdioServerParameters) -> Any:
    """The transport for a stdio upstream: `upstream_stdio` under asyncio, otherwise
    (trio) the SDK's own, which `mcp.Client` starts from the parameters."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return params
    return upstream_stdio(params)


__all__ = ["stdio_wire", "upstream_stdio", "upstream_transport"]
