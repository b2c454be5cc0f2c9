"""`hub agent attach FILE (--job ID | --task ID)`: a log, a report or a screenshot kept
as an artifact of a job or a task, for the dashboard's lists and for evidence and
reviews to cite by its id.

A large file shows a progress bar on the terminal (on stderr, so stdout stays the
answer); never with `--json`, nor when stderr is not a terminal.
"""

from __future__ import annotations

from contextlib import closing
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from hub.cli.agent.command import command
from hub.cli.agent.options import AbandonPending
from hub.cli.output import console, errors, print_json
from hub.client.agent import AgentClient
from hub.client.artifacts import Attached

app = typer.Typer()

# From this size on, an upload on a terminal shows how far it has gone.
LARGE_FILE_BYTES = 8 * 1024 * 1024


class Retention(StrEnum):
    LOG = "LOG"
    REPORT = "REPORT"
    EVIDENCE = "EVIDENCE"


@command(app)
def attach(
    client: AgentClient,
    as_json: bool,
    file: Annotated[Path, typer.Argument(help="The file to upload (sent as it is on disk).")],
    job: Annotated[str | None, typer.Option(help="The job it is of (job_…).")] = None,
    task: Annotated[str | None, typer.Option(help="The task it is of (tsk_…).")] = None,
    name: Annotated[
        str | None, typer.Option(help="Its display name (default: the file's name).")
    ] = None,
    retention: Annotated[
        Retention,
        typer.Option(
            help="How long it is kept: LOG 30 days, REPORT 180 days, EVIDENCE while evidence "
            "citing it exists (as long as a REPORT until some does)."
        ),
    ] = Retention.LOG,
    media_type: Annotated[
        str | None,
        typer.Option(help="Its media type (default: guessed from the name; the server sniffs)."),
    ] = None,
    abandon_pending: AbandonPending = False,
) -> None:
    """Upload a file as an artifact of a job or a task; prints its id (what evidence and
    reviews cite) and where to download and preview it."""
    with closing(UploadBar(file.name, shown=not as_json and errors.is_terminal)) as bar:
        attached = client.attach(
            file,
            job_id=job,
            task_id=task,
            name=name,
            retention=retention.value,
            media_type=media_type,
            abandon_pending=abandon_pending,
            progress=bar.advance,
        )
    if as_json:
        print_json({"ok": True, **attached.raw})
    else:
        print_attached(attached)


class UploadBar:
    """A progress bar for an upload, started once it proves to be a large file."""

    def __init__(self, label: str, *, shown: bool) -> None:
        self.label = label
        self.shown = shown
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def advance(self, sent: int, total: int) -> None:
        if not self.shown or total < LARGE_FILE_BYTES:
            return
        if self.progress is None:
            self.progress = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                DownloadColumn(binary_units=True),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=errors,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(escape(self.label), total=total)
        assert self.task is not None
        self.progress.update(self.task, completed=sent)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def print_attached(attached: Attached) -> None:
    artifact = attached.artifact
    owner = f"job {artifact.job_id}" if artifact.job_id else f"task {artifact.task_id}"
    replay = " [dim](a replay of the earlier upload)[/dim]" if attached.replay else ""
    console.print(
        f"attached [bold]{artifact.id}[/bold] {escape(artifact.name)} to {owner}: "
        f"{artifact.size_bytes} bytes, {escape(artifact.media_type)}, {artifact.retention}"
        f"{replay}"
    )
    if artifact.media_type_mismatch:
        console.print(
            f"[yellow]its bytes look like {escape(artifact.sniffed_media_type or '?')}, not "
            f"{escape(artifact.media_type)}[/yellow] (recorded; it is served as a download)"
        )
    console.print(f"download: {attached.url(artifact.download_path)}")
    console.print(f"preview:  {attached.url(artifact.preview_path)}")
    console.print(
        f"cite it: `hub agent job evidence … --artifact {artifact.id}`, "
        f"`hub agent review approve|reject … --artifact {artifact.id}`"
    )
