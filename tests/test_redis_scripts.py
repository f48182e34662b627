"""Scripts every article calls go through `BatchedScript` (crawler/core/lua.py): calls made
while one is on its way share the next pipeline (or, for a script of many operations per call,
`OperationsScript`: one call per hash slot). Against the real Redis: the same results, in
the same order, as one call at a time; a failing call fails alone; a Redis without the script
runs every call exactly once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis
import redis.asyncio

from crawler.core.connection import async_redis
from crawler.core.lua import BatchedScript, OperationsScript

# Counts its calls in KEYS[1] and answers "<count>:<ARGV[1]>", or an error for ARGV[1] == "bad".
COUNTING = """
if ARGV[1] == 'bad' then return redis.error_reply('bad input') end
return redis.call('INCR', KEYS[1]) .. ':' .. ARGV[1]
"""


class CountedBatches(BatchedScript):
    """Records the size of each pipeline it sends."""

    def __init__(self, client: Any, script: Any, most: int = 64) -> None:
        super().__init__(client, script, most)
        self.pipelines: list[int] = []

    async def _pipeline(self, calls: list[Any]) -> list[Any]:
        self.pipelines.append(len(calls))
        return await super()._pipeline(calls)


def _run_counted(
    redis_url: str,
    key: str,
    names: list[str],
    source: str = COUNTING,
    most: int = 64,
    loaded: bool = True,
) -> tuple[list[Any], list[int]]:
    """The answers to calls made together, and the size of each pipeline that carried them.
    `loaded`: the script is in Redis's cache first (else the first pipeline meets NOSCRIPT
    on a Redis that never ran it, and runs again: the counts would depend on earlier tests)."""

    async def run() -> tuple[list[Any], list[int]]:
        client = async_redis(redis_url)
        try:
            if loaded:
                await client.script_load(source)
            script = CountedBatches(client, client.register_script(source), most)
            return await _calls(script, key, names), script.pipelines
        finally:
            await client.aclose()

    return asyncio.run(run())


async def _calls(script: BatchedScript, key: str, names: list[str]) -> list[Any]:
    async def one(name: str) -> Any:
        try:
            return (await script(keys=[key], args=[name])).decode()
        except redis.RedisError as error:
            return error

    return list(await asyncio.gather(*(one(name) for name in names)))


def test_calls_made_together_share_pipelines_and_run_in_the_order_they_were_made(
    redis_url: str, redis_prefix: str
) -> None:
    names = [f"a{i}" for i in range(50)]
    results, pipelines = _run_counted(redis_url, f"{redis_prefix}:n", names, most=16)
    assert results == [f"{i + 1}:a{i}" for i in range(50)]
    # All 50 were made before the first pipeline left: 16 at most a pipeline.
    assert pipelines == [16, 16, 16, 2]


def test_a_call_the_script_fails_gets_its_own_error_and_the_others_their_answers(
    redis_url: str, redis_prefix: str
) -> None:
    async def run() -> list[Any]:
        client = async_redis(redis_url)
        try:
            script = BatchedScript(client, client.register_script(COUNTING))
            return await _calls(script, f"{redis_prefix}:n", ["x", "y", "bad", "z"])
        finally:
            await client.aclose()

    first, second, failed, last = asyncio.run(run())
    assert (first, second, last) == ("1:x", "2:y", "3:z")
    assert isinstance(failed, redis.ResponseError) and "bad input" in str(failed)


def test_a_redis_without_the_script_runs_every_call_exactly_once(
    redis_url: str, redis_prefix: str
) -> None:
    source = COUNTING + f"-- {redis_prefix}\n"  # a script no other test has loaded

    names = [f"a{i}" for i in range(5)]
    results, pipelines = _run_counted(redis_url, f"{redis_prefix}:n", names, source, loaded=False)
    assert results == [f"{i + 1}:a{i}" for i in range(5)]
    assert pipelines == [5, 5]  # NOSCRIPT: loaded, then the same calls once more
    assert int(redis.Redis.from_url(redis_url).get(f"{redis_prefix}:n")) == 5


def test_an_unreachable_redis_fails_every_call_of_the_batch() -> None:
    async def run() -> list[Any]:
        client = redis.asyncio.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1)
        try:
            script = BatchedScript(client, client.register_script(COUNTING))
            return await _calls(script, "nhtest:unreachable", ["a", "b", "c"])
        finally:
            await client.aclose()

    assert all(isinstance(result, redis.ConnectionError) for result in asyncio.run(run()))


@pytest.mark.parametrize("most", [1, 3])
def test_the_batch_bound_is_kept(redis_url: str, redis_prefix: str, most: int) -> None:
    names = [f"a{i}" for i in range(7)]
    _, pipelines = _run_counted(redis_url, f"{redis_prefix}:n", names, most=most)
    assert sum(pipelines) == 7 and max(pipelines) == most


# --- OperationsScript: many operations per call, one call per hash slot -----------------------

# KEYS[1] a counter of its slot; ARGV[1] a tag; ARGV[2..] operations: "<count>:<tag>:<op>" each,
# an error reply for "bad" alone.
OPERATIONS = """
local replies = {}
for i = 2, #ARGV do
  if ARGV[i] == 'bad' then
    replies[#replies + 1] = {err = 'bad input'}
  else
    replies[#replies + 1] = redis.call('INCR', KEYS[1]) .. ':' .. ARGV[1] .. ':' .. ARGV[i]
  end
end
return replies
"""


def test_operations_go_one_call_per_slot_in_order_and_a_failed_one_fails_its_request_alone(
    any_redis: tuple[str, str],
) -> None:
    url, prefix = any_redis
    slots = [f"{prefix}:{{s{group}}}:n" for group in range(3)]
    source = OPERATIONS + f"-- {prefix}\n"  # not loaded yet: NOSCRIPT, loaded, run once

    async def run() -> tuple[list[Any], list[int]]:
        client = async_redis(url)
        try:
            script = OperationsScript(
                client, client.register_script(source), lambda g: [slots[g]], ["t"]
            )
            calls: list[int] = []
            sent = script._call

            async def counted(group: int, arguments: list[Any]) -> list[Any]:
                calls.append(group)
                return await sent(group, arguments)

            script._call = counted  # type: ignore[method-assign]

            async def one(ops: list[tuple[int, str]]) -> Any:
                try:
                    return [reply.decode() for reply in await script(ops)]
                except redis.RedisError as error:
                    return error

            requests = [[(0, "a"), (1, "b")], [(2, "c")], [(1, "bad"), (0, "d")], [(0, "e")]]
            return list(await asyncio.gather(*(one(ops) for ops in requests))), calls
        finally:
            await client.aclose()

    (ab, c, failed, e), calls = asyncio.run(run())
    assert ab == ["1:t:a", "1:t:b"] and c == ["1:t:c"] and e == ["3:t:e"]
    assert isinstance(failed, redis.ResponseError) and "bad input" in str(failed)
    assert sorted(calls) == [0, 1, 2]  # one call per slot for the four requests
