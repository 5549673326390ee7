"""Histories for the log, graph and commit tests: real repositories and generated DAGs."""

from __future__ import annotations

import os
import random
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.services.git.repository import Repo
from terax_jupyter.services.git.runner import GitRunner

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

Commit = tuple[str, tuple[str, ...]]

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Lovelace",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Charles Babbage",
    "GIT_COMMITTER_EMAIL": "charles@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(root: Path | str, *args: str, env: dict[str, str] | None = None) -> str:
    """Run git in ``root`` for a fixture; its stdout."""
    return subprocess.run(
        ["git", "-C", str(root), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV, **(env or {})},
    ).stdout


def commit(root: Path, message: str, files: dict[str, str | bytes], *, when: int) -> str:
    """Write ``files`` (None content deletes), stage everything, commit at time ``when``."""
    for name, content in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    git(root, "add", "-A")
    date = f"{1_700_000_000 + when * 60} +0100"
    git(
        root,
        "commit",
        "-q",
        "-m",
        message,
        env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date},
    )
    return git(root, "rev-parse", "HEAD").strip()


def init(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "commit.gpgsign", "false")
    return root


def build_history(root: Path) -> dict[str, str]:
    """A small repository with every shape the history must draw; returns named commits.

    main: c1 - c2 - c3(rename + binary) - m1(merge feature) - m2(octopus of a, b) - c4
    feature forks at c2; a and b fork at m1; tags v1 (light, on c2) and v2 (annotated, on
    m1); origin/main points at m1; HEAD is on main.
    """
    init(root)
    git(root, "remote", "add", "origin", "git@github.com:terax/demo.git")
    c: dict[str, str] = {}
    c["c1"] = commit(root, "first: add readme", {"README.md": "hello\n", "a.txt": "a\n"}, when=1)
    c["c2"] = commit(root, "second: edit readme", {"README.md": "hello\nworld\n"}, when=2)
    git(root, "tag", "v1")
    git(root, "checkout", "-q", "-b", "feature")
    c["f1"] = commit(root, "feature: start", {"feature.txt": "f1\n"}, when=3)
    c["f2"] = commit(root, "feature: more (#12", {"feature.txt": "f1\nf2\n"}, when=4)
    git(root, "checkout", "-q", "main")
    git(root, "mv", "a.txt", "b.txt")
    c["c3"] = commit(
        root,
        "third: rename a to b, add a binary",
        {"image.bin": bytes(range(256)) * 4, "README.md": "hello\nworld\n!\n"},
        when=5,
    )
    date = f"{1_700_000_000 + 6 * 60} +0100"
    git(
        root,
        "merge",
        "-q",
        "--no-ff",
        "feature",
        "-m",
        "Merge branch 'feature'",
        env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date},
    )
    c["m1"] = git(root, "rev-parse", "HEAD").strip()
    git(root, "tag", "-a", "v2", "-m", "release two")
    git(root, "update-ref", "refs/remotes/origin/main", c["m1"])
    for name, when in (("a", 7), ("b", 8)):
        git(root, "checkout", "-q", "-b", name, c["m1"])
        c[name] = commit(root, f"topic {name}", {f"{name}.txt": f"{name}\n"}, when=when)
    git(root, "checkout", "-q", "main")
    date = f"{1_700_000_000 + 9 * 60} +0100"
    git(
        root,
        "merge",
        "-q",
        "--no-ff",
        "a",
        "b",
        "-m",
        "Octopus a and b",
        env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date},
    )
    c["m2"] = git(root, "rev-parse", "HEAD").strip()
    c["c4"] = commit(root, "fourth: after the octopus", {"README.md": "done\n"}, when=10)
    return c


def random_dag(size: int, seed: int, *, branches: int = 6, roots: int = 1) -> list[Commit]:
    """A history newest first (a topological order): a main line, feature branches that fork
    from recent main commits and merge back, main merged into features, extra roots."""
    rnd = random.Random(seed)
    made: list[Commit] = []

    def new(parents: Sequence[str]) -> str:
        oid = f"{len(made):040x}"
        made.append((oid, tuple(parents)))
        return oid

    main = new(())
    mains = [main]
    features: list[str] = [new(()) for _ in range(roots - 1)]
    while len(made) < size:
        pick = rnd.random()
        if pick < 0.3 or not features:
            main = new([main])
            mains.append(main)
            if len(features) < branches and rnd.random() < 0.5:
                features.append(mains[max(0, len(mains) - 1 - rnd.randrange(20))])
        elif pick < 0.8:
            k = rnd.randrange(len(features))
            features[k] = new([features[k]])
        elif pick < 0.9:
            k = rnd.randrange(len(features))
            main = new([main, features.pop(k)])
            mains.append(main)
        elif pick < 0.95 and len(features) >= 2:
            # An octopus of main and two features.
            first = features.pop(rnd.randrange(len(features)))
            second = features.pop(rnd.randrange(len(features)))
            main = new([main, first, second])
            mains.append(main)
        else:
            k = rnd.randrange(len(features))
            features[k] = new([features[k], main])
    return made[::-1]


def fast_import(root: Path, commits: Sequence[Commit], heads: dict[str, str]) -> dict[str, str]:
    """Write a DAG (newest first) as a real repository with ``git fast-import``.

    Every commit changes one file; returns the DAG's ids mapped to the real object ids.
    """
    init(root)
    stream: list[str] = []
    marks: dict[str, int] = {}
    for number, (oid, parents) in enumerate(reversed(commits), start=1):
        marks[oid] = number
        stamp = 1_700_000_000 + number * 60
        message = f"commit {number}\n"
        if not parents:
            stream.append("reset refs/heads/_import\n\n")
        stream.append(f"commit refs/heads/_import\nmark :{number}\n")
        stream.append(f"author A <a@example.com> {stamp} +0000\n")
        stream.append(f"committer A <a@example.com> {stamp} +0000\n")
        stream.append(f"data {len(message)}\n{message}")
        if parents:
            stream.append(f"from :{marks[parents[0]]}\n")
            for parent in parents[1:]:
                stream.append(f"merge :{marks[parent]}\n")
        else:
            stream.append("deleteall\n")
        content = f"{number}\n"
        stream.append(f"M 100644 inline file{number % 50}.txt\ndata {len(content)}\n{content}\n")
    for name, oid in heads.items():
        stream.append(f"reset refs/heads/{name}\nfrom :{marks[oid]}\n\n")
    marks_file = root / ".git" / "marks"
    subprocess.run(
        ["git", "-C", str(root), "fast-import", "--quiet", f"--export-marks={marks_file}"],
        input="".join(stream),
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    by_mark = {}
    for line in marks_file.read_text().splitlines():
        mark, real = line.split()
        by_mark[int(mark[1:])] = real
    git(root, "update-ref", "-d", "refs/heads/_import")
    git(root, "symbolic-ref", "HEAD", f"refs/heads/{next(iter(heads))}")
    return {oid: by_mark[number] for oid, number in marks.items()}


def repo_of(root: Path) -> Repo:
    top = os.path.realpath(root)
    return Repo(top, os.path.join(top, ".git"), "")


@pytest.fixture
def runner() -> GitRunner:
    return GitRunner()


@pytest.fixture
def history(tmp_path: Path) -> tuple[Repo, dict[str, str]]:
    """The repository of ``build_history`` and its named commits."""
    named = build_history(tmp_path / "history")
    return repo_of(tmp_path / "history"), named


def graph_rows(page: dict[str, Any]) -> list[tuple[str, tuple[str, ...], dict[str, Any]]]:
    return [(c["oid"], tuple(c["parents"]), c["graph"]) for c in page["commits"]]


def pull_request_dag(size: int, seed: int, *, pulls: int) -> tuple[list[Commit], dict[str, str]]:
    """A hosted project's history as a mirror has it, newest first, and its refs.

    A main line where topic branches fork, grow and are merged back; beside it ``pulls``
    pull requests of one to four commits that fork from an older main commit and end there:
    some merged, most not (closed, or squashed in), each with its ``refs/pull/N/head`` and,
    for the open ones, the ``refs/pull/N/merge`` commit a host makes of main and the pull
    request. Most lanes of such a graph end soon after they begin: the layout must give
    their columns back, as ``git log --graph`` does.
    """
    rnd = random.Random(seed)
    made: list[Commit] = []

    def new(parents: Sequence[str]) -> str:
        oid = f"{len(made):040x}"
        made.append((oid, tuple(parents)))
        return oid

    refs: dict[str, str] = {}
    main = new(())
    mains = [main]
    topics: list[str] = []
    opened = 0
    while len(made) < size:
        pick = rnd.random()
        if pick < 0.35 or not topics:
            main = new([main])
            mains.append(main)
            if len(topics) < 4 and rnd.random() < 0.3:
                topics.append(main)
        elif pick < 0.55:
            k = rnd.randrange(len(topics))
            topics[k] = new([topics[k]])
        elif pick < 0.62:
            main = new([main, topics.pop(rnd.randrange(len(topics)))])
            mains.append(main)
        elif opened < pulls:
            opened += 1
            tip = mains[max(0, len(mains) - 1 - rnd.randrange(40))]
            for _ in range(rnd.randint(1, 4)):
                tip = new([tip])
            refs[f"refs/pull/{opened}/head"] = tip
            if rnd.random() < 0.25:
                main = new([main, tip])
                mains.append(main)
            elif rnd.random() < 0.5:
                refs[f"refs/pull/{opened}/merge"] = new([main, tip])
        else:
            main = new([main])
            mains.append(main)
    for n, topic in enumerate(topics):
        refs[f"refs/heads/topic-{n}"] = topic
    refs["refs/heads/main"] = main
    refs["refs/tags/v1"] = mains[len(mains) // 2]
    return made[::-1], refs


def import_with_refs(root: Path, commits: Sequence[Commit], refs: dict[str, str]) -> dict[str, str]:
    """``fast_import`` a DAG with refs in any namespace (``{full ref name: DAG id}``); HEAD
    on main. Returns the DAG's ids mapped to the real object ids."""
    mapping = fast_import(root, commits, {"main": refs["refs/heads/main"]})
    updates = "".join(f"update {name} {mapping[oid]}\n" for name, oid in refs.items())
    subprocess.run(
        ["git", "-C", str(root), "update-ref", "--stdin"],
        input=updates,
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return mapping


def git_graph_columns(root: Path | str, *revisions: str) -> int:
    """How many columns ``git log --graph`` uses at its widest, its own lanes' count: the
    graph part of every line (the commit id cut off commit lines), two characters a column."""
    text = git(root, "-c", "color.ui=never", "log", "--graph", "--format=%H", *revisions)
    widest = 0
    for line in text.splitlines():
        graph = line[:-40] if "*" in line else line
        widest = max(widest, (len(graph.rstrip()) + 1) // 2)
    return widest
