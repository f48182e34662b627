"""Turn raw page bytes into one parsed lxml tree: encoding detection, size bounds, parsing.

Every extractor receives the tree built here; nothing downstream parses the page again.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from lxml import etree

from extractors.repair import repair_tree
from extractors.tree import Element, first_element, more_elements_than

# Pages are truncated to this many bytes before parsing: real articles fit in a fraction of it,
# and it bounds parse time and memory on hostile multi-megabyte pages.
MAX_DOCUMENT_BYTES = 4 * 1024 * 1024
# ... and a page of more elements than this is NULL (`too_many_elements`): the extraction costs
# about 20 us and 1 KB per element, so 4 MiB of the smallest elements (a million `<p>a`) took
# 20 s and 1.3 GB, past the pipeline's time and memory budgets. The largest page of the three
# benchmark sets has 10,534 elements, the median 582: this is 20 times the largest.
MAX_DOCUMENT_ELEMENTS = 200_000
# Every element but the few the parser adds (html, head, body) opens with a "<" of its own, so a
# page with fewer "<" than MAX_DOCUMENT_ELEMENTS needs no count; "<p>" is the shortest element.
_SHORTEST_ELEMENT_BYTES = 3
# A <meta charset> declaration must appear this early to count (HTML spec: first 1024 bytes;
# real pages often put it later, after long comments or scripts).
CHARSET_SNIFF_BYTES = 4096
# A page whose first characters hold more than this share of control characters is binary.
MAX_CONTROL_BYTE_SHARE = 0.10
CONTROL_SNIFF_BYTES = 1024

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# The value after "charset" in a <meta> tag (tags and words found in the lower-cased head of the
# page with bytes.find: a pattern that scans every <meta> for the word costs ten times more).
_CHARSET_VALUE = re.compile(rb"""\s*=\s*["']?\s*([a-z0-9_:.-]+)""")
# Labels a browser decodes with another codec than Python's of that name, or that Python does not
# know, after the WHATWG Encoding Standard's table of labels: a page labelled Latin-1 or ASCII is
# read as windows-1252, one labelled GB2312 as GBK (read by the GB18030 decoder), EUC-KR as
# windows-949, Shift_JIS as windows-31J, Big5 as Big5-HKSCS, TIS-620 as windows-874: each a
# superset its sites wrote in while naming the older standard (a GBK-only character in a
# "gb2312" page is lost by Python's strict GB2312 codec).
_BROWSER_CODECS = {
    **dict.fromkeys(("iso-8859-1", "iso8859-1", "iso88591", "iso_8859-1", "latin-1", "latin1",
                     "l1", "ascii", "us-ascii", "cp819", "ibm819", "csisolatin1",
                     "iso-ir-100", "x-cp1252"), "cp1252"),
    **dict.fromkeys(("iso-8859-9", "iso8859-9", "iso88599", "iso_8859-9", "latin5", "l5",
                     "csisolatin5", "iso-ir-148", "x-cp1254"), "cp1254"),
    **dict.fromkeys(("windows-874", "dos-874", "iso-8859-11", "iso8859-11", "iso885911",
                     "tis-620"), "cp874"),
    **dict.fromkeys(("gb2312", "gb_2312", "gb_2312-80", "gbk", "x-gbk", "chinese", "csgb2312",
                     "csiso58gb231280", "iso-ir-58"), "gb18030"),
    **dict.fromkeys(("euc-kr", "cseuckr", "csksc56011987", "iso-ir-149", "korean",
                     "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601", "ksc_5601", "windows-949"),
                    "cp949"),
    **dict.fromkeys(("shift_jis", "shift-jis", "sjis", "csshiftjis", "ms932", "ms_kanji",
                     "windows-31j", "x-sjis"), "cp932"),
    **dict.fromkeys(("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"), "big5hkscs"),
    **dict.fromkeys(("x-euc-jp", "cseucpkdfmtjapanese"), "euc_jp"),
    **dict.fromkeys(("iso-8859-8-i", "csiso88598i", "logical", "visual"), "iso8859-8"),
    **dict.fromkeys(("x-mac-cyrillic", "x-mac-ukrainian"), "mac-cyrillic"),
    **dict.fromkeys(("x-mac-roman", "csmacintosh", "mac"), "mac-roman"),
    **dict.fromkeys(("x-cp1250",), "cp1250"),
    **dict.fromkeys(("x-cp1251",), "cp1251"),
    **dict.fromkeys(("unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8"),
                    "utf-8"),
}  # fmt: skip
# The control characters that mark binary content, as bytes: each is one byte in UTF-8, and no
# byte of a longer character is one of them (counted in C, without a pattern's step per
# character).
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20)])
_UTF8_MULTIBYTE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"
)
_HIGH_BYTE = re.compile(rb"[\x80-\xff]")
# Labels whose every byte is a character: a wrong one never fails to decode, it garbles.
_SINGLE_BYTE_ENCODINGS = frozenset({"cp1250", "cp1251", "cp1252", "cp1253", "cp1254", "cp1257",
                                    "cp874", "iso8859-1", "iso8859-2", "iso8859-8",
                                    "iso8859-15", "koi8-r", "mac-roman",
                                    "mac-cyrillic"})  # fmt: skip
_PARSER = etree.HTMLParser(
    encoding="utf-8",
    remove_comments=True,
    remove_pis=True,
    no_network=True,
    default_doctype=False,
    collect_ids=False,
)


@dataclass(slots=True)
class Document:
    """A parsed page: its tree, the text it was decoded to, and where it came from."""

    tree: Element
    url: str | None
    encoding: str
    size: int = 0  # bytes parsed (0: unknown), for costs that grow with the page


class DocumentError(ValueError):
    """The input is not a parseable HTML page; `reason` is the NULL reason."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


# Text codecs Python knows that no browser decodes a page with: UTF-7 reads "+ADw-" as "<"
# (browsers refuse it for that), the escape codecs read backslashes, IDNA and Punycode are for
# host names, and "undefined" refuses every byte. A page that names one is read as undeclared.
_NOT_PAGE_ENCODINGS = frozenset(
    {"utf-7", "unicode-escape", "raw-unicode-escape", "idna", "punycode", "undefined"}
)


def normalize_encoding(label: str | None) -> str | None:
    """A Python codec name for an encoding label, or None when the label is unknown."""
    if not label:
        return None
    label = label.strip().lower()
    label = _BROWSER_CODECS.get(label, label)
    try:
        name = codecs.lookup(label).name
        "".encode(name)  # LookupError for a codec that is no text encoding (uu, base64, zlib)
    except (LookupError, ValueError):  # unknown, or not even a label (a NUL in it)
        return None
    return None if name in _NOT_PAGE_ENCODINGS else name


def detect_encoding(data: bytes, declared: str | None = None) -> tuple[str, int]:
    """Encoding of `data` and the length of its BOM: BOM, then declared, then <meta>, then UTF-8."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, len(bom)
    name = _declared_encoding(data, declared)
    if name:
        return name, 0
    return ("utf-8" if _mostly_utf8(data) else "cp1252"), 0


def _mostly_utf8(data: bytes) -> bool:
    """UTF-8 unless most non-ASCII bytes fail to form UTF-8 sequences (a legacy 8-bit page).

    A page with a few broken bytes (a truncated tail, one pasted cp1252 quote) stays UTF-8.
    """
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        pass
    high_bytes = len(_HIGH_BYTE.findall(data))
    utf8_bytes = sum(len(sequence) for sequence in _UTF8_MULTIBYTE.findall(data))
    return utf8_bytes > high_bytes / 2


def _meta_charset(data: bytes) -> str | None:
    """The charset a `<meta>` tag in the page's head declares (its first value after a
    "charset"), or None."""
    head = data[:CHARSET_SNIFF_BYTES].lower()
    # Each "charset" of the head in turn, inside a tag when the last "<meta" before it has not
    # ended before it: a head holds dozens of <meta>s and one or two "charset"s, so finding the
    # word costs a fraction of reading every tag (the same first value as tag by tag: the tags
    # and the words in them come in document order).
    word = head.find(b"charset")
    while word != -1:
        tag = head.rfind(b"<meta", 0, word)
        if tag != -1:
            end = head.find(b">", tag)
            end = len(head) if end == -1 else end
            if word + len(b"charset") <= end:
                value = _CHARSET_VALUE.match(head, word + len(b"charset"), end)
                if value:
                    return value.group(1).decode("ascii", "replace")
        word = head.find(b"charset", word + 1)
    return None


def decode_html(data: bytes, declared: str | None = None) -> tuple[str, str, bool]:
    """Decode page bytes to text, never raising: undecodable bytes become U+FFFD.

    Returns the text, the encoding, and whether the bytes were valid UTF-8 (then they can be
    parsed as they are).
    """
    for bom, name in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(name, errors="replace"), name, False
    return _decode_as(data, _declared_encoding(data, declared))


def _decode_as(data: bytes, encoding: str | None) -> tuple[str, str, bool]:
    """`decode_html` after the byte-order marks, with the encoding the page declares."""
    if encoding in (None, "utf-8"):
        try:
            return data.decode("utf-8"), "utf-8", True
        except UnicodeDecodeError:
            # Undeclared, or declared UTF-8 on bytes that are not (a legacy page behind a UTF-8
            # server default): a legacy 8-bit page, or UTF-8 with a few bad bytes.
            encoding = "utf-8" if _mostly_utf8(data) else "cp1252"
    return data.decode(encoding, errors="replace"), encoding, False


def _declared_encoding(data: bytes, declared: str | None) -> str | None:
    for candidate in (declared, _meta_charset(data)):
        name = normalize_encoding(candidate)
        if name and name.startswith(_WIDE_ENCODINGS):
            # A page cannot really be UTF-16 without a BOM when it declares it in ASCII <meta>;
            # the HTTP header can say so, and the bytes tell whether it is true and which order.
            if candidate is declared and (order := _wide_byte_order(data, name)):
                return order
            continue
        if name:
            return "utf-8" if _utf8_behind_single_byte_label(name, data) else name
    return None


_WIDE_ENCODINGS = ("utf-16", "utf-32")
# Markup is ASCII: in UTF-16 the high byte of each of its characters is NUL (in UTF-32, the
# three high bytes). In the first WIDE_SNIFF_BYTES, the lane of high bytes holds at least this
# many NULs (a few tags' worth, whatever the language of the text around them) ...
MIN_WIDE_NULS = 16
# ... and the lane of low bytes at most this many per NUL of the other (U+4E00 and the like
# have a NUL low byte; binary data has NULs everywhere, mislabelled ASCII-compatible text none).
MAX_LOW_LANE_NULS = 0.1
WIDE_SNIFF_BYTES = 1024


def _wide_byte_order(data: bytes, name: str) -> str | None:
    """The byte-order-specific codec of a UTF-16/32 page without a BOM ("utf-16-le"...), read
    from where its NUL bytes are; None when the bytes are not UTF-16/32 at all."""
    width = 4 if name.startswith("utf-32") else 2
    head = data[:WIDE_SNIFF_BYTES]
    first, last = head[0::width].count(0), head[width - 1 :: width].count(0)
    family = name[: len("utf-16")]
    if last >= MIN_WIDE_NULS and first <= MAX_LOW_LANE_NULS * last:
        return f"{family}-le"  # low byte first, so the NULs of ASCII characters come last
    if first >= MIN_WIDE_NULS and last <= MAX_LOW_LANE_NULS * first:
        return f"{family}-be"
    return None


def _utf8_behind_single_byte_label(name: str, data: bytes) -> bool:
    """A single-byte label (windows-1252, ISO-8859-x...) on bytes that are valid, non-ASCII
    UTF-8: mislabelled, since legacy text practically never forms valid UTF-8 sequences."""
    # Both told in C without decoding the page: `isascii` reads it a word at a time (a pattern
    # for a high byte stepped through it byte by byte), `is_valid_utf8` skips its ASCII chunks.
    if name not in _SINGLE_BYTE_ENCODINGS or data.isascii():
        return False
    return is_valid_utf8(data)


def looks_binary(text: str) -> bool:
    """True when the decoded text starts with many control characters (images, archives...)."""
    head = text[:CONTROL_SNIFF_BYTES]
    if not head:
        return False
    encoded = head.encode("utf-8", "surrogatepass")  # a lone surrogate is three high bytes
    controls = len(encoded) - len(encoded.translate(None, _CONTROL_BYTES))
    return controls / len(head) > MAX_CONTROL_BYTE_SHARE


def parse_document(
    page: str | bytes, url: str | None = None, *, encoding: str | None = None
) -> Document:
    """Parse a page once. Raises DocumentError (with a NULL reason) for non-HTML input."""
    utf8: bytes | None = None
    holds_markup = False  # known from the bytes: then the text is neither empty nor tagless
    if isinstance(page, str) and (misread := bytes_misread_as_text(page)) is not None:
        page = misread
    if isinstance(page, bytes):
        raw = page[:MAX_DOCUMENT_BYTES]
        if not raw or raw.isspace():
            raise DocumentError("empty_document")
        if any(raw.startswith(bom) for bom, _ in _BOMS):
            text, encoding_used, valid_utf8 = decode_html(raw, encoding)
        else:
            named = _declared_encoding(raw, encoding)
            if b"<" in raw and named in (None, "utf-8") and is_valid_utf8(raw):
                # The common page: valid UTF-8 that holds markup ("<" is never part of a
                # multi-byte character) goes to the parser as it is; only its first characters
                # are decoded, for the binary check.
                text, valid_utf8, holds_markup = _utf8_head(raw), True, True
                encoding_used = "utf-8"
            else:
                text, encoding_used, valid_utf8 = _decode_as(raw, named)
        utf8 = raw if valid_utf8 else None
    elif isinstance(page, str):
        text, encoding_used = page[:MAX_DOCUMENT_BYTES], "unicode"
    else:
        raise DocumentError("not_html", f"unsupported input type {type(page).__name__}")
    if not holds_markup and (not text or text.isspace()):
        raise DocumentError("empty_document")
    if looks_binary(text):
        raise DocumentError("not_html", "binary content")
    if not holds_markup and "<" not in text:
        raise DocumentError("not_html", "no markup")
    # The parser reads UTF-8 (an in-page <?xml encoding=...?> cannot confuse it): valid UTF-8
    # input goes as it came, anything else is re-encoded from the decoded text.
    # Control characters stay in the tree (the parser keeps them, and no extractor writes to the
    # tree); they are taken out of the text that leaves the library (`extractors.article`).
    payload = utf8 if utf8 is not None else text.encode("utf-8", errors="replace")
    if b"\x00" in payload:  # the parser would show a NUL as U+FFFD; a browser drops it (one scan)
        payload = payload.replace(b"\x00", b"")
    tree = _parse(payload)
    repaired = _close_runaway_title(tree, payload)
    if repaired is not None:
        tree = _parse(repaired)
    if _too_many_elements(tree, repaired if repaired is not None else payload):
        raise DocumentError("too_many_elements", f"over {MAX_DOCUMENT_ELEMENTS:,} elements")
    repair_tree(tree)  # where libxml2 and browsers build different trees (extractors.repair)
    return Document(
        tree, readable_url(url), encoding_used, len(repaired if repaired is not None else payload)
    )


# Single-byte codecs a caller may have read the page's bytes with before handing it over as
# text: Latin-1 is what HTTP/1.1 (RFC 2616) and so `requests` assume for text/html sent without a
# charset; windows-1252 is what most tools assume for "Latin-1".
_MISREADING_CODECS = ("latin-1", "cp1252")
# C1 control characters: a page read as Latin-1 holds one for each byte 0x80-0x9F (windows-1252's
# curly quotes and dashes, most letters of windows-1251 and the like).
_C1_CONTROL = re.compile("[\x80-\x9f]")


def _c1_as_bytes(error: UnicodeError) -> tuple[bytes, int]:
    """Encoding error handler: a C1 character is the byte of the same value. Browsers (WHATWG)
    read the five bytes windows-1252 leaves undefined (0x81, 0x8D, ...) as those characters."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    character = error.object[error.start]
    if "\x80" <= character <= "\x9f":
        return bytes([ord(character)]), error.start + 1
    raise error


_C1_AS_BYTES = "newsharvest-c1-as-bytes"
codecs.register_error(_C1_AS_BYTES, _c1_as_bytes)


def bytes_misread_as_text(page: str) -> bytes | None:
    """The bytes of a page handed over as text decoded with the wrong single-byte codec, or None
    when the text is what it says.

    Text that re-encodes with such a codec into valid UTF-8 holding multi-byte sequences was
    UTF-8 (three characters, "a-circumflex, euro, trade mark", for a closing quote): Latin text
    written in Latin-1 never forms those sequences (an accented letter is one byte, followed by an
    ASCII one). Text holding C1 control characters on a page
    whose <meta> declares another charset was read as Latin-1 from that charset.
    """
    page = page[:MAX_DOCUMENT_BYTES]  # one byte per character in these codecs
    if page.isascii():
        return None
    for codec in _MISREADING_CODECS:
        try:
            data = page.encode(codec, errors=_C1_AS_BYTES)
        except UnicodeEncodeError:
            continue  # a character outside the codec: the text was not read with it
        if _utf8_but_cut(data):
            return data
        if codec == "latin-1" and _C1_CONTROL.search(page) and _declares_legacy_charset(data):
            return data
    return None


def _declares_legacy_charset(data: bytes) -> bool:
    """The page's <meta> declares a charset other than UTF-8 (a page declaring UTF-8, or
    nothing, may hold C1 characters of its own: a publisher's mangled non-breaking space)."""
    return normalize_encoding(_meta_charset(data)) not in (None, "utf-8")


def _utf8_but_cut(data: bytes) -> bool:
    """Valid UTF-8, but for a character the size bound may have cut at the end."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    except UnicodeDecodeError:
        return False
    return True


# Valid UTF-8 is checked a chunk at a time: the ASCII chunks of a page (its markup, scripts and
# styles, most of it) are told apart in C without decoding them.
UTF8_CHUNK_BYTES = 4096
# Bytes holding at least CONTROL_SNIFF_BYTES characters of UTF-8 (at most 4 bytes each).
UTF8_SNIFF_BYTES = 4 * CONTROL_SNIFF_BYTES


def is_valid_utf8(data: bytes) -> bool:
    """Whether `data.decode("utf-8")` succeeds, decoding only the runs of chunks that are not
    ASCII. Such a run starts after an ASCII byte and ends before one, so it starts and ends on
    character boundaries: the bytes are valid exactly when every run is."""
    if data.isascii():
        return True
    view = memoryview(data)  # the runs are decoded where they lie, not copied out first
    start = None
    for offset in range(0, len(data), UTF8_CHUNK_BYTES):
        if data[offset : offset + UTF8_CHUNK_BYTES].isascii():
            if start is not None:
                if not _decodes(view[start:offset]):
                    return False
                start = None
        elif start is None:
            start = offset
    return start is None or _decodes(view[start:])


def _decodes(data: memoryview) -> bool:
    try:
        str(data, "utf-8")
    except UnicodeDecodeError:
        return False
    return True


def readable_url(url: str | None) -> str | None:
    """The page's address, or None when `urlsplit` cannot read it ("http://[::1", from a hostile
    archive record or a caller's typo): every stage that reads the address takes it as having
    none, as it takes a page handed over without one, instead of raising mid-extraction."""
    if not url:
        return None
    try:
        urlsplit(url)
    except ValueError:
        return None
    return url


def _utf8_head(data: bytes) -> str:
    """The first CONTROL_SNIFF_BYTES characters of valid UTF-8 bytes (a character cut at the end
    of the slice is dropped: the slice holds enough whole ones)."""
    return data[:UTF8_SNIFF_BYTES].decode("utf-8", errors="ignore")[:CONTROL_SNIFF_BYTES]


def _too_many_elements(tree: Element, payload: bytes) -> bool:
    """More than MAX_DOCUMENT_ELEMENTS elements: counted only on a page with enough bytes and
    "<" for them (a common page is far below both: no walk)."""
    if len(payload) < MAX_DOCUMENT_ELEMENTS * _SHORTEST_ELEMENT_BYTES:
        return False
    if payload.count(b"<") <= MAX_DOCUMENT_ELEMENTS:
        return False
    return more_elements_than(tree, MAX_DOCUMENT_ELEMENTS)


def _parse(payload: bytes) -> Element:
    try:
        tree = etree.fromstring(payload, parser=_PARSER)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError) as error:
        raise DocumentError("unparseable", str(error)) from error
    if tree is None or not isinstance(tree.tag, str):
        raise DocumentError("unparseable", "no document element")
    return tree


# A <title> longer than this swallowed the page: a real title is a line, not kilobytes.
MAX_TITLE_CHARS = 1024
_TITLE_START = re.compile(rb"<title\b[^>]*>", re.IGNORECASE)
_TITLE_END = re.compile(rb"[<\r\n]")


def _close_runaway_title(tree: Element, payload: bytes) -> bytes | None:
    """The page with its <title> closed at its first line, when that title has no end tag.

    A title is raw text up to `</title>`: a page that lost its end tag (a truncated or
    mis-stitched record) is all title to an HTML parser, and shows nothing. A title that long,
    holding markup, is such a page; the title ends where its first line or tag does.
    """
    title = first_element(tree, "title")
    if title is None or len(title.text or "") <= MAX_TITLE_CHARS or "<" not in title.text:
        return None
    start = _TITLE_START.search(payload)
    if start is None:
        return None
    end = _TITLE_END.search(payload, start.end())
    cut = end.start() if end else len(payload)
    return payload[:cut] + b"</title>" + payload[cut:]
