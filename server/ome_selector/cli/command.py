"""``Command``: one ``ome-selector`` query subcommand, a row of ``commands.COMMANDS``: what it
reads, the ``SelectionService`` method that answers it, how the answer is printed and judged
(the fields are described on the class). Importing it imports no grpc."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence, TextIO

from google.protobuf import message_factory
from google.protobuf.message import Message
from ome.selector.v1 import selector_pb2

from ome_selector.cli.sources import OUTPUT_FORMATS, Flag, Source

if TYPE_CHECKING:
    from ome_selector_client import SelectorClient

SELECTION_SERVICE = selector_pb2.DESCRIPTOR.services_by_name["SelectionService"]


def _no_fields(args: argparse.Namespace) -> dict[str, Any]:
    return {}


def _no_notes(response: Any) -> list[str]:
    return []


def _no_names(request: Any, response: Any) -> str:
    return ""


def _always(response: Any) -> bool:
    return True


def _of_response(format_response: Callable[[Any], str]) -> Callable[[Any, Any], str]:
    """A renderer ``(request, response) -> text`` of a formatter of the response alone."""
    return lambda _request, response: format_response(response)


@dataclass(frozen=True)
class Command:
    """One query subcommand.

    - ``name``; ``help``: the description ``<name> --help`` prints, whose first paragraph (without
      its final period) is the ``summary`` ``ome-selector --help`` lists.
    - ``rpc``: its ``SelectionService`` method, a key of ``api.SELECTION_RPCS``; the request
      type is that method's input type (``request_type``). ``ValueError`` at import for an
      unknown method.
    - ``source``: what ``-f`` reads; ``flags``: the command's own flags; ``fields(args)``: the
      request fields they set (beside the subject ``source`` reads).
    - ``remote(client, request)``: the typed client's call of ``rpc`` (``--server``).
    - ``render(request, response)``: the text for stdout (``-o table``; ``render_wide`` for
      ``-o wide`` when it differs, described in ``-o``'s help by ``wide_help``), ``""`` for none;
      ``notes(response)``: lines for stderr; ``names(request, response)``: ``-o name``.
      ``outputs``: the ``-o`` formats it takes.
    - ``succeeded(response)``: the exit-status rule, true for status 0, false for 1.
    - ``error_status``: the status of an error; ``limit_error(response)``: the error text of a
      CLI collection limit the answer exceeds, or ``""``; ``plain_errors``: errors as kubectl-ome
      prints them: a failed call's message alone (``error: <message>``, without the status code
      and field violations), and bad flags exit with ``error_status`` too (else argparse's 2).
    - A ``streaming`` method (``WatchSelections``): ``remote`` returns an iterator of responses,
      ``render`` gives the text of one, printed as it comes, after ``heading`` (``-o table``;
      ``render_wide`` after ``wide_heading`` for ``-o wide``);
      ``-o json`` prints one JSON object per line. It needs ``--server`` (``offline`` is false);
      the stream ending is status 0, a failed one ``error_status``.
    """

    name: str
    rpc: str
    help: str
    source: Source
    remote: Callable[[SelectorClient, Any], Any]
    render: Callable[[Any, Any], str]
    succeeded: Callable[[Any], bool] = _always
    names: Callable[[Any, Any], str] = _no_names
    flags: tuple[Flag, ...] = ()
    fields: Callable[[argparse.Namespace], dict[str, Any]] = _no_fields
    notes: Callable[[Any], list[str]] = _no_notes
    render_wide: Callable[[Any, Any], str] | None = None
    wide_help: str = "the table"
    # The exit status of an error (bad flags or input, a failed call): 2, or 1 for the commands
    # of reference/kubectl-ome/runtime.md "Exit codes" (explain, effective, tree, history, sync),
    # where "No runtime subcommand returns 2", and for watch (a failed stream).
    error_status: int = 2
    # Asks ``texts.requests.SYNC_PROMPT`` on stderr after the notes (the preview) of each answer
    # that succeeded, unless ``--yes``; any answer but ``y`` or ``yes`` fails with
    # ``SYNC_NOT_CONFIRMED`` (runtime.md, "How the action runs").
    confirms: bool = False
    # A CLI limit on an answer: the error text, or "" (explain: more than 1,000 runtimes).
    limit_error: Callable[[Any], str] = lambda _response: ""
    outputs: tuple[str, ...] = OUTPUT_FORMATS
    heading: str = ""
    wide_heading: str = ""
    plain_errors: bool = False

    def __post_init__(self) -> None:
        if self.rpc not in SELECTION_SERVICE.methods_by_name:
            raise ValueError(f"command {self.name}: SelectionService has no method {self.rpc}")

    @property
    def summary(self) -> str:
        """The first paragraph of ``help``, without its final period."""
        return self.help.split("\n\n", 1)[0].removesuffix(".")

    @property
    def request_type(self) -> type[Message]:
        """The request message class of ``rpc`` (``SelectRuntimeRequest`` ...)."""
        return message_factory.GetMessageClass(SELECTION_SERVICE.methods_by_name[self.rpc].input_type)

    @property
    def streaming(self) -> bool:
        """Whether ``rpc`` streams its answers (server streaming, as the proto declares it)."""
        return bool(SELECTION_SERVICE.methods_by_name[self.rpc].server_streaming)

    @property
    def offline(self) -> bool:
        """Whether the command can answer from manifests in process: every unary one (a stream
        follows a server's cache writes)."""
        return not self.streaming

    def requests(self, args: argparse.Namespace, err: TextIO) -> list[Message]:
        """The requests of this command: one per subject ``source`` reads, in order, each with
        the fields of the command's own flags. Raises ``UsageError`` as ``source.read`` does."""
        request_type = self.request_type
        return [request_type(**subject, **self.fields(args)) for subject in self.source.read(args, err)]

    def renderer(self, output: str) -> Callable[[Any, Any], str]:
        """``render_wide`` for ``-o wide`` when there is one, else ``render``."""
        return self.render_wide if output == "wide" and self.render_wide is not None else self.render

    def error_text(self, code: str, message: str, violations: Sequence[tuple[str, str]]) -> str:
        """The ``error:`` text of a failed call (``message`` and ``violations`` as
        ``fieldpaths.present`` gives them): ``message`` alone with ``plain_errors``, else
        ``CODE: message`` and each violation the message does not spell out."""
        from ome_selector.texts.fieldpaths import describe_parts

        return message if self.plain_errors else describe_parts(code, message, violations)
