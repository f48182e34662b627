"""The WARC writer under a real write failure (tests/test_warc.py).

`python -m tests.support.warc_disk DIR` runs, in a process of its own, a writer whose second
group of records goes past the file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored): the kernel
writes part of the members, then refuses the rest with EFBIG, as a full disk does with ENOSPC.
The third group is written after the limit is lifted. What the process saw goes to stdout as
one JSON object.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from crawler.warc.records import response_record
from crawler.warc.writer import WarcWriter
from tests.support.journal import file_size_limit_in_this_process

PAGE = b"<html><head><title>t</title></head><body><p>" + b"news " * 400 + b"</p></body></html>"
# Bytes of the second group that fit under the limit: part of its first member.
PARTIAL_BYTES = 100


def group(first: int, count: int) -> list:
    return [
        response_record(f"http://news.test/{i}", 200, [(b"Content-Type", b"text/html")], PAGE)
        for i in range(first, first + count)
    ]


def main(directory: Path) -> None:
    writer = WarcWriter(directory, "disk", 1 << 30, 8, "newsharvest/test", {"BOT_NAME": "t"})
    writer.start()
    asyncio.run(writer.write(group(0, 1)))
    raised = None
    with file_size_limit_in_this_process(writer.size + PARTIAL_BYTES):
        try:
            asyncio.run(writer.write(group(1, 2)))
        except OSError as error:
            raised = error.errno
    asyncio.run(writer.write(group(3, 1)))
    writer.close()
    seen = {"raised": raised, "files": [str(path) for path in writer.files],
            "records": writer.records}  # fmt: skip
    print(json.dumps(seen))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
