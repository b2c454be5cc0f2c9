"""Server problems in the words of the `hub agent` command line.

The server writes its problems for the API's users, naming GraphQL operations
("record acceptance … (recordAcceptance)", "use claimRecovery"). Someone at the command
line needs the command that does it instead. `for_cli` rewrites every operation a
problem names into its `hub agent` command (one table, `COMMANDS`), filling in the task
the problem is about where the command needs it; operations the command line does not
offer are said as who does them. The JSON output keeps the server's own words beside.
"""

from __future__ import annotations

import re

from hub.client.errors import ClientError

COMMANDS: dict[str, str] = {
    "startSession": "hub agent start",
    "endSession": "hub agent end",
    "claimTask": "hub agent next",
    "claimRecovery": "hub agent recover TASK",
    "renewLease": "hub agent heartbeat",
    "registerWorktree": "hub agent worktree register",
    "recordCheckpoint": "hub agent checkpoint",
    "relinquishAttempt": "hub agent relinquish",
    "submitAttempt": "hub agent submit",
    "recordRecoveryDisposition": "hub agent recover --disposition …",
    "reconcileCriteria": "hub agent reconcile-criteria",
    "recordAcceptance": "hub agent accept",
    "submitReview": "hub agent review approve|reject",
    "requestHumanReview": "hub agent review request-human",
    "resolveFinding": "hub agent review resolve",
    "claimIntegration": "hub agent integrate claim",
    "recordIntegrationResult": "hub agent integrate publish|moved|conflict|uncertain|abandon",
    "reconcileIntegration": "hub agent integrate reconcile",
    "recordValidation": "hub agent integrate validate",
    "registerJob": "hub agent job register",
    "observeJob": "hub agent job observe",
    "finishJob": "hub agent job finish",
    "recordEvidence": "hub agent job evidence",
    "acquireResources": "hub agent resources acquire",
    "releaseResources": "hub agent resources release",
    "openWatchWindow": "hub agent watch",
    "publishLesson": "hub agent learn",
    "searchKnowledge": "hub agent lessons search",
    "uploadArtifact": "hub agent attach",
}

# Operations only someone else does: said as who, not as a command to type.
OTHERS: dict[str, str] = {
    "releaseTask": "an operator's release, on the dashboard",
    "revokeAttempt": "an operator's revocation, on the dashboard",
    "releaseIntegration": "an operator's release, on the dashboard",
    "clearHold": "an operator, on the dashboard",
    "recordHumanReview": "a human reviewer, on the dashboard",
}

_NAMES = re.compile(
    r"\(?`?\b(" + "|".join(sorted({*COMMANDS, *OTHERS}, key=len, reverse=True)) + r")\b`?\)?"
)
_TASK = re.compile(r"\btsk_[A-Za-z0-9]+")


def for_cli(message: str) -> str:
    """`message` with every operation it names said as the command line's command."""
    task = _TASK.search(message)

    def say(match: re.Match[str]) -> str:
        name = match.group(1)
        text = match.group(0)
        opened, closed = text.startswith("("), text.endswith(")")
        if name in OTHERS:
            words = OTHERS[name]
        else:
            command = COMMANDS[name]
            if task is not None:
                command = command.replace("TASK", task.group(0))
            words = f"`{command}`"
        return f"({words})" if opened and closed else words

    return _NAMES.sub(say, message)


def command_for(operation: str) -> str:
    """The command that sends `operation` (the operation's own name if none does)."""
    return COMMANDS.get(operation, OTHERS.get(operation, operation))


def cli_message(error: ClientError) -> str:
    """What the command line prints for `error`: the server's problems and the client's
    own messages (a lost request, an unresolved one) alike name commands."""
    return for_cli(error.message)
