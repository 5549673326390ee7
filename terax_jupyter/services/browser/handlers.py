"""REST handlers of the browser engine (``/terax/api/browser/...``): saved workflows (list,
get, delete, run without a model) and the open tabs (list, screenshot, close).

Destructive workflows are not run here: they run through the agent, after an approval; nor
is a destructive workflow replaced or a side effect lowered here (409 ``approval_required``).
A run may pin the ``workflow_version`` and ``side_effect`` the caller expects.
"""

from __future__ import annotations

import asyncio

from jupyter_server.auth.decorator import authorized
from tornado import web

from terax_jupyter.base import TeraxAPIHandler
from terax_jupyter.exceptions import InvalidRequest, NotFound
from terax_jupyter.services.browser.arguments import element_target, wait_condition
from terax_jupyter.services.browser.policy import (
    DEFAULT_TTL,
    MAX_TTL_SECONDS,
    SIDE_EFFECTS,
    read_only_replay,
)

AUTH_RESOURCE = "terax.browser"
_WORKFLOW = r"(?P<workflow>[^/]+)"  # checked by the workflow store (400 with the rule)
_TAB = r"(?P<tab>[^/]+)"  # checked by the manager


class WorkflowsHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json({"workflows": await self.terax.browser.list_workflows()})


class WorkflowHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def get(self, workflow: str) -> None:
        self.finish_json((await self.terax.browser.get_workflow(workflow)).to_json())

    @web.authenticated
    @authorized
    async def delete(self, workflow: str) -> None:
        self.terax.security.paths.refuse_writes("saved workflows cannot be deleted")
        await self.terax.browser.delete_workflow(workflow)
        await asyncio.to_thread(
            self.terax.security.audit.record,
            "browser.workflow.delete",
            user=self.user_name,
            name=workflow,
        )
        self.set_status(204)
        self.finish()


class WorkflowRunHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def post(self, workflow: str) -> None:
        body = self.json_body()
        unknown = set(body) - {"inputs", "scope_id", "workflow_version", "side_effect"}
        if unknown:
            raise InvalidRequest(
                f"Unknown fields: {', '.join(sorted(unknown))}.", reason="invalid_parameter"
            )
        inputs = body.get("inputs") or {}
        if not isinstance(inputs, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in inputs.items()
        ):
            raise InvalidRequest("'inputs' maps input names to text.", reason="invalid_parameter")
        scope = body.get("scope_id")
        if scope is not None and not isinstance(scope, str):
            raise InvalidRequest("'scope_id' is text.", reason="invalid_parameter")
        # Pins: the run refuses (version_mismatch, side_effect_mismatch) unless the workflow
        # is still the one the caller means; checked by the manager before anything runs.
        version = body.get("workflow_version")
        if version is not None and (
            not isinstance(version, int) or isinstance(version, bool) or version < 1
        ):
            raise InvalidRequest(
                "'workflow_version' is an integer of 1 or more.", reason="invalid_parameter"
            )
        side_effect = body.get("side_effect")
        if side_effect is not None and side_effect not in SIDE_EFFECTS:
            raise InvalidRequest(
                f"'side_effect' is one of {', '.join(SIDE_EFFECTS)}.", reason="invalid_parameter"
            )
        # The administrator's switch first: a refused run is not looked up or audited.
        self.terax.browser.policy.require("browser")
        if self.terax.security.paths.read_only:
            side_effect = await read_only_replay(self.terax.browser, workflow, side_effect)
        await asyncio.to_thread(
            self.terax.security.audit.record,
            "browser.workflow.run",
            user=self.user_name,
            name=workflow,
            workflow_version=version,
            side_effect=side_effect,
        )
        result = await self.terax.browser.run_workflow(
            workflow,
            inputs,
            task=f"api:{self.user_name or 'user'}",
            scope_id=scope,
            workflow_version=version,
            side_effect=side_effect,
            user=self.user_name,
        )
        self.finish_json(result.to_json())


class TabsHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json({"tabs": self.terax.browser.tabs()})


class TabHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def delete(self, tab: str) -> None:
        await self.terax.browser.close_tab(tab)
        self.set_status(204)
        self.finish()


class TabActionHandler(TeraxAPIHandler):
    """``POST /terax/api/browser/tabs/<tab>/<action>``: drive a tab as the agent's tools do
    (open, snapshot, click, type, wait, save) and get the page's snapshot back."""

    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def post(self, tab: str, action: str) -> None:
        body = self.json_body()
        browser = self.terax.browser
        if action == "save":
            self.terax.security.paths.refuse_writes("workflows cannot be saved")
            ttl = body.get("ttl_seconds", DEFAULT_TTL)
            if not isinstance(ttl, int) or isinstance(ttl, bool) or not 1 <= ttl <= MAX_TTL_SECONDS:
                raise InvalidRequest(
                    f"'ttl_seconds' is a whole number of seconds from 1 to {MAX_TTL_SECONDS} "
                    f"(90 days); nothing was saved.",
                    reason="invalid_parameter",
                )
            saved = await browser.save_workflow(
                tab,
                _text(body, "name"),
                side_effect=_text(body, "side_effect"),
                description=_text(body, "description", ""),
                ttl_seconds=ttl,
                preconditions=body.get("preconditions"),
                postconditions=body.get("postconditions"),
                overwrite=body.get("overwrite") is True,
            )
            await asyncio.to_thread(
                self.terax.security.audit.record,
                "browser.workflow.save",
                user=self.user_name,
                tab=tab,
                name=saved.name,
                workflow_version=saved.policy.workflow_version,
                side_effect=saved.policy.side_effect,
                steps=len(saved.recording.steps),
            )
            self.finish_json(saved.to_json(), 201)
            return
        async with browser.using(tab) as recording_tab:
            if action == "open":
                recording_tab.restart_recording()
                snapshot = await recording_tab.open(_text(body, "url"))
            elif action == "snapshot":
                snapshot = await recording_tab.snapshot()
            elif action == "click":
                target = element_target(body, reason="invalid_parameter")
                snapshot = await recording_tab.click(target.pop("ref", None), **target)
            elif action == "type":
                target = element_target(body, reason="invalid_parameter")
                snapshot = await recording_tab.type(
                    target.pop("ref", None),
                    _text(body, "text", ""),
                    input_name=body.get("input"),
                    **target,
                )
            else:  # wait
                condition, timeout = wait_condition(body, reason="invalid_parameter")
                snapshot = await recording_tab.wait(**condition, timeout=timeout)
            recording = recording_tab.recording
            self.finish_json(
                {
                    "url": snapshot.url,
                    "title": snapshot.title,
                    "text": self.terax.security.redactor.redact(snapshot.render()),
                    "blocked": list(recording_tab.page.blocked)[-10:],
                    "steps": len(recording.steps),
                    "cacheable": recording.cacheable,
                }
            )


def _text(body: dict, name: str, default: str | None = None) -> str:
    value = body.get(name, default)
    if not isinstance(value, str) or (default is None and not value):
        raise InvalidRequest(f"'{name}' is required text.", reason="invalid_parameter")
    return value


class TabScreenshotHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def get(self, tab: str) -> None:
        if not self.terax.browser.has_tab(tab):
            raise NotFound(f"No browser tab {tab!r}.", reason="tab_not_found")
        image = await self.terax.browser.screenshot(tab)
        self.set_header("Cache-Control", "no-store")
        self.finish(image, set_content_type="image/png")


class SavedScreenshotHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def get(self, shot: str) -> None:
        image = self.terax.browser.saved_screenshot(shot)
        self.set_header("Cache-Control", "private, max-age=3600")
        self.finish(image, set_content_type="image/png")


default_handlers = [
    (r"/terax/api/browser/workflows", WorkflowsHandler),
    (rf"/terax/api/browser/workflows/{_WORKFLOW}", WorkflowHandler),
    (rf"/terax/api/browser/workflows/{_WORKFLOW}/run", WorkflowRunHandler),
    (r"/terax/api/browser/tabs", TabsHandler),
    (r"/terax/api/browser/screenshots/(?P<shot>[^/]+)", SavedScreenshotHandler),
    (rf"/terax/api/browser/tabs/{_TAB}", TabHandler),
    (rf"/terax/api/browser/tabs/{_TAB}/screenshot", TabScreenshotHandler),
    (
        rf"/terax/api/browser/tabs/{_TAB}/(?P<action>open|snapshot|click|type|wait|save)",
        TabActionHandler,
    ),
]
