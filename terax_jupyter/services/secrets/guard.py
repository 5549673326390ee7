"""KeyStoreGuard: agent commands may not name the places where the server's keys are.

Defense in depth, not a boundary. The agent's commands run as the server's own user, so the
operating system lets them read the key file, the keychain (when it is unlocked) and the
server's ``/proc/<pid>/environ``. This guard refuses the plain ways of saying so in a
command line; a command that builds the path at run time (a script the agent wrote, a
variable, an encoded string) gets past it. docs/security.md says what that means.
"""

from __future__ import annotations

import os
import re

from terax_jupyter.exceptions import CommandDenied

# Any process's environment or memory: the server's is one of them (often $PPID).
_PROC_SECRETS = re.compile(r"/proc\b.*\b(?:environ|mem)\b|\b(?:environ|mem)\b.*/proc\b", re.S)
# ``ps e``, ``ps eww``, ``ps auxe``: BSD-style options that print each process's environment.
_PS_ENVIRONMENT = re.compile(r"(?<![\w./-])ps\s+[a-z]*e[a-z]*(?![\w-])")
# Tools and calls that read a keychain entry.
_KEYCHAIN_TOOLS = re.compile(
    r"secret-tool|\bkeyring\b|get_password|find-generic-password|kwallet|cmdkey|credential"
)
# What the shell removes before it runs a word: quotes and backslashes (``/pr''oc``).
_QUOTING = str.maketrans("", "", "'\"\\")


class KeyStoreGuard:
    """Refuses a command whose text names the key file or its folder, a process's
    environment, or the keychain entries Terax keeps."""

    def __init__(self, file_path: str, keyring_service: str, home: str | None = None) -> None:
        folder = os.path.dirname(os.path.abspath(file_path))
        home = os.path.abspath(home if home is not None else os.path.expanduser("~"))
        names = {os.path.abspath(file_path), folder, os.path.basename(file_path)}
        # ``~/.local/share/jupyter/terax`` and ``cd ~ && cat .local/...``: the path below home.
        if home not in ("", "/") and folder.startswith(home + os.sep):
            names.add(folder[len(home) + 1 :])
        ordered = sorted((n.lower() for n in names if n), key=len, reverse=True)
        # Whole names: a workspace at ``~/.terax-projects`` is not the state at ``~/.terax``.
        self._names = re.compile(
            r"(?<![\w.-])(?:" + "|".join(re.escape(n) for n in ordered) + r")(?![\w.-])"
        )
        self._service = keyring_service.lower()

    def check(self, command: str) -> str:
        """``command`` if it names none of those places, else ``CommandDenied``
        (reason ``key_store_access``)."""
        text = command.lower().translate(_QUOTING)
        if (
            self._names.search(text)
            or _PROC_SECRETS.search(text)
            or _PS_ENVIRONMENT.search(text)
            or (self._service and self._service in text and _KEYCHAIN_TOOLS.search(text))
        ):
            raise CommandDenied(
                "This command would read where the server keeps provider keys (the key "
                "store, a process's environment or the keychain); the agent may not run it. "
                "If you need it, run it yourself in a terminal.",
                reason="key_store_access",
            )
        return command
