"""A real local Redis Cluster for tests and benchmarks (tooling): three masters started from the
`redis-server` binary on free loopback ports, in a temporary directory, with no persistence;
joined by `redis-cli --cluster create`, ready once every node reports `cluster_state:ok`.

    with LocalRedisCluster.started() as cluster:
        cluster.url   # "redis+cluster://127.0.0.1:<port>/0": what REDIS_URL takes
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

MASTERS = 3
# Seconds a node gets to answer PING after its start, and the cluster to reach cluster_state:ok.
NODE_START_SECONDS = 10.0
CLUSTER_READY_SECONDS = 30.0
POLL_SECONDS = 0.05


class ClusterUnavailable(RuntimeError):
    """The binaries are missing (the caller decides: skip outside CI, fail in CI)."""


def missing_binaries() -> list[str]:
    return [name for name in ("redis-server", "redis-cli") if shutil.which(name) is None]


def free_ports(count: int) -> list[int]:
    """`count` distinct ports free on 127.0.0.1 now (held open together so none repeats)."""
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


@dataclass
class LocalRedisCluster:
    directory: Path
    ports: list[int] = field(default_factory=list)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    clustered: bool = True

    @property
    def url(self) -> str:
        scheme = "redis+cluster" if self.clustered else "redis"
        return f"{scheme}://127.0.0.1:{self.ports[0]}/0"

    @property
    def node_urls(self) -> list[str]:
        """Each master as a plain single-node URL (for per-node figures)."""
        return [f"redis://127.0.0.1:{port}/0" for port in self.ports]

    @classmethod
    @contextmanager
    def started(cls, masters: int = MASTERS) -> Iterator[LocalRedisCluster]:
        with cls._in_directory() as cluster:
            cluster._start(masters)
            yield cluster

    @classmethod
    @contextmanager
    def single(cls) -> Iterator[LocalRedisCluster]:
        """One plain Redis server (no cluster), started the same way: the baseline of a
        comparison (its `url` is a plain redis:// URL)."""
        with cls._in_directory() as server:
            port, _ = free_ports(2)
            server.ports = [port]
            server.processes.append(server._node(port, None))
            server._wait_for(port, "PING", "PONG", NODE_START_SECONDS)
            server.clustered = False
            yield server

    @classmethod
    @contextmanager
    def _in_directory(cls) -> Iterator[LocalRedisCluster]:
        missing = missing_binaries()
        if missing:
            raise ClusterUnavailable(f"{' and '.join(missing)} not found on PATH")
        cluster = cls(Path(tempfile.mkdtemp(prefix="newsharvest-cluster-")))
        try:
            yield cluster
        finally:
            cluster.stop()

    def _start(self, masters: int) -> None:
        ports = free_ports(2 * masters)  # a client port and a cluster bus port per node
        self.ports = ports[:masters]
        for port, bus_port in zip(self.ports, ports[masters:], strict=True):
            self.processes.append(self._node(port, bus_port))
        for port in self.ports:
            self._wait_for(port, "PING", "PONG", NODE_START_SECONDS)
        nodes = [f"127.0.0.1:{port}" for port in self.ports]
        subprocess.run(
            ["redis-cli", "--cluster", "create", *nodes, "--cluster-replicas", "0",
             "--cluster-yes"],
            check=True, capture_output=True, timeout=CLUSTER_READY_SECONDS,
        )  # fmt: skip
        for port in self.ports:
            self._wait_for(port, "CLUSTER INFO", "cluster_state:ok", CLUSTER_READY_SECONDS)

    def _node(self, port: int, bus_port: int | None) -> subprocess.Popen[bytes]:
        """A redis-server on `port`; a cluster node with `bus_port`, else a plain server."""
        workdir = self.directory / str(port)
        workdir.mkdir()
        options: dict[str, object] = {
            "port": port,
            "bind": "127.0.0.1",
            "dir": workdir,
            "save": "''",
            "appendonly": "no",
            "logfile": workdir / "redis.log",
        }
        if bus_port is not None:
            options |= {
                "cluster-enabled": "yes",
                "cluster-port": bus_port,
                "cluster-config-file": workdir / "nodes.conf",
                "cluster-node-timeout": 5000,
            }
        args = [part for name, value in options.items() for part in (f"--{name}", str(value))]
        return subprocess.Popen(
            ["redis-server", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    def _wait_for(self, port: int, command: str, expected: str, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        answer = ""
        while time.monotonic() < deadline:
            done = subprocess.run(
                ["redis-cli", "-h", "127.0.0.1", "-p", str(port), *command.split()],
                capture_output=True, text=True, timeout=seconds,
            )  # fmt: skip
            answer = done.stdout
            if expected in answer:
                return
            time.sleep(POLL_SECONDS)
        raise RuntimeError(f"redis node :{port} did not answer {expected!r} to {command}: {answer}")

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)
