"""How handlers are marked and guarded: `feature` and `command` record a
handler for `create_server` (server/server.py) to register; `request` and
`notification` are the boundary that logs an exception and answers (or drops)
it, so the server carries on."""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInternalError

if TYPE_CHECKING:
    from .quiver_server import QuiverServer


# ====================================================================== registration

_FEATURES: list[tuple[str, Any, Callable]] = []  # (method, options, handler), in the order declared
_COMMANDS: list[tuple[str, Callable]] = []


def feature(method: str, options: Any = None):
    """Mark a function as the handler of an LSP method (registered by create_server)."""

    def mark(fn):
        _FEATURES.append((method, options, fn))
        return fn

    return mark


def command(name: str):
    """Mark a function as the handler of a `workspace/executeCommand` command
    (registered by create_server). As for requests, an unexpected exception is
    logged with its traceback and answered with an InternalError whose
    message says what failed, never with the traceback."""

    def mark(fn):
        @functools.wraps(fn)
        async def wrapper(ls: QuiverServer, *args):
            try:
                return await fn(ls, *args)
            except JsonRpcException:
                raise
            except Exception as exc:
                ls.log(f"{name} failed:\n{traceback.format_exc()}", lsp.MessageType.Error)
                raise JsonRpcInternalError(f"{name} failed: {exc} (the server log has the details)") from exc

        _COMMANDS.append((name, wrapper))
        return fn

    return mark


# ====================================================================== handler boundary


def request(fn):
    """A request handler: exceptions are logged and answered with an error."""

    @functools.wraps(fn)
    async def wrapper(ls: QuiverServer, params):
        try:
            return await fn(ls, params)
        except JsonRpcException:
            raise
        except Exception as exc:
            ls.log(f"{fn.__name__} failed:\n{traceback.format_exc()}", lsp.MessageType.Error)
            raise JsonRpcInternalError(f"{fn.__name__}: {exc}") from exc

    return wrapper


def notification(fn):
    """A notification handler: exceptions are logged and dropped."""

    @functools.wraps(fn)
    def wrapper(ls: QuiverServer, params):
        try:
            fn(ls, params)
        except Exception:
            ls.log(f"{fn.__name__} failed:\n{traceback.format_exc()}", lsp.MessageType.Error)

    return wrapper
