"""Redis scripts: `.lua` files beside the code that runs them, loaded by one helper.

A script is read once per process (importlib.resources, so it works from an installed wheel)
and registered with redis-py, whose Script object sends EVALSHA and falls back to loading the
script when Redis answers NOSCRIPT (a restarted or failed-over Redis has no script cache).
A script every article calls (notices) goes through `BatchedScript`: the calls made while
one is on its way go together in one pipeline. A script written to take many operations per
call (dedup) goes through `OperationsScript`: the operations made while a call is on its way go
together in one call per hash slot, so Redis and the client pay a call's fixed costs once per
batch instead of once per article.
File names say what the script does: `<component>_<action>.lua`.

On a Redis Cluster every script touches the keys of one hash slot (crawler/core/keys.py). The
scripts registered with a cluster client start with `#!lua` (Redis 7.0+), which makes Redis
hold them to that: a key of another slot is an error, even one that happens to sit on the same
node, where a script without the line would reach it by luck of the slot placement.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from redis.exceptions import NoScriptError, ResponseError

from crawler.core.batching import GroupCommit
from crawler.core.connection import is_cluster_client

# Scripts with this first line may touch keys of one hash slot only (no allow-cross-slot-keys).
SINGLE_SLOT_SHEBANG = "#!lua\n"
# Calls one pipeline carries at most: a burst of articles (a sink batch released at once, a
# replay's pages in flight) costs a few round trips, and one reply never grows without bound.
SCRIPT_CALLS_PER_BATCH = 64
ScriptCall = tuple[tuple[Any, ...], tuple[Any, ...]]  # (keys, args)


@cache
def lua_source(package: str, name: str) -> str:
    """The text of `<name>.lua` in the package `package` (e.g. "pipelines.dedup")."""
    return resources.files(package).joinpath(f"{name}.lua").read_text(encoding="utf-8")


def register_lua(
    client: Any, package: str, name: str, constants: Mapping[str, str] | None = None
) -> Any:
    """The script `<name>.lua` of `package`, registered with a (sync or asyncio) Redis client;
    `constants` replaces each upper-case NAME in the text by its value (a script's fixed sizes,
    set by the Python module that owns them)."""
    source = lua_source(package, name)
    for constant, value in (constants or {}).items():
        source = source.replace(constant, value)
    if is_cluster_client(client):
        source = SINGLE_SLOT_SHEBANG + source
    return client.register_script(source)


class BatchedScript:
    """`await script(keys=..., args=...)` as with redis-py's asyncio Script, but the calls made
    while an earlier batch is on its way go together in the next pipeline (GroupCommit): one
    round trip, one wake-up of Redis and a fraction of the client's work per call, instead of
    one each. Redis runs them in the order they were made, as it would one by one. A call the
    script fails gets its own error; a connection failure fails the batch, as it would have
    failed each call."""

    def __init__(self, client: Any, script: Any, most: int = SCRIPT_CALLS_PER_BATCH) -> None:
        self.client = client
        self.script = script  # a registered redis.commands.core.AsyncScript
        self._batches: GroupCommit[ScriptCall, Any] = GroupCommit(self._run, most)

    async def __call__(self, keys: Sequence[Any] = (), args: Sequence[Any] = ()) -> Any:
        return await self._batches.submit((tuple(keys), tuple(args)))

    async def _run(self, calls: list[ScriptCall]) -> list[Any]:
        results = await self._pipeline(calls)
        # No script cache (a restarted Redis): load it, then run again only the calls that did
        # not run, in their order; no other batch runs in between.
        missing = [i for i, result in enumerate(results) if isinstance(result, NoScriptError)]
        if missing:
            await self.client.script_load(self.script.script)
            again = await self._pipeline([calls[i] for i in missing])
            for i, result in zip(missing, again, strict=True):
                results[i] = result
        return results

    async def _pipeline(self, calls: list[ScriptCall]) -> list[Any]:
        pipe = self.client.pipeline(transaction=False)
        for keys, args in calls:
            pipe.execute_command("EVALSHA", self.script.sha, len(keys), *keys, *args)
        return list(await pipe.execute(raise_on_error=False))


def register_batched_lua(
    client: Any, package: str, name: str, constants: Mapping[str, str] | None = None
) -> BatchedScript:
    """`register_lua` for an asyncio client, its calls batched (BatchedScript)."""
    return BatchedScript(client, register_lua(client, package, name, constants))


Operation = tuple[int, Any]  # (group: which hash slot's keys, the operation's argument)


class OperationsScript:
    """A script that runs many operations per call on the keys of one hash slot: called as
    KEYS = `keys_of(group)`, ARGV = `head` then one argument per operation, it answers one reply
    per operation, in order (an operation's own error as an error reply). `await script(ops)`
    takes a request's operations, in one group or several, and gives their replies in order;
    the operations of all requests made while an earlier batch is on its way go together
    (GroupCommit), one call per group, the groups' calls at once. Redis runs a group's
    operations in the order they were made, as it would one call each. A request one of whose
    operations failed gets that error; a failed call fails the requests with an operation in
    it."""

    def __init__(
        self,
        client: Any,
        script: Any,
        keys_of: Callable[[int], Sequence[Any]],
        head: Sequence[Any],
        most: int = SCRIPT_CALLS_PER_BATCH,
    ) -> None:
        self.client = client
        self.script = script  # a registered redis.commands.core.AsyncScript
        self.keys_of = keys_of
        self.head = tuple(head)
        self._batches: GroupCommit[Sequence[Operation], Any] = GroupCommit(self._run, most)

    async def __call__(self, operations: Sequence[Operation]) -> list[Any]:
        return await self._batches.submit(operations)

    async def _run(self, requests: list[Sequence[Operation]]) -> list[Any]:
        groups = group_operations(operation for operations in requests for operation in operations)
        answers = await asyncio.gather(
            *(self._call(group, arguments) for group, arguments in groups.items()),
            return_exceptions=True,
        )
        replies: dict[int, Any] = {}
        for group, answer in zip(groups, answers, strict=True):
            if isinstance(answer, BaseException) and not isinstance(answer, Exception):
                raise answer  # cancelled: nobody gets an answer
            replies[group] = answer if isinstance(answer, Exception) else iter(answer)
        return [self._replies(operations, replies) for operations in requests]

    @staticmethod
    def _replies(operations: Sequence[Operation], replies: dict[int, Any]) -> Any:
        """One request's replies, taken in order from its groups' answers; or its error."""
        mine = replies_in_order(operations, replies)
        failed = [reply for reply in mine if isinstance(reply, Exception)]
        return failed[0] if failed else mine

    async def _call(self, group: int, arguments: list[Any]) -> list[Any]:
        """One group's call; loaded first where the node had no script cache (a restart)."""
        keys = self.keys_of(group)
        command = ("EVALSHA", self.script.sha, len(keys), *keys, *self.head, *arguments)
        try:
            answer = await self.client.execute_command(*command)
        except NoScriptError:
            await self.client.script_load(self.script.script)
            answer = await self.client.execute_command(*command)
        if not isinstance(answer, list) or len(answer) != len(arguments):
            raise ResponseError(f"expected {len(arguments)} replies, got {answer!r}")
        return answer


def group_operations(operations: Iterable[Operation]) -> dict[int, list[Any]]:
    """The operations' arguments by group (one call each), in the order they were made."""
    groups: dict[int, list[Any]] = {}
    for group, argument in operations:
        groups.setdefault(group, []).append(argument)
    return groups


def replies_in_order(operations: Sequence[Operation], answers: dict[int, Any]) -> list[Any]:
    """Each operation's reply, in the operations' order, from its group's answer: an iterator
    over the group's replies, or the group's error (then every operation of it gets it)."""
    return [
        answers[group] if isinstance(answers[group], Exception) else next(answers[group])
        for group, _ in operations
    ]


def register_operations_lua(
    client: Any,
    package: str,
    name: str,
    keys_of: Callable[[int], Sequence[Any]],
    head: Sequence[Any],
) -> OperationsScript:
    """`register_lua` for an asyncio client, for a script of many operations per call."""
    return OperationsScript(client, register_lua(client, package, name), keys_of, head)
