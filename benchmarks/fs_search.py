"""Benchmark: Terax quick-open search and grep against ripgrep (and fzf) on a generated tree.

Run from the repository root::

    python benchmarks/fs_search.py [--files 100000] [--runs 5] [--keep]

The tree (source-like folders, .gitignore'd build output, planted grep strings) is generated
from a fixed seed under ``benchmarks/.data/`` and reused while it is there; ``--keep`` leaves
it for the next run, otherwise a run deletes it at the end. Every tool is measured on the same
tree in the same run, after one pass that reads every file so that the page cache is warm.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import http.client
import json
import math
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench_machine import describe

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.jupyter_process import JupyterProcess  # noqa: E402
from terax_jupyter.security import (  # noqa: E402  (the checkout, not an installed copy)
    SecurityLayer,
)
from terax_jupyter.services.fs import ripgrep  # noqa: E402
from terax_jupyter.services.fs.fuzzy import rank  # noqa: E402
from terax_jupyter.services.fs.grep import GrepQuery, GrepSearch  # noqa: E402
from terax_jupyter.services.fs.search import FileSearch  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.security import CheckedPath


class GrepWithoutReverification(GrepSearch):
    """Grep as it was before issue 14: what rg reports is sent without being re-read."""

    async def _verified(self, checks: Any, files: list[Any]) -> list[bool]:
        return [True] * len(files)


class SearchWithoutRecheck(FileSearch):
    """Quick open and glob as before issue 14: index names are sent without a re-check."""

    def _present(self, top: CheckedPath, paths: list[str]) -> list[bool]:
        return [True] * len(paths)


DATA = Path(__file__).resolve().parent / ".data"
SEED = 1129
GENERATOR_VERSION = 2
# The grep patterns planted in the generated tree: one in a few files, one in many (a marker
# such as code comments carry). They are data, not notes; changing them changes the tree.
RARE = "zephyr_quasar_5f3759df"
COMMON = "LEGACY_SHIM_TODO"
UNCAPPED = {"max_results": 100_000, "max_per_file": 100_000}
DEFAULT_CAPS = {"max_results": 2000, "max_per_file": 200}
QUERY_LIMIT = 50
NUL = b"\0"
JSON_MATCH = b'"type":"match"'

# -- the tree ------------------------------------------------------------------------------

_WORD_TEXT = (
    "account admin agent alert api app archive asset audit auth backup batch billing block "
    "bridge buffer build cache card cart channel chart check client cluster codec column "
    "command config connection context controller core counter cursor dashboard data "
    "database debug decoder device dialog diff dispatch document domain draft driver editor "
    "encoder engine entity error event export factory feature feed field file filter flag "
    "form format frame gateway graph grid group handler hash header health helper history "
    "hook host image import index input invoice item job kernel key label layout ledger "
    "limit link list loader lock log manager map media menu message metric middleware "
    "migration mock model module monitor node notebook notification order outline output "
    "package page panel parser patch payment peer permission pipeline plugin policy pool "
    "port preview price profile project provider proxy query queue range reader record "
    "redis region registry render report repository request resolver resource response "
    "result role router rule runner sample scheduler schema scope search secret selector "
    "sequence server service session setting shard signal sink snapshot socket source span "
    "state status storage store stream style subscription summary sync table tag task "
    "template tenant terminal theme thread ticket timer token tool trace transport tree "
    "trigger user util validator value version view viewer widget worker workflow writer zone"
)
WORDS = tuple(_WORD_TEXT.split())
_DIRECTORY_TEXT = (
    "src lib internal pkg core api components utils services models handlers views hooks "
    "store tests fixtures config auth db migrations cli server client common shared types "
    "ui widgets parser runtime plugins io net http grpc cache storage metrics logging events "
    "jobs workers scheduler admin billing payments users accounts search index examples "
    "bench tools adapters domain infra v1 v2 legacy experimental generated schemas"
)
DIRECTORY_NAMES = tuple(_DIRECTORY_TEXT.split())
# Top-level areas: (folder, weight, {extension: weight}).
AREAS: tuple[tuple[str, int, dict[str, int]], ...] = (
    ("packages", 30, {"ts": 10, "tsx": 6, "js": 2, "json": 1, "css": 1, "md": 1}),
    ("services", 18, {"go": 10, "yaml": 1, "proto": 1, "md": 1}),
    ("python", 18, {"py": 12, "pyi": 1, "md": 1, "txt": 1, "cfg": 1}),
    ("crates", 10, {"rs": 10, "toml": 1, "md": 1}),
    ("apps", 10, {"java": 8, "kt": 2, "xml": 1, "properties": 1}),
    ("native", 6, {"c": 5, "h": 5, "cpp": 2}),
    ("docs", 4, {"md": 8, "rst": 2, "png": 1, "svg": 1}),
    ("deploy", 2, {"yaml": 6, "json": 2, "tf": 2, "sh": 1}),
    ("scripts", 2, {"sh": 4, "py": 4}),
)
# How many folders sit at depth 2..8 (the areas are depth 1), and files per folder on average.
FOLDER_DEPTHS = (6, 14, 22, 22, 17, 12, 7)
FILES_PER_FOLDER = 12
IGNORED_SHARE = 0.15  # extra files in build/, node_modules/, dist/ and .gitignore'd folders


def _banks(rng: random.Random) -> dict[str, list[str]]:
    """A few thousand lines of plausible text per kind of file, drawn from templates."""

    def ident() -> str:
        return "_".join(rng.sample(WORDS, rng.choice((1, 2, 2, 3))))

    def camel() -> str:
        parts = rng.sample(WORDS, rng.choice((1, 2, 2, 3)))
        return parts[0] + "".join(p.title() for p in parts[1:])

    def pascal() -> str:
        return "".join(p.title() for p in rng.sample(WORDS, rng.choice((1, 2, 3))))

    def prose() -> str:
        return " ".join(rng.choices(WORDS, k=rng.randint(4, 14)))

    templates: dict[str, list[Callable[[], str]]] = {
        "py": [
            lambda: f"def {ident()}(self, {ident()}: {pascal()}) -> {pascal()} | None:",
            lambda: f"    {ident()} = self.{ident()}.get({ident()!r}, {rng.randint(0, 999)})",
            lambda: f"    if {ident()} is None or not {ident()}:",
            lambda: f"        return {pascal()}({ident()}={ident()})",
            lambda: f"from {ident()}.{ident()} import {pascal()}, {ident()}",
            lambda: f"class {pascal()}({pascal()}):",
            lambda: f'    """{prose().capitalize()}."""',
            lambda: f"    for {ident()} in self.{ident()}:",
            lambda: f"        {ident()}.append({ident()}[{rng.randint(0, 9)}])",
            lambda: f"# {prose()}",
            lambda: "",
        ],
        "ts": [
            lambda: f"export function {camel()}({camel()}: {pascal()}): {pascal()} {{",
            lambda: f"  const {camel()} = await {camel()}.{camel()}({camel()});",
            lambda: f"  if (!{camel()}) {{ return {camel()}; }}",
            lambda: f"import {{ {pascal()}, {camel()} }} from './{camel()}';",
            lambda: f"export interface {pascal()} {{ {camel()}: string; {camel()}?: number }}",
            lambda: f"  {camel()}.set('{camel()}', {rng.randint(0, 9999)});",
            lambda: f"// {prose()}",
            lambda: f"  return <{pascal()} {camel()}={{{camel()}}} />;",
            lambda: "}",
            lambda: "",
        ],
        "go": [
            lambda: f"func (s *{pascal()}) {pascal()}(ctx context.Context, {camel()} T) error {{",
            lambda: f"\t{camel()}, err := s.{camel()}.{pascal()}(ctx, {camel()})",
            lambda: "\tif err != nil {\n\t\treturn err\n\t}",
            lambda: f"\t// {prose()}",
            lambda: f"type {pascal()} struct {{ {pascal()} {pascal()} }}",
            lambda: f'\tlog.Printf("{prose()} %v", {camel()})',
            lambda: "}",
            lambda: "",
        ],
        "rs": [
            lambda: f"pub fn {ident()}(&self, {ident()}: &{pascal()}) -> Result<{pascal()}> {{",
            lambda: f"    let {ident()} = self.{ident()}.get(&{ident()})?;",
            lambda: (
                f"    match {ident()} {{ Some(v) => v, None => return Ok({pascal()}::default()) }}"
            ),
            lambda: f"use crate::{ident()}::{{{pascal()}, {ident()}}};",
            lambda: f"/// {prose()}",
            lambda: f"#[derive(Debug, Clone)]\npub struct {pascal()} {{ {ident()}: u64 }}",
            lambda: "}",
            lambda: "",
        ],
        "java": [
            lambda: f"    public {pascal()} {camel()}({pascal()} {camel()}) throws IOException {{",
            lambda: f"        {pascal()} {camel()} = this.{camel()}.{camel()}({camel()});",
            lambda: f"import com.example.{camel().lower()}.{pascal()};",
            lambda: f"    // {prose()}",
            lambda: f"    private final {pascal()} {camel()};",
            lambda: "    }",
            lambda: "",
        ],
        "c": [
            lambda: f"static int {ident()}(struct {ident()} *{ident()}, size_t {ident()})",
            lambda: f"    if ({ident()} == NULL) return -E{pascal().upper()[:8]};",
            lambda: f"    {ident()}->{ident()} = {ident()}({ident()}, {rng.randint(0, 4096)});",
            lambda: f'#include "{ident()}.h"',
            lambda: f"/* {prose()} */",
            lambda: "}",
            lambda: "",
        ],
        "md": [
            lambda: f"## {prose().title()}",
            lambda: f"{prose().capitalize()}. {prose().capitalize()}.",
            lambda: f"- `{ident()}`: {prose()}",
            lambda: f"Voir aussi « {prose()} » — café, naïve, 日本語の{rng.choice(WORDS)}.",
            lambda: "",
        ],
        "yaml": [
            lambda: f"{ident()}:",
            lambda: f"  {ident()}: {rng.choice(WORDS)}-{rng.randint(1, 99)}",
            lambda: f'  - name: {ident()}\n    value: "{rng.choice(WORDS)}"',
            lambda: f"# {prose()}",
        ],
        "json": [
            lambda: f'  "{camel()}": "{rng.choice(WORDS)}",',
            lambda: f'  "{camel()}": {{ "{camel()}": {rng.randint(0, 999)}, "enabled": true }},',
            lambda: f'  "{camel()}": ["{rng.choice(WORDS)}", "{rng.choice(WORDS)}"],',
        ],
        "css": [
            lambda: f".{ident().replace('_', '-')} {{",
            lambda: f"  margin: {rng.randint(0, 32)}px {rng.randint(0, 32)}px;",
            lambda: f"  color: var(--{ident().replace('_', '-')});",
            lambda: "}",
        ],
        "sh": [
            lambda: f'{ident().upper()}="${{{ident().upper()}:-{rng.choice(WORDS)}}}"',
            lambda: f'if [ -f "${ident().upper()}" ]; then {ident()} --{rng.choice(WORDS)}; fi',
            lambda: f"# {prose()}",
        ],
    }
    return {kind: [rng.choice(lines)() for _ in range(6000)] for kind, lines in templates.items()}


BANK_OF = {
    "py": "py", "pyi": "py", "ts": "ts", "tsx": "ts", "js": "ts", "go": "go", "rs": "rs",
    "java": "java", "kt": "java", "c": "c", "h": "c", "cpp": "c", "proto": "c", "md": "md",
    "rst": "md", "txt": "md", "yaml": "yaml", "cfg": "yaml", "properties": "yaml", "tf": "yaml",
    "xml": "json", "json": "json", "toml": "yaml", "css": "css", "sh": "sh", "svg": "json",
}  # fmt: skip


def _file_name(rng: random.Random, extension: str) -> str:
    words = rng.sample(WORDS, rng.choice((1, 1, 2, 2, 2, 3)))
    if extension in ("ts", "js") and rng.random() < 0.08:
        return f"index.{extension}"
    if extension == "py" and rng.random() < 0.08:
        return "__init__.py"
    if extension == "rs" and rng.random() < 0.08:
        return "mod.rs"
    if extension == "md" and rng.random() < 0.2:
        return rng.choice(("README.md", "CHANGELOG.md", "CONTRIBUTING.md"))
    if extension in ("tsx", "java", "kt"):
        stem = "".join(w.title() for w in words)
        if extension != "tsx" and rng.random() < 0.5:
            stem += rng.choice(("Service", "Controller", "Repository", "Factory", "Impl"))
    elif extension in ("ts", "js"):
        stem = words[0] + "".join(w.title() for w in words[1:])
        if rng.random() < 0.15:
            stem += rng.choice((".test", ".spec", ".d"))
    elif extension in ("md", "css", "yaml", "json", "sh", "tf", "svg", "png", "rst"):
        stem = "-".join(words)
    else:
        stem = "_".join(words)
        if extension in ("py", "go") and rng.random() < 0.15:
            stem = f"test_{stem}" if extension == "py" else f"{stem}_test"
    return f"{stem}.{extension}"


def _folders(rng: random.Random, count: int) -> list[tuple[str, str]]:
    """``count`` folders as (area, path): a few levels of packages, then source folders."""
    packages = [
        f"{a}-{b}" for a, b in zip(rng.sample(WORDS, 60), rng.sample(WORDS, 60), strict=True)
    ]
    by_depth: dict[int, list[tuple[str, str]]] = {1: [(area, area) for area, _, _ in AREAS]}
    children: dict[str, set[str]] = {}
    area_weights = {area: weight for area, weight, _ in AREAS}
    made = len(by_depth[1])
    while made < count:
        depth = rng.choices(range(2, 2 + len(FOLDER_DEPTHS)), weights=FOLDER_DEPTHS)[0]
        while depth - 1 not in by_depth:
            depth -= 1
        parents = by_depth[depth - 1]
        weights = [area_weights[area] for area, _ in parents] if depth == 2 else None
        area, parent = rng.choices(parents, weights=weights)[0]
        pool = (
            packages
            if depth == 2 and area in ("packages", "crates", "services")
            else DIRECTORY_NAMES
        )
        siblings = children.setdefault(parent, set())
        name = rng.choice(pool)
        while name in siblings:
            name = f"{rng.choice(pool)}_{rng.choice(WORDS)}"
        siblings.add(name)
        by_depth.setdefault(depth, []).append((area, f"{parent}/{name}"))
        made += 1
    return [folder for depth in sorted(by_depth) for folder in by_depth[depth]]


def _layout(rng: random.Random, count: int) -> list[str]:
    """``count`` unique relative paths: realistic depth, names and extensions, and folders of
    very unequal sizes (about FILES_PER_FOLDER on average)."""
    folders = _folders(rng, max(len(AREAS), count // FILES_PER_FOLDER))
    mixes = {area: mix for area, _, mix in AREAS}
    in_area: dict[str, list[str]] = {}
    for area, path in folders:
        in_area.setdefault(area, []).append(path)
    cumulative = {}
    for area, paths in in_area.items():
        total, cum = 0.0, []
        for _ in paths:
            total += rng.paretovariate(1.2)
            cum.append(total)
        cumulative[area] = cum
    areas = [area for area, _, _ in AREAS]
    weights = [weight for _, weight, _ in AREAS]
    taken: set[str] = set()
    paths: list[str] = []
    while len(paths) < count:
        area = rng.choices(areas, weights=weights)[0]
        folder = rng.choices(in_area[area], cum_weights=cumulative[area])[0]
        mix = mixes[area]
        extension = rng.choices(list(mix), weights=list(mix.values()))[0]
        path = f"{folder}/{_file_name(rng, extension)}"
        if path not in taken:
            taken.add(path)
            paths.append(path)
    return paths


def _content(rng: random.Random, banks: dict[str, list[str]], extension: str) -> bytes:
    if extension == "png":
        return b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.randint(500, 6000))
    bank = banks[BANK_OF.get(extension, "sh")]
    lines = min(3000, max(3, int(rng.lognormvariate(math.log(28), 0.9))))
    start = rng.randrange(len(bank) - lines) if lines < len(bank) else 0
    return ("\n".join(bank[start : start + lines]) + "\n").encode()


def _plant(rng: random.Random, text: bytes, token: str, times: int) -> bytes:
    lines = text.split(b"\n")
    for _ in range(times):
        at = rng.randrange(len(lines))
        lines[at] = lines[at] + f"  // {token}: remove once callers moved".encode()
    return b"\n".join(lines)


def generate(root: Path, count: int, seed: int) -> dict[str, Any]:
    """Write the tree under ``root``; return its description (counts, sizes, planted hits)."""
    rng = random.Random(seed)
    banks = _banks(rng)
    tracked = _layout(rng, count)
    tracked += [".github/workflows/ci.yml", ".eslintrc.json", ".editorconfig", "README.md"]
    tracked += ["package.json", "Makefile"]
    # Secrets a search must never show: the deny-list hides them.
    denied = [".env", "deploy/secrets.yaml", "deploy/certs/server.pem", "native/keys/id_rsa"]
    ignored: list[str] = []
    for index in range(int(count * IGNORED_SHARE)):
        base = rng.choice(
            (
                "node_modules/" + rng.choice(WORDS) + "/lib",
                "packages/" + rng.choice(WORDS) + "/node_modules/" + rng.choice(WORDS),
                "build/" + rng.choice(DIRECTORY_NAMES),
                "packages/" + rng.choice(WORDS) + "/dist",
                "coverage/lcov-report/" + rng.choice(WORDS),
                "python/.cache/" + rng.choice(WORDS),
            )
        )
        ignored.append(
            f"{base}/{index}_{rng.choice(WORDS)}.{rng.choice(('js', 'ts', 'py', 'map'))}"
        )
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    (root / ".gitignore").write_text("coverage/\n.cache/\n*.log\nbuild/\ndist/\nnode_modules/\n")
    rare_files = set(rng.sample(range(len(tracked)), 6))
    planted = {"rare": 0, "common": 0, "rare_unseen": 0, "common_unseen": 0}
    total_bytes = 0
    made: set[str] = set()
    for number, relative in enumerate(tracked + denied + ignored):
        extension = relative.rsplit(".", 1)[-1] if "." in relative.rsplit("/", 1)[-1] else "sh"
        data = _content(rng, banks, extension)
        unseen = number >= len(tracked)
        if extension != "png":
            if (
                number in rare_files
                or (unseen and rng.random() < 0.0005)
                or relative.endswith(".env")
            ):
                data = _plant(rng, data, RARE, 1)
                planted["rare_unseen" if unseen else "rare"] += 1
            if rng.random() < 0.03:
                times = rng.choice((1, 1, 2, 2, 3, 4, 6))
                data = _plant(rng, data, COMMON, times)
                planted["common_unseen" if unseen else "common"] += times
        path = root / relative
        parent = str(path.parent)
        if parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(parent)
        path.write_bytes(data)
        total_bytes += len(data)
    # A few minified bundles with very long lines (in a tracked vendor folder).
    for index in range(3):
        line = ";".join(f"var {rng.choice(WORDS)}{i}=function(){{return {i}}}" for i in range(8000))
        line = line[:100_000] + f";/* {COMMON} */" + line[100_000:]
        bundle = root / f"packages/vendor/bundle-{index}.min.js"
        bundle.parent.mkdir(parents=True, exist_ok=True)
        bundle.write_text(line + "\n")
        total_bytes += len(line) + 1
        planted["common"] += 1
        tracked.append(f"packages/vendor/bundle-{index}.min.js")
    # A repository, so plain ``rg`` honours the .gitignore as it would in a real checkout.
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    else:
        (root / ".git").mkdir()
    return {
        "version": GENERATOR_VERSION,
        "seed": seed,
        "tracked_files": len(tracked),
        "denied_files": len(denied),
        "ignored_files": len(ignored),
        "bytes": total_bytes,
        "planted": planted,
    }


def tree_for(count: int, seed: int) -> tuple[Path, dict[str, Any]]:
    """The cached tree (generated on first use) and its description."""
    name = f"tree-{count}-s{seed}-v{GENERATOR_VERSION}"
    root = DATA / name
    manifest = DATA / f"{name}.json"
    if manifest.exists() and root.is_dir():
        return root, json.loads(manifest.read_text())
    print(f"Generating {count} files under {root} (once) ...", flush=True)
    started = time.perf_counter()
    description = generate(root, count, seed)
    manifest.write_text(json.dumps(description, indent=2))
    print(f"  done in {time.perf_counter() - started:.1f} s", flush=True)
    return root, description


# -- queries -------------------------------------------------------------------------------


def make_queries(paths: list[str], seed: int, count: int = 40) -> tuple[list[str], list[list[str]]]:
    """Quick-open queries of 2-15 characters aimed at real files, and typing sequences."""
    rng = random.Random(seed + 1)
    targets = rng.sample(sorted(paths), count + 4)
    queries: list[str] = []
    for index, path in enumerate(targets[:count]):
        parts = path.split("/")
        name = parts[-1]
        stem = name.rsplit(".", 1)[0]
        words = [w for w in stem.replace("-", "_").replace(".", "_").split("_") if w] or [stem]
        kind = index % 6
        if kind == 0:
            query = name[: rng.randint(3, 9)]
        elif kind == 1:
            query = "".join(w[: rng.randint(2, 3)] for w in words)
        elif kind == 2:
            query = f"{parts[-2][:3]}/{stem[:5]}" if len(parts) > 1 else stem[:6]
        elif kind == 3:
            query = name
        elif kind == 4:
            query = "".join(p[0] for p in parts[:-1])[:4] + stem[:4]
        else:
            query = rng.choice(("ts", "rd", "py", "idx", "mod.rs", "readme", "zqxv", "test"))
        queries.append(query.lower()[:15].ljust(2, "x"))
    sequences = []
    for path in targets[count:]:
        name = path.rsplit("/", 1)[-1].lower()[:12]
        sequences.append([name[:end] for end in range(2, len(name) + 1)])
    return queries, sequences


# -- measuring -----------------------------------------------------------------------------


@dataclass
class Variant:
    """One way of doing the thing measured; ``call`` returns a note on what it found."""

    label: str
    call: Callable[[], str]
    cpu: Callable[[], float]  # CPU seconds so far of whoever does the work


@dataclass
class Result:
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    note: str = ""


def interleaved(variants: list[Variant], runs: int) -> dict[str, Result]:
    """Each variant ``runs`` times, round-robin, so that a busy moment hits all of them alike."""
    results = {v.label: Result() for v in variants}
    for _ in range(runs):
        for variant in variants:
            cpu = variant.cpu()
            started = time.perf_counter()
            note = variant.call()
            elapsed = time.perf_counter() - started
            result = results[variant.label]
            result.seconds.append(elapsed)
            result.cpu.append(variant.cpu() - cpu)
            result.note = note
    return results


def own_cpu() -> float:
    return time.process_time()


def children_cpu() -> float:
    """CPU of the finished child processes (rg run by this process)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_capture(arguments: list[str], cwd: Path, stdin: bytes | None = None) -> bytes:
    completed = subprocess.run(
        arguments,
        cwd=cwd,
        input=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return completed.stdout


def pipeline(first: list[str], second: list[str], cwd: Path) -> bytes:
    """``first | second``, like a shell; the output of ``second``."""
    producer = subprocess.Popen(first, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    consumer = subprocess.Popen(
        second, cwd=cwd, stdin=producer.stdout, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert producer.stdout is not None
    producer.stdout.close()
    output, _ = consumer.communicate()
    producer.wait()
    return output


@dataclass
class Row:
    section: str
    label: str
    value_ms: float
    baseline_ms: float | None = None
    note: str = ""
    p95_ms: float | None = None
    cpu_ms: float | None = None
    is_baseline: bool = False


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    loads: dict[str, str] = field(default_factory=dict)

    def add(self, *args: Any, **kwargs: Any) -> None:
        row = Row(*args, **kwargs)
        self.rows.append(row)
        ratio = f"  ({row.value_ms / row.baseline_ms:.2f}x)" if row.baseline_ms else ""
        p95 = f" p95 {row.p95_ms:.1f} ms" if row.p95_ms is not None else ""
        cpu = f" cpu {row.cpu_ms:.0f} ms" if row.cpu_ms is not None else ""
        print(f"  {row.label}: {row.value_ms:.1f} ms{p95}{ratio}{cpu}  {row.note}", flush=True)

    def add_result(
        self, section: str, label: str, result: Result, baseline: float | None = None
    ) -> float:
        value = ms(statistics.median(result.seconds))
        cpu = ms(statistics.median(result.cpu))
        self.add(section, label, value, baseline, result.note, cpu_ms=cpu, is_baseline=not baseline)
        return value

    def section(self, title: str) -> str:
        self.loads[title] = f"load average {os.getloadavg()[0]:.1f} at start"
        print(f"{title} [{self.loads[title]}]", flush=True)
        return title

    def table(self) -> str:
        lines: list[str] = []
        section = None
        for row in self.rows:
            if row.section != section:
                section = row.section
                lines += ["", f"### {section}", "", f"({self.loads.get(section, '')})", ""]
                lines.append("| Measurement | ms | p95 ms | vs. baseline | CPU ms | Notes |")
                lines.append("|---|---:|---:|---:|---:|---|")
            ratio = "baseline" if row.is_baseline else ""
            if row.baseline_ms:
                ratio = f"{row.value_ms / row.baseline_ms:.2f}x"
            p95 = f"{row.p95_ms:.1f}" if row.p95_ms is not None else ""
            cpu = f"{row.cpu_ms:.0f}" if row.cpu_ms is not None else ""
            lines.append(
                f"| {row.label} | {row.value_ms:.1f} | {p95} | {ratio} | {cpu} | {row.note} |"
            )
        return "\n".join(lines)


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def ms(seconds: float) -> float:
    return seconds * 1000


def security_for(root: Path, state: Path) -> SecurityLayer:
    """The security layer as the server extension builds it."""
    return SecurityLayer.build(
        str(root), str(state / "data"), extra_deny_prefixes=[str(state / "runtime")]
    )


# -- a real server -------------------------------------------------------------------------


class Server:
    """``jupyter server`` with the extension, in a subprocess, over one keep-alive connection."""

    def __init__(self, root: Path, state: Path) -> None:
        self.jupyter = JupyterProcess()
        self.token = self.jupyter.token
        self.jupyter.start(root, state)
        self.jupyter.wait_ready()
        self.connection = http.client.HTTPConnection("127.0.0.1", self.jupyter.port, timeout=120)
        # Connected before the first request, which is timed (as when readiness went over it).
        self.connection.connect()

    def get(self, path: str, **params: Any) -> tuple[int, bytes]:
        query = urllib.parse.urlencode(params)
        target = f"{path}?{query}" if query else path
        self.connection.request("GET", target, headers={"Authorization": f"token {self.token}"})
        response = self.connection.getresponse()
        return response.status, response.read()

    def cpu(self) -> float:
        """CPU seconds the server process has used (its own, not its rg children's)."""
        return self.jupyter.cpu_seconds()

    def stop(self) -> None:
        self.connection.close()
        self.jupyter.stop(10)


# -- the benchmark -------------------------------------------------------------------------


def warm_page_cache(root: Path, rg: str) -> None:
    """Read every file once (ignored ones too) so that no tool pays for the disk."""
    run_capture([rg, "--no-config", "--files", "--hidden", "--no-ignore"], root)
    everything = [rg, "--no-config", "--hidden", "--no-ignore", "--count", "no_such_text_here"]
    run_capture(everything, root)


def bench_listing(report: Report, root: Path, rg: str, security: SecurityLayer, runs: int) -> float:
    section = report.section("File list, index build and first query (median of runs)")
    builds: list[float] = []

    def rg_files(arguments: list[str], separator: bytes) -> Callable[[], str]:
        return lambda: f"{run_capture(arguments, root).count(separator)} files"

    def first_query() -> str:
        async def run() -> int:
            search = FileSearch(security)
            started = time.perf_counter()
            await search.index_for(search._folder(""))
            builds.append(time.perf_counter() - started)
            result = await search.search("usrsvc", limit=QUERY_LIMIT)
            return int(result["total_files"])

        return f"{asyncio.run(run())} files; index build then rank()"

    terax_flags = [rg, "--files", "--null", *ripgrep.common_arguments()]
    results = interleaved(
        [
            Variant("plain", rg_files([rg, "--files"], b"\n"), children_cpu),
            Variant("flags", rg_files(terax_flags, NUL), children_cpu),
            Variant("terax", first_query, own_cpu),
        ],
        runs,
    )
    baseline = report.add_result(section, "`rg --files` (plain)", results["plain"])
    report.add_result(
        section,
        "`rg --files` with Terax's flags (hidden, pruned folders, secret globs)",
        results["flags"],
        baseline,
    )
    report.add(
        section,
        "Terax index build (manager: rg, deny filter, FileList.build)",
        ms(statistics.median(builds)),
        baseline,
    )
    report.add_result(
        section, "Terax first query (manager: index build + rank)", results["terax"], baseline
    )
    return baseline


def bench_fuzzy(
    report: Report,
    root: Path,
    rg: str,
    security: SecurityLayer,
    server: Server | None,
    runs: int,
    seed: int,
) -> None:
    section = report.section("Quick open on a warm index (p50 and p95 over distinct queries)")
    search = FileSearch(security)
    files = asyncio.run(search.index_for(search._folder(""))).files
    unchecked = SearchWithoutRecheck(security)
    asyncio.run(unchecked.index_for(unchecked._folder("")))
    queries, sequences = make_queries(files.paths, seed)
    typing = [q for sequence in sequences for q in sequence]
    print(f"  queries: {', '.join(queries)}", flush=True)
    rounds = max(1, runs // 2)
    endpoint = "/terax/api/fs/search"

    def each(call: Callable[[str], Any]) -> Callable[[list[str]], list[float]]:
        def run(batch: list[str]) -> list[float]:
            latencies = []
            for query in batch:
                started = time.perf_counter()
                call(query)
                latencies.append(ms(time.perf_counter() - started))
            return latencies

        return run

    def cold(batch: list[str]) -> list[float]:
        latencies = []
        for query in batch:
            # A copy of the list knows no recent queries to narrow from: a scan of every path.
            fresh = dataclasses.replace(files)
            started = time.perf_counter()
            rank(query, fresh, QUERY_LIMIT)
            latencies.append(ms(time.perf_counter() - started))
        return latencies

    def through(searcher: FileSearch) -> Callable[[list[str]], list[float]]:
        async def run(batch: list[str]) -> list[float]:
            latencies = []
            for query in batch:
                started = time.perf_counter()
                await searcher.search(query, limit=QUERY_LIMIT)
                latencies.append(ms(time.perf_counter() - started))
            return latencies

        return lambda batch: asyncio.run(run(batch))

    passes: dict[str, tuple[Callable[[list[str]], list[float]], list[str]]] = {
        "rank": (each(lambda q: rank(q, files, QUERY_LIMIT)), queries),
        "cold": (cold, queries),
        "typing": (each(lambda q: rank(q, files, QUERY_LIMIT)), typing),
        "manager": (through(search), queries),
        "manager unchecked": (through(unchecked), queries),
    }
    if server is not None:
        through_http = each(lambda q: server.get(endpoint, q=q, limit=QUERY_LIMIT))
        passes["http"] = (through_http, queries)
        passes["http typing"] = (through_http, typing)
        for query in ("warm", "up"):
            server.get(endpoint, q=query, limit=QUERY_LIMIT)
    for query in ("warm", "up", "cache", "quick"):
        rank(query, files, QUERY_LIMIT)
    samples: dict[str, list[float]] = {name: [] for name in passes}
    for _ in range(rounds):
        for name, (run, batch) in passes.items():
            samples[name] += run(batch)

    def add(label: str, name: str, note: str) -> None:
        values = samples[name]
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        report.add(section, label, p50, None, note, p95_ms=p95)

    distinct = f"{len(queries)} queries x {rounds} rounds, {len(files)} files"
    prefixes = f"{len(typing)} prefixes of {len(sequences)} names x {rounds} rounds"
    add("`rank()` direct", "rank", distinct)
    add("`rank()` direct, nothing to narrow from (worst case)", "cold", distinct)
    add("`rank()` direct, typing (each prefix in turn)", "typing", prefixes)
    add("Terax manager `FileSearch.search`", "manager", distinct + ", results re-checked")
    add(
        "Terax manager `FileSearch.search` without the re-check (before issue 14)",
        "manager unchecked",
        distinct,
    )
    if server is not None:
        add("Terax HTTP `GET /terax/api/fs/search?limit=50`", "http", distinct + ", keep-alive")
        add("Terax HTTP, typing", "http typing", prefixes)
    fzf = shutil.which("fzf")
    if fzf is None:
        print("  fzf not found: skipped", flush=True)
        return
    listing = "\n".join(files.paths).encode()
    on_stdin = []
    for query in queries:
        started = time.perf_counter()
        run_capture([fzf, "--filter", query], root, listing)
        on_stdin.append(ms(time.perf_counter() - started))
    report.add(
        section,
        "`fzf --filter` (file list on stdin)",
        percentile(on_stdin, 0.5),
        None,
        f"{len(queries)} queries",
        p95_ms=percentile(on_stdin, 0.95),
    )
    piped = []
    for query in queries[:10]:
        started = time.perf_counter()
        pipeline([rg, "--files"], [fzf, "--filter", query], root)
        piped.append(ms(time.perf_counter() - started))
    report.add(
        section,
        "`rg --files | fzf --filter`",
        percentile(piped, 0.5),
        None,
        "first 10 queries",
        p95_ms=percentile(piped, 0.95),
    )


def bench_grep(
    report: Report,
    root: Path,
    rg: str,
    security: SecurityLayer,
    server: Server | None,
    runs: int,
) -> None:
    grep = GrepSearch(security)
    unverified = GrepWithoutReverification(security)

    def summary_note(summary: dict[str, Any]) -> str:
        note = f"{summary['matches']} matches in {summary['files']} files"
        return note + (", truncated" if summary["truncated"] else "")

    def through_manager(
        pattern: str, caps: dict[str, int], searcher: GrepSearch = grep
    ) -> Callable[[], str]:
        async def run() -> dict[str, Any]:
            summary: dict[str, Any] = {}
            async for item in searcher.search(GrepQuery(pattern, regex=False, **caps)):
                if item["type"] == "summary":
                    summary = item
            return summary

        return lambda: summary_note(asyncio.run(run()))

    def through_http(pattern: str, caps: dict[str, int]) -> Callable[[], str]:
        def run() -> str:
            assert server is not None
            status, body = server.get("/terax/api/fs/grep", pattern=pattern, **caps)
            assert status == 200, body[:200]
            return summary_note(json.loads(body.rstrip(b"\n").rsplit(b"\n", 1)[-1]))

        return run

    size_guard = [f"--max-filesize={grep.max_filesize}"] if grep.max_filesize else []

    def plain(pattern: str, *flags: str) -> str:
        output = run_capture([rg, *flags, "-F", pattern], root)
        lines = output.splitlines()
        files = len({line.split(b":", 1)[0] for line in lines})
        return f"{len(lines)} lines in {files} files"

    def as_terax_runs_it(pattern: str) -> str:
        arguments = [rg, "--json", *ripgrep.common_arguments(), *size_guard, "--smart-case"]
        output = run_capture([*arguments, "--fixed-strings", "--regexp", pattern, "--", "."], root)
        return f"{output.count(JSON_MATCH)} matches"

    default = f"default caps ({DEFAULT_CAPS['max_results']}/{DEFAULT_CAPS['max_per_file']})"
    before = "without re-verification (before issue 14)"
    verified = "re-verified"
    for name, pattern in (("rare", RARE), ("common", COMMON)):
        section = report.section(f"Grep, {name} pattern `{pattern}` (median of runs)")
        variants = [
            Variant(
                f"`rg -F {pattern}` (text to a pipe)", lambda p=pattern: plain(p), children_cpu
            ),
            *(
                [
                    Variant(
                        f"`rg {size_guard[0]} -F ...` (plain rg, with the size guard only)",
                        lambda p=pattern: plain(p, *size_guard),
                        children_cpu,
                    )
                ]
                if size_guard
                else []
            ),
            Variant(
                "`rg --json` with exactly Terax's arguments",
                lambda p=pattern: as_terax_runs_it(p),
                children_cpu,
            ),
            Variant(
                f"Terax manager, {default}, {before}",
                through_manager(pattern, DEFAULT_CAPS, unverified),
                own_cpu,
            ),
            Variant(
                f"Terax manager, {default}, {verified}",
                through_manager(pattern, DEFAULT_CAPS),
                own_cpu,
            ),
            Variant(
                f"Terax manager, uncapped, {before}",
                through_manager(pattern, UNCAPPED, unverified),
                own_cpu,
            ),
            Variant(
                f"Terax manager, uncapped, {verified}",
                through_manager(pattern, UNCAPPED),
                own_cpu,
            ),
        ]
        if server is not None:
            variants += [
                Variant(
                    f"Terax HTTP NDJSON, {default}, {verified}",
                    through_http(pattern, DEFAULT_CAPS),
                    server.cpu,
                ),
                Variant(
                    f"Terax HTTP NDJSON, uncapped, {verified}",
                    through_http(pattern, UNCAPPED),
                    server.cpu,
                ),
            ]
        results = interleaved(variants, runs)
        for caps in (default, "uncapped"):
            # What re-reading every reported file costs, against the same manager without it.
            without = statistics.median(results[f"Terax manager, {caps}, {before}"].seconds)
            checked = results[f"Terax manager, {caps}, {verified}"]
            ratio = statistics.median(checked.seconds) / without
            checked.note += f"; {ratio:.2f}x of the manager {before.split(' (')[0]}"
            print(f"  re-verification, {caps}: {ratio:.3f}x", flush=True)
        baseline = None
        for variant in variants:
            value = report.add_result(section, variant.label, results[variant.label], baseline)
            baseline = baseline or value


def machine() -> str:
    return describe()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=100_000, help="tracked files in the tree")
    parser.add_argument("--runs", type=int, default=5, help="repetitions per measurement (median)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument(
        "--keep", action="store_true", help="keep the generated tree for the next run"
    )
    parser.add_argument(
        "--no-http", action="store_true", help="skip the jupyter server measurements"
    )
    parser.add_argument("--only", choices=("all", "files", "fuzzy", "grep"), default="all")
    options = parser.parse_args()

    rg = ripgrep.find_ripgrep()
    if rg is None:
        raise SystemExit("rg not found (install the ripgrep wheel)")
    root, description = tree_for(options.files, options.seed)
    version = run_capture([rg, "--version"], root).decode().splitlines()[0]
    print(f"Machine: {machine()}; {version}")
    print(f"Tree: {root}\n  {json.dumps(description)}")
    print("Warming the page cache (one pass reading every file) ...", flush=True)
    warm_page_cache(root, rg)
    state = Path(tempfile.mkdtemp(prefix="fs-search-bench-"))
    for folder in ("config", "data", "runtime"):
        (state / folder).mkdir()
    security = security_for(root, state)
    report = Report()
    server: Server | None = None
    try:
        baseline = None
        if options.only in ("all", "files"):
            baseline = bench_listing(report, root, rg, security, options.runs)
        if not options.no_http and options.only in ("all", "fuzzy", "grep"):
            server = Server(root, state)
            started = time.perf_counter()
            _, body = server.get("/terax/api/fs/search", q="usrsvc", limit=QUERY_LIMIT)
            first = ms(time.perf_counter() - started)
            if baseline is not None:
                built = json.loads(body)["index_build_ms"]
                report.add(
                    next(iter(report.loads)),
                    "Terax first query over HTTP (fresh server, one sample)",
                    first,
                    baseline,
                    f"server-side index build {built:.0f} ms",
                )
        if options.only in ("all", "fuzzy"):
            bench_fuzzy(report, root, rg, security, server, options.runs, options.seed)
        if options.only in ("all", "grep"):
            bench_grep(report, root, rg, security, server, options.runs)
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(state, ignore_errors=True)
        if not options.keep:
            shutil.rmtree(root, ignore_errors=True)
            (DATA / f"{root.name}.json").unlink(missing_ok=True)
    print(report.table())


if __name__ == "__main__":
    main()
