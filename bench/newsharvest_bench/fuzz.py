"""`newsharvest fuzz`: fuzz the parsers of untrusted input for minutes and keep what breaks them.

    newsharvest fuzz --minutes 10 --target extract,feeds
    newsharvest fuzz --replay output/fuzz-crashes/extract-1a2b3c4d.bin

Each target (newsharvest_bench/fuzzing.py: extract, feeds, urls, warc) runs in its own worker
process, so a native crash, a hang or a memory blow-up costs a worker, not the session: the
supervisor records the input the worker was on (it is written to disk before each run), restarts
the worker and goes on until the time is up. Python-level failures (an exception, a broken
invariant, an input over the per-input time budget) are caught in the worker and saved without
stopping it. Crashes land in --crash-dir as `<target>-<signature>.bin` (the raw input) plus
`.json` (target, input metadata, error, traceback), the smallest input kept per signature;
`--replay` re-runs one.

Engines: `atheris` (coverage-guided libFuzzer; Linux x86-64) mutates two kinds of input side by
side: raw documents, starting from a corpus of the seed documents, and choice sequences of
Hypothesis' structure-aware strategies (generated HTML, feeds, URLs and WARC files), fed through
`fuzz_one_input` (inputs whose first byte is below STRUCTURED_BELOW). The corpus grows in the
work directory for the whole session, across worker restarts. `hypothesis` feeds the structured
strategies (which include mutated seeds) random choice sequences. `auto` picks atheris when it
is installed.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_CRASH_DIR = Path("output") / "fuzz-crashes"
TARGET_NAMES = ("extract", "feeds", "urls", "warc")
OUR_PACKAGES = ("crawler", "pipelines", "extractors", "newsharvest_bench")  # crash signatures
SLOW_INPUT_SECONDS = 5.0  # an input taking longer than this is a finding (a near-hang)
HANG_SECONDS = 60.0  # a worker whose count has not moved for this long is killed as hung
STATUS_INTERVAL_SECONDS = 1.0
WATCHDOG_POLL_SECONDS = 2.0
MIN_WORKER_SECONDS = 3.0  # less time than this left: do not start another worker
WORKER_MEMORY_LIMIT_BYTES = 4 * 1024**3  # address space; a bigger allocation is a finding
RANDOM_BUFFER_BYTES = 32 * 1024  # choice-sequence bytes per input for the hypothesis engine
MAX_SEED_FILES = 400
STRUCTURED_BELOW = 0x10  # atheris inputs starting with a byte below this are choice sequences
STRUCTURED_SEEDS = 16  # choice sequences put in the initial corpus beside the seed documents
STRUCTURED_SEED_BYTES = 4096
MAX_INPUT_BYTES = 256 * 1024  # libFuzzer's -max_len


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fuzz", help="fuzz extraction, feed parsing and URL handling; keep crashing inputs"
    )
    parser.add_argument("--minutes", type=float, default=1.0, help="wall-clock budget")
    parser.add_argument(
        "--target", default="all", help=f"all, or a comma-separated list of {TARGET_NAMES}"
    )
    parser.add_argument("--engine", choices=("auto", "atheris", "hypothesis"), default="auto")
    parser.add_argument("--jobs", type=int, default=0, help="parallel workers (default: CPUs)")
    parser.add_argument("--crash-dir", type=Path, default=DEFAULT_CRASH_DIR)
    parser.add_argument(
        "--seed-dir",
        type=Path,
        action="append",
        default=[],
        help="more seed documents to mutate (pages for extract, feeds for feeds, WARC files for "
        "warc; .gz is read)",
    )
    parser.add_argument("--replay", type=Path, nargs="+", help="re-run saved crash inputs")
    parser.set_defaults(handler=run)


# --- supervisor ----------------------------------------------------------------------------------


@dataclass
class TargetResult:
    target: str
    engine: str
    seconds: float = 0.0
    executions: int = 0
    crashes: int = 0  # failing executions (Python-level) + worker deaths
    signatures: set[str] = field(default_factory=set)
    restarts: int = 0
    slowest_seconds: float = 0.0


def run(args: argparse.Namespace) -> int:
    if args.replay:
        return replay(args.replay)
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        from crawler.core.plugins import TOOLING_INSTALL

        print(f"newsharvest fuzz needs hypothesis: {TOOLING_INSTALL.format(extra='fuzz')}")
        return 2
    targets = list(TARGET_NAMES) if args.target == "all" else args.target.split(",")
    unknown = [name for name in targets if name not in TARGET_NAMES]
    if unknown:
        print(f"unknown target(s) {unknown}; choose from {', '.join(TARGET_NAMES)} or all")
        return 2
    engine = resolve_engine(args.engine)
    jobs = min(len(targets), args.jobs or os.cpu_count() or 1)
    seconds = args.minutes * 60 * jobs / len(targets)  # each target's share of the budget
    args.crash_dir.mkdir(parents=True, exist_ok=True)
    plan = f"{seconds:.0f} s per target, {jobs} at a time"
    print(
        f"fuzzing {', '.join(targets)} with {engine} for {args.minutes:g} min ({plan}); "
        f"crashes -> {args.crash_dir}"
    )
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda name: supervise(name, engine, seconds, args), targets))
    print_results(results)
    return 1 if any(result.crashes for result in results) else 0


def resolve_engine(choice: str) -> str:
    if choice != "auto":
        return choice
    try:
        import atheris  # noqa: F401
    except ImportError:
        return "hypothesis"
    return "atheris"


def supervise(name: str, engine: str, seconds: float, args: argparse.Namespace) -> TargetResult:
    """Run workers for `name` until `seconds` are spent, restarting any that die."""
    result = TargetResult(name, engine)
    started = time.monotonic()
    deadline = started + seconds
    work = args.crash_dir / f".work-{name}-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    while (remaining := deadline - time.monotonic()) > MIN_WORKER_SECONDS:
        status_path, last_input = work / "status.json", work / "last-input"
        for path in (status_path, last_input):
            path.unlink(missing_ok=True)
        command = [
            sys.executable, "-m", "newsharvest_bench.fuzz", "--worker", name, "--engine", engine,
            "--seconds", f"{remaining:.1f}", "--crash-dir", str(args.crash_dir),
            "--status", str(status_path), "--last-input", str(last_input),
            "--corpus", str(work / "corpus"),
            *(part for directory in args.seed_dir for part in ("--seed-dir", str(directory))),
        ]  # fmt: skip
        log_path = work / "worker.log"
        with log_path.open("w") as worker_log:
            process = subprocess.Popen(command, stdout=worker_log, stderr=subprocess.STDOUT)
            died_how = _watch(process, status_path, deadline)
        status = _read_status(status_path)
        result.executions += status.get("executions", 0)
        result.crashes += status.get("crashes", 0)
        result.signatures.update(status.get("signatures", []))
        result.slowest_seconds = max(result.slowest_seconds, status.get("slowest_seconds", 0.0))
        if died_how:
            result.crashes += 1
            result.restarts += 1
            signature = save_worker_death(name, died_how, last_input, log_path, args.crash_dir)
            result.signatures.add(signature)
            print(f"[{name}] worker {died_how}; input saved ({signature}); restarting")
    result.seconds = time.monotonic() - started
    shutil.rmtree(work, ignore_errors=True)
    return result


def _watch(process: subprocess.Popen[bytes], status_path: Path, deadline: float) -> str | None:
    """Wait for a worker; None when it ended normally, else how it died (killed when hung)."""
    last_count, last_progress = -1, time.monotonic()
    while True:
        try:
            returncode = process.wait(timeout=WATCHDOG_POLL_SECONDS)
            break
        except subprocess.TimeoutExpired:
            pass
        count = _read_status(status_path).get("executions", 0)
        now = time.monotonic()
        if count != last_count:
            last_count, last_progress = count, now
        hung = now - last_progress > HANG_SECONDS
        overdue = now > deadline + HANG_SECONDS
        if hung or overdue:
            process.kill()
            process.wait()
            return "hung" if hung else "overran its time"
    if returncode == 0:
        return None
    if returncode < 0:
        return f"killed by {signal.Signals(-returncode).name}"
    return f"exited with code {returncode}"


def _read_status(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def save_worker_death(
    name: str, how: str, last_input: Path, log_path: Path, crash_dir: Path
) -> str:
    """Keep the input a dead worker was running (native crash, hang, out of memory)."""
    try:
        header, _, payload = last_input.read_bytes().partition(b"\n")
        meta = json.loads(header)
    except (OSError, ValueError):
        meta, payload = {}, b""
    log_tail = log_path.read_text(errors="replace")[-4000:] if log_path.exists() else ""
    signature = f"worker-{how.split()[0]}"
    save_crash(crash_dir, name, signature, meta, payload, f"worker {how}", log_tail)
    return signature


def save_crash(
    crash_dir: Path,
    target: str,
    signature: str,
    meta: dict[str, Any],
    payload: bytes,
    error: str,
    trace: str,
) -> Path:
    """Write `<target>-<hash of signature>.bin/.json`, keeping the smallest input."""
    digest = hashlib.sha1(f"{target}|{signature}".encode()).hexdigest()[:12]
    path = crash_dir / f"{target}-{digest}.bin"
    if path.exists() and path.stat().st_size <= len(payload):
        return path
    path.write_bytes(payload)
    record = {
        "target": target,
        "signature": signature,
        "input": meta,
        "error": error,
        "traceback": trace,
    }
    path.with_suffix(".json").write_text(json.dumps(record, indent=2, ensure_ascii=False))
    return path


def print_results(results: list[TargetResult]) -> None:
    from crawler.cli.table import render_table

    rows = [
        [
            r.target,
            r.engine,
            round(r.seconds),
            r.executions,
            round(r.executions / r.seconds) if r.seconds else 0,
            r.crashes,
            len(r.signatures),
            r.restarts,
            round(r.slowest_seconds, 2),
        ]
        for r in results
    ]
    total = sum(r.executions for r in results)
    crashes = sum(r.crashes for r in results)
    print(
        render_table(
            [
                "target",
                "engine",
                "seconds",
                "executions",
                "exec/s",
                "crashes",
                "unique",
                "restarts",
                "slowest s",
            ],
            rows,
        )
    )
    print(f"total: {total} executions, {crashes} crashes")


def replay(paths: list[Path]) -> int:
    """Re-run saved crash inputs through their target's check."""
    from newsharvest_bench.fuzzing import TARGETS

    failed = 0
    for path in paths:
        record = json.loads(path.with_suffix(".json").read_text())
        target = TARGETS[record["target"]]
        value = target.load(record["input"], path.read_bytes())
        try:
            target.check(value)
        except Exception:  # reporting any failure is the point
            failed += 1
            print(f"{path}: still fails\n{traceback.format_exc()}")
        else:
            print(f"{path}: passes now")
    return 1 if failed else 0


# --- worker --------------------------------------------------------------------------------------


class Recorder:
    """The worker's bookkeeping: the input in flight on disk, counts, findings, status."""

    def __init__(self, target: Any, crash_dir: Path, status: Path, last_input: Path) -> None:
        self.target = target
        self.crash_dir = crash_dir
        self.status_path = status
        self.last_input = os.open(last_input, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self.executions = 0
        self.crashes = 0
        self.signatures: set[str] = set()
        self.slowest = 0.0
        self.last_status = 0.0

    def before(self, value: Any) -> tuple[dict[str, Any], bytes]:
        meta, payload = self.target.dump(value)
        record = json.dumps(meta).encode() + b"\n" + payload
        os.ftruncate(self.last_input, 0)
        os.pwrite(self.last_input, record, 0)
        return meta, payload

    def finding(
        self, meta: dict[str, Any], payload: bytes, signature: str, error: str, trace: str
    ) -> None:
        self.crashes += 1
        self.signatures.add(signature)
        save_crash(self.crash_dir, self.target.name, signature, meta, payload, error, trace)

    def after(self, elapsed: float) -> None:
        self.executions += 1
        self.slowest = max(self.slowest, elapsed)
        now = time.monotonic()
        if now - self.last_status >= STATUS_INTERVAL_SECONDS:
            self.write_status()
            self.last_status = now

    def write_status(self) -> None:
        status = {
            "executions": self.executions,
            "crashes": self.crashes,
            "signatures": sorted(self.signatures),
            "slowest_seconds": self.slowest,
        }
        temporary = self.status_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(status))
        temporary.replace(self.status_path)


@functools.cache
def our_code() -> tuple[str, ...]:
    """The directories of the product's packages and of this one (installed or checked out)."""
    packages = [importlib.import_module(name) for name in OUR_PACKAGES]
    return tuple(str(Path(p.__file__ or "").resolve().parent) + os.sep for p in packages)


def signature_of(error: BaseException) -> str:
    """Exception type + the innermost line of our own code it went through (for an invariant,
    the check that failed), so that one bug is one crash file however its inputs vary."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.name != "_require"]
    ours = [f for f in frames if f.filename.startswith(our_code())]
    frame = (ours or frames or [None])[-1]
    where = f"{Path(frame.filename).name}:{frame.lineno}" if frame else "?"
    return f"{type(error).__name__}@{where}"


def load_seeds(name: str, directories: list[Path]) -> tuple[bytes, ...]:
    import gzip

    from newsharvest_bench.fuzzing import MAX_SEED_BYTES, fixture_seeds

    seeds = list(fixture_seeds(name))
    for directory in directories:
        for path in sorted(directory.iterdir())[:MAX_SEED_FILES]:
            if path.is_file():
                data = path.read_bytes()
                if path.suffix == ".gz":
                    with contextlib.suppress(OSError, EOFError):
                        data = gzip.decompress(data)
                seeds.append(data[:MAX_SEED_BYTES])
    return tuple(seeds)


def worker(args: argparse.Namespace) -> int:
    import importlib
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_LIMIT_BYTES, resource.RLIM_INFINITY))
    deadline = time.monotonic() + args.seconds
    from newsharvest_bench import fuzzing

    target = fuzzing.TARGETS[args.worker]
    if args.engine == "atheris":
        import atheris

        with atheris.instrument_imports(include=list(target.modules)):
            for module in target.modules:
                importlib.import_module(module)
    else:
        for module in target.modules:
            importlib.import_module(module)
    from hypothesis import HealthCheck, given, settings

    recorder = Recorder(target, args.crash_dir, args.status, args.last_input)
    seeds = load_seeds(target.name, args.seed_dir)

    def run_one(value: Any) -> None:
        meta, payload = recorder.before(value)
        started = time.monotonic()
        try:
            target.check(value)
        except Exception as error:  # every failure is a finding
            trace = traceback.format_exc()
            recorder.finding(meta, payload, signature_of(error), repr(error)[:500], trace)
        elapsed = time.monotonic() - started
        if elapsed > SLOW_INPUT_SECONDS:
            recorder.finding(meta, payload, "slow", f"took {elapsed:.1f} s", "")
        recorder.after(elapsed)
        if time.monotonic() >= deadline:
            recorder.write_status()
            os._exit(0)  # atheris never returns; this is how a worker's time ends

    @settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(target.strategy(seeds))
    def structured(value: Any) -> None:
        run_one(value)

    fuzz_one_input = structured.hypothesis.fuzz_one_input  # type: ignore[attr-defined]
    if args.engine == "atheris":
        run_atheris(args, seeds, fuzz_one_input, lambda data: run_one(target.load({}, data)))
    while True:
        fuzz_one_input(os.urandom(RANDOM_BUFFER_BYTES))


def run_atheris(
    args: argparse.Namespace, seeds: tuple[bytes, ...], structured: Any, raw: Any
) -> None:
    """libFuzzer over raw documents and structured choice sequences (see the module doc)."""
    import random

    import atheris

    corpus = args.corpus
    if not corpus.exists():  # first worker of the session: seed documents + choice sequences
        corpus.mkdir(parents=True)
        for number, seed in enumerate(seeds):
            if seed[:1] and seed[0] >= STRUCTURED_BELOW:
                (corpus / f"seed-{number}").write_bytes(seed)
        rng = random.Random(0)
        for number in range(STRUCTURED_SEEDS):
            buffer = bytes([0]) + rng.randbytes(STRUCTURED_SEED_BYTES)
            (corpus / f"structured-{number}").write_bytes(buffer)

    def one_input(data: bytes) -> None:
        if data and data[0] < STRUCTURED_BELOW:
            structured(data[1:])
        else:
            raw(data)

    libfuzzer_args = [
        sys.argv[0], str(corpus), f"-max_total_time={int(args.seconds) + 60}",
        f"-max_len={MAX_INPUT_BYTES}", "-rss_limit_mb=0", f"-timeout={int(HANG_SECONDS)}",
        f"-artifact_prefix={args.crash_dir}/libfuzzer-", "-print_final_stats=0",
    ]  # fmt: skip
    atheris.Setup(libfuzzer_args, one_input)
    atheris.Fuzz()


def worker_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m newsharvest_bench.fuzz")
    parser.add_argument("--worker", required=True, choices=TARGET_NAMES)
    parser.add_argument("--engine", required=True, choices=("atheris", "hypothesis"))
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--crash-dir", type=Path, required=True)
    parser.add_argument("--status", type=Path, required=True)
    parser.add_argument("--last-input", type=Path, required=True)
    parser.add_argument("--seed-dir", type=Path, action="append", default=[])
    parser.add_argument("--corpus", type=Path, required=True, help="libFuzzer corpus directory")
    return parser


if __name__ == "__main__":
    sys.exit(worker(worker_parser().parse_args()))
