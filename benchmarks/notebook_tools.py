"""Benchmark: the agent's notebook tools against jupyter-mcp-server's, on the same notebook.

Run from the repository root::

    python benchmarks/notebook_tools.py [--runs 5] [--cells 500] [--mcp-python PATH] [--quick]

One generated notebook (fixed seed): ``--cells`` cells, a tenth markdown, the code cells with
what a real analysis prints (stream logs, a warning on stderr, DataFrame-like ``text/html``
plus ``text/plain`` tables, a PNG plot of a few KB, short results, a traceback now and then),
written with nbformat into a temporary folder, then copied once for each side so that each
edits its own file.

- **Terax**: in this process, what ``notebook_outline``, ``notebook_read`` and the accepted
  ``notebook_edit`` do: the file read through ``FileManager`` (the security layer), parsed
  and rendered by ``terax_jupyter.notebook_view`` with a ``Redactor``; an edit is the
  hash-checked ``replace`` of ``notebook_view.changes`` written back with the read's etag
  (atomic: temp file, fsync, rename), with and without the checkpoint copy the tool keeps.
- **jupyter-mcp-server**: its own code, in a worker process run with ``--mcp-python`` (a
  separate venv with ``pip install jupyter-mcp-server``), without a server: the notebook is
  read by jupyter_server's ``AsyncLargeFileManager`` as its tools do in a Jupyter server
  without a collaborative session open on the file, and formatted by the tools' own code
  (``Notebook.format_output`` for ``read_notebook``, the ``read_cell`` lines with
  ``Cell.get_outputs``); an edit is ``OverwriteCellSourceTool._overwrite_cell_file``.

Each round does every operation once on each side (the worker is driven over a pipe, so the
rounds interleave); medians of ``--runs`` rounds after one warm-up round. Each of Terax's
operations starts with no parse kept (the first outline page or read parses the file; the
pages after it, of the same unchanged file, find the parse). Tokens are
estimated as characters / 4 (text only); images sent as base64 image content are counted
apart.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from bench_machine import describe

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import nbformat  # noqa: E402

from terax_jupyter.notebook_view import views  # noqa: E402
from terax_jupyter.notebook_view.cells import (  # noqa: E402
    forget_parsed,
    parse_notebook,
    raw_notebook,
    source_hash,
)
from terax_jupyter.notebook_view.changes import apply_ops  # noqa: E402
from terax_jupyter.notebook_view.serialize import notebook_text  # noqa: E402
from terax_jupyter.security import SecurityLayer  # noqa: E402
from terax_jupyter.security.redact import Redactor  # noqa: E402
from terax_jupyter.services.fs.manager import FileManager  # noqa: E402

SEED = 1204
DEFAULT_MCP_PYTHON = "/tmp/jmcp/bin/python"
EDIT_CELL = 251  # a code cell in the middle of the notebook
READ_CELLS = 50  # notebook_read's most ids per call
CHARS_PER_TOKEN = 4

# -- the notebook ----------------------------------------------------------------------------


def png(width: int, height: int, rng: random.Random) -> bytes:
    """A valid RGB PNG of noise: incompressible, so a few KB as a real small plot is."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\0" + rng.randbytes(width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def table(rng: random.Random, rows: int) -> tuple[str, str]:
    """A DataFrame's text/html and text/plain."""
    columns = ["region", "units", "price", "revenue", "margin"]
    data = [
        [
            rng.choice(["north", "south", "east", "west"]),
            rng.randint(1, 900),
            round(rng.uniform(1, 99), 2),
            round(rng.uniform(100, 90000), 2),
            round(rng.uniform(-0.2, 0.6), 4),
        ]
        for _ in range(rows)
    ]
    head = "".join(f"<th>{name}</th>" for name in columns)
    body = "".join(
        f"<tr><th>{i}</th>" + "".join(f"<td>{value}</td>" for value in row) + "</tr>\n"
        for i, row in enumerate(data)
    )
    html = (
        "<div>\n<style scoped>\n    .dataframe tbody tr th:only-of-type {\n"
        "        vertical-align: middle;\n    }\n</style>\n"
        '<table border="1" class="dataframe">\n  <thead>\n    <tr style="text-align: right;">'
        f"<th></th>{head}</tr>\n  </thead>\n  <tbody>\n{body}  </tbody>\n</table>\n</div>"
    )
    plain = f"{'':>4}" + "".join(f"{name:>10}" for name in columns) + "\n"
    plain += "\n".join(
        f"{i:>4}" + "".join(f"{value!s:>10}" for value in row) for i, row in enumerate(data)
    )
    return html, plain


TRACEBACK = [
    "\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
    "\x1b[0;31mKeyError\x1b[0m                                  Traceback (most recent call last)",
    "File \x1b[0;32m/opt/conda/lib/python3.11/site-packages/pandas/core/indexes/base.py:3805"
    "\x1b[0m, in \x1b[0;36mIndex.get_loc\x1b[0;34m(self, key)\x1b[0m\n\x1b[1;32m   3804\x1b[0m"
    " \x1b[38;5;28;01mtry\x1b[39;00m:\n\x1b[0;32m-> 3805\x1b[0m     \x1b[38;5;28;01mreturn"
    "\x1b[39;00m \x1b[38;5;28mself\x1b[39m\x1b[38;5;241m.\x1b[39m_engine\x1b[38;5;241m."
    "\x1b[39mget_loc(casted_key)\n",
    "File \x1b[0;32mindex.pyx:167\x1b[0m, in \x1b[0;36mpandas._libs.index.IndexEngine.get_loc"
    "\x1b[0;34m()\x1b[0m\n",
    "File \x1b[0;32mpandas/_libs/hashtable_class_helper.pxi:7089\x1b[0m, in \x1b[0;36mpandas."
    "_libs.hashtable.PyObjectHashTable.get_item\x1b[0;34m()\x1b[0m\n",
    "\x1b[0;31mKeyError\x1b[0m: 'revenue_eur'",
    "\nThe above exception was the direct cause of the following exception:\n",
    "\x1b[0;31mKeyError\x1b[0m                                  Traceback (most recent call last)",
    "Cell \x1b[0;32mIn[58], line 3\x1b[0m\n\x1b[1;32m      1\x1b[0m df \x1b[38;5;241m="
    "\x1b[39m load_sales(\x1b[38;5;124m'\x1b[39m\x1b[38;5;124m2024\x1b[39m\x1b[38;5;124m'"
    "\x1b[39m)\n\x1b[0;32m----> 3\x1b[0m df[\x1b[38;5;124m'\x1b[39m\x1b[38;5;124mrevenue_eur"
    "\x1b[39m\x1b[38;5;124m'\x1b[39m]\x1b[38;5;241m.\x1b[39msum()\n",
    "File \x1b[0;32m/opt/conda/lib/python3.11/site-packages/pandas/core/frame.py:4102\x1b[0m,"
    " in \x1b[0;36mDataFrame.__getitem__\x1b[0;34m(self, key)\x1b[0m\n\x1b[1;32m   4100"
    "\x1b[0m \x1b[38;5;28;01mif\x1b[39;00m \x1b[38;5;28mself\x1b[39m\x1b[38;5;241m.\x1b[39m"
    "columns\x1b[38;5;241m.\x1b[39mnlevels \x1b[38;5;241m>\x1b[39m \x1b[38;5;241m1\x1b[39m:\n",
    "\x1b[0;31mKeyError\x1b[0m: 'revenue_eur'",
]


def code(lines: int, rng: random.Random, n: int) -> str:
    body = [f"df_{n} = sales.groupby('region').agg(units=('units', 'sum'))"]
    body += [
        f"df_{n}['col_{k}'] = df_{n}['units'] * {rng.randint(2, 9)} - {rng.randint(0, 99)}"
        for k in range(lines - 1)
    ]
    return "\n".join(body)


def make_notebook(cells: int, seed: int) -> nbformat.NotebookNode:
    """A ``cells``-cell analysis notebook with the outputs such notebooks carry."""
    rng = random.Random(seed)
    v4 = nbformat.v4
    book = v4.new_notebook(
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)"},
            "language_info": {"name": "python", "version": "3.11.7"},
        }
    )
    count = 0
    for n in range(cells):
        kind = n % 10
        cell_id = f"cell-{n:04d}"
        if kind in (0, 5):
            text = (
                f"## Step {n // 10}: {rng.choice(['clean', 'join', 'plot', 'fit'])} the data\n\n"
                + "We group the sales by region and compare the margin with last year's. " * 3
            )
            book.cells.append(v4.new_markdown_cell(text, id=cell_id))
            continue
        count += 1
        cell = v4.new_code_cell(code(rng.randint(3, 12), rng, n), id=cell_id)
        cell.execution_count = count
        if kind in (2, 6) or (kind == 8 and n % 50 != 8):
            lines = [
                f"epoch {e:3d} loss={rng.uniform(0, 2):.4f} acc={rng.uniform(0.5, 1):.4f}"
                for e in range(rng.randint(15, 40))
            ]
            cell.outputs.append(
                v4.new_output("stream", name="stdout", text="\n".join(lines) + "\n")
            )
            if kind == 6:
                cell.outputs.append(
                    v4.new_output(
                        "stream",
                        name="stderr",
                        text="/tmp/ipykernel_2211/3181.py:4: FutureWarning: The default of "
                        "observed=False is deprecated and will be changed to True in a "
                        "future version of pandas.\n",
                    )
                )
        elif kind == 3:
            html, plain = table(rng, rng.randint(8, 15))
            cell.outputs.append(
                v4.new_output(
                    "execute_result",
                    data={"text/html": html, "text/plain": plain},
                    execution_count=count,
                )
            )
        elif kind == 4:
            image = base64.b64encode(png(40, 36, rng)).decode("ascii")
            cell.outputs.append(
                v4.new_output(
                    "display_data",
                    data={"image/png": image, "text/plain": "<Figure size 640x480 with 1 Axes>"},
                )
            )
        elif kind == 7:
            cell.outputs.append(
                v4.new_output(
                    "execute_result",
                    data={"text/plain": f"{rng.uniform(0, 1e6):.2f}"},
                    execution_count=count,
                )
            )
        elif kind == 8:
            cell.outputs.append(
                v4.new_output(
                    "error", ename="KeyError", evalue="'revenue_eur'", traceback=TRACEBACK
                )
            )
        book.cells.append(cell)
    return book


def edit_sources(book: nbformat.NotebookNode) -> tuple[str, str]:
    """The edited cell's source, and the one each edit alternates it with."""
    original = book.cells[EDIT_CELL].source
    return original, original + "\nprint('checked')"


# -- Terax, in this process ------------------------------------------------------------------


class Ours:
    def __init__(self, root: Path, state: Path, name: str, edit_name: str, sources: list[str]):
        self.files = FileManager(SecurityLayer.build(str(root), str(state)))
        self.redact = Redactor().redact
        self.name = name
        self.edit_name = edit_name
        self.sources = sources
        self.edits = 0

    async def load(self, name: str) -> Any:
        document = await self.files.read(name, format="text")
        return parse_notebook(document["path"], document["content"])

    async def outline(self) -> tuple[str, int]:
        """Every page of notebook_outline (200 cells a call), each call reading the file."""
        texts, start, calls = [], 0, 0
        while True:
            book = await self.load(self.name)
            texts.append(views.outline(book, self.redact, start=start).text)
            calls += 1
            start += views.OUTLINE_CELLS
            if start >= len(book.cells):
                return "\n".join(texts), calls

    async def read(self, first: int, last: int) -> tuple[str, int]:
        """notebook_read of cells first..last-1, 50 ids a call, default output budget."""
        texts, calls = [], 0
        for start in range(first, last, READ_CELLS):
            book = await self.load(self.name)
            ids = [cell.id for cell in book.cells[start : min(last, start + READ_CELLS)]]
            texts.append(views.read(book, ids, self.redact).text)
            calls += 1
        return "\n".join(texts), calls

    async def edit(self, *, checkpoint: bool) -> None:
        """The accepted replace of one cell: read, hash-checked op, (checkpoint,) write."""
        document = await self.files.read(self.edit_name, format="text")
        raw = raw_notebook(document["path"], document["content"])
        old, new = self.sources[self.edits % 2], self.sources[(self.edits + 1) % 2]
        op = {
            "op": "replace",
            "id": f"cell-{EDIT_CELL:04d}",
            "expected_hash": source_hash(old)[:12],
            "source": new,
        }
        book, outcome = apply_ops(raw, [op])
        if not outcome.changed:
            raise RuntimeError("the edit changed nothing")
        if checkpoint:
            await self.files.write(
                ".ipynb_checkpoints/terax-checkpoint.ipynb", document["content"], overwrite=True
            )
        await self.files.write(self.edit_name, notebook_text(book), etag=document["etag"])
        self.edits += 1


# -- jupyter-mcp-server, in a worker process of its own venv --------------------------------

WORKER = r"""
import asyncio, json, os, sys, time

root, name, edit_name, edit_cell, read_cells = sys.argv[1:6]
edit_cell, read_cells = int(edit_cell), int(read_cells)
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from mcp.types import ImageContent

from jupyter_mcp_server.__version__ import __version__
from jupyter_mcp_server.models import Notebook
from jupyter_mcp_server.tools.overwrite_cell_source_tool import OverwriteCellSourceTool

manager = AsyncLargeFileManager(root_dir=root)
overwrite = OverwriteCellSourceTool()


async def load(path):
    # What read_notebook and read_cell do in a Jupyter server with no YDoc open on the file.
    model = await manager.get(path, content=True, type="notebook")
    return Notebook(**model["content"])


async def read_notebook(response_format, start_index=0, limit=0):
    notebook = await load(name)
    if start_index >= len(notebook):
        return []
    info = [f"Notebook {name} has {len(notebook)} cells.\n"]
    info.append(
        notebook.format_output(
            response_format=response_format, start_index=start_index, limit=limit
        )
    )
    return ["\n".join(info)]


async def paged(limit):
    items, start = [], 0
    while True:
        page = await read_notebook("brief", start, limit)
        if not page:
            return items
        items.extend(page)
        start += limit


async def read_cell(index):
    return cell_items(await load(name), index)


def cell_items(notebook, index):
    cell = notebook[index]
    count = cell.execution_count if cell.execution_count else "N/A"
    info = [f"=====Cell {index} | type: {cell.cell_type} | execution count: {count}====="]
    info.append(cell.get_source("readable"))
    if cell.cell_type == "code":
        info.extend(cell.get_outputs("readable"))
    return info


def size(items):
    chars = images = image_chars = 0
    for item in items:
        if isinstance(item, ImageContent):
            images += 1
            image_chars += len(item.data)
        else:
            chars += len(item)
    return {"chars": chars, "images": images, "image_chars": image_chars}


async def timed(make):
    started = time.perf_counter()
    items = await make()
    return {"seconds": time.perf_counter() - started, **size(items)}


async def many(indexes):
    items = []
    for index in indexes:
        items.extend(await read_cell(index))
    return items


async def one_round():
    sources = json.loads(sys.stdin.readline())
    result = {
        "outline": await timed(lambda: read_notebook("brief")),
        "outline_paged": await timed(lambda: paged(20)),  # read_notebook's default limit
        "read_sources": await timed(lambda: read_notebook("detailed")),
        "read_50": await timed(lambda: many(range(read_cells))),
    }
    path = os.path.join(root, edit_name)
    edits = []
    for source in sources:  # the change, then back, as Terax's two edits of a round
        started = time.perf_counter()
        await overwrite._overwrite_cell_file(path, edit_cell, source)
        edits.append(time.perf_counter() - started)
    result["edit"] = {"seconds": edits}
    return result


async def main():
    print(json.dumps({"version": __version__}), flush=True)
    for line in sys.stdin:
        if line.strip() in ("all", "all sizes"):
            total = len((await load(name)).cells)
            if line.strip() == "all":
                result = await timed(lambda: many(range(total)))
            else:  # what the calls return, from one read of the file
                notebook = await load(name)
                items = []
                for index in range(total):
                    items.extend(cell_items(notebook, index))
                result = size(items)
        elif line.strip() == "round":
            result = await one_round()
        else:
            break
        print(json.dumps(result), flush=True)


asyncio.run(main())
"""


class Theirs:
    """The worker: one JSON line per round it is asked for."""

    def __init__(self, python: str, root: Path, name: str, edit_name: str, data: Path) -> None:
        script = data / "jmcp_worker.py"
        script.write_text(WORKER)
        env = {
            **os.environ,
            "JUPYTER_DATA_DIR": str(data / "jupyter-data"),
            "JUPYTER_CONFIG_DIR": str(data / "jupyter-config"),
            "JUPYTER_RUNTIME_DIR": str(data / "jupyter-runtime"),
        }
        env.pop("PYTHONPATH", None)
        self.process = subprocess.Popen(
            [python, str(script), str(root), name, edit_name, str(EDIT_CELL), str(READ_CELLS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.version = self._answer()["version"]

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            assert self.process.stderr is not None
            error = self.process.stderr.read().strip().splitlines()
            self.process.wait()
            raise RuntimeError(error[-1] if error else "the worker exited")
        return json.loads(line)

    def ask(self, command: str, payload: Any = None) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        if payload is not None:
            self.process.stdin.write(json.dumps(payload) + "\n")
        self.process.stdin.flush()
        return self._answer()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()  # the worker this benchmark started, by its handle
            self.process.wait()


# -- the run ---------------------------------------------------------------------------------


def missing_python(python: str) -> str:
    """Why ``python`` cannot run the worker, or '' when it may."""
    if not python:
        return "no --mcp-python given"
    if not os.path.exists(python):
        return f"{python} does not exist (pip install jupyter-mcp-server in another venv)"
    return ""


def tokens(chars: int) -> int:
    return round(chars / CHARS_PER_TOKEN)


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


async def bench(options: argparse.Namespace, data: Path) -> str:
    root = data / "root"
    root.mkdir()
    book = make_notebook(options.cells, SEED)
    original, edited = edit_sources(book)
    nbformat.write(book, str(root / "analysis.ipynb"))
    for side in ("terax", "jmcp"):
        for use in ("read", "edit"):
            shutil.copyfile(root / "analysis.ipynb", root / f"{side}-{use}.ipynb")
    file_size = (root / "analysis.ipynb").stat().st_size
    (root / ".ipynb_checkpoints").mkdir()
    ours = Ours(root, data / "state", "terax-read.ipynb", "terax-edit.ipynb", [original, edited])

    theirs: Theirs | None = None
    python = options.mcp_python
    unavailable = missing_python(python)
    if not unavailable:
        try:
            theirs = Theirs(python, root, "jmcp-read.ipynb", "jmcp-edit.ipynb", data)
        except (OSError, RuntimeError, ValueError) as error:
            unavailable = f"its worker did not start: {error}"
    if theirs is None:
        print(f"jupyter-mcp-server not available: {unavailable}", flush=True)
    else:
        print(f"jupyter-mcp-server {theirs.version} ({python})", flush=True)

    times: dict[str, list[float]] = {}
    sizes: dict[str, Any] = {}
    load_start = os.getloadavg()[0]

    def add(key: str, seconds: float) -> None:
        times.setdefault(key, []).append(seconds)

    try:
        for number in range(options.runs + 1):  # round 0 warms both sides up
            for key, make in (
                ("outline", ours.outline),
                ("read_50", lambda: ours.read(0, READ_CELLS)),
                ("read_all", lambda: ours.read(0, options.cells)),
            ):
                forget_parsed()  # each operation starts cold; its later pages find the parse
                started = time.perf_counter()
                text, calls = await make()
                if number:
                    add(f"ours {key}", time.perf_counter() - started)
                sizes[f"ours {key}"] = {"chars": len(text), "calls": calls}
            for key, checkpoint in (("edit", True), ("edit_plain", False)):
                started = time.perf_counter()
                await ours.edit(checkpoint=checkpoint)
                if number:
                    add(f"ours {key}", time.perf_counter() - started)
            if theirs is not None:
                # Both edits of ours leave the cell as it was, so theirs alternates too.
                answer = theirs.ask("round", [edited, original])
                for key in ("outline", "outline_paged", "read_sources", "read_50"):
                    if number:
                        add(f"theirs {key}", answer[key]["seconds"])
                    sizes[f"theirs {key}"] = answer[key]
                if number:
                    times.setdefault("theirs edit", []).extend(answer["edit"]["seconds"])
        if theirs is not None:
            if options.full_read_cell:
                answer = theirs.ask("all")  # one read_cell call per cell: about a minute
                add("theirs read_all", answer["seconds"])
            else:
                answer = theirs.ask("all sizes")
                # Each read_cell call reads the whole file again: 10 times the 50 calls.
                per_cell = statistics.median(times["theirs read_50"]) / READ_CELLS
                add("theirs read_all", per_cell * options.cells)
            sizes["theirs read_all"] = answer
    finally:
        if theirs is not None:
            theirs.stop()

    check = nbformat.read(str(root / "jmcp-edit.ipynb"), as_version=4) if theirs else None
    if check is not None and check.cells[EDIT_CELL].source != original:
        raise RuntimeError("jupyter-mcp-server's edits did not land as expected")
    ours_book = nbformat.read(str(root / "terax-edit.ipynb"), as_version=4)
    if ours_book.cells[EDIT_CELL].source != original:
        raise RuntimeError("Terax's edits did not land as expected")

    cells = options.cells
    rows = [
        (
            f"outline, all {cells} cells",
            "ours outline",
            "theirs outline",
            f"ours: {sizes['ours outline']['calls']} notebook_outline pages of "
            f"{views.OUTLINE_CELLS}; theirs: read_notebook brief, limit=0 (one call)",
        ),
        (
            f"outline, all {cells} cells, in each tool's default pages",
            "ours outline",
            "theirs outline_paged",
            f"theirs: {-(-cells // 20)} read_notebook brief calls (limit=20, its default)",
        ),
        (
            f"read {READ_CELLS} cells with outputs",
            "ours read_50",
            "theirs read_50",
            f"ours: 1 notebook_read; theirs: {READ_CELLS} read_cell",
        ),
        (
            f"read all {cells} cells with outputs",
            "ours read_all",
            "theirs read_all",
            f"ours: {sizes['ours read_all']['calls']} notebook_read; theirs: {cells} read_cell "
            + (
                "(one sample)"
                if options.full_read_cell
                else f"(time: {cells} x the median read_cell of the row above)"
            ),
        ),
        (
            f"read all {cells} sources, no outputs",
            None,
            "theirs read_sources",
            "theirs: read_notebook detailed, limit=0; Terax has no sources-only read",
        ),
        (
            "edit: replace 1 cell, written",
            "ours edit",
            "theirs edit",
            "ours: hash-checked, etag, atomic, + checkpoint copy; theirs: nbformat read/write",
        ),
        (
            "edit, without Terax's checkpoint copy",
            "ours edit_plain",
            "theirs edit",
            "",
        ),
    ]
    outputs = [output for cell in book.cells for output in cell.get("outputs", [])]
    images = sum("image/png" in output.get("data", {}) for output in outputs)
    errors = sum(output.output_type == "error" for output in outputs)
    markdown = sum(cell.cell_type == "markdown" for cell in book.cells)
    lines = [
        f"Notebook: {cells} cells, {file_size / 1024:.0f} KiB on disk ({markdown} markdown, "
        f"{len(outputs)} outputs: {images} PNG, {errors} errors); {options.runs} rounds, "
        f"medians; load average {load_start:.1f} at start",
        "",
        "| Operation | ours ms | theirs ms | ratio (theirs / ours) | ours tokens | theirs tokens "
        "| Notes |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for label, ours_key, theirs_key, note in rows:
        ours_ms = median_ms(times[ours_key]) if ours_key in times else None
        theirs_ms = median_ms(times[theirs_key]) if theirs_key in times else None
        ratio = f"{theirs_ms / ours_ms:.2f}x" if ours_ms and theirs_ms else ""
        ours_tokens = (
            f"{tokens(sizes[ours_key]['chars']):,}" if ours_key and ours_key in sizes else ""
        )
        theirs_tokens = ""
        if theirs_key in sizes and "chars" in sizes[theirs_key]:
            theirs_tokens = f"{tokens(sizes[theirs_key]['chars']):,}"
            if sizes[theirs_key]["images"]:
                theirs_tokens += (
                    f" + {sizes[theirs_key]['images']} images "
                    f"({sizes[theirs_key]['image_chars'] / 1024:.0f} KiB base64)"
                )
        if theirs is None:
            theirs_tokens = ""
        if ours_key is None and theirs is None:
            continue
        lines.append(
            f"| {label} | {'' if ours_ms is None else f'{ours_ms:.1f}'} "
            f"| {'' if theirs_ms is None else f'{theirs_ms:.1f}'} | {ratio} "
            f"| {ours_tokens} | {theirs_tokens} | {note} |"
        )
    if theirs is None:
        lines += ["", f"jupyter-mcp-server not available: {unavailable}"]
    lines += [
        "",
        f"Tokens: characters / {CHARS_PER_TOKEN} of the text the model gets; images apart.",
    ]
    return "\n".join(lines)


def machine() -> str:
    return describe(f"nbformat {nbformat.__version__}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5, help="rounds of both sides (median)")
    parser.add_argument("--cells", type=int, default=500, help="cells of the notebook")
    parser.add_argument(
        "--mcp-python",
        default=DEFAULT_MCP_PYTHON,
        help="the python of a venv with jupyter-mcp-server (default %(default)s; '' to skip)",
    )
    parser.add_argument("--quick", action="store_true", help="2 rounds, for a check")
    parser.add_argument(
        "--full-read-cell",
        action="store_true",
        help="time jupyter-mcp-server's read_cell on every cell once (about a minute) "
        "instead of scaling the 50-cell time",
    )
    options = parser.parse_args()
    if options.quick:
        options.runs = 2
    if options.cells <= EDIT_CELL + 1:
        parser.error(f"--cells must be over {EDIT_CELL + 1}")
    data = Path(tempfile.mkdtemp(prefix="notebook-bench-"))
    print(f"Machine: {machine()}", flush=True)
    try:
        table_text = asyncio.run(bench(options, data))
    finally:
        shutil.rmtree(data, ignore_errors=True)
    print(table_text)


if __name__ == "__main__":
    main()
