"""Benchmark: an agent's notebook edit reaching a notebook open in JupyterLab, two ways.

Run from the repository root::

    python benchmarks/notebook_apply.py [--runs 5] [--cells 200] [--watch 5] [--quick]

A real ``jupyter lab`` with Terax (started as the UI tests start it, ``tests/ui/conftest.py``
``start_lab``, its model provider a local ``ModelStub``) and one headless Chromium
(``/usr/bin/chromium``). Each run writes a fresh notebook of ``--cells`` code cells, opens it
in Lab (its kernel started and idle before anything is timed) and types an edit in its first
cell that is not saved, as a user working in it would.
Then the same change (1 cell, or 20 cells spread over the notebook, each a whole-source
replace) reaches the open notebook in one of two ways:

- **Terax** (ours): the model stub calls ``notebook_edit``; the change set waits for approval
  and is opened in its review (``terax:ai-review``), as ``tests/ui/test_ai_notebook_edit.py``
  does. The timer starts at the user's click on the review's Apply button (a real mouse click
  at the button, ``page.mouse.click``) and stops when every changed cell's new source is in the
  page's notebook model (``sharedModel.cells[i].getSource()`` of the widget open at the path,
  polled with ``page.evaluate`` every 2 ms). The page applies the change set to the open
  notebook's shared model in one transaction, saves it, then sends the decision
  (``POST /terax/api/ai/approvals/<id>``); the server finds the change made and writes
  nothing. The time until the review shows "applied" (the save, the decision and the agent's
  tool result) is timed too.
- **A file-writing tool** (theirs: jupyter-mcp-server without RTC, or any agent that edits the
  .ipynb): the change is written into the file while it is open, as such a tool does
  (``nbformat.read``, change the sources, write a temp file, ``os.replace``). Lab does not
  watch the file: nothing changes in the page until it next saves. So the benchmark presses
  Ctrl+S in the notebook, waits for Lab's "File Changed" dialog, and clicks its Revert (a real
  mouse click), until the new sources are in the model. Timed: the write, Ctrl+S until the
  dialog, Revert until visible; their sum is the figure compared. A real user's latency adds
  the time until they save (or autosave does: every 120 s by default, for a notebook with
  unsaved changes) and their reaction to the dialog; and Revert drops their unsaved edit.

Each poll from this process is a CDP round trip into a busy page, so the page also times the
click itself: from its ``mousedown`` to the first check (every 1 ms, when the page is free)
that sees the new sources; the detail table shows that beside the outside figure (for theirs,
of the Revert click only).

Each round (both sides, both sizes) runs in a freshly loaded Lab page. One warm-up round
first (not counted); in it, after the file is written, the page is watched for ``--watch``
seconds without a save, to see whether Lab notices the change by itself.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench_machine import describe

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import jupyterlab  # noqa: E402
import nbformat  # noqa: E402

from terax_jupyter.notebook_view.cells import source_hash  # noqa: E402
from terax_jupyter.testing.model_stub import ModelStub, text, tool_call  # noqa: E402
from tests.browser_fixtures import chromium  # noqa: E402
from tests.ui.conftest import VIEWPORT, start_lab  # noqa: E402
from tests.ui.helpers import server_api, wait_for_lab, write  # noqa: E402

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.ui.conftest import LabServer

TIMEOUT = 30.0
POLL = 0.002
TYPED = "  # typed, not saved"
REVIEW = ".jp-TeraxAiReview"

_MODEL = """Array.from(window.jupyterapp.shell.widgets('main'))
    .find(widget => widget.context && widget.context.path === path).context.model"""
# [index, source] pairs all in the open notebook's model?
SHOWS = """([path, wanted]) => {
    const widget = Array.from(window.jupyterapp.shell.widgets('main'))
        .find(w => w.context && w.context.path === path);
    if (!widget) return false;
    const cells = widget.context.model.sharedModel.cells;
    return wanted.every(([i, source]) => cells[i] && cells[i].getSource() === source);
}"""
READY = f"""([path, count]) => {{
    const widget = Array.from(window.jupyterapp.shell.widgets('main'))
        .find(w => w.context && w.context.path === path);
    return !!widget && widget.context.isReady && {_MODEL}.sharedModel.cells.length === count;
}}"""
SOURCE = f"([path, i]) => {_MODEL}.sharedModel.cells[i].getSource()"
DIRTY = f"path => {_MODEL}.dirty"
DIALOG = """() => Array.from(document.querySelectorAll('.jp-Dialog .jp-Dialog-header'))
    .some(header => header.textContent.includes('File Changed'))"""
# In the page itself: the time of the next mousedown, and the first time (checked every 1 ms
# when the page is free) that the model shows the sources.
WATCH = f"""([path, wanted]) => {{
    const shows = {SHOWS};
    const bench = (window.__terax_bench = {{ down: null, seen: null }});
    document.addEventListener('mousedown', () => {{ bench.down = performance.now(); }},
        {{ capture: true, once: true }});
    const timer = setInterval(() => {{
        if (shows([path, wanted])) {{ bench.seen = performance.now(); clearInterval(timer); }}
    }}, 1);
}}"""
IN_PAGE = """() => { const b = window.__terax_bench;
    return b && b.down !== null && b.seen !== null ? (b.seen - b.down) / 1000 : null; }"""
# Close the notebooks and reviews (no save) and shut their kernels down.
CLOSE_ALL = """async () => {
    for (const w of Array.from(window.jupyterapp.shell.widgets('main'))) {
        if (w.context || w.node.querySelector('.jp-TeraxAiReview')) w.dispose();
    }
    await window.jupyterapp.serviceManager.sessions.shutdownAll();
}"""
# The notebook's kernel has started and is idle (so that its start does not run in a timing).
IDLE = (
    f"path => {_MODEL.replace('.context.model', '.sessionContext')}.kernelDisplayStatus === 'idle'"
)


class _Dirs:
    """What ``start_lab`` needs of pytest's ``tmp_path_factory``: new folders under ``base``."""

    def __init__(self, base: Path) -> None:
        self.base = base

    def mktemp(self, name: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.base))


# -- the notebook and the change -------------------------------------------------------------


def cell_source(i: int) -> str:
    return f"value_{i} = {i}\ntotal_{i} = value_{i} * 2\nprint(total_{i})"


def new_source(i: int) -> str:
    return cell_source(i).replace("* 2", "* 3") + "\n# changed by the agent"


def changed_cells(count: int, cells: int) -> list[int]:
    """The cells a change of ``count`` cells replaces: one in the middle, or spread evenly."""
    if count == 1:
        return [cells // 2]
    step = cells // count
    return [step // 2 + k * step for k in range(count)]


def notebook(cells: int) -> nbformat.NotebookNode:
    book = nbformat.v4.new_notebook()
    book.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    book.cells = [nbformat.v4.new_code_cell(cell_source(i), id=f"c{i:03d}") for i in range(cells)]
    return book


def write_like_a_tool(path: Path, indices: list[int]) -> None:
    """What a file-writing tool does: read, change, write a temp file, rename it over."""
    book = nbformat.read(str(path), as_version=4)
    for i in indices:
        book.cells[i].source = new_source(i)
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    nbformat.write(book, str(temp))
    os.replace(temp, path)


# -- the page --------------------------------------------------------------------------------


def wait_until(page: Page, script: str, arg: Any = None, timeout: float = TIMEOUT) -> float:
    """Poll ``script`` in the page every ``POLL`` s until truthy; the monotonic time then."""
    deadline = time.perf_counter() + timeout
    while True:
        if page.evaluate(script, arg):
            return time.perf_counter()
        if time.perf_counter() > deadline:
            raise TimeoutError(f"not true after {timeout} s: {script[:80]}")
        time.sleep(POLL)


def open_with_unsaved_edit(page: Page, lab: LabServer, cells: int) -> tuple[str, Path]:
    """A fresh notebook, open in Lab, with an edit typed in its first cell and not saved."""
    path = f"apply-{uuid.uuid4().hex[:8]}/book.ipynb"
    file = lab.root / path
    write(file, nbformat.writes(notebook(cells)))
    page.evaluate(CLOSE_ALL)
    page.evaluate(
        "path => window.jupyterapp.commands.execute('docmanager:open', { path }).then(() => 1)",
        path,
    )
    wait_until(page, READY, [path, cells])
    wait_until(page, IDLE, path, timeout=60)
    panel = page.locator(".jp-NotebookPanel").last
    panel.locator(".jp-Cell").first.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(TYPED)
    wait_until(page, DIRTY, path)
    typed = page.evaluate(SOURCE, [path, 0])
    if typed != cell_source(0) + TYPED or not page.evaluate(READY, [path, cells]):
        raise RuntimeError(f"the typing did not land in the first cell: {typed!r}")
    return path, file


def click_at(page: Page, selector: str) -> tuple[float, float]:
    """The centre of the (visible) element, for a mouse click timed on its own."""
    box = page.locator(selector).first.bounding_box()
    if box is None:
        raise RuntimeError(f"{selector} is not visible")
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def propose(lab: LabServer, stub: ModelStub, path: str, indices: list[int]) -> dict[str, Any]:
    ops = [
        {
            "op": "replace",
            "id": f"c{i:03d}",
            "expected_hash": source_hash(cell_source(i))[:12],
            "source": new_source(i),
        }
        for i in indices
    ]
    stub.script([tool_call("notebook_edit", {"path": path, "ops": ops}), text("Edited.")])
    session = server_api(lab, "terax/api/ai/sessions", {})
    server_api(lab, f"terax/api/ai/sessions/{session['id']}/runs", {"prompt": "Edit it."})
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        pending = server_api(lab, f"terax/api/ai/sessions/{session['id']}")["pending_approvals"]
        if pending:
            return pending[0]
        time.sleep(0.05)
    raise RuntimeError("the agent proposed no notebook change")


def run_ours(page: Page, lab: LabServer, stub: ModelStub, cells: int, count: int) -> dict:
    indices = changed_cells(count, cells)
    path, file = open_with_unsaved_edit(page, lab, cells)
    approval = propose(lab, stub, path, indices)
    page.evaluate(
        "id => window.jupyterapp.commands.execute('terax:ai-review', { approvalId: id })"
        ".then(() => true)",
        approval["id"],
    )
    review = page.locator(REVIEW)
    review.locator(".jp-TeraxAiReview-cell").nth(count - 1).wait_for(timeout=TIMEOUT * 1000)
    apply = f"{REVIEW} [data-action='apply']"
    page.wait_for_selector(f"{apply}:not([disabled])", timeout=TIMEOUT * 1000)
    x, y = click_at(page, apply)
    wanted = [[i, new_source(i)] for i in indices]
    page.evaluate(WATCH, [path, wanted])
    start = time.perf_counter()
    page.mouse.click(x, y)
    visible = wait_until(page, SHOWS, [path, wanted])
    in_page = page.evaluate(IN_PAGE) if wait_until(page, IN_PAGE) else None
    applied = wait_until(
        page, f"() => !!document.querySelector(\"{REVIEW} [data-outcome='applied']\")"
    )
    kept = page.evaluate(SOURCE, [path, 0]) == cell_source(0) + TYPED
    on_disk = nbformat.read(str(file), as_version=4)
    saved = on_disk.cells[0].source == cell_source(0) + TYPED and all(
        on_disk.cells[i].source == new_source(i) for i in indices
    )
    if not (kept and saved):
        print(
            f"  ours, {count} cells: typed edit in the page {kept}, file saved with it and "
            f"the change {saved}; first cell in the page: "
            f"{page.evaluate(SOURCE, [path, 0])!r}, on disk: {on_disk.cells[0].source!r}",
            flush=True,
        )
    return {
        "visible": visible - start,
        "in_page": in_page,
        "applied": applied - start,
        "kept": kept and saved,
    }


def run_theirs(page: Page, lab: LabServer, cells: int, count: int, watch: float = 0) -> dict:
    indices = changed_cells(count, cells)
    path, file = open_with_unsaved_edit(page, lab, cells)
    wanted = [[i, new_source(i)] for i in indices]
    start = time.perf_counter()
    write_like_a_tool(file, indices)
    written = time.perf_counter()
    noticed = None
    if watch:
        # Without a save: does the page change, or ask, by itself?
        deadline = time.perf_counter() + watch
        noticed = False
        while time.perf_counter() < deadline and not noticed:
            noticed = bool(page.evaluate(SHOWS, [path, wanted]) or page.evaluate(DIALOG))
            time.sleep(0.05)
    saving = time.perf_counter()
    page.keyboard.press("Control+s")
    dialog = wait_until(page, DIALOG)
    # The user reads the dialog and moves to Revert: not timed.
    x, y = click_at(page, ".jp-Dialog .jp-Dialog-button:has-text('Revert')")
    page.evaluate(WATCH, [path, wanted])
    revert = time.perf_counter()
    page.mouse.click(x, y)
    visible = wait_until(page, SHOWS, [path, wanted])
    in_page = page.evaluate(IN_PAGE) if wait_until(page, IN_PAGE) else None
    lost = page.evaluate(SOURCE, [path, 0]) == cell_source(0)
    return {
        "write": written - start,
        "dialog": dialog - saving,
        "revert": visible - revert,
        "in_page": in_page,
        "total": (written - start) + (dialog - saving) + (visible - revert),
        "lost": lost,
        "noticed": noticed,
    }


# -- the report ------------------------------------------------------------------------------


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f}"


def spread(values: list[float]) -> str:
    low, mid, high = (v * 1000 for v in (min(values), statistics.median(values), max(values)))
    return f"{low:.1f} / {mid:.1f} / {high:.1f}"


def report(options: argparse.Namespace, results: dict[str, list[dict]], probe: dict) -> str:
    cells = options.cells
    lines = [
        f"Notebook: {cells} code cells, open in Lab with an unsaved edit in its first cell; "
        f"{options.runs} runs of each after one warm-up round, each round in a freshly "
        f"loaded page; medians; load average {options.load:.1f} at start.",
        "",
        "| Operation | ours ms | theirs ms | ratio (theirs / ours) | Notes |",
        "|---|---:|---:|---:|---|",
    ]
    for count in options.sizes:
        ours = results[f"ours {count}"]
        theirs = results[f"theirs {count}"]
        ours_ms = statistics.median(r["visible"] for r in ours)
        theirs_ms = statistics.median(r["total"] for r in theirs)
        kept = sum(r["kept"] for r in ours)
        lost = sum(r["lost"] for r in theirs)
        label = "replace 1 cell" if count == 1 else f"replace {count} cells (20 ops)"
        lines.append(
            f"| {label}: in the open notebook's model | {ours_ms * 1000:.1f} "
            f"| {theirs_ms * 1000:.1f} | {theirs_ms / ours_ms:.1f}x | ours: Apply click to "
            f"model; unsaved edit kept and saved in {kept}/{len(ours)}. theirs: write + "
            f"Ctrl+S to dialog + Revert click to model, without the user's reaction time; "
            f"unsaved edit lost in {lost}/{len(theirs)} |"
        )
    lines += [
        "",
        "min / median / max, ms:",
        "",
        "| Measure | "
        + " | ".join(f"{c} cell{'s' if c > 1 else ''}" for c in options.sizes)
        + " |",
        "|---|" + "---:|" * len(options.sizes),
    ]
    measures = [
        ("ours: Apply click until the new sources are in the model", "ours", "visible"),
        ("ours: the same in the page (mousedown to the model showing it)", "ours", "in_page"),
        ("ours: Apply click until the review shows applied (saved, decided)", "ours", "applied"),
        ("theirs: the tool's write (nbformat read, write temp, os.replace)", "theirs", "write"),
        ("theirs: Ctrl+S until the File Changed dialog shows", "theirs", "dialog"),
        ("theirs: Revert click until the new sources are in the model", "theirs", "revert"),
        ("theirs: the same in the page (mousedown to the model showing it)", "theirs", "in_page"),
        ("theirs: the three above", "theirs", "total"),
    ]
    for label, side, key in measures:
        row = [spread([r[key] for r in results[f"{side} {c}"]]) for c in options.sizes]
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    seen = "did" if probe.get("noticed") else "did not"
    lines += [
        "",
        f"Without a save, Lab {seen} notice the file written under the open notebook within "
        f"{options.watch:g} s (no dialog, the old sources shown): it checks the file only when "
        "it saves (Ctrl+S, or autosave of a notebook with unsaved changes, every 120 s by "
        "default). A real user's latency for theirs adds that wait and their reaction to the "
        "dialog, and Revert replaces the notebook with the file: the unsaved edit is lost "
        "(Overwrite would keep it and drop the tool's change).",
    ]
    return "\n".join(lines)


def bench(options: argparse.Namespace, base: Path) -> tuple[str, str]:
    results: dict[str, list[dict]] = {
        f"{side} {count}": [] for side in ("ours", "theirs") for count in options.sizes
    }
    probe: dict = {}
    errors: list[str] = []
    with (
        ModelStub(models=["stub-model"]) as stub,
        ModelStub(models=["stub-model"], require_key="sk-unused") as keyed,
        start_lab(_Dirs(base), stub, keyed) as lab,  # type: ignore[arg-type]
        chromium() as browser,
    ):
        chromium_version = browser.version
        context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(lab.lab_url())
        wait_for_lab(page)
        # Warm-up round: the first of everything is slower; and the watch without a save.
        run_ours(page, lab, stub, options.cells, 1)
        probe = run_theirs(page, lab, options.cells, 1, watch=options.watch)
        for run in range(options.runs):
            # Each round in a fresh page: the notebooks closed before are not in its heap.
            page.evaluate(CLOSE_ALL)
            page.goto(lab.lab_url())
            wait_for_lab(page)
            for count in options.sizes:
                ours = run_ours(page, lab, stub, options.cells, count)
                theirs = run_theirs(page, lab, options.cells, count)
                results[f"ours {count}"].append(ours)
                results[f"theirs {count}"].append(theirs)
                print(
                    f"run {run + 1}, {count} cells: ours {ours['visible'] * 1000:.1f} ms "
                    f"(applied {ours['applied'] * 1000:.1f}), theirs "
                    f"{theirs['total'] * 1000:.1f} ms",
                    flush=True,
                )
        page.evaluate(CLOSE_ALL)
        context.close()
    if errors:
        print(f"page errors: {errors[:3]}", flush=True)
    return report(options, results, probe), chromium_version


def machine(chromium_version: str) -> str:
    return describe(
        f"JupyterLab {jupyterlab.__version__}",
        f"Chromium {chromium_version} (headless)",
        f"Playwright {version('playwright')}",
        f"nbformat {nbformat.__version__}",
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5, help="runs of each case (median)")
    parser.add_argument("--cells", type=int, default=200, help="code cells of the notebook")
    parser.add_argument(
        "--watch",
        type=float,
        default=5.0,
        help="seconds the warm-up watches the page after the write, without a save",
    )
    parser.add_argument("--quick", action="store_true", help="2 runs, for a check")
    options = parser.parse_args()
    if options.quick:
        options.runs = 2
    if options.cells < 40:
        parser.error("--cells must be 40 or more")
    options.sizes = [1, 20]
    options.load = os.getloadavg()[0]
    base = Path(tempfile.mkdtemp(prefix="notebook-apply-bench-"))
    try:
        table_text, chromium_version = bench(options, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"Machine: {machine(chromium_version)}")
    print(table_text)


if __name__ == "__main__":
    main()
