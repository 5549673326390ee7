"""Which files a search skips: .gitignore rules (nested, with negation) and pruned folders."""

from __future__ import annotations

import os
import threading

import pathspec

# Folders no search descends into, whether or not a .gitignore names them.
PRUNED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "bower_components",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".ipynb_checkpoints",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".parcel-cache",
        ".turbo",
        ".gradle",
        ".terraform",
        "site-packages",
        "dist",
        "build",
        "target",
    }
)


class IgnoreRules:
    """Answers "is this path gitignored?" for paths under one top folder.

    Reads ``.gitignore`` in every folder from the top down to the path's folder
    (plus ``.git/info/exclude`` at a repository top); later, deeper rules win,
    as in git. Parsed files are cached by mtime.
    """

    def __init__(self, top: str) -> None:
        self.top = top
        self._cache: dict[str, tuple[int, pathspec.GitIgnoreSpec | None]] = {}
        self._lock = threading.Lock()

    def is_ignored(self, path: str, *, is_dir: bool) -> bool:
        relative_dir = os.path.relpath(os.path.dirname(path), self.top)
        if relative_dir.startswith(os.pardir):
            return False
        if os.path.basename(path) in PRUNED_DIRECTORIES and is_dir:
            return True
        folders = [self.top]
        if relative_dir != os.curdir:
            current = self.top
            for part in relative_dir.split(os.sep):
                current = os.path.join(current, part)
                folders.append(current)
        ignored = False
        for folder in folders:
            spec = self.spec_for(folder)
            if spec is None:
                continue
            relative = os.path.relpath(path, folder).replace(os.sep, "/") + ("/" if is_dir else "")
            result = spec.check_file(relative).include
            if result is not None:
                ignored = result
        return ignored

    def spec_for(self, folder: str) -> pathspec.GitIgnoreSpec | None:
        """The rules that a folder's own ignore files add (cached by modification time)."""
        sources = [
            os.path.join(folder, ".gitignore"),
            os.path.join(folder, ".git", "info", "exclude"),
        ]
        stamp = 0
        for source in sources:
            try:
                stamp ^= os.stat(source).st_mtime_ns
            except OSError:
                continue
        with self._lock:
            cached = self._cache.get(folder)
            if cached is not None and cached[0] == stamp:
                return cached[1]
        lines: list[str] = []
        for source in sources:
            try:
                with open(source, encoding="utf-8", errors="replace") as handle:
                    lines.extend(handle.read().splitlines())
            except OSError:
                continue
        spec = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        with self._lock:
            self._cache[folder] = (stamp, spec)
        return spec
