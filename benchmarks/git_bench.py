"""Benchmark: Terax's git service against the git CLI on a large generated repository and on a
real history with thousands of refs.

Run from the repository root::

    python benchmarks/git_bench.py [--commits 50000] [--files 22000] [--runs 5] [--no-http]
        [--real PATH | --real-source PATH | --no-real] [--only-real]

The repository (a main line with feature branches forking and merging back, main merged into
features, octopus merges, tags, and a work tree of ``--files`` files with some changed and
untracked) is generated from a fixed seed with ``git fast-import`` under ``benchmarks/.data/``
and reused while it is there. One run measures, side by side and as medians of ``--runs``:

- status: ``GitManager.status`` in-process and ``GET /git/status`` over HTTP (a real
  ``jupyter server`` subprocess) against ``git status --porcelain=v2 --branch``;
- the first history page of 500 commits with lanes, in-process and over HTTP, against
  ``git log --all --topo-order -n 500``, without and then with a commit-graph file;
- the full graph layout (every commit parsed and laid out) against
  ``git log --graph --all --oneline``.

Goals (issue 4): status within 1.2x of git; first page under 150 ms; full layout within 2x.

The real-history case (issue 16) takes a clone with every ref of a hosted project: by default
a mirror clone of ``--real-source`` (``$TERAX_BENCH_REAL_SOURCE``, else
https://github.com/pallets/flask: 12k commits, 3,671 refs of which 3,536 are refs/pull/*;
a local mirror of it works offline) made under ``benchmarks/.data/``, or an existing clone given
with ``--real`` (``$TERAX_BENCH_REAL``). For the default refs (branches, tags, HEAD) and for
every ref it measures, without and with a commit-graph: the graph's width against git's own
column count; the first page of 500 in-process and over HTTP; the full walk (every page of 1000
through the API, JSON included) in-process and over HTTP, against ``git log --graph --oneline``
over the same refs. Then status with 20,000 untracked files against ``git status --porcelain``
and against git with the service's flags.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench_machine import describe

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.jupyter_process import JupyterProcess  # noqa: E402
from terax_jupyter.security import SecurityLayer  # noqa: E402  (the checkout, not a copy)
from terax_jupyter.services.git.graph import GraphLayout, decode_rows  # noqa: E402
from terax_jupyter.services.git.log import GitHistory  # noqa: E402
from terax_jupyter.services.git.manager import GitManager  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

DATA = Path(__file__).resolve().parent / ".data"
REAL_SOURCE = "https://github.com/pallets/flask"
UNTRACKED = 20_000
# The refs a scope starts from, as git log arguments (what the service gives git).
SCOPE_REVISIONS = {
    "branches": ("--branches", "--remotes", "--tags", "HEAD"),
    "all": ("--exclude=refs/stash", "--exclude=refs/notes/*", "--exclude=refs/prefetch/*", "--all"),
}
SEED = 4
GENERATOR_VERSION = 1
PAGE = 500
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "LC_ALL": "C",
}


def git(root: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args],
        check=True,
        capture_output=True,
        text=True,
        input=input,
        env={**os.environ, **GIT_ENV},
    ).stdout


# -- the repository --------------------------------------------------------------------------


def history_shape(size: int, rnd: random.Random) -> tuple[list[tuple[int, ...]], dict[str, int]]:
    """Parents of commits 0..size-1 (oldest first) and the branch heads.

    A main line; up to 12 feature branches fork from one of the last 30 main commits, grow,
    and merge back (sometimes two at once: an octopus); main is merged into features now and
    then. About one commit in five is a merge.
    """
    parents: list[tuple[int, ...]] = [()]
    main = 0
    mains = [0]
    features: list[int] = []
    finished = 0
    while len(parents) < size:
        new = len(parents)
        pick = rnd.random()
        if pick < 0.32 or not features:
            parents.append((main,))
            main = new
            mains.append(main)
            if len(features) < 12 and rnd.random() < 0.55:
                features.append(mains[max(0, len(mains) - 1 - rnd.randrange(30))])
        elif pick < 0.8:
            k = rnd.randrange(len(features))
            parents.append((features[k],))
            features[k] = new
        elif pick < 0.92:
            k = rnd.randrange(len(features))
            parents.append((main, features.pop(k)))
            main = new
            mains.append(main)
            finished += 1
        elif pick < 0.94 and len(features) >= 2:
            a = features.pop(rnd.randrange(len(features)))
            b = features.pop(rnd.randrange(len(features)))
            parents.append((main, a, b))
            main = new
            mains.append(main)
        else:
            k = rnd.randrange(len(features))
            parents.append((features[k], main))
            features[k] = new
    heads = {"main": main}
    heads.update({f"feature/{i:02d}": head for i, head in enumerate(features)})
    return parents, heads


def generate(path: Path, commits: int, files: int) -> None:
    """Write the repository with ``git fast-import`` (about a minute for 50k commits)."""
    rnd = random.Random(SEED)
    parents, heads = history_shape(commits, rnd)
    tmp = path.with_name(path.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    git(tmp, "init", "-q", "-b", "main")
    names = [f"src/pkg{i % 97:02d}/mod{(i // 97) % 40:02d}/file_{i:05d}.py" for i in range(files)]
    chunks: list[bytes] = []

    def data(text: str) -> None:
        raw = text.encode()
        chunks.append(f"data {len(raw)}\n".encode() + raw + b"\n")

    for number, commit_parents in enumerate(parents):
        mark = number + 1
        stamp = 1_600_000_000 + number * 600
        chunks.append(f"commit refs/heads/_import\nmark :{mark}\n".encode())
        chunks.append(
            f"author Dev {number % 37} <dev{number % 37}@example.com> {stamp} +0000\n".encode()
        )
        chunks.append(f"committer Bench <bench@example.com> {stamp} +0000\n".encode())
        kind = "Merge" if len(commit_parents) > 1 else "Change"
        data(f"{kind} {number}: update module {number % 541}\n")
        if commit_parents:
            chunks.append(f"from :{commit_parents[0] + 1}\n".encode())
            for other in commit_parents[1:]:
                chunks.append(f"merge :{other + 1}\n".encode())
            for _ in range(rnd.randint(1, 3)):
                name = names[rnd.randrange(files)]
                chunks.append(f"M 100644 inline {name}\n".encode())
                data(f"# {name}\nVALUE = {number}\n")
        else:
            for name in names:
                chunks.append(f"M 100644 inline {name}\n".encode())
                data(f"# {name}\nVALUE = 0\n")
    for name, head in heads.items():
        chunks.append(f"reset refs/heads/{name}\nfrom :{head + 1}\n\n".encode())
    for number in range(0, len(parents), max(1, len(parents) // 200)):
        chunks.append(f"reset refs/tags/v{number}\nfrom :{number + 1}\n\n".encode())
    subprocess.run(
        ["git", "-C", str(tmp), "fast-import", "--quiet"],
        input=b"".join(chunks),
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    git(tmp, "update-ref", "-d", "refs/heads/_import")
    git(tmp, "update-ref", "refs/remotes/origin/main", "main~3")
    git(tmp, "checkout", "-q", "-f", "main")
    # Some work in progress for status: changed, deleted and untracked files.
    for i in range(0, files, max(1, files // 60)):
        (tmp / names[i]).write_text(f"# changed {i}\n")
    for i in range(1, files, max(1, files // 10)):
        (tmp / names[i]).unlink()
    for i in range(40):
        (tmp / "scratch" / f"note_{i}.txt").parent.mkdir(exist_ok=True)
        (tmp / "scratch" / f"note_{i}.txt").write_text("untracked\n")
    shutil.rmtree(path, ignore_errors=True)
    tmp.rename(path)


def commit_graph_files(root: Path) -> list[Path]:
    info = root / ".git" / "objects" / "info"
    return [p for p in (info / "commit-graph", info / "commit-graphs") if p.exists()]


def drop_commit_graph(root: Path) -> None:
    for found in commit_graph_files(root):
        if found.is_dir():
            shutil.rmtree(found)
        else:
            found.unlink()


# -- timing ------------------------------------------------------------------------------------


def run_git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), *args],
        check=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **GIT_ENV, "GIT_OPTIONAL_LOCKS": "0"},
    )


def measure(fn: Callable[[], Any], runs: int) -> float:
    """Median seconds of ``runs`` calls after one warm-up."""
    fn()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def measure_async(fn: Callable[[], Awaitable[Any]], runs: int) -> float:
    await fn()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


class Server:
    """``jupyter server`` with Terax over the data folder, in a subprocess."""

    def __init__(self, root: Path, state: Path) -> None:
        self.jupyter = JupyterProcess()
        self.token = self.jupyter.token
        (state / "home").mkdir()
        self.jupyter.start(
            root,
            state,
            # The benchmark writes (and removes) the commit-graph itself.
            ["--GitManager.write_commit_graph=False"],
            env={**GIT_ENV, "HOME": str(state / "home")},
        )
        self.jupyter.wait_ready()
        self.connection = http.client.HTTPConnection("127.0.0.1", self.jupyter.port, timeout=120)

    def get(self, path: str) -> tuple[int, bytes]:
        self.connection.request("GET", path, headers={"Authorization": f"token {self.token}"})
        response = self.connection.getresponse()
        return response.status, response.read()

    def api(self, path: str) -> Any:
        status, body = self.get(path)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body[:300]!r}")
        return json.loads(body)

    def stop(self) -> None:
        self.connection.close()
        self.jupyter.stop(15)


# -- the benchmark ---------------------------------------------------------------------------


class Results:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, float, float | None, str]] = []
        self.notes: list[str] = []

    def add(
        self, section: str, what: str, seconds: float, baseline: float | None, goal: str = ""
    ) -> None:
        ratio = f"{seconds / baseline:.2f}x" if baseline else ""
        print(f"  {section:12} {what:58} {seconds * 1000:9.1f} ms {ratio:>7} {goal}", flush=True)
        self.rows.append((section, what, seconds, baseline, goal))

    def markdown(self) -> str:
        lines = ["| Area | Measurement | Median | vs git | Goal |", "|---|---|---:|---:|---|"]
        for section, what, seconds, baseline, goal in self.rows:
            ratio = f"{seconds / baseline:.2f}x" if baseline else ""
            lines.append(f"| {section} | {what} | {seconds * 1000:.1f} ms | {ratio} | {goal} |")
        return "\n".join(lines + [""] + [f"- {note}" for note in self.notes])


def goal(met: bool, text: str) -> str:
    return f"{'met' if met else 'NOT met'} ({text})"


async def bench(root: Path, runs: int, http: bool, results: Results) -> None:
    folder = root.parent
    security = SecurityLayer.build(str(folder), tempfile.mkdtemp(prefix="git-bench-state-"))
    manager = GitManager(security, write_commit_graph=False)
    name = root.name
    server = Server(folder, Path(tempfile.mkdtemp(prefix="git-bench-server-"))) if http else None
    try:
        count = int(git(root, "rev-list", "--all", "--count"))
        merges = int(git(root, "rev-list", "--all", "--merges", "--count"))
        tracked = len(git(root, "ls-files", "-z").split("\0")) - 1
        results.notes.append(
            f"Repository: {count} commits ({merges} merges), {tracked} tracked files, "
            f"{len(git(root, 'for-each-ref').splitlines())} refs; work tree with changes."
        )

        # -- status
        print("status", flush=True)
        base = measure(lambda: run_git(root, "status", "--porcelain=v2", "--branch"), runs)
        results.add("status", "git status --porcelain=v2 --branch", base, None)
        same = measure(
            lambda: run_git(
                root, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"
            ),
            runs,
        )
        results.add("status", "git, the service's flags (-z --untracked-files=all)", same, base)
        seconds = await measure_async(lambda: manager.status(name), runs)
        results.add(
            "status",
            "GitManager.status (in-process)",
            seconds,
            base,
            goal(seconds <= 1.2 * base, "<= 1.2x"),
        )
        if server:
            seconds = measure(lambda: server.api(f"/terax/api/git/status?path={name}"), runs)
            results.add(
                "status",
                "GET /git/status (HTTP)",
                seconds,
                base,
                goal(seconds <= 1.2 * base, "<= 1.2x"),
            )

        # -- history: without, then with a commit-graph
        for with_graph in (False, True):
            if with_graph:
                started = time.perf_counter()
                run_git(root, "commit-graph", "write", "--reachable", "--split", "--no-progress")
                plain = time.perf_counter() - started
                drop_commit_graph(root)
                started = time.perf_counter()
                run_git(
                    root, "commit-graph", "write", "--reachable", "--split", "--changed-paths",
                    "--no-progress",
                )  # fmt: skip
                bloom = time.perf_counter() - started
                results.notes.append(
                    f"Writing the commit-graph (what the service does in the background on the "
                    f"first log): {plain:.2f} s, {bloom:.2f} s with --changed-paths."
                )
            else:
                drop_commit_graph(root)
            label = "with commit-graph" if with_graph else "no commit-graph"
            print(f"history, {label}", flush=True)
            base = measure(
                lambda: run_git(
                    root, "log", "--all", "--topo-order", "-n", str(PAGE), "--format=%H%x1f%P"
                ),
                runs,
            )
            results.add(f"page ({label})", f"git log --all --topo-order -n {PAGE}", base, None)

            async def first_page() -> None:
                history = GitHistory(manager.runner, write_commit_graph=False)
                await history.log(await manager.resolve(name), limit=PAGE)

            seconds = await measure_async(first_page, runs)
            results.add(
                f"page ({label})",
                f"first page of {PAGE} with lanes, in-process (cold layout cache)",
                seconds,
                base,
                goal(seconds < 0.150, "< 150 ms"),
            )
            repo = await manager.resolve(name)
            history = GitHistory(manager.runner, write_commit_graph=False)
            pages: list[str] = []

            async def deep_page(
                history: GitHistory = history, repo: Any = repo, pages: list[str] = pages
            ) -> None:
                page = await history.log(repo, limit=PAGE, cursor=pages[-1] if pages else None)
                if page["cursor"]:
                    pages.append(page["cursor"])

            seconds = await measure_async(deep_page, runs)
            results.add(
                f"page ({label})", f"next pages ({PAGE} each, from the cursor)", seconds, base
            )
            if server:
                seconds = measure(
                    lambda: server.api(f"/terax/api/git/log?path={name}&limit={PAGE}"), runs
                )
                results.add(
                    f"page ({label})",
                    f"GET /git/log?limit={PAGE} (HTTP)",
                    seconds,
                    base,
                    goal(seconds < 0.150, "< 150 ms"),
                )

            # -- the full layout
            print(f"full layout, {label}", flush=True)
            base = measure(lambda: run_git(root, "log", "--graph", "--all", "--oneline"), runs)
            results.add(f"full ({label})", "git log --graph --all --oneline", base, None)
            plain_log = measure(
                lambda: run_git(root, "log", "--all", "--topo-order", "--format=%H%x1f%P"), runs
            )
            results.add(f"full ({label})", "git log --all --topo-order (no graph)", plain_log, base)

            async def full_layout(
                edges: bool, history: GitHistory = history, repo: Any = repo
            ) -> None:
                commits = await history.read_graph(repo)
                layout = GraphLayout()
                rows = [layout.add(oid, parents) for oid, *parents in commits]
                if edges:
                    json.dumps(rows)

            seconds = await measure_async(lambda: full_layout(False), runs)
            results.add(
                f"full ({label})",
                "service: read the whole log (ids, parents), lay out every commit",
                seconds,
                base,
                goal(seconds <= 2 * base, "<= 2x"),
            )
            seconds = await measure_async(lambda: full_layout(True), runs)
            results.add(
                f"full ({label})",
                "the same, plus every row as JSON (as the API sends it)",
                seconds,
                base,
            )
            commits = await history.read_graph(repo)
            started = time.perf_counter()
            layout = GraphLayout()
            for oid, *parents in commits:
                layout.add(oid, parents)
            pure = time.perf_counter() - started
            results.notes.append(
                f"Lane layout alone ({label}): {pure * 1000:.0f} ms for {len(commits)} commits, "
                f"{pure / len(commits) * 1e6:.2f} us per commit."
            )
        order_graph = git(root, "log", "--all", "--topo-order", "--format=%H")
        drop_commit_graph(root)
        order_plain = git(root, "log", "--all", "--topo-order", "--format=%H")
        results.notes.append(
            "git's topological order is "
            + ("identical" if order_graph == order_plain else "DIFFERENT")
            + " with and without the commit-graph (so cursors stay valid across its writing)."
        )
        run_git(root, "commit-graph", "write", "--reachable", "--split", "--changed-paths")
    finally:
        if server:
            server.stop()
        await manager.close()


# -- a real history with thousands of refs (issue 16) --------------------------------------------


def real_clone(path: str | None, source: str | None) -> Path | None:
    """The real-history repository: ``path`` as it is, else a mirror clone of ``source``
    (every ref, refs/pull/* included) with a work tree, made once under benchmarks/.data."""
    if path:
        root = Path(path).resolve()
        if not (root / ".git").exists():
            sys.exit(f"--real {root}: not a clone with a work tree (no .git there).")
        return root
    source = source or REAL_SOURCE
    remote = "://" in source
    if not remote and not Path(source).exists():
        print(
            f"No real history: {source} does not exist. Give a clone with many refs with "
            "--real PATH (or $TERAX_BENCH_REAL), or a repository to mirror with --real-source "
            "PATH (or $TERAX_BENCH_REAL_SOURCE); --no-real skips the case.",
            flush=True,
        )
        return None
    name = Path(source.rstrip("/")).name.removesuffix(".git")
    if not remote and name in ("repo", ".git"):
        name = Path(source).resolve().parent.name  # a mirror kept as <project>/repo
    root = DATA / f"real-{name}" / "repo"
    if not root.exists():
        print(f"Cloning every ref of {source} into {root} ...", flush=True)
        tmp = root.with_name("repo.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        # --mirror fetches +refs/*:refs/*: the pull-request refs come along.
        cloned = subprocess.run(
            ["git", "clone", "-q", "--mirror", source, str(tmp / ".git")],
            check=False,
            env={**os.environ, **GIT_ENV},
        )
        if cloned.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            print(
                f"No real history: cloning {source} failed (offline?). Give a local mirror with "
                "--real-source PATH (git clone --mirror <url> where there is a network).",
                flush=True,
            )
            return None
        git(tmp, "config", "--bool", "core.bare", "false")
        git(tmp, "checkout", "-q", "-f", git(tmp, "symbolic-ref", "--short", "HEAD").strip())
        shutil.rmtree(root, ignore_errors=True)
        tmp.rename(root)
    return root


def git_columns(root: Path, revisions: tuple[str, ...]) -> int:
    """The widest ``git log --graph``: its own column count (two characters a column)."""
    text = git(root, "-c", "color.ui=never", "log", "--graph", "--format=%H", *revisions)
    widest = 0
    for line in text.splitlines():
        graph = line[:-40] if "*" in line else line
        widest = max(widest, (len(graph.rstrip()) + 1) // 2)
    return widest


def graph_columns(commits: list[dict[str, Any]]) -> int:
    """The widest row of a whole history the API listed (decoded as the browser does)."""
    widest = 0
    for row in decode_rows([], [c["graph"] for c in commits]):
        ends = [row["column"]] + [max(e["from"], e["to"]) for e in row["edges"]]
        widest = max(widest, max(ends) + 1)
    return widest


def untracked_clone(real: Path) -> Path:
    """A clone of the real history's main line with 20,000 untracked files in its work tree."""
    root = real.parent / "untracked"
    marker = root / "scratch" / f"{UNTRACKED}.done"
    if not marker.exists():
        print(f"Writing {UNTRACKED} untracked files under {root} ...", flush=True)
        shutil.rmtree(root, ignore_errors=True)
        subprocess.run(
            ["git", "clone", "-q", "--shared", str(real), str(root)],
            check=True,
            env={**os.environ, **GIT_ENV},
        )
        for number in range(UNTRACKED):
            folder = root / "scratch" / f"d{number % 100:02d}" / f"e{number // 100 % 20:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"f{number:05d}.txt").write_text("untracked\n")
        marker.write_text("")
    return root


async def bench_real(real: Path, runs: int, http: bool, results: Results) -> None:
    folder = real.parent
    untracked = untracked_clone(real)
    security = SecurityLayer.build(str(folder), tempfile.mkdtemp(prefix="git-bench-state-"))
    manager = GitManager(security, write_commit_graph=False)
    server = Server(folder, Path(tempfile.mkdtemp(prefix="git-bench-server-"))) if http else None
    name = real.name
    try:
        refs = git(real, "for-each-ref", "--format=%(refname)").splitlines()
        pulls = sum(ref.startswith("refs/pull/") for ref in refs)
        results.notes.append(
            f"Real history {real}: {git(real, 'rev-list', '--all', '--count').strip()} commits, "
            f"{len(refs)} refs ({pulls} refs/pull/*); default refs: "
            f"{git(real, 'rev-list', '--count', *SCOPE_REVISIONS['branches']).strip()} commits."
        )
        repo = await manager.resolve(name)
        for with_graph in (False, True):
            if with_graph:
                run_git(real, "commit-graph", "write", "--reachable", "--split", "--no-progress")
            else:
                drop_commit_graph(real)
            label = "commit-graph" if with_graph else "no commit-graph"
            for refs_choice, revisions in SCOPE_REVISIONS.items():
                section = f"real {refs_choice}, {label}"
                print(section, flush=True)
                base = measure(
                    lambda revisions=revisions: run_git(
                        real, "log", "--graph", "--oneline", *revisions
                    ),
                    runs,
                )
                results.add(section, f"git log --graph --oneline ({refs_choice})", base, None)

                async def first_page(refs_choice: str = refs_choice) -> None:
                    history = GitHistory(manager.runner, write_commit_graph=False)
                    json.dumps(await history.log(repo, limit=PAGE, refs=refs_choice))

                seconds = await measure_async(first_page, runs)
                results.add(
                    section,
                    f"first page of {PAGE}, in-process (JSON included)",
                    seconds,
                    base,
                    goal(seconds <= 0.150, "<= 150 ms"),
                )
                if server:
                    seconds = measure(
                        lambda refs_choice=refs_choice: server.get(
                            f"/terax/api/git/log?path={name}&limit={PAGE}&refs={refs_choice}"
                        ),
                        runs,
                    )
                    results.add(
                        section,
                        f"GET /git/log?limit={PAGE} (HTTP)",
                        seconds,
                        base,
                        goal(seconds <= 0.150, "<= 150 ms"),
                    )
                scope = SCOPE_REVISIONS[refs_choice]

                async def one_pass(scope: tuple[str, ...] = scope) -> None:
                    history = GitHistory(manager.runner, write_commit_graph=False)
                    commits = await history.read_graph(repo, scope)
                    layout = GraphLayout()
                    json.dumps([layout.add(oid, parents) for oid, *parents in commits])

                seconds = await measure_async(one_pass, runs)
                results.add(
                    section,
                    "full layout in one pass: ids and parents, every row, rows as JSON",
                    seconds,
                    base,
                    goal(seconds <= 2 * base, "<= 2x"),
                )
                walked: list[dict[str, Any]] = []
                sent = [0]

                async def full_walk(
                    refs_choice: str = refs_choice,
                    walked: list[dict[str, Any]] = walked,
                    sent: list[int] = sent,
                ) -> None:
                    history = GitHistory(manager.runner, write_commit_graph=False)
                    cursor = None
                    walked.clear()
                    sent[0] = 0
                    while True:
                        page = await history.log(repo, limit=1000, cursor=cursor, refs=refs_choice)
                        sent[0] += len(json.dumps(page))
                        walked.extend(page["commits"])
                        cursor = page["cursor"]
                        if cursor is None:
                            return

                seconds = await measure_async(full_walk, runs)
                results.add(
                    section,
                    "full walk: every page of 1000, in-process (JSON included)",
                    seconds,
                    base,
                    goal(seconds <= 2 * base, "<= 2x"),
                )
                if server:

                    def http_walk(refs_choice: str = refs_choice) -> None:
                        cursor = ""
                        while True:
                            page = server.api(
                                f"/terax/api/git/log?path={name}&limit=1000&refs={refs_choice}"
                                + (f"&cursor={cursor}" if cursor else "")
                            )
                            cursor = page["cursor"]
                            if not cursor:
                                return

                    seconds = measure(http_walk, runs)
                    results.add(
                        section,
                        "full walk over HTTP (pages of 1000)",
                        seconds,
                        base,
                        goal(seconds <= 2 * base, "<= 2x"),
                    )
                if not with_graph:
                    columns = git_columns(real, revisions)
                    ours = graph_columns(walked)
                    results.notes.append(
                        f"Graph of {refs_choice} refs: {len(walked)} commits, {ours} columns at "
                        f"its widest (git log --graph: {columns}); the full walk sends "
                        f"{sent[0] / 2**20:.1f} MiB of JSON."
                    )

        # -- status with 20k untracked files
        print("status, 20k untracked", flush=True)
        target = untracked.name
        porcelain = measure(lambda: run_git(untracked, "status", "--porcelain"), runs)
        results.add("status 20k", "git status --porcelain", porcelain, None)
        flags = measure(
            lambda: run_git(
                untracked, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"
            ),
            runs,
        )
        results.add("status 20k", "git, the service's flags (-z -uall)", flags, porcelain)
        seconds = await measure_async(lambda: manager.status(target), runs)
        results.add(
            "status 20k",
            f"GitManager.status (in-process), vs git with its flags: {seconds / flags:.2f}x",
            seconds,
            porcelain,
            goal(seconds <= 1.2 * flags, "<= 1.2x git -uall"),
        )
        if server:
            seconds = measure(lambda: server.api(f"/terax/api/git/status?path={target}"), runs)
            results.add(
                "status 20k",
                f"GET /git/status (HTTP), vs git with its flags: {seconds / flags:.2f}x",
                seconds,
                porcelain,
                goal(seconds <= 1.2 * flags, "<= 1.2x git -uall"),
            )
        drop_commit_graph(real)
    finally:
        if server:
            server.stop()
        await manager.close()


def machine() -> str:
    version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    return describe(version)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--commits", type=int, default=50_000)
    parser.add_argument("--files", type=int, default=22_000)
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (median)")
    parser.add_argument("--no-http", action="store_true", help="skip the server measurements")
    parser.add_argument(
        "--real",
        default=os.environ.get("TERAX_BENCH_REAL"),
        help="a clone (with a work tree) of a real history with many refs",
    )
    parser.add_argument(
        "--real-source",
        default=os.environ.get("TERAX_BENCH_REAL_SOURCE"),
        help=f"a repository to mirror-clone for the real history (default {REAL_SOURCE})",
    )
    parser.add_argument("--no-real", action="store_true", help="skip the real history")
    parser.add_argument("--only-real", action="store_true", help="only the real history")
    options = parser.parse_args()
    results = Results()
    if not options.only_real:
        root = DATA / f"git-{options.commits}-{options.files}-v{GENERATOR_VERSION}" / "repo"
        if not root.exists():
            print(f"Generating {root} ...", flush=True)
            started = time.perf_counter()
            generate(root, options.commits, options.files)
            print(f"  {time.perf_counter() - started:.1f} s", flush=True)
        print(f"Machine: {machine()}", flush=True)
        asyncio.run(bench(root, options.runs, not options.no_http, results))
    if not options.no_real:
        real = real_clone(options.real, options.real_source)
        if real is not None:
            print(f"Machine: {machine()}", flush=True)
            asyncio.run(bench_real(real, options.runs, not options.no_http, results))
    print()
    print(f"Machine: {machine()}")
    print(results.markdown())


if __name__ == "__main__":
    main()
