"""A load generator that speaks Streamlit's websocket protocol: candidates without a browser.

Each session does on /_stcore/stream what the browser's frontend does: it sends BackMsg reruns with widget states
and reads the ForwardMsg deltas of every script run. Before that it fetches over HTTP what a fresh Chromium fetches
(the page, its preloaded scripts, styles and fonts; each newly drawn element's chunks), so the server does a
browser's work for a fraction of the generator's CPU (bench.bench_load --driver ws browser compares the two).
"""
from __future__ import annotations

import asyncio
import functools
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import streamlit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

DRILL_TITLE = "One Tenant Takes Everyone Down"
LOCKINS = 5
GUESS = re.compile(r"^Best guess")
CONFIRMATION = ":material/lock: Your guess:"          # ui/drill/lockin.py draws a locked numeric answer so
STREAM_PATH = "/_stcore/stream"
MAIN = 0                                 # delta_path[0]: 0 is the page body, 1 the sidebar
EARLY_FOR_RERUN = ForwardMsg.FINISHED_EARLY_FOR_RERUN
FRAGMENT_RUN = ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY

# Given a session's attempt token, the question ids the store holds answers for (None: not checked).
StoredAnswers = Callable[[str], Awaitable[set[str]]]


STATIC_DIR = Path(streamlit.__file__).parent / "static"
# What a browser asks the server for before it opens the websocket, besides index.html's own files.
PAGE_LOAD_PATHS = ("/", "/_stcore/health", "/_stcore/host-config", "/favicon.png")
# Fonts the frontend loads itself (icons, code), as a fresh Chromium fetches them on the catalogue.
FRONTEND_FONTS = ("MaterialSymbols-Rounded.", "SourceCodeVF-Upright.")
# Element kinds whose frontend component is named otherwise than the kind in CamelCase.
COMPONENT_OF_KIND = {"arrow_data_frame": "DataFrame", "arrow_table": "Table", "button_group": "ButtonGroup"}
# Browsers open six connections per host.
BROWSER_CONNECTIONS = 6


class PageAssets:
    """The files a fresh browser fetches over HTTP to draw the app, read from the Streamlit the server runs.

    On load: index.html, every file it references (scripts, module preloads, styles, the main font) and the
    frontend's own fonts; then, the first time a page draws an element kind, the lazily imported chunk of its
    component with that chunk's dependencies, as the frontend's import map lists them.
    """

    def __init__(self, static_dir: Path = STATIC_DIR) -> None:
        html = (static_dir / "index.html").read_text(encoding="utf-8")
        referenced = re.findall(r'(?:src|href)="\./(static/[^"]+)"', html)
        fonts = [f"static/media/{f.name}" for f in sorted((static_dir / "static" / "media").glob("*.woff2"))
                 if f.name.startswith(FRONTEND_FONTS)]
        self.on_load = list(PAGE_LOAD_PATHS) + [f"/{path}" for path in dict.fromkeys(referenced + fonts)]
        main = next((p for p in referenced if re.fullmatch(r"static/js/index\.[^/]+\.js", p)), None)
        self.chunks: dict[str, list[str]] = {}
        if main is None:
            return
        source = (static_dir / main).read_text(encoding="utf-8", errors="replace")
        table = re.search(r"m\.f=\[([^\]]*)\]", source)
        # Paths in the import map are relative to static/js/ ("./x.js", "../css/y.css").
        files = [("/static/css/" + f[len("../css/"):]) if f.startswith("../css/") else "/static/js/" + f[len("./"):]
                 for f in re.findall(r'"([^"]+)"', table.group(1))] if table else []
        for name, file, deps in re.findall(r"import\(`\./(\w+)\.([\w-]+\.js)`\),__vite__mapDeps\(\[([\d,]*)\]\)",
                                           source):
            paths = [f"/static/js/{name}.{file}"] + [files[int(i)] for i in deps.split(",") if i and int(i) < len(files)]
            self.chunks.setdefault(name, paths)

    def for_kinds(self, kinds: Iterable[str]) -> list[str]:
        """The files that drawing these element kinds makes the frontend import (known kinds only)."""
        wanted = []
        for kind in kinds:
            component = COMPONENT_OF_KIND.get(kind) or "".join(part.title() for part in kind.split("_"))
            wanted += self.chunks.get(component, [])
        return list(dict.fromkeys(wanted))


@functools.lru_cache(maxsize=1)
def page_assets() -> PageAssets:
    return PageAssets()


class _Http11:
    """One keep-alive HTTP/1.1 connection of a browser, at the least CPU this side can spend on it: the requests
    and bytes the server sees are a browser's, without a full client's per-request work (httpx cost the load
    generator 0.47 CPU-s a session, twice the server's whole cost, so the generator crowded the apps out)."""

    def __init__(self, host: str, port: int, headers: bytes, cookie: bytes = b"") -> None:
        self.host, self.port, self.headers, self.cookie = host, port, headers, cookie
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def get(self, path: str, *, with_cookie: bool = True) -> int:
        """GET `path` and read its whole body raw (not decompressed); returns the status. `with_cookie` False
        sends no Cookie header, as a browser's very first request has none."""
        for retry in (True, False):
            fresh = self.streams is None
            if fresh:
                self.streams = await asyncio.open_connection(self.host, self.port)
            try:
                return await self._exchange(path, with_cookie)
            except (asyncio.IncompleteReadError, ConnectionError):
                self.close()
                # A kept-alive connection the proxy closed as it was reused: a browser sends the GET again.
                if fresh or not retry:
                    raise
        raise AssertionError("unreachable")

    async def _exchange(self, path: str, with_cookie: bool = True) -> int:
        reader, writer = self.streams
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n".encode() + self.headers
                     + (self.cookie if with_cookie else b"") + b"\r\n")
        await writer.drain()
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(head[0].split()[1])
        fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:] if line)}
        if "content-length" in fields:
            await reader.readexactly(int(fields["content-length"]))
        elif fields.get("transfer-encoding", "").lower() == "chunked":
            while size := int((await reader.readline()).split(b";")[0], 16):
                await reader.readexactly(size + 2)   # the chunk and its CRLF
            while (await reader.readline()) not in (b"\r\n", b""):   # trailers, then the blank line
                pass
        elif status not in (204, 304):   # no length: the body runs to the connection's end
            await reader.read()
            self.close()
            return status
        if fields.get("connection", "").lower() == "close":
            self.close()
        return status

    def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None


class BrowserFetches:
    """One fresh browser's HTTP side: the page load before the websocket opens, then each newly drawn element
    kind's chunks, each file once (a browser's cache keeps it for the session), over up to 6 keep-alive
    connections. Bodies are read raw, not decompressed: the server's work is the same and the generator's
    stays small."""

    def __init__(self, url: str, cookie: str | None, assets: PageAssets | None = None) -> None:
        from urllib.parse import urlsplit

        where = urlsplit(url)
        headers = {"Accept-Encoding": "gzip, deflate, br, zstd", "Accept": "*/*",
                   "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) faultlines-load-ws"}
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items()).encode()
        cookie_line = f"Cookie: {cookie}\r\n".encode() if cookie else b""
        self.prefix = where.path.rstrip("/")
        self.assets = assets or page_assets()
        self.idle: list[_Http11] = [_Http11(where.hostname, where.port or 80, lines, cookie_line)
                                    for _ in range(BROWSER_CONNECTIONS)]
        self.connections = list(self.idle)
        self.free = asyncio.Semaphore(BROWSER_CONNECTIONS)
        self.fetched: set[str] = set()
        self.requests = 0
        self.statuses: dict[int, int] = {}   # HTTP status -> how many answers had it

    async def fetch(self, paths: Iterable[str], *, with_cookie: bool = True) -> None:
        fresh = [p for p in dict.fromkeys(paths) if p not in self.fetched]
        self.fetched.update(fresh)

        async def one(path: str) -> None:
            async with self.free:
                connection = self.idle.pop()
                try:
                    status = await asyncio.wait_for(connection.get(self.prefix + path, with_cookie=with_cookie), 60)
                finally:
                    self.idle.append(connection)
            self.statuses[status] = self.statuses.get(status, 0) + 1
            self.requests += 1

        await asyncio.gather(*(one(p) for p in fresh))

    async def page_load(self) -> None:
        first, *rest = self.assets.on_load
        # The document first, with no cookie: a fresh browser has none until this answer sets nginx's sticky one
        # (this session then sends its own, to the same effect). Then what the document references, in parallel.
        await self.fetch([first], with_cookie=False)
        await self.fetch(rest)

    async def drawn(self, page: Page) -> None:
        await self.fetch(self.assets.for_kinds({e.WhichOneof("type") for e in page.elements.values()}))

    async def close(self) -> None:
        for connection in self.connections:
            connection.close()


class ProtocolError(RuntimeError):
    """The page did not offer what a candidate needed (a widget, a confirmation), with what it showed instead."""


class Page:
    """The elements one script run has drawn, by delta path; sorted paths are the order on the page."""

    def __init__(self) -> None:
        self.elements: dict[tuple[int, ...], Element] = {}
        self.fragments: dict[tuple[int, ...], str] = {}   # path -> the fragment that drew it, as the frontend keeps

    def apply(self, msg: ForwardMsg) -> Element | None:
        path = tuple(msg.metadata.delta_path)
        kind = msg.delta.WhichOneof("type")
        if kind == "add_block":   # a block drawn again at a path starts empty
            for old in [p for p in self.elements if p[:len(path)] == path]:
                del self.elements[old]
                self.fragments.pop(old, None)
            return None
        if kind == "new_element":
            self.elements[path] = msg.delta.new_element
            if msg.delta.fragment_id:
                self.fragments[path] = msg.delta.fragment_id
            else:
                self.fragments.pop(path, None)
            return msg.delta.new_element
        return None

    def fragment_of(self, widget) -> str:
        """The fragment a widget was drawn in ("" for none): the frontend reruns only that fragment when it fires."""
        path = next((p for p, e in self.elements.items()
                     if getattr(getattr(e, e.WhichOneof("type")), "id", None) == widget.id), None)
        return self.fragments.get(path, "") if path is not None else ""

    def of_kind(self, kind: str, *, area: int = MAIN) -> list:
        """The `kind` protos (e.g. "button", "text_input", "markdown") in one area, in page order."""
        return [getattr(e, kind) for p, e in sorted(self.elements.items())
                if p[0] == area and e.WhichOneof("type") == kind]

    def widget(self, kind: str, label: str | re.Pattern, *, area: int = MAIN):
        """The first `kind` widget whose label is `label` (a string matches exactly, a pattern searches)."""
        for proto in self.of_kind(kind, area=area):
            if (label.search(proto.label) if isinstance(label, re.Pattern) else proto.label == label):
                return proto
        seen = [proto.label for proto in self.of_kind(kind, area=area)]
        raise ProtocolError(f"no {kind} labelled {getattr(label, 'pattern', label)!r} on the page "
                            f"(saw {seen[:6]}){self.problems()}")

    def count_markdown(self, prefix: str) -> int:
        return sum(1 for md in self.of_kind("markdown") if md.body.startswith(prefix))

    def problems(self) -> str:
        """Errors and warnings the page shows, as a suffix for a failure message."""
        shown = [a.body for a in self.of_kind("alert")] + [f"{x.type}: {x.message}" for x in self.of_kind("exception")]
        return f"; the page says: {' | '.join(s[:160] for s in shown)}" if shown else ""


def click(button) -> WidgetState:
    """A button press as the frontend sends it: a trigger that is true for one run."""
    return WidgetState(id=button.id, trigger_value=True)


def text(text_input, value: str) -> WidgetState:
    return WidgetState(id=text_input.id, string_value=value)


def submit_form(page: Page, form_id: str, values: dict[str, str]) -> list[WidgetState]:
    """A form submitted as the frontend does it: every text input of the form (typed or empty, `values` maps a text
    input's id to what was typed into it) and the submit trigger."""
    inputs = [w for w in page.of_kind("text_input") if w.form_id == form_id]
    submitters = [b for b in page.of_kind("button") if b.form_id == form_id and b.is_form_submitter]
    if not submitters:
        raise ProtocolError(f"form {form_id!r} has no submit button{page.problems()}")
    return [text(w, values.get(w.id, "")) for w in inputs] + [click(submitters[0])]


class StreamlitSession:
    """One browser tab's side of the protocol: the page and query string it is on, and what the last run drew.

    Every rerun carries the value of every text box and select box on the page, as a browser's does (the
    frontend reports each widget it holds, touched or not: 32 states for a lock-in on the board, not the form's
    4). The value is the one the frontend holds: what this session last sent, else what the server last set,
    else the widget's default when it first appeared. Other kinds are sent only when the candidate touches them;
    for those the server keeps the values of the previous run, as it does when a frontend reports them
    unchanged. Cached-message hashes are never offered, so every element arrives in full. The sidebar clock asks
    for an auto-rerun after the time box's remaining minutes; sessions here end long before, so none are sent.
    """

    def __init__(self, websocket, url: str) -> None:
        self.websocket, self.url = websocket, url
        self.page_script_hash = ""
        self.query_string = ""
        self.page = Page()
        self.runs = 0
        self.run_deltas: list[int] = []   # how many elements and blocks each script run so far sent, in order
        self.run_fragments: tuple[str, ...] = ()   # the fragments the last run ran alone (empty: the whole page)
        self.auto_reruns: dict[str, float] = {}   # fragment id -> seconds between the reruns it asked for
        self.held: dict[str, str] = {}   # text or select box id -> the value the frontend would report for it

    @classmethod
    async def open(cls, url: str, *, cookie: str | None = None, open_timeout: float = 30) -> StreamlitSession:
        """Connect to `url`'s stream; `cookie` (name=value) is sent as a browser sends nginx's sticky cookie."""
        from websockets.asyncio.client import connect

        stream = re.sub(r"^http", "ws", url.rstrip("/")) + STREAM_PATH
        headers = {"Cookie": cookie} if cookie else {}
        # No keepalive pings from this side: a browser sends none (it answers the server's), so a busy server
        # that is slow to answer a client's ping must not end a session a browser would have kept.
        websocket = await connect(stream, subprotocols=["streamlit"], additional_headers=headers,
                                  max_size=None, open_timeout=open_timeout, ping_interval=None)
        return cls(websocket, url)

    async def close(self) -> None:
        await self.websocket.close()

    async def rerun(self, widgets: Iterable[WidgetState] = (), *, timeout: float = 60,
                    until: Callable[[Page], bool] | None = None, page_name: str = "",
                    fragment_id: str = "") -> float | None:
        """Ask for a rerun with `widgets` and read until the script run (and any reruns it asked for) finishes.

        Returns the time.monotonic() at which `until(page)` first held, checked as markdown arrives (None if it
        never did); self.page is then what the final run drew. `page_name` is a URL path (e.g. "drill") for a
        session's first run, as a browser opening that address sends it. `fragment_id` names the fragment of the
        widget that fired, as the frontend sends it: the server then reruns that fragment only (unless it asks for
        the whole page), and the page keeps what the fragment did not draw (asked for the whole page, a fragment
        run is one the server pushed unasked: drawn, and the reading goes on)."""
        await self.websocket.send(self._rerun_message(widgets, page_name=page_name, fragment_id=fragment_id))
        seen_at = None
        fragment_run = False
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"the script run did not finish in {timeout:.0f} s")
            forward = ForwardMsg()
            forward.ParseFromString(await asyncio.wait_for(self.websocket.recv(), remaining))
            kind = forward.WhichOneof("type")
            if kind == "delta":
                if self.run_deltas:
                    self.run_deltas[-1] += 1
                element = self.page.apply(forward)
                self._hold(element)
                if (until is not None and seen_at is None and element is not None
                        and element.WhichOneof("type") == "markdown" and until(self.page)):
                    seen_at = time.monotonic()
            elif kind == "new_session":   # every script run starts with one: a whole run draws the page afresh
                self.run_fragments = tuple(forward.metadata.run.fragment_ids)
                fragment_run = bool(self.run_fragments)
                if not fragment_run:
                    self.page = Page()
                self.runs += 1
                self.run_deltas.append(0)
                if forward.new_session.page_script_hash:
                    self.page_script_hash = forward.new_session.page_script_hash
            elif kind == "navigation":
                self.page_script_hash = forward.navigation.page_script_hash
            elif kind == "page_info_changed":
                self.query_string = forward.page_info_changed.query_string
            elif kind == "page_not_found":
                raise ProtocolError(f"page not found: {forward.page_not_found.page_name!r}")
            elif kind == "auto_rerun":
                self.auto_reruns[forward.auto_rerun.fragment_id] = forward.auto_rerun.interval
            elif kind == "script_finished" and forward.script_finished != EARLY_FOR_RERUN and (
                    fragment_run or forward.script_finished != FRAGMENT_RUN):
                if not fragment_run or fragment_id:   # else the store watch's push, ahead of this request
                    return seen_at

    async def rerun_fragment(self, fragment_id: str, *, timeout: float = 60) -> bool:
        """The rerun a `run_every` fragment asks for, as the frontend sends it when the interval passes. Reads until
        the fragment's run finishes (True) or a whole-app run it started does (False: st.rerun(scope="app"))."""
        await self.ask_fragment_rerun(fragment_id)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"the fragment run did not finish in {timeout:.0f} s")
            kind, forward, finished = self.apply_pushed(await asyncio.wait_for(self.websocket.recv(), remaining))
            if kind == "new_session" and not forward.metadata.run.fragment_ids:   # a whole-app run
                self.runs += 1
            elif finished:
                return forward.script_finished == FRAGMENT_RUN

    def apply_pushed(self, raw: bytes) -> tuple[str, ForwardMsg, bool]:
        """Draw one message of a run the server sent, asked for or not (a fragment run it pushed, or the whole-app
        run that one asked for), as the frontend draws it: (its kind, the message, whether a run ended with it)."""
        forward = ForwardMsg()
        forward.ParseFromString(raw)
        kind = forward.WhichOneof("type")
        if kind == "delta":
            self._hold(self.page.apply(forward))
        elif kind == "new_session" and not forward.metadata.run.fragment_ids:   # a whole-app run draws afresh
            self.page = Page()
            self.auto_reruns = {}
        elif kind == "auto_rerun":
            self.auto_reruns[forward.auto_rerun.fragment_id] = forward.auto_rerun.interval
        elif kind == "page_info_changed":
            self.query_string = forward.page_info_changed.query_string
        return kind, forward, kind == "script_finished" and forward.script_finished != EARLY_FOR_RERUN

    async def ask_fragment_rerun(self, fragment_id: str) -> None:
        """Send the rerun a `run_every` fragment asks for, without reading its run (the caller reads)."""
        await self.websocket.send(self._rerun_message(fragment_id=fragment_id, auto=True))

    def _rerun_message(self, widgets: Iterable[WidgetState] = (), *, page_name: str = "", fragment_id: str = "",
                       auto: bool = False) -> bytes:
        """A rerun request as the frontend sends it: a widget's (or a page's first), or a `run_every` timer's."""
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query_string
        state.page_script_hash = self.page_script_hash
        state.page_name = page_name
        state.fragment_id = fragment_id
        state.is_auto_rerun = auto
        widgets = list(widgets)
        state.widget_states.widgets.extend(widgets)
        state.widget_states.widgets.extend(self._boxes_shown(widgets))
        state.context_info.url = (f"{self.url.rstrip('/')}/{page_name}"
                                  f"{'?' + self.query_string if self.query_string else ''}")
        state.context_info.timezone = "UTC"
        state.context_info.locale = "en-GB"
        return msg.SerializeToString()

    def _hold(self, element) -> None:
        """Keep the value the frontend shows in a text or select box just drawn: the server's, when it set one;
        the widget's default, when the box is new; else the value already held (typed, or set before)."""
        kind = element.WhichOneof("type") if element is not None else None
        if kind == "text_input":
            box = element.text_input
            if box.set_value or box.id not in self.held:
                self.held[box.id] = box.value if box.set_value else box.default
        elif kind == "selectbox":
            box = element.selectbox
            if box.set_value:
                self.held[box.id] = box.raw_value
            elif box.id not in self.held and box.HasField("default") and box.default < len(box.options):
                self.held[box.id] = box.options[box.default]

    def _boxes_shown(self, widgets: list[WidgetState]) -> list[WidgetState]:
        """The states a browser adds to `widgets`: every other text and select box on the page, at its value."""
        given = {w.id for w in widgets}
        self.held.update({w.id: w.string_value for w in widgets if w.WhichOneof("value") == "string_value"})
        shown = []
        for element in self.page.elements.values():
            kind = element.WhichOneof("type")
            if kind not in ("text_input", "selectbox"):
                continue
            box = getattr(element, kind).id
            if box not in self.held:
                self._hold(element)   # drawn by a run another reader applied (a live seat's pushed run)
            if box not in given and box in self.held:
                shown.append(WidgetState(id=box, string_value=self.held[box]))
        return shown

    def query(self, name: str) -> str | None:
        found = re.search(rf"(?:^|&){re.escape(name)}=([^&]+)", self.query_string)
        return found.group(1) if found else None


@dataclass
class SessionResult:
    started: bool = False
    acknowledged: int = 0                   # lock-ins whose "🔒 Your guess" the page showed
    stored: int = 0                         # lock-ins whose answer row the store held right after
    latencies_s: list[float] = field(default_factory=list)
    token: str | None = None
    error: str = ""


async def start_attempt(session: StreamlitSession, handle: str, *, timeout: float,
                        drawn: Callable[[], Awaitable[None]] | None = None) -> str:
    """The catalogue, then the handle typed and the drill's start button pressed; returns the attempt token.

    `drawn` is awaited once each page is drawn (a faithful session fetches the chunks it needs then)."""
    await session.rerun(timeout=timeout)
    if drawn is not None:
        await drawn()
    handle_box = session.page.widget("text_input", "Your handle")
    start = session.page.widget("button", f"Start the clock: {DRILL_TITLE}")
    await session.rerun([text(handle_box, handle), click(start)], timeout=timeout)
    token = session.query("attempt")
    if token is None:
        raise ProtocolError(f"starting did not open an attempt{session.page.problems()}")
    return token


async def lock_in(session: StreamlitSession, value: str, *, timeout: float) -> tuple[str, float]:
    """Type `value` into the first open "Best guess" and submit its form (Enter); returns the question id and the
    seconds until the page showed one more confirmation."""
    before = session.page.count_markdown(CONFIRMATION)
    box = session.page.widget("text_input", GUESS)
    question_id = box.form_id.removeprefix("lock::")
    sent = time.monotonic()
    seen_at = await session.rerun(submit_form(session.page, box.form_id, {box.id: value}), timeout=timeout,
                                  until=lambda page: page.count_markdown(CONFIRMATION) > before,
                                  fragment_id=session.page.fragment_of(box))
    if seen_at is None or session.page.count_markdown(CONFIRMATION) <= before:
        raise ProtocolError(f"lock-in of {question_id} was not confirmed on the page{session.page.problems()}")
    return question_id, seen_at - sent


async def run_session(url: str, n: int, deadline: float, stored: StoredAnswers | None = None,
                      *, lockins: int = LOCKINS, think_s: float = 0.0, faithful: bool = True) -> SessionResult:
    """One candidate: open the catalogue, start the drill, go on to the board, lock in `lockins` numbers.

    `think_s` is the pause before each lock-in (reading the question, typing); 0 locks in back to back.
    `faithful` also makes the HTTP requests a fresh browser makes (the page, its scripts, styles and fonts,
    then each newly drawn element's chunks), which a browser session costs the server on top of its runs;
    False speaks the websocket protocol alone.
    """
    result = SessionResult()
    left = lambda: max(1.0, deadline - time.monotonic())   # noqa: E731 (all steps share one deadline)
    session = None
    # nginx's sticky cookie, as a browser gets it on its first request: one session stays on one process.
    cookie = f"fl_backend=ws-{n}-{secrets.token_hex(6)}"
    fetches = BrowserFetches(url, cookie) if faithful else None

    async def drawn() -> None:
        if fetches is not None:
            await asyncio.wait_for(fetches.drawn(session.page), left())

    try:
        if fetches is not None:
            await asyncio.wait_for(fetches.page_load(), left())
        session = await StreamlitSession.open(url, cookie=cookie, open_timeout=left())
        result.token = await start_attempt(session, f"load-{n}", timeout=left(), drawn=drawn)
        result.started = True
        await drawn()
        await session.rerun([click(session.page.widget("button", "Next →"))], timeout=left())
        await drawn()
        for i in range(lockins):
            await asyncio.sleep(think_s)
            question_id, latency = await lock_in(session, f"{10 + i}", timeout=left())
            result.latencies_s.append(latency)
            result.acknowledged += 1
            if stored is not None:
                if question_id not in await asyncio.wait_for(stored(result.token), left()):
                    raise ProtocolError(f"the page confirmed {question_id} but the store has no answer for it")
                result.stored += 1
    except Exception as problem:   # a timeout or a lost connection is a failed session, reported, not raised
        result.error = f"{type(problem).__name__}: {(str(problem).splitlines() or [''])[0][:200]}"
    finally:
        if session is not None:
            await session.close()
        if fetches is not None:
            await fetches.close()
    return result


async def drive(url: str, sessions: int, budget_s: float, stagger_s: float,
                stored: StoredAnswers | None = None, *, lockins: int = LOCKINS,
                think_s: float = 0.0, faithful: bool = True) -> list[SessionResult]:
    """`sessions` candidates arriving `stagger_s` apart, all within one budget of `budget_s` seconds."""
    deadline = time.monotonic() + budget_s

    async def later(n: int) -> SessionResult:
        await asyncio.sleep(n * stagger_s)   # a class arrives over a few seconds, not in one instant
        return await run_session(url, n, deadline, stored, lockins=lockins, think_s=think_s, faithful=faithful)

    return list(await asyncio.gather(*(later(n) for n in range(sessions))))


def run_blocking(coroutine: Coroutine):
    """Run `coroutine` on its own event loop in a worker thread and return its result.

    For callers whose thread may already run a loop (Playwright's sync API does, in a test process that has
    used a browser), where asyncio.run() refuses.
    """
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="load-ws") as pool:
        return pool.submit(asyncio.run, coroutine).result()


class StoreAnswers:
    """The answers the store holds for an attempt token, read in a worker thread so sessions keep running."""

    def __init__(self, database: str) -> None:
        from drills.backends import open_store

        self._store = open_store(database)
        self._attempt_ids: dict[str, int] = {}

    def _read(self, token: str) -> set[str]:
        if token not in self._attempt_ids:
            attempt = self._store.attempt_by_token(token)
            if attempt is None:
                return set()
            self._attempt_ids[token] = attempt.id
        return set(self._store.answers(self._attempt_ids[token]))

    async def __call__(self, token: str) -> set[str]:
        return await asyncio.to_thread(self._read, token)

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> StoreAnswers:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
