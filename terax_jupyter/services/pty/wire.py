"""The JSON text frames of a terminal's stream WebSocket, declared once.

Binary frames carry the terminal's bytes both ways; text frames are these messages. The
server builds ``ServerMessage``s (type-checked against these classes) and reads
``ClientMessage``s; ``PtyServerMessage`` and ``PtyClientMessage`` in the OpenAPI document are
derived from them, and the Lab extension's types are generated from the document
(``labextension/src/api/openapi.ts``, checked for drift in CI). The server's tests check every
message a session sends against the schema.
"""

from typing import Annotated, Literal, TypeAlias, get_args

from typing_extensions import NotRequired, TypedDict

from terax_jupyter.apispec import Note, Ref

# -- what the messages (and the REST answers) describe --------------------------------------


class BlockRecord(TypedDict):
    """One command and where its output lies in the session's stream."""

    id: int
    command: str
    cwd: str | None
    output_start: int
    output_end: int | None
    exit_code: int | None
    started_at: Annotated[float, Note("Seconds since the epoch.")]
    ended_at: float | None
    duration_ms: int | None
    running: bool


Phase: TypeAlias = Literal["starting", "prompt", "input", "running"]


class AgentOfSession(TypedDict):
    name: str
    state: str | None


class SessionRecord(TypedDict):
    """A terminal session as the server describes it."""

    id: str
    name: str
    shell: str
    cwd: str
    title: str
    pid: int
    columns: int
    rows: int
    created_at: float
    clients: Annotated[int, Note("Views attached right now.")]
    phase: Annotated[
        Phase,
        Note("Where the shell is (starting until its integration first speaks)."),
    ]
    integrated: Annotated[bool, Note("The shell integration has spoken.")]
    alt_screen: Annotated[bool, Note("A full-screen program owns the screen.")]
    exited: bool
    exit_code: int | None
    agent: Annotated[AgentOfSession | None, Note("A coding agent running in it.")]
    blocks: Annotated[int, Note("How many blocks the session remembers.")]


# -- server -> client -----------------------------------------------------------------------


class Attached(TypedDict):
    """The first message: the session as it is now, and the integration's nonce."""

    type: Literal["attached"]
    session: Annotated[SessionRecord, Ref("TerminalSession")]
    nonce: str


class Replayed(TypedDict):
    """The binary frames before this one were the scrollback replay; later ones are live."""

    type: Literal["replayed"]


class BlockEvent(TypedDict):
    type: Literal["block"]
    event: Literal["start", "end"]
    block: Annotated[BlockRecord, Ref("Block")]


class Prompt(TypedDict):
    type: Literal["prompt"]


class Input(TypedDict):
    """The user is typing a command line (after the prompt)."""

    type: Literal["input"]


class Cwd(TypedDict):
    type: Literal["cwd"]
    cwd: str


class Title(TypedDict):
    type: Literal["title"]
    title: str


class AltScreen(TypedDict):
    type: Literal["alt_screen"]
    active: bool


class AgentDetails(TypedDict, total=False):
    message: Annotated[str, Note("What the agent asked (state attention).")]
    exit_code: Annotated[int | None, Note("How it exited (state exited).")]


AgentState: TypeAlias = Literal["started", "working", "attention", "finished", "exited"]


class Agent(AgentDetails):
    """A coding agent in the terminal changed state."""

    type: Literal["agent"]
    agent: str
    state: AgentState


class Notify(TypedDict):
    """A desktop-style notification the program asked for (OSC 9 / 777)."""

    type: Literal["notify"]
    message: str


class Notice(TypedDict):
    """This view fell behind and output was skipped."""

    type: Literal["notice"]
    kind: Literal["skipped"]
    bytes: int
    message: str


class ServerGone(TypedDict):
    event: Literal["gone"]
    port: int


class DetectedServerInfo(TypedDict):
    """A dev server a session started (the web preview lists these)."""

    port: int
    url: str
    first_seen: float
    sources: Annotated[list[str], Note("output (a URL was printed) and/or listening.")]
    pid: int | None
    process: str | None
    listening: Annotated[bool | None, Note("null: not seen among the listening ports.")]


class ServerDetected(DetectedServerInfo):
    event: Literal["detected"]


# What a session's dev-server watch reports: the ``server`` message without its type.
ServerChange: TypeAlias = ServerDetected | ServerGone


class Server(TypedDict):
    """A dev server the web preview may show was detected (every field), or one seen
    listening stopped (event gone: port only)."""

    type: Literal["server"]
    event: Literal["detected", "gone"]
    port: int
    url: NotRequired[str]
    first_seen: NotRequired[float]
    sources: NotRequired[list[str]]
    pid: NotRequired[int | None]
    process: NotRequired[str | None]
    listening: NotRequired[bool | None]


class Size(TypedDict):
    """The terminal was resized (by any of its views)."""

    type: Literal["size"]
    columns: int
    rows: int


class Renamed(TypedDict):
    type: Literal["renamed"]
    name: str


class Exit(TypedDict):
    type: Literal["exit"]
    code: int | None


class Closed(TypedDict):
    """The session was closed; the socket closes after this."""

    type: Literal["closed"]


ServerMessage: TypeAlias = (
    Attached
    | Replayed
    | BlockEvent
    | Prompt
    | Input
    | Cwd
    | Title
    | AltScreen
    | Agent
    | Notify
    | Notice
    | Server
    | Size
    | Renamed
    | Exit
    | Closed
)
# -- client -> server -----------------------------------------------------------------------


class Resize(TypedDict):
    type: Literal["resize"]
    columns: Annotated[int, Note("2 to 1000.")]
    rows: Annotated[int, Note("1 to 500.")]


class Signal(TypedDict):
    """A signal for the foreground process group."""

    type: Literal["signal"]
    name: Literal["INT", "TERM", "HUP", "QUIT", "TSTP"]


class TextInput(TypedDict):
    """Text for the terminal (as UTF-8), the same as a binary frame."""

    type: Literal["input"]
    data: str


class Ack(TypedDict):
    """From a client that connected with ?acks=1: output bytes shown since its last ack."""

    type: Literal["ack"]
    bytes: int


ClientMessage: TypeAlias = Resize | Signal | TextInput | Ack

SERVER_MESSAGES: tuple[type, ...] = get_args(ServerMessage)
CLIENT_MESSAGES: tuple[type, ...] = get_args(ClientMessage)
