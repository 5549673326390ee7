"""The administrator's policy: what Terax may do for the users of one deployment.

A hub operator writes ``terax_policy.json`` into a system configuration folder
(``/etc/jupyter``, ``/usr/local/etc/jupyter`` or ``<sys.prefix>/etc/jupyter``, or the folders
the spawner names in ``TERAX_POLICY_DIRS``). Users' own configuration (``~/.jupyter``, the
command line) cannot change it: what it sets wins over every trait, and the API names those
settings as locked. Each folder that holds the file adds to the policy; for a setting two files
both set, the more restrictive value wins (a feature off, the smaller limit, the shorter list).

A policy file that cannot be read or understood fails closed: every feature off and read-only,
with the reason in the server log and in ``GET /terax/api/policy``.

Switches are enforced where each feature starts (the managers), never only in the UI.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field, replace
from typing import Any

from terax_jupyter.exceptions import AccessDenied, TooLarge

POLICY_FILE = "terax_policy.json"
POLICY_DIRS_VARIABLE = "TERAX_POLICY_DIRS"

# Feature switches: what each turns off.
FEATURES = {
    "terminals": "terminals",
    "agent": "the AI agent",
    "git_push": "git push",
    "preview": "the web preview",
    "browser": "the headless browser",
    "mcp": "Terax's MCP server for other agents",
    "notebook_runs": "the agent's runs of notebook cells",
}
# Switches a read-only server keeps off: what they run writes wherever the account may.
_RUNS_CODE = ("terminals", "notebook_runs")
LIMITS = {
    "agent_steps_per_run": "agent steps in one run",
    "tokens_per_day": "model tokens per day",
    "cost_per_day": "model cost per day (USD)",
    "concurrent_runs": "agent runs at once",
    "terminals": "terminals open at once",
    "background_processes": "background processes at once",
    "browser_tabs": "browser tabs open at once",
}
APPROVALS = ("user", "admin_rules", "always")
_TOP_LEVEL = {"read_only", "features", "ai", "limits", "audit_log"}
_AI_KEYS = {"providers", "models", "default_provider", "default_model", "approvals", "admin_rules"}


class PolicyError(ValueError):
    """A policy file that cannot be applied; the message names the file and the field."""


@dataclass(frozen=True)
class Policy:
    """The merged policy. ``None`` means "not set by the administrator" for every field."""

    read_only: bool | None = None
    features: dict[str, bool] = field(default_factory=dict)
    providers: tuple[str, ...] | None = None
    models: dict[str, tuple[str, ...]] = field(default_factory=dict)
    default_provider: str | None = None
    default_model: str | None = None
    approvals: str | None = None
    admin_rules: tuple[str, ...] = ()
    limits: dict[str, float] = field(default_factory=dict)
    audit_log: str | None = None
    sources: tuple[str, ...] = ()  # the files it came from
    error: str | None = None  # set when a file could not be applied (everything is off)
    # Switches turned off by the server's own settings (ServerApp.terminals_enabled=False).
    server_off: dict[str, str] = field(default_factory=dict)

    # -- questions the managers ask ------------------------------------------------

    def allows(self, feature: str) -> bool:
        if self.error is not None:
            return False
        if feature in self.server_off:
            return False
        if feature in _RUNS_CODE and self.read_only:
            return False  # a shell or a kernel writes wherever the user's account may
        return self.features.get(feature, True)

    def require(self, feature: str) -> None:
        """Refuse with 403 ``disabled_by_policy`` unless ``feature`` is on."""
        if self.allows(feature):
            return
        what = FEATURES[feature]
        if self.error is not None:
            message = (
                f"The administrator's policy could not be read, so {what} and every other "
                "Terax feature are off."
            )
        elif feature in self.server_off:
            message = f"This server has {what} turned off ({self.server_off[feature]})."
        elif feature in _RUNS_CODE and self.read_only:
            message = f"This server is read-only, so {what} are off."
        else:
            message = f"The administrator has turned off {what}."
        raise AccessDenied(message, reason="disabled_by_policy")

    def limit(self, name: str) -> float | None:
        return self.limits.get(name)

    def check_limit(self, name: str, in_use: int | float) -> None:
        """Refuse with 413 ``policy_limit`` when ``in_use`` has reached the limit."""
        cap = self.limits.get(name)
        if cap is not None and in_use >= cap:
            raise TooLarge(
                f"The administrator allows at most {_number(cap)} {LIMITS[name]}.",
                reason="policy_limit",
            )

    def with_server_off(self, feature: str, why: str) -> Policy:
        return replace(self, server_off={**self.server_off, feature: why})

    def describe(self) -> dict[str, Any]:
        """What the API shows: each setting with its value and whether it is locked."""
        features = {
            name: {
                "enabled": self.allows(name),
                "locked": self.error is not None
                or name in self.features
                or name in self.server_off
                or (name in _RUNS_CODE and bool(self.read_only)),
            }
            for name in FEATURES
        }
        failed = self.error is not None
        return {
            "sources": list(self.sources),
            "error": self.error,
            "read_only": {
                "value": self.read_only is True or failed,
                "locked": self.read_only is not None or failed,
            },
            "features": features,
            "ai": {
                "providers": list(self.providers) if self.providers is not None else None,
                "models": {name: list(models) for name, models in self.models.items()},
                "default_provider": self.default_provider,
                "default_model": self.default_model,
                "approvals": self.approvals or "user",
                "admin_rules": list(self.admin_rules),
            },
            "limits": dict(self.limits),
            "audit_log": self.audit_log,
        }

    @property
    def locked(self) -> frozenset[str]:
        """The dotted names of what the administrator set (``features.terminals``...)."""
        names = {f"features.{name}" for name in (*self.features, *self.server_off)}
        names |= {f"limits.{name}" for name in self.limits}
        if self.read_only is not None:
            names.add("read_only")
        for name in ("providers", "default_provider", "default_model", "approvals"):
            if getattr(self, name) is not None:
                names.add(f"ai.{name}")
        if self.models:
            names.add("ai.models")
        return frozenset(names)


def policy_dirs() -> list[str]:
    """The folders a policy file is read from: the spawner's list, else the system ones."""
    named = os.environ.get(POLICY_DIRS_VARIABLE)
    if named is not None:
        return [part for part in named.split(os.pathsep) if part]
    from jupyter_core.paths import ENV_CONFIG_PATH, SYSTEM_CONFIG_PATH

    folders = [*SYSTEM_CONFIG_PATH, *ENV_CONFIG_PATH, os.path.join(sys.prefix, "etc", "jupyter")]
    return list(dict.fromkeys(os.path.abspath(folder) for folder in folders))


def load_policy(folders: list[str] | None = None) -> Policy:
    """Every policy file found, merged (most restrictive wins); fails closed on a bad one."""
    policy = Policy()
    for folder in policy_dirs() if folders is None else folders:
        path = os.path.join(folder, POLICY_FILE)
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except FileNotFoundError:
            continue
        except OSError as error:
            return Policy(sources=(*policy.sources, path), error=f"{path}: {error.strerror}")
        try:
            policy = merge(policy, parse(text, path))
        except PolicyError as error:
            return Policy(sources=(*policy.sources, path), error=str(error))
    return policy


def parse(text: str, path: str) -> Policy:
    """One policy file's settings, or PolicyError naming what is wrong."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise PolicyError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise PolicyError(f"{path}: the policy must be a JSON object")
    _no_unknown(data, _TOP_LEVEL, path, "")
    read_only = data.get("read_only")
    if read_only is not None and not isinstance(read_only, bool):
        raise PolicyError(f"{path}: read_only must be true or false")
    features = _object(data, "features", path)
    _no_unknown(features, set(FEATURES), path, "features.")
    for name, value in features.items():
        if not isinstance(value, bool):
            raise PolicyError(f"{path}: features.{name} must be true or false")
    limits = _object(data, "limits", path)
    _no_unknown(limits, set(LIMITS), path, "limits.")
    for name, value in limits.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise PolicyError(f"{path}: limits.{name} must be a number of at least 0")
    ai = _object(data, "ai", path)
    _no_unknown(ai, _AI_KEYS, path, "ai.")
    providers = ai.get("providers")
    if providers is not None:
        providers = tuple(_strings(providers, path, "ai.providers"))
    models_field = ai.get("models", {})
    if not isinstance(models_field, dict):
        raise PolicyError(f"{path}: ai.models must map a provider to a list of models")
    models = {
        str(name): tuple(_strings(listed, path, f"ai.models.{name}"))
        for name, listed in models_field.items()
    }
    approvals = ai.get("approvals")
    if approvals is not None and approvals not in APPROVALS:
        raise PolicyError(f"{path}: ai.approvals must be one of {', '.join(APPROVALS)}")
    for name in ("default_provider", "default_model"):
        if ai.get(name) is not None and not isinstance(ai.get(name), str):
            raise PolicyError(f"{path}: ai.{name} must be a string")
    audit_log = data.get("audit_log")
    if audit_log is not None and (not isinstance(audit_log, str) or not audit_log):
        raise PolicyError(f'{path}: audit_log must be a path or "stdout"')
    if audit_log not in (None, "stdout") and not os.path.isabs(audit_log):
        raise PolicyError(f'{path}: audit_log must be an absolute path or "stdout"')
    return Policy(
        read_only=read_only,
        features=dict(features),
        providers=providers,
        models=models,
        default_provider=ai.get("default_provider"),
        default_model=ai.get("default_model"),
        approvals=approvals,
        admin_rules=tuple(_strings(ai.get("admin_rules", []), path, "ai.admin_rules")),
        limits={name: float(value) for name, value in limits.items()},
        audit_log=audit_log,
        sources=(path,),
    )


def merge(first: Policy, second: Policy) -> Policy:
    """Both files' settings; where both set one, the more restrictive."""
    features = dict(first.features)
    for name, value in second.features.items():
        features[name] = features.get(name, True) and value
    limits = dict(first.limits)
    for name, limit in second.limits.items():
        limits[name] = min(limits.get(name, limit), limit)
    providers = first.providers
    if second.providers is not None:
        providers = (
            second.providers
            if providers is None
            else tuple(name for name in providers if name in second.providers)
        )
    models = dict(first.models)
    for name, listed in second.models.items():
        models[name] = (
            tuple(model for model in models[name] if model in listed) if name in models else listed
        )
    approvals = first.approvals
    if second.approvals is not None:
        order = {name: index for index, name in enumerate(APPROVALS)}
        approvals = max(approvals or "user", second.approvals, key=order.__getitem__)
    read_only = first.read_only
    if second.read_only is not None:
        read_only = bool(read_only) or second.read_only
    return Policy(
        read_only=read_only,
        features=features,
        providers=providers,
        models=models,
        default_provider=second.default_provider or first.default_provider,
        default_model=second.default_model or first.default_model,
        approvals=approvals,
        admin_rules=(*first.admin_rules, *second.admin_rules),
        limits=limits,
        audit_log=second.audit_log or first.audit_log,
        sources=(*first.sources, *second.sources),
    )


def _object(data: dict[str, Any], name: str, path: str) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise PolicyError(f"{path}: {name} must be a JSON object")
    return value


def _strings(value: Any, path: str, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise PolicyError(f"{path}: {name} must be a list of strings")
    return value


def _no_unknown(data: dict[str, Any], known: set[str], path: str, prefix: str) -> None:
    unknown = sorted(set(data) - known)
    if unknown:
        raise PolicyError(
            f"{path}: unknown setting {prefix}{unknown[0]} (known: {', '.join(sorted(known))})"
        )


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
