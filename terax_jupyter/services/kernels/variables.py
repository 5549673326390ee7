"""A kernel's variables (names, types, shapes, short reprs), as a variable explorer shows them.

Asked with an execute request that runs no cell: ``silent`` (no execution count, no history,
nothing on the notebook) with one user expression that lists the user's namespace. Only
IPython kernels answer it. Reprs are ``reprlib``'s, short; modules, classes and functions
are left out. The caller redacts what comes back.
"""

from __future__ import annotations

import ast
import json
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import Unavailable, Unsupported
from terax_jupyter.services.kernels.execution import shell_reply

if TYPE_CHECKING:
    from jupyter_client.asynchronous import AsyncKernelClient

REPLY_TIMEOUT_S = 10.0
REPR_CHARS = 120

# One expression, evaluated in the user's namespace by IPython's user_expressions.
_EXPRESSION = """(lambda json, inspect, short, ns, limit: json.dumps([
    {"name": name,
     "type": (type(value).__module__ + "." if type(value).__module__ != "builtins" else "")
       + type(value).__qualname__,
     "shape": None if getattr(value, "shape", None) is None else str(value.shape),
     "len": len(value) if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset))
       else None,
     "repr": short.repr(value)[:%(chars)d]}
    for name, value in sorted(ns.items())
    if not name.startswith("_") and name not in ("In", "Out", "exit", "quit", "get_ipython")
    and not inspect.ismodule(value) and not inspect.isclass(value)
    and not inspect.isroutine(value)][:%(limit)d], default=str))(
    __import__("json"), __import__("inspect"),
    (lambda r: [setattr(r, key, size) for key, size in (("maxstring", %(chars)d),
      ("maxother", %(chars)d), ("maxlist", 8), ("maxdict", 6))] and r)(
      __import__("reprlib").Repr()),
    get_ipython().user_ns, %(limit)d)"""


async def list_variables(client: AsyncKernelClient, *, limit: int) -> list[dict[str, Any]]:
    expression = _EXPRESSION % {"chars": REPR_CHARS, "limit": limit}
    msg_id = client.execute(
        "", silent=True, store_history=False, user_expressions={"terax": expression}
    )
    reply = await shell_reply(client, msg_id, REPLY_TIMEOUT_S)
    if reply is None:
        raise Unavailable(
            "The kernel did not answer within 10 s (a cell may be running: variables are "
            "read between runs).",
            reason="kernel_busy",
        )
    result = (reply.get("content", {}).get("user_expressions") or {}).get("terax")
    if not isinstance(result, dict):
        raise Unsupported(
            "This kernel does not list its variables (only IPython kernels do).",
            reason="kernel_unsupported",
        )
    if result.get("status") != "ok":
        raise Unsupported(
            f"The kernel could not list its variables: {result.get('ename', 'error')}.",
            reason="kernel_unsupported",
        )
    text = result.get("data", {}).get("text/plain", "")
    try:
        listed = json.loads(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        raise Unsupported(
            "The kernel's answer was not a list of variables.", reason="kernel_unsupported"
        ) from None
    return [entry for entry in listed if isinstance(entry, dict)]
