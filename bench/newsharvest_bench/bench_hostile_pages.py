"""`newsharvest bench hostile-pages`: extraction's CPU time and peak memory on generated pages of
one repeated shape (many headings, links, list items, microdata items, footers, body chunks ...),
each at N and 4N repetitions, 4N about the 4 MiB extraction cap (extractors/document.py).

The pipeline kills a page after EXTRACT_TIMEOUT_SECONDS: a step whose work grows faster than the
page loses long real pages (a live blog, a forum thread, a long list). Each run is a process of
its own (a clean heap, its own ru_maxrss); the time is `time.process_time` of the extraction,
the least of TIMING_RUNS runs.
A 4N/N ratio well above 4 is a step that grows faster than the page: profile that shape
(`python -m cProfile`) to find it."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

# A 4N/N ratio above this is super-linear (the ratio of a linear path is about 4, a little more
# when the heap grows; quadratic ones reach 15 and more).
MAX_LINEAR_RATIO = 6.0
# Runs faster than this at 4N are not judged by their ratio (timer noise).
MIN_JUDGED_SECONDS = 0.5
# Each size's time is the least of this many runs, each a process of its own: one run of a tenth
# of a second moved by half from one run to the next on a machine doing other work (a linear
# shape measured 4.7 and 6.1 in two runs), and the least is the run the machine disturbed least.
TIMING_RUNS = 3
MULTIPLES = (1, 4)

HEAD = b"<html><head><title>A page title here</title></head><body>"
END = b"</body></html>"
SENTENCE = b"A sentence of the article with several words in it. "
ARTICLE = b"<p>" + SENTENCE * 15 + b"</p>"


def _repeat(unit: bytes, before: bytes = HEAD, after: bytes = END) -> Callable[[int], bytes]:
    return lambda n: before + unit * n + after


def _numbered(unit: bytes, before: bytes = HEAD, after: bytes = END) -> Callable[[int], bytes]:
    """`unit` with each %d replaced by the repetition's number (no two alike)."""
    holes = unit.count(b"%d")
    return lambda n: before + b"".join(unit % ((i,) * holes) for i in range(n)) + after


_CHUNK = b"<div class='chunk'><h3>%s %d</h3><p>%s %d. " + SENTENCE * 4 + b"</p></div>"

# name -> (page of n repetitions, N)
SHAPES: dict[str, tuple[Callable[[int], bytes], int]] = {
    "h2": (_repeat(b"<h2>Heading</h2>"), 50_000),
    "headings h1-h6": (
        _repeat(b"<h1>a</h1><h2>b</h2><h3>c</h3><h4>d</h4><h5>e</h5><h6>f</h6>"),
        10_000,
    ),
    "div.x": (_repeat(b"<div class='x'>some words in a div</div>"), 25_000),
    "microdata items": (
        _repeat(
            b"<div itemscope itemtype='http://schema.org/NewsArticle'>"
            b"<div itemprop='articleBody'>text text</div></div>"
        ),
        10_000,
    ),
    "links in one div": (
        _repeat(b"<a href='/x'>link text</a> ", HEAD + b"<div>", b"</div>" + END),
        35_000,
    ),
    "li": (_repeat(b"<li>item of a list here</li>", HEAD + b"<ul>", b"</ul>" + END), 35_000),
    "text<br><br>": (
        _repeat(b"a line of text that is some length<br><br>", HEAD + b"<div>", b"</div>" + END),
        25_000,
    ),
    "<br> in one <p>": (_repeat(b"word<br>", HEAD + b"<p>", b"</p>" + END), 120_000),
    "tables": (_repeat(b"<table><tr><td>cell a</td><td>cell b</td></tr></table>"), 18_000),
    "table rows": (
        _repeat(b"<tr><td>cell a</td><td>cell b</td></tr>", HEAD + b"<table>", b"</table>" + END),
        25_000,
    ),
    "iframes": (_repeat(b"<iframe src='/embed/x'></iframe>", HEAD + ARTICLE), 30_000),
    "forms": (
        _repeat(b"<form action='/s'><input name='q'><button>Go</button></form>", HEAD + ARTICLE),
        15_000,
    ),
    "p with a link": (
        _numbered(b"<p>some words of a paragraph %d <a href='/a%d'>a link</a> and more words.</p>"),
        12_000,
    ),
    "figures": (
        _numbered(
            b"<figure><img src='/a%d.jpg' alt='x'><figcaption>A caption %d</figcaption></figure>"
        ),
        10_000,
    ),
    "250 levels deep": (_repeat(b"<div>" * 250 + b"text of a leaf" + b"</div>" * 250), 350),
    "JSON-LD blocks": (
        _repeat(
            b'<script type=\'application/ld+json\'>{"@type":"NewsArticle","headline":"h"}</script>',
            HEAD,
            ARTICLE + END,
        ),
        12_000,
    ),
    "huge class and id": (
        lambda n: (
            HEAD
            + b"<div class='"
            + b"c " * n
            + b"' id='"
            + b"i" * n
            + b"'>"
            + ARTICLE
            + b"</div>"
            + END
        ),
        250_000,
    ),
    "one long word": (lambda n: HEAD + b"<p>" + b"a" * n + b"</p>" + END, 1_000_000),
    "CJK without spaces": (
        lambda n: HEAD + b"<p>" + "中文字符。".encode() * n + b"</p>" + END,
        60_000,
    ),
    "forum posts": (
        _numbered(
            b"<div class='comment post'><div class='author'>user%d</div>"
            b"<time>2020-01-01</time><p>A reply in the thread %d.</p></div>"
        ),
        6_000,
    ),
    "live blog": (
        _numbered(
            b"<article class='update'><h3>Update %d</h3><time>10:00</time>"
            b"<p>Something happened, said someone.</p></article>"
        ),
        5_000,
    ),
    "footers": (_repeat(b"<footer class='footer' id='footer'>x</footer>", HEAD + ARTICLE), 20_000),
    "canonical links": (
        _repeat(
            b"<link rel='canonical' href='/b'><meta property='og:url' content='/b'>",
            b"<html><head>",
            b"</head><body>" + ARTICLE + END,
        ),
        12_000,
    ),
    "footer link bar": (
        _repeat(
            b"<a href='/a'>A</a>",
            HEAD + b"<div><article><h1>Title</h1>" + ARTICLE * 3 + b"</article></div><footer><div>",
            b"<a href='/a'>a long link of many words here</a></div></footer>" + END,
        ),
        25_000,
    ),
    "body chunks": (
        _numbered(
            b"<div class='chunk'><h3>Part %d</h3><p>Paragraph %d. " + SENTENCE * 4 + b"</p></div>",
            HEAD + b"<div class='wrap'><div class='body'>",
            b"</div></div>" + END,
        ),
        2_000,
    ),
    "chunks around a kept box": (
        lambda n: (
            HEAD
            + b"<div class='wrap'><div class='body'>"
            + b"".join(_CHUNK % (b"Part", i, b"Part", i) for i in range(n))
            + b"<div class='chunk'><h3>Last</h3><p>Last. "
            + SENTENCE * 4
            + b"</p><div class='related'>"
            + b"".join(_CHUNK % (b"Related", i, b"Related", i) for i in range(2 * n))
            + b"</div></div></div></div>"
            + END
        ),
        1_000,
    ),
    "children named apart": (
        _numbered(
            b"<div class='c%d'></div>",
            HEAD + b"<div class='region'><div class='post'>" + ARTICLE + b"</div>",
            b"</div>" + END,
        ),
        40_000,
    ),
    "concatenated pages": (
        _repeat(b"<html><body>some text of a page</body></html>", b"", b""),
        23_000,
    ),
    "unknown elements in head": (
        _repeat(
            b"<mbox>x</mbox>", b"<html><head><title>t</title>", b"</head><body>" + ARTICLE + END
        ),
        60_000,
    ),
    "240 nested boxes of links": (
        lambda n: (
            HEAD + (b"<div>" + b"<a href='/x'>link words</a> " * n) * 240 + b"</div>" * 240 + END
        ),
        117,
    ),
    "240 nested article bodies": (
        lambda n: (
            HEAD
            + (b"<div itemprop='articleBody'><p>" + SENTENCE * n + b"</p>") * 240
            + b"</div>" * 240
            + END
        ),
        70,
    ),
    "author value of parentheses": (
        lambda n: (
            b"<html><head><title>t</title><meta name='author' content='"
            + b"(a)b" * n
            + b"'></head><body>"
            + ARTICLE
            + END
        ),
        200_000,
    ),
    # 4N is past the 500,000 characters of a JSON-LD body that are read (schema_org).
    "JSON-LD body of unclosed tags": (
        lambda n: (
            b"<html><head><title>t</title><script type='application/ld+json'>"
            b'{"@type":"NewsArticle","headline":"t","articleBody":"'
            + b"<p <script>" * n
            + b'"}</script></head><body>'
            + ARTICLE
            + END
        ),
        12_000,
    ),
    # Near the element cap: what the fallback cascade walks, element by element.
    "tiny paragraphs": (_numbered(b"<p>w%d</p>"), 48_000),
    "sections": (_numbered(b"<section><h2>S %d</h2><p>" + SENTENCE * 2 + b"</p></section>"), 5_000),
    # Quotations the text repeats (each searched for in the whole body: extractors.dom).
    "pull quotes": (
        _numbered(
            b"<p>Paragraph %d. "
            + SENTENCE * 4
            + b"</p><blockquote><p>"
            + SENTENCE * 2
            + b"</p></blockquote>",
            HEAD + b"<article><h1>A page title here</h1><div class='body'>",
            b"</div></article>" + END,
        ),
        2_000,
    ),
    # Sections nested in wrappers of their own under the headline, each heading a permalink.
    "sections under a headline": (
        _numbered(
            b"<div class='sect'><h2 id='s%d'><a href='#s%d'></a>S %d</h2><div class='sb'><p>"
            + SENTENCE * 3
            + b"</p><p>"
            + SENTENCE * 2
            + b"</p></div></div>",
            HEAD + b"<article><h1>A page title here</h1>",
            b"</article>" + END,
        ),
        2_500,
    ),
    # Highlighted code: one <pre> of many short lines, each token in a span (extractors.blocks).
    "highlighted code": (
        _repeat(
            b"<span class='k'>def</span> <span class='n'>f</span>(x):\n    return x\n",
            HEAD + b"<article><h1>A page title here</h1>" + ARTICLE + b"<pre><code>",
            b"</code></pre>" + ARTICLE + b"</article>" + END,
        ),
        13_000,
    ),
    # The 4 MiB worst cases for memory: the smallest elements, the most of them.
    "<p>a, unclosed": (_repeat(b"<p>a"), 2**20 // 4),
    "<li>a, unclosed": (_repeat(b"<li>a", HEAD + b"<ul>", b"</ul>" + END), 2**20 // 5),
}

_CHILD = """
import json, resource, sys, time
from newsharvest_bench.bench_hostile_pages import SHAPES
from extractors import extract_verbose
make, _ = SHAPES[sys.argv[1]]
page = make(int(sys.argv[2]))
extract_verbose(b"<html><body><p>warm</p></body></html>", "https://hostile.test/")
started = time.process_time()
result = extract_verbose(page, "https://hostile.test/a")
seconds = time.process_time() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"bytes": len(page), "seconds": seconds, "peak": peak, "reason": result.reason}))
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "hostile-pages",
        help="extraction time and memory on generated pages of one repeated shape, at N and 4N",
    )
    parser.add_argument(
        "--shape", action="append", choices=sorted(SHAPES), help="only this shape (repeatable)"
    )
    parser.set_defaults(handler=run)


def measure_least(name: str, repetitions: int) -> dict[str, Any]:
    """TIMING_RUNS extractions of the shape's page: the least time, the largest peak memory."""
    runs = [measure(name, repetitions) for _ in range(TIMING_RUNS)]
    least = min(runs, key=lambda each: each["seconds"])
    return {**least, "peak": max(each["peak"] for each in runs)}


def measure(name: str, repetitions: int) -> dict[str, Any]:
    """One extraction of the shape's page in a process of its own."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, name, str(repetitions)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(args: argparse.Namespace) -> int:
    from crawler.cli.table import render_table

    rows, slow = [], []
    for name in args.shape or SHAPES:
        base = SHAPES[name][1]
        runs = [measure_least(name, base * multiple) for multiple in MULTIPLES]
        first, last = runs[0]["seconds"], runs[-1]["seconds"]
        ratio = last / max(first, 1e-3)
        judged = last >= MIN_JUDGED_SECONDS and ratio > MAX_LINEAR_RATIO
        if judged:
            slow.append(name)
        rows.append((
            name, f"{base:,}", f"{runs[-1]['bytes'] / 2**20:.1f}", f"{first:.2f}", f"{last:.2f}",
            f"{ratio:.1f}" + (" SUPER-LINEAR" if judged else ""),
            f"{runs[-1]['peak'] / 2**20:.0f}", runs[-1]["reason"] or "article",
        ))  # fmt: skip
    headers = ["shape", "N", "MiB at 4N", "s at N", "s at 4N", "4N/N", "peak MiB at 4N", "result"]
    print(render_table(headers, rows))
    print(f"super-linear (4N/N > {MAX_LINEAR_RATIO:g}): {', '.join(slow) or 'none'}")
    return 1 if slow else 0
