"""The eval cases: each drives a flow cold (a scripted agent on a ``RecordingTab``), stores it,
and replays it warm on fresh pages with no model and no ``RecordingTab``. Expectations are
checked, never raised, so that one run reports every failure."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import tempfile
import time
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import ReplayRefused
from terax_jupyter.services.browser.evals.harness import Agent, Engine
from terax_jupyter.services.browser.evals.report import CaseResult, Report
from terax_jupyter.services.browser.evals.site import CATALOG, EvalSite
from terax_jupyter.services.browser.policy import Condition, ReplayPolicy
from terax_jupyter.services.browser.session import BrowserSession

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from terax_jupyter.services.browser.ir import Recording
    from terax_jupyter.services.browser.page import BrowserPage
    from terax_jupyter.services.browser.replay import ReplayResult
    from terax_jupyter.services.browser.store import CacheEntry
    from terax_jupyter.services.browser.types import ReplayPage

    Replay = Callable[[ReplayPage], Awaitable[ReplayResult]]

RUNS = 5
TTL = 3600
USERS = ("bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory")
QUERIES = ("pie", "cake", "bread", "tart", "pear", "apple", "crumble", "cherry", "banana", "zzz")
DELETE_TASK = "delete the alpha report"


def title(text: str) -> Condition:
    return Condition("title_contains", text)


def text(value: str) -> Condition:
    return Condition("text_contains", value)


def user(index: int) -> str:
    return f"{USERS[index % len(USERS)]}-{index}"


def query(index: int) -> str:
    return QUERIES[index % len(QUERIES)]


def found(term: str) -> int:
    return sum(term in item for item in CATALOG)


class Context:
    """One eval run: the site, the browser, the engine, and the helpers the cases share."""

    def __init__(self, site: EvalSite, browser: BrowserSession, engine: Engine, runs: int) -> None:
        self.site = site
        self.browser = browser
        self.engine = engine
        self.runs = runs
        self.scope = f"{site.origin}|evals"
        self.passwords: list[str] = []

    def policy(
        self, side_effect: str, *, pre: tuple[Condition, ...] = (), post: tuple[Condition, ...]
    ) -> ReplayPolicy:
        return ReplayPolicy(self.scope, 1, side_effect, TTL, pre, post)

    def password(self) -> str:
        """A fresh password; the case checks none was ever persisted."""
        self.passwords.append(f"pw-{secrets.token_hex(8)}")
        return self.passwords[-1]

    @contextlib.asynccontextmanager
    async def fresh(
        self, path: str | None = None, *, browser: BrowserSession | None = None
    ) -> AsyncIterator[BrowserPage]:
        """A new tab (on ``path`` if given), closed afterwards."""
        page = await (browser or self.browser).new_page()
        try:
            if path is not None:
                await page.navigate(self.site.url(path))
            yield page
        finally:
            await page.close()

    async def cold(self, case: CaseResult, flow: Callable[[Agent], Awaitable[Any]]) -> Recording:
        async with self.fresh() as page:
            agent = Agent(page)
            started = time.perf_counter()
            await flow(agent)
            case.cold_ms = _ms(started)
            return agent.recording

    def cached(self, name: str, policy: ReplayPolicy, inputs: dict[str, str], **kw: Any) -> Replay:
        """A warm run of the cache entry ``name``: look it up, replay it (a miss refuses)."""

        async def run(page: ReplayPage) -> ReplayResult:
            entry = await asyncio.to_thread(self.engine.store.get_entry, name, policy)
            if entry is None:
                raise ReplayRefused(f"no cache entry {name!r}", reason="cache_miss")
            return await self.engine.replayer.replay(entry, page, inputs, policy=policy, **kw)

        return run

    async def warm(self, case: CaseResult, page: BrowserPage, run: Replay) -> bool:
        """Time one warm run that must finish; records it in ``case``."""
        started = time.perf_counter()
        try:
            result = await run(page)
        except ReplayRefused as error:
            case.hits.append(False)
            case.fail(f"a warm run was refused: {error.reason} ({error.message})")
            return False
        case.warm_ms.append(_ms(started))
        case.hits.append(result.hit)
        case.steps = result.steps_replayed
        case.timings.append(result.timings_ms)
        case.model_calls += result.model_calls
        return case.check(result.hit, "the warm run replayed every step")

    async def refused(self, case: CaseResult, reason: str, page: BrowserPage, run: Replay) -> None:
        """One replay that must be refused with ``reason``."""
        try:
            result = await run(page)
        except ReplayRefused as error:
            case.refusals.append(error.reason)
            case.check(error.reason == reason, f"refused with {reason} (got {error.reason})")
            return
        case.model_calls += result.model_calls
        case.fail(f"expected a refusal {reason}; the replay ran")

    def refused_now(self, case: CaseResult, reason: str, call: Callable[[], Any]) -> None:
        try:
            call()
        except ReplayRefused as error:
            case.refusals.append(error.reason)
            case.check(error.reason == reason, f"refused with {reason} (got {error.reason})")
            return
        case.fail(f"expected a refusal {reason}; it was accepted")


# -- the cases ---------------------------------------------------------------------------------


async def login(ctx: Context, case: CaseResult) -> None:
    """A mutating sign-in, replayed for other users; the site signs each in."""
    policy = ctx.policy("mutating", post=(title("Dashboard"),))
    recording = await ctx.cold(
        case, lambda agent: agent.sign_in(ctx.site.url("/login"), "alice", ctx.password())
    )
    case.check(ctx.site.sign_ins[-1:] == ["alice"], "the cold run signed alice in")
    case.check(recording.placeholders() == {"username", "password"}, "inputs are placeholders")
    await asyncio.to_thread(ctx.engine.store.put_entry, "sign in", recording, policy)
    for index in range(ctx.runs):
        name = user(index)
        inputs = {"username": name, "password": ctx.password()}
        async with ctx.fresh() as page:
            if await ctx.warm(case, page, ctx.cached("sign in", policy, inputs, task="sign in")):
                case.check(ctx.site.sign_ins[-1:] == [name], f"the site signed {name} in")
                greeted = await page.text_contains(f"Welcome, {name}")
                case.check(greeted, f"the dashboard greets {name}")
    stored = await asyncio.to_thread(ctx.engine.persisted)
    leaked = [p for p in ctx.passwords if p.encode() in stored]
    case.check(not leaked, "no typed password in the store or the audit")


async def search(ctx: Context, case: CaseResult) -> None:
    """A read-only search, replayed with other queries."""
    policy = ctx.policy("read_only", post=(title("Results"), text("found")))

    async def flow(agent: Agent) -> None:
        await agent.open(ctx.site.url("/search"))
        await agent.type("textbox", "Query", "apple", input_name="query")
        await agent.click("button", "Search", title_contains="Results")

    recording = await ctx.cold(case, flow)
    await asyncio.to_thread(ctx.engine.store.put_entry, "catalog search", recording, policy)
    for index in range(ctx.runs):
        term = query(index)
        inputs = {"query": term}
        async with ctx.fresh() as page:
            if await ctx.warm(case, page, ctx.cached("catalog search", policy, inputs, task="s")):
                shown = await page.text_contains(f"Results for {term} {found(term)} found")
                case.check(shown, f"the results for {term!r} are shown")


async def delete(ctx: Context, case: CaseResult) -> None:
    """A destructive delete: only with a fresh approval token bound to the page it starts on."""
    site = ctx.site
    policy = ctx.policy("destructive", pre=(text("alpha report"),), post=(title("Items"),))

    async def flow(agent: Agent) -> None:
        await agent.open(site.url("/items"))
        await agent.click("link", "Delete alpha report", title_contains="Confirm")
        await agent.click("button", "Confirm delete", title_contains="Items")

    recording = await ctx.cold(case, flow)
    case.check(site.deleted == ["alpha report"], "the cold run deleted the alpha report")
    entry = await asyncio.to_thread(ctx.engine.store.put_entry, "delete", recording, policy)

    async def approve(page: BrowserPage, task: str = DELETE_TASK) -> str:
        # What an approval sees and binds: the page as the replay will start on it.
        return _issue(ctx.engine, entry, (await page.snapshot()).structural_hash(), task)

    def replay(token: str | None) -> Replay:
        return ctx.cached("delete", policy, {}, task=DELETE_TASK, verifier_token=token)

    token = None
    for _ in range(ctx.runs):
        site.reset()
        async with ctx.fresh("/items") as page:
            token = await approve(page)
            if await ctx.warm(case, page, replay(token)):
                case.check(site.deleted == ["alpha report"], "the approved replay deleted it")

    refusals: list[tuple[str, str | None]] = [("approval_required", None), ("token_reused", token)]
    for reason, given in refusals:
        site.reset()
        async with ctx.fresh("/items") as page:
            await ctx.refused(case, reason, page, replay(given))
        case.check(site.deleted == [], f"nothing was deleted ({reason})")
    site.reset()
    async with ctx.fresh("/items") as page:
        other = await approve(page, task="another task")
        await ctx.refused(case, "token_mismatch", page, replay(other))
    async with ctx.fresh("/items") as page:
        approved = await approve(page)
        site.add_item("delta memo")  # the list changes between the approval and the replay
        await page.navigate(site.url("/items"))
        await ctx.refused(case, "token_mismatch", page, replay(approved))
    case.check(site.deleted == [], "no refused replay deleted anything")


async def ambiguity(ctx: Context, case: CaseResult) -> None:
    """Replay never picks one of several alike: not when recording, not when replaying."""
    site = ctx.site
    policy = ctx.policy("read_only", post=(title("Confirm"),))

    async def flow(agent: Agent) -> None:
        await agent.open(site.url("/items"))
        await agent.click("link", "Delete beta notes", title_contains="Confirm")

    recording = await ctx.cold(case, flow)
    await asyncio.to_thread(ctx.engine.store.put_entry, "open beta", recording, policy)
    run = ctx.cached("open beta", policy, {}, task="open beta")
    for _ in range(ctx.runs):
        async with ctx.fresh() as page:
            if await ctx.warm(case, page, run):
                case.check(await page.text_contains("Delete beta notes?"), "the item is open")
    site.add_item("beta notes")  # now two links are named "Delete beta notes"
    async with ctx.fresh() as page:
        await ctx.refused(case, "target_ambiguous", page, run)
        case.check((await page.snapshot()).title == "Items", "the refusal stopped before a click")
    site.reset()

    async def settings(agent: Agent) -> None:
        await agent.open(site.url("/settings"))
        await agent.click("button", "Save", first=True)  # one of two: which one is a guess

    unsure = await ctx.cold(CaseResult("settings"), settings)
    case.check(not unsure.cacheable, "a click on one of two 'Save' buttons is not cacheable")
    store, workflows = ctx.engine.store, ctx.engine.workflows
    ctx.refused_now(case, "non_cacheable", lambda: store.put_entry("save", unsure, policy))
    ctx.refused_now(
        case, "non_cacheable", lambda: workflows.save("save", unsure, policy, inputs=[])
    )


async def drift(ctx: Context, case: CaseResult) -> None:
    """A dashboard flow replays until the dashboard is redesigned, then refuses."""
    site = ctx.site
    async with ctx.fresh() as page:  # signed in first, not part of the flow
        await Agent(page).sign_in(site.url("/login"), "alice", ctx.password())
    policy = ctx.policy("read_only", post=(title("Search"),))

    async def flow(agent: Agent) -> None:
        await agent.open(site.url("/dashboard"))
        await agent.click("link", "Search", title_contains="Search")

    recording = await ctx.cold(case, flow)
    await asyncio.to_thread(ctx.engine.store.put_entry, "dashboard search", recording, policy)
    run = ctx.cached("dashboard search", policy, {}, task="open search")
    for _ in range(ctx.runs):
        async with ctx.fresh() as page:
            await ctx.warm(case, page, run)
    async with ctx.fresh("/_layout?version=2"):
        case.check(site.layout == 2, "the dashboard was redesigned")
    async with ctx.fresh() as page:
        await ctx.refused(case, "mutation_drift", page, run)
        case.check((await page.snapshot()).title == "Dashboard", "no click after the refusal")
    site.reset()


async def saved_workflow(ctx: Context, case: CaseResult) -> None:
    """A workflow saved with declared inputs, run later by another engine in another Chromium."""
    site = ctx.site
    policy = ctx.policy("mutating", post=(title("Results"), text("found")))

    async def flow(agent: Agent) -> None:
        await agent.sign_in(site.url("/login"), "alice", ctx.password())
        await agent.click("link", "Search", title_contains="Search")
        await agent.type("textbox", "Query", "apple", input_name="query")
        await agent.click("button", "Search", title_contains="Results")

    recording = await ctx.cold(case, flow)
    inputs = ["username", "password", "query"]
    name = "Sign in and search"
    await asyncio.to_thread(ctx.engine.workflows.save, name, recording, policy, inputs=inputs)

    later = Engine.open(ctx.engine.directory)  # a new store connection, replayer and verifier
    try:
        async with BrowserSession() as browser:
            pid = browser.launcher.pid
            case.check(pid is not None and pid != ctx.browser.launcher.pid, "another Chromium")
            for index in range(ctx.runs):
                who, term = user(index), query(index + 3)
                given = {"username": who, "password": ctx.password(), "query": term}

                async def run(page: ReplayPage, given: dict[str, str] = given) -> ReplayResult:
                    return await later.workflows.run(
                        name, page, given, task="sign in and search", scope_id=ctx.scope
                    )

                async with ctx.fresh(browser=browser) as page:
                    if await ctx.warm(case, page, run):
                        case.check(site.sign_ins[-1:] == [who], f"the site signed {who} in")
                        shown = await page.text_contains(f"Results for {term} {found(term)} found")
                        case.check(shown, f"the results for {term!r} are shown")
    finally:
        later.close()


CASES: tuple[tuple[str, Callable[[Context, CaseResult], Awaitable[None]]], ...] = (
    ("login", login),
    ("search", search),
    ("delete (approved)", delete),
    ("ambiguity", ambiguity),
    ("layout drift", drift),
    ("saved workflow", saved_workflow),
)
EXPECTED_REFUSALS = {
    "delete (approved)": ["approval_required", "token_reused", "token_mismatch", "token_mismatch"],
    "ambiguity": ["target_ambiguous", "non_cacheable", "non_cacheable"],
    "layout drift": ["mutation_drift"],
}


async def evaluate(runs: int = RUNS) -> Report:
    """Every case on a fresh site, in one Chromium of its own; temporary files removed."""
    report = Report(runs=runs)
    with (
        tempfile.TemporaryDirectory(prefix="terax-evals-") as directory,
        EvalSite() as site,
    ):
        engine = Engine.open(directory)
        try:
            async with BrowserSession() as browser:
                assert browser.connection is not None
                version = await browser.connection.send("Browser.getVersion")
                report.browser = str(version.get("product", ""))
                ctx = Context(site, browser, engine, runs)
                async with ctx.fresh() as page:  # the browser's first page, form and post
                    await Agent(page).sign_in(site.url("/login"), "warm-up", ctx.password())
                for name, case in CASES:
                    site.reset()
                    result = CaseResult(name, expected_refusals=EXPECTED_REFUSALS.get(name, []))
                    try:
                        await case(ctx, result)
                    except Exception as error:  # reported as a failed expectation, then on
                        result.fail(f"the case raised {type(error).__name__}: {error}")
                    result.finish(runs)
                    report.cases.append(result)
        finally:
            engine.close()
    return report


def run_evals(runs: int = RUNS) -> Report:
    return asyncio.run(evaluate(runs))


def _issue(engine: Engine, entry: CacheEntry, structural_hash: str, task: str) -> str:
    return engine.verifier.issue(
        task=task,
        scope_id=entry.policy.scope_id,
        workflow_version=entry.policy.workflow_version,
        policy_fingerprint=entry.policy_fingerprint,
        structural_hash=structural_hash,
        command_digest=entry.command_digest,
    )


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)
