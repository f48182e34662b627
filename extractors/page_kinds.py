"""Pages that are not articles, told by their structure: more evidence for `extractors.evidence`.

* records — the body is mostly a run of short records of one template, each a few fields (a
  time and a line, a name and a figure, a row of cells): departures, cinema times, traffic
  incidents, fixtures, rates, a staff list. Without them too little is left to be an article;
* an order form — a short body shows a price, and a form in it takes a quantity or a variant
  (a `<select>`, a number field): a shop's product page;
* a page about the site — the page's own address is a short link in the site's footer, where
  every page of the site links its imprint, privacy, terms, contact and about pages; an article
  is not linked from the footer of every page.
* an undated site page — nothing dates the page (its markup, its address, a line by its
  headline) and its short body sits at an address it declares that names a site page in one
  word. A news article is dated. (A form the reader fills in beside the `<h1>` is no such
  evidence: older news pages set a short article beside an "e-mail this story" form.)

* data without prose — at least four short table rows or list items that hold a figure, and
  besides the rows and items less than an article's body (a heading, a status line, a source
  note): an election results page before the count, hourly prices. A match report or a market
  report with its table has paragraphs of prose of its own;
* an intro above teasers — a short, undated body that is not the page's post, beside a list of
  at least four teasers of one template (each led by a linked headline) that its parent or a
  sibling holds, each with text besides its link (a date, a section; an article's related
  stories are bare links): a topic page's long intro, an author's card above their stories. A short
  article is dated, or set out under its headline (`extractors.short_article`);
* a question the reader answers — a body too short for an article, and a form of radio
  buttons right after the page's `<h1>`: a poll, a quiz. (A form without choices, such as an
  "e-mail this story" form, is no such evidence.)
* linked entries — at least four entries under one parent, each led by a link to a page of its
  own and followed by a line of text of its own, no longer than a record, and without them too
  little for an article: notices set out between blank lines of `<br>`s in an old layout (a
  name linked, a line of dates), a definition list of the site's feeds, each term a link and
  each description a line. (Records are elements of two fields; these are not.) A short post
  set out under its dated headline keeps its own such list (`extractors.evidence`);
* a notice and its choices alone — at least two buttons, and besides the body and their labels
  less text on the page than one paragraph: a consent wall served in place of the page, an age
  check. An article's page has its site around it.

Each reads markup (tags, templates, links, form controls), never wording, so it holds in any
language. Pure functions over the shared parse; they never modify it.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from operator import attrgetter
from urllib.parse import SplitResult, unquote, urlsplit

from lxml import etree

from extractors.article import (
    CAPTION,
    LIST_ITEM,
    MIN_BODY_CHARS,
    TABLE,
    TEXT_KINDS,
    Block,
    running_text,
    running_texts,
)
from extractors.blocks import spaced_only, visible_chars
from extractors.paragraphs import CP, ends_as_sentence
from extractors.tree import Element, first_element, text_of

# Records: at least this many siblings of one template (`evidence.same_template`) ...
MIN_RECORDS = 4
# ... each of at least two fields (child elements with text: a time and a place, two cells) ...
MIN_FIELDS = 2
# ... and no longer than this (a row or a line; a listicle's items are paragraphs of prose) ...
MAX_RECORD_CHARS = 200
# ... that hold at least this share of the body's text; what is left (a heading, an intro, a
# note) is shorter than an article's body (MIN_BODY_CHARS).
MIN_RECORDS_SHARE = 0.5
# A body longer than this is an article beside its tables and lists.
MAX_RECORDS_BODY_CHARS = 3000
# Elements that are never records: an article's paragraphs and headings are siblings of one
# template too.
NOT_RECORDS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "br", "a", "span", "b", "i",
                         "strong", "em", "img", "script", "style", "option"})  # fmt: skip
# A product's description is short; a longer body is an article (with a site-wide form of
# selects around it: a category picker, comment viewing options).
MAX_PRODUCT_BODY_CHARS = 1500
# A price: a currency sign or ISO code by a number ("$220", "18,00 €", "EUR 9.90").
_CURRENCY_SIGNS = "$€£¥₹₽₩₺"
_CURRENCY_CODES = ("EUR", "USD", "GBP", "CHF", "JPY", "CAD", "AUD", "SEK", "NOK", "DKK", "PLN",
                   "CZK")  # fmt: skip
_CURRENCY = rf"(?:[{_CURRENCY_SIGNS}]|\b(?:{'|'.join(_CURRENCY_CODES)})\b)"
PRICE = re.compile(rf"{_CURRENCY}\s?\d|\d\s?{_CURRENCY}")
# Every price holds one of these (the pattern matches case as written).
_CURRENCY_MARKS = (*_CURRENCY_SIGNS, *_CURRENCY_CODES)
_ORDER_CONTROLS = etree.XPath(
    ".//form[.//select or .//input[translate(@type, 'NUMBER', 'number')='number']]"
    "[.//button or .//input[translate(@type, 'SUBMIT', 'submit')='submit']]"
)
# A page about the site: its address has at most this many path segments, the last of at most
# this many words (an article's address carries a dated path or a headline's slug) ...
MAX_SITE_PAGE_SEGMENTS = 2
MAX_SITE_PAGE_SLUG_WORDS = 3
# ... and a link to it in the footer has at most this many words (a headline has more: a
# footer's "most read" list links articles).
MAX_SITE_LINK_WORDS = 4
# ... among at least this many such links (the footer's bar of the site's own pages).
MIN_BAR_LINKS = 3
# One step with a predicate, not a union of three: libxml2 merges a union's node sets by comparing
# every node of one with every node of the other (40,000 footers took 3 s).
_FOOTERS = etree.XPath(
    "//*[self::footer"
    " or contains(translate(@id, 'FOTER', 'foter'), 'footer')"
    " or contains(translate(@class, 'FOTER', 'foter'), 'footer')][not(ancestor::article)]"
)
# The footers read, in document order (a hostile page may name every element "footer").
MAX_FOOTERS = 8
# A menu's link that says it is the page the reader is on (WAI-ARIA's `aria-current="page"`),
# outside the body and among a bar of short links: the site lists the page among its own pages
# (a legal section's side menu: imprint, privacy, cookies), as a footer's bar does.
_CURRENT_PAGE_LINKS = etree.XPath("//a[translate(@aria-current, 'PAGE', 'page')='page']")
# The current-page links read, in document order (a hostile page may mark every link so).
MAX_CURRENT_PAGE_LINKS = 8
# An undated page (no publication date in its markup or its address, none shown by its
# headline) whose body is no longer than this is a page of the site, not a short article, when
# it also sits at a site page's address or asks the reader to fill in a form by its headline.
# (OpenGraph's type "website" is no such evidence: blogs and magazines declare it on articles.)
MAX_UNDATED_PAGE_CHARS = 1500
# A site page's address names it in one word ("privacy", "app", "login"); two make a short
# post's slug already (a blog's "harbour-railway").
MAX_UNDATED_SLUG_WORDS = 1
# The address must be the page's own word, a canonical link or og:url: a crawler's URL alone
# ("/a", "/story.html") says nothing of what the page is.
# The elements, their addresses read after: not the union of the two attribute queries, which
# libxml2 merges in the square of their sizes (a page declaring 40,000 took 4.7 s).
_DECLARING_ELEMENTS = etree.XPath(
    "//*[self::link[contains(translate(@rel, 'CANONIL', 'canonil'), 'canonical')][@href]"
    " or self::meta[translate(@property, 'OGURL', 'ogurl')='og:url'][@content]]"
)
# The declared addresses read (a hostile page may declare thousands).
MAX_DECLARED_ADDRESSES = 4


def body_chars(blocks: list[Block]) -> int:
    """The length of the body's running text without its whitespace, counted without building it
    (asked of every body, long ones too)."""
    texts = running_texts(blocks)
    joined = "".join(texts)
    if spaced_only(joined):  # counted in C, without a call per block
        return len(joined) - joined.count(" ")
    return sum(map(visible_chars, texts))


def squeezed(text: str) -> str:
    """`text` without its whitespace (the methods join lines and cells differently)."""
    return "".join(text.split())


# An element's tag, read in C by `map` (each child's tag counted for every parent of a body).
_TAG = attrgetter("tag")


def first_of_each_tag(container: Element, minimum: int) -> Iterator[Element]:
    """For every element under `container` (itself included), the first of its children of each
    tag it has at least `minimum` children of: where a run of `minimum` siblings of one template
    may start (a template's items share their tag). Counting children in C first skips the
    elements of an article's prose, which have fewer."""
    for parent in container.iter(etree.Element):
        if len(parent) < minimum:
            continue
        counts = Counter(map(_TAG, parent))  # counted without a generator's frame per child
        for child in parent:
            if counts.get(child.tag, 0) >= minimum and isinstance(child.tag, str):
                counts[child.tag] = 0  # the first one only
                yield child


def records_share(
    blocks: list[Block],
    container: Element | None,
    template: Callable[[Element], list[Element]],
    chars: int | None = None,
    text: str | None = None,
) -> bool:
    """Whether the body is mostly records of one template (`template(element)`: the element and
    its siblings of its template), with too little besides them to be an article. `chars`: the
    body's `body_chars`, and `text` its running text without whitespace (`squeezed`), when the
    caller has them."""
    if container is None:
        return False
    if (body_chars(blocks) if chars is None else chars) > MAX_RECORDS_BODY_CHARS:
        return False
    if text is None:
        text = squeezed(running_text(blocks))
    if not text:
        return False
    found: list[Element] = []
    # Grouped records are looked for in a body of short lines only: a line longer than a record
    # is prose (an article, the common body, is not walked again).
    grouped = [] if _longer_than_record(running_texts(blocks)) else _grouped_records(container)
    for group in (*each_template(container, MIN_RECORDS, template), *grouped):
        if len(group) >= MIN_RECORDS and all(map(_is_record, group)):
            found.extend(group)
    inside = [record for record in _outermost(found) if _in_body(record, text)]
    chars = sum(len(squeezed(text_of(record))) for record in inside)
    return chars >= MIN_RECORDS_SHARE * len(text) and len(text) - chars < MIN_BODY_CHARS


def each_template(
    container: Element, minimum: int, template: Callable[[Element], list[Element]]
) -> Iterator[list[Element]]:
    """For every element under `container` with at least `minimum` children of one tag (see
    `first_of_each_tag`), each template among those children once (`template(child)`: the
    child and its siblings of its template), not only the first child's: a row of tabs or a lead
    item of the same tag may come before the records. Paragraphs and headings are not read."""
    for parent in container.iter(etree.Element):
        if len(parent) < minimum:
            continue
        counts = Counter(map(_TAG, parent))  # counted without a generator's frame per child
        seen: set[Element] = set()
        for child in parent:
            if counts.get(child.tag, 0) < minimum or not isinstance(child.tag, str):
                continue
            if child.tag in NOT_RECORDS or child in seen:
                continue
            group = template(child)
            seen.update(group)
            seen.add(child)
            yield group


def _longer_than_record(texts: list[str]) -> bool:
    return any(
        len(text) > MAX_RECORD_CHARS and len(squeezed(text)) > MAX_RECORD_CHARS for text in texts
    )


def _grouped_records(container: Element) -> list[list[Element]]:
    """Elements of one template (tag and class) under parents of one template, two or more of
    which list two or more of them: the records of a listing grouped under headings (classified
    ads by category, events by day), each list shorter than MIN_RECORDS. One element of the
    template per parent is no list: the slides of a photo story, each in its own frame."""
    lists: dict[tuple[str, str, str, str], dict[Element, list[Element]]] = {}
    for element in container.iter(etree.Element):
        parent = element.getparent()
        classes = element.get("class")
        if parent is None or not classes or element.tag in NOT_RECORDS:
            continue
        key = (element.tag, classes, parent.tag, parent.get("class") or "")
        lists.setdefault(key, {}).setdefault(parent, []).append(element)
    return [
        [element for members in by_parent.values() for element in members]
        for by_parent in lists.values()
        if sum(1 for members in by_parent.values() if len(members) > 1) > 1
    ]


def _is_record(element: Element) -> bool:
    if len(squeezed(text_of(element))) > MAX_RECORD_CHARS:
        return False
    fields = [child for child in element if isinstance(child.tag, str) and text_of(child).strip()]
    return len(fields) >= MIN_FIELDS


def _outermost(records: list[Element]) -> list[Element]:
    ids = {id(record) for record in records}
    return [record for record in records if ids.isdisjoint(map(id, record.iterancestors()))]


def _in_body(record: Element, text: str) -> bool:
    """The record's longest field is in the body's text (the methods join fields differently,
    and leave out a field that is a link)."""
    fields = [squeezed(text_of(child)) for child in record if isinstance(child.tag, str)]
    longest = max(fields, key=len, default="")
    return bool(longest) and longest in text


def shows_price(text: str) -> bool:
    """Whether `text` shows a price (PRICE). A text without a currency sign or code shows none,
    told by substring searches in C, where the pattern is tried at each of its characters (its
    forms open with a digit or a look at a word's start: no character to search for first)."""
    return any(mark in text for mark in _CURRENCY_MARKS) and PRICE.search(text) is not None


def has_order_form(blocks: list[Block], container: Element | None) -> bool:
    """A short body shows a price and a form in its container takes a quantity or a variant: a
    product page (a review's price comes with a link to a shop, not a form)."""
    text = running_text(blocks)
    if container is None or len(text) > MAX_PRODUCT_BODY_CHARS or not shows_price(text):
        return False
    return bool(_ORDER_CONTROLS(container))


def is_site_address(tree: Element, address: str | None) -> bool:
    """The address reads as one of the site's own pages, a short, shallow path named in at most
    MAX_UNDATED_SLUG_WORDS words, without a number, a date or a headline's slug, and the page
    declares it (`_declared_addresses`)."""
    path = _site_path(address)
    if path is None or len(_slug_words(path.rsplit("/", 1)[-1])) > MAX_UNDATED_SLUG_WORDS:
        return False
    declared = _declared_addresses(tree)[:MAX_DECLARED_ADDRESSES]
    return any(_path_of(value) == path for value in declared)


def _declared_addresses(tree: Element) -> list[str]:
    """The page's canonical links and og:url values, in document order."""
    return [
        element.get("href" if element.tag == "link" else "content", "")
        for element in _DECLARING_ELEMENTS(tree)
    ]


def _path_of(address: str) -> str | None:
    """The address's path without its slashes; None for an address that cannot be read."""
    try:
        return urlsplit(address.strip()).path.strip("/")
    except ValueError:  # "http://[oops/x": a broken host
        return None


# The last segment of a site page's address, as sites name their own pages: the legal pages, the
# pages about the publisher, the reader's account and subscription, help. Whole segments only
# (words joined by "-" or "_", lower case, without a file extension): a headline's slug that
# holds one of these words is longer. A word an essay could be named by alone ("ethics",
# "standards") is left out; its policy's name ("ethics-policy") is not.
SITE_PAGE_SLUGS = frozenset(
    {
        # legal notice, privacy, cookies, terms
        "imprint", "impressum", "legal", "legal-notice", "legal-notices", "legal-information",
        "mentions-legales", "aviso-legal", "note-legali", "colophon", "colofon", "kolofon",
        "privacy", "privacy-policy", "privacy-notice", "privacy-statement", "privacy-center",
        "datenschutz", "datenschutzerklaerung", "datenschutzerklarung", "datenschutzhinweise",
        "privacidad", "politica-de-privacidad", "aviso-de-privacidad", "privacidade",
        "politica-de-privacidade", "confidentialite", "politique-de-confidentialite",
        "vie-privee", "informativa-privacy", "privacybeleid", "privacyverklaring", "personvern",
        "personvernerklaering", "integritetspolicy", "dataskydd", "databeskyttelse",
        "tietosuoja", "tietosuojaseloste", "polityka-prywatnosci", "prywatnosc", "gizlilik",
        "gizlilik-politikasi", "gizlilik-sozlesmesi", "kunye", "konfidentsialnost",
        "politika-konfidentsialnosti", "kebijakan-privasi", "chinh-sach-bao-mat",
        "cookies", "cookie-policy", "cookies-policy", "cookie-notice", "cookie-settings",
        "cookie-richtlinie", "cookie-richtlinien", "cookie-hinweise", "cookie-einstellungen",
        "politica-de-cookies", "politique-cookies", "politique-de-cookies", "informativa-cookie",
        "cookiebeleid", "cookie-beleid", "cookiepolicy", "cerez-politikasi",
        "terms", "terms-of-use", "terms-of-service", "terms-and-conditions", "terms-conditions",
        "conditions-of-use", "user-agreement", "nutzungsbedingungen", "agb", "terminos",
        "terminos-y-condiciones", "terminos-de-uso", "condiciones-de-uso", "termos",
        "termos-de-uso", "termos-de-servico", "conditions-generales", "cgu", "cgv",
        "conditions-d-utilisation", "condizioni", "termini-e-condizioni", "condizioni-d-uso",
        "gebruiksvoorwaarden", "algemene-voorwaarden", "vilkar", "villkor", "kayttoehdot",
        "regulamin", "kullanim-kosullari", "kullanim-sartlari", "polzovatelskoe-soglashenie",
        "syarat-dan-ketentuan", "dieu-khoan-su-dung", "accessibility",
        "accessibility-statement", "barrierefreiheit", "accesibilidad", "accessibilite",
        "accessibilita", "toegankelijkheid", "tillganglighet", "saavutettavuus",
        # the publisher: about, contact, staff, careers, advertising, editorial policies
        "about", "about-us", "aboutus", "who-we-are", "ueber-uns", "uber-uns", "wir-ueber-uns",
        "quienes-somos", "sobre-nosotros", "acerca-de", "sobre-nos", "quem-somos", "a-propos",
        "qui-sommes-nous", "chi-siamo", "over-ons", "om-oss", "om-os", "tietoa-meista",
        "o-nas", "hakkimizda", "o-proekte", "o-kompanii", "tentang-kami", "gioi-thieu",
        "contact", "contact-us", "contactus", "contacts", "kontakt", "kontakte", "contacto",
        "contactenos", "contato", "fale-conosco", "nous-contacter", "contatti", "contattaci",
        "iletisim", "kontakty", "hubungi-kami", "lien-he",
        "team", "our-team", "staff", "masthead", "redaktion", "redaccion", "redacao",
        "redaction", "redazione", "redactie", "redaksjonen", "redaktionen", "redaksi",
        "careers", "jobs", "join-us", "work-with-us", "karriere", "stellenangebote",
        "trabaja-con-nosotros", "empleo", "carreiras", "trabalhe-conosco", "carrieres",
        "recrutement", "lavora-con-noi", "vacatures", "werken-bij", "jobba-hos-oss",
        "lediga-jobb", "kariyer", "vakansii", "karir", "tuyen-dung",
        "advertise", "advertising", "advertise-with-us", "media-kit", "mediadaten",
        "werbung", "publicidad", "anunciese", "anuncie", "publicite", "pubblicita",
        "adverteren", "annonsera", "reklama", "reklam", "iklan", "quang-cao",
        "corrections", "corrections-policy", "ethics-policy", "code-of-ethics",
        "editorial-standards", "editorial-policy", "editorial-guidelines",
        "ai-policy", "leitlinien", "redaktionelle-leitlinien", "codigo-etico",
        "principios-editoriales", "charte-deontologique", "deontologie", "codice-etico",
        "redactiestatuut",
        # the reader's account and subscription, help
        "login", "log-in", "signin", "sign-in", "register", "registration", "signup", "sign-up",
        "account", "my-account", "anmelden", "registrieren", "konto", "mein-konto",
        "iniciar-sesion", "registro", "mi-cuenta", "entrar", "cadastro", "minha-conta",
        "connexion", "inscription", "mon-compte", "accedi", "registrati", "area-riservata",
        "inloggen", "registreren", "mijn-account", "logga-in", "kirjaudu", "logowanie",
        "rejestracja", "giris", "uye-ol", "vhod", "registratsiya", "masuk", "daftar",
        "dang-nhap", "dang-ky",
        "subscribe", "subscription", "subscriptions", "newsletter", "newsletters", "abo",
        "abonnement", "abonnements", "abonnieren", "suscribete", "suscripcion", "assine",
        "assinatura", "abonnez-vous", "abbonamenti", "abbonati", "abonneren", "prenumerera",
        "tilaa", "prenumerata", "abone-ol", "podpiska", "berlangganan",
        "faq", "faqs", "help", "hilfe", "ayuda", "ajuda", "aide", "aiuto", "hulp", "hjalp",
        "pomoc", "yardim", "bantuan", "sitemap", "site-map",
        # The same pages in more of the languages news is published in (Catalan, Czech, Slovak,
        # Hungarian, Romanian, Croatian/Serbian/Bosnian, Slovenian, Bulgarian, Ukrainian,
        # Greek, Lithuanian, Latvian, Estonian, Danish, Norwegian, Swedish, Finnish, Icelandic,
        # Albanian, Welsh, Indonesian/Malay, Filipino, Swahili) and more of the names English,
        # French, German, Spanish, Portuguese, Italian, Dutch and Polish sites give them, as
        # their addresses write them: lower case, without diacritics (`names_site_page` folds
        # an address's own diacritics and percent-escapes the same way).
        "avis-legal", "privacitat", "politica-de-privacitat", "galetes", "politica-de-galetes",
        "condicions-d-us", "termes-i-condicions", "accessibilitat", "qui-som",
        "sobre-nosaltres", "contacte", "publicitat", "subscripcio",
        "ochrana-osobnich-udaju", "ochrana-soukromi", "zasady-ochrany-osobnich-udaju",
        "zasady-cookies", "podminky-uziti", "podminky-pouziti", "obchodni-podminky", "pristupnost",
        "prohlaseni-o-pristupnosti", "kariera", "inzerce", "predplatne", "napoveda", "redakce",
        "ochrana-osobnych-udajov", "ochrana-sukromia", "podmienky-pouzivania",
        "obchodne-podmienky", "inzercia", "redakcia",
        "adatvedelem", "adatvedelmi-tajekoztato", "adatkezelesi-tajekoztato", "adatkezeles",
        "impresszum", "felhasznalasi-feltetelek", "altalanos-szerzodesi-feltetelek", "aszf",
        "suti-szabalyzat", "cookie-szabalyzat", "akadalymentesseg", "rolunk", "kapcsolat",
        "karrier", "hirdetes", "mediaajanlat", "elofizetes", "segitseg", "szerkesztoseg",
        "politica-de-confidentialitate", "confidentialitate", "protectia-datelor",
        "termeni-si-conditii", "termeni-de-utilizare", "politica-cookies",
        "politica-de-cookie-uri", "despre-noi", "cariere", "publicitate", "abonare", "abonament",
        "ajutor", "redactia", "accesibilitate", "corecturi", "politica-de-corecturi", "erata",
        "impresum", "pravila-privatnosti", "politika-privatnosti", "zastita-privatnosti",
        "zastita-podataka", "uvjeti-koristenja", "uslovi-koriscenja", "uslovi-koristenja",
        "pravila-koristenja", "kolacici", "politika-kolacica", "o-nama", "karijere",
        "oglasavanje", "pretplata", "redakcija", "pristupacnost",
        "varstvo-osebnih-podatkov", "zasebnost", "politika-zasebnosti", "pogoji-uporabe",
        "piskotki", "oglasevanje", "narocnina", "dostopnost",
        "poveritelnost", "politika-za-poveritelnost", "obshti-usloviya", "za-nas", "kontakti",
        "polityka-konfidentsiinosti", "konfidentsiinist", "pro-nas", "umovy-vykorystannia",
        "politika-konfidencialnosti", "redaktsiya",
        "oroi-xrisis", "oroi-chrisis", "politiki-aporritou", "prosopika-dedomena",
        "epikoinonia", "poioi-eimaste", "diafimisi",
        "privatumo-politika", "slapuku-politika", "slapukai", "naudojimo-taisykles",
        "apie-mus", "kontaktai", "karjera", "pagalba",
        "privatuma-politika", "sikdatnes", "sikdatnu-politika", "lietosanas-noteikumi",
        "par-mums", "abonesana", "palidziba",
        "privaatsuspoliitika", "andmekaitse", "kupsised", "kasutustingimused", "meist",
        "karjaar", "reklaam", "tellimine", "toimetus", "ligipaasetavus",
        "privatlivspolitik", "persondatapolitik", "cookiepolitik", "handelsbetingelser",
        "annoncering", "hjaelp", "tilgaengelighed", "tilgaengelighedserklaering",
        "informasjonskapsler", "bruksvilkar", "kontakt-oss", "annonsere", "hjelp",
        "tilgjengelighet", "tilgjengelighetserklaering", "ledige-stillinger",
        "personuppgifter", "personuppgiftspolicy", "kakor", "anvandarvillkor", "kontakta-oss",
        "tillganglighetsredogorelse",
        "evasteet", "evastekaytanto", "meista", "yhteystiedot", "ota-yhteytta", "mainosta",
        "mainostajille", "toimitus", "saavutettavuusseloste",
        "personuvernd", "skilmalar", "um-okkur", "hafa-samband",
        "privatesia", "politika-e-privatesise", "kushtet-e-perdorimit", "rreth-nesh",
        "na-kontaktoni",
        "preifatrwydd", "polisi-preifatrwydd", "cwcis", "telerau-ac-amodau", "hygyrchedd",
        "datganiad-hygyrchedd", "amdanom-ni", "cysylltu", "cysylltwch-a-ni",
        "dasar-privasi", "pedoman-media-siber", "pedoman-pemberitaan-media-siber", "kontak",
        "info-iklan", "terma-dan-syarat",
        "tungkol-sa-amin", "makipag-ugnayan", "kuhusu-sisi", "wasiliana-nasi",
        "sera-ya-faragha",
        "disclaimer", "copyright", "copyright-policy", "dmca", "community-guidelines",
        "community-standards", "comment-policy", "commenting-policy",
        "submission-guidelines", "contributor-guidelines", "customer-service",
        "customer-care", "support", "do-not-sell-my-personal-information", "do-not-sell",
        "your-privacy-choices", "adchoices", "ad-choices", "reprints", "licensing",
        "permissions", "tips", "news-tips", "send-us-a-tip", "submit-a-tip", "send-a-tip",
        "donnees-personnelles", "protection-des-donnees", "gestion-des-cookies",
        "conditions-generales-d-utilisation", "contactez-nous", "nous-rejoindre",
        "s-abonner", "plan-du-site", "barrierefreiheitserklaerung",
        "erklaerung-zur-barrierefreiheit", "kontaktformular", "contactanos", "suscripciones",
        "termos-e-condicoes", "acessibilidade", "expediente", "termini-di-utilizzo",
        "condizioni-generali", "dichiarazione-di-accessibilita", "toegankelijkheidsverklaring",
        "klantenservice", "abonnementen", "voorwaarden", "cookieverklaring",
        "polityka-cookies", "redakcja", "deklaracja-dostepnosci", "dostepnosc",
    }
)  # fmt: skip


# A file extension at the end of an address's last segment ("privacy.html").
_FILE_EXTENSION = re.compile(r"\.\w{2,5}$")


def names_site_page(address: str | None) -> bool:
    """The page's address names one of the site's own pages by its last segment: a shallow path
    (at most MAX_SITE_PAGE_SEGMENTS segments, no query, no digit anywhere: a story's address
    carries its date or its id) whose last segment, without a file extension, is one of
    SITE_PAGE_SLUGS ("/cookie-richtlinie/", "/about/corrections-policy", "/register/")."""
    read = _address_segments(address)
    if read is None:
        return False
    segments, query = read
    if query or not segments or len(segments) > MAX_SITE_PAGE_SEGMENTS:
        return False
    slug = _FILE_EXTENSION.sub("", folded(segments[-1])).lower().replace("_", "-")
    # Read unescaped: the digits of a percent-escape ("%C5%9B") are none of the address's words.
    return slug in SITE_PAGE_SLUGS and not any(_DIGIT.search(segment) for segment in segments)


def _address_segments(address: str | None) -> tuple[list[str], str] | None:
    """The unescaped segments of the address's path and its query; None for no address or a
    broken one ("http://[oops/x": a broken host)."""
    if not address:
        return None
    try:
        parts = urlsplit(address.strip())
    except ValueError:
        return None
    return [unquote(segment) for segment in parts.path.split("/") if segment], parts.query


# The words sites name their video section by, in the path of every video's page
# ("/video/2020/02/18/<slug>", "/videos/<slug>"), diacritics folded ("vídeos"): a section of its
# own, never the last segment (that is the video's slug, "/news/<video-of-the-fire>").
VIDEO_SECTION_SLUGS = frozenset(
    {"video", "videos", "videa", "videok", "videot", "videolar", "wideo", "wideos", "videoer"}
)


def in_video_section(address: str | None) -> bool:
    """The page's address sits in the site's video section: a segment before the last is one of
    VIDEO_SECTION_SLUGS."""
    read = _address_segments(address)
    if read is None:
        return False
    sections = read[0][:-1]
    return any(folded(segment).lower() in VIDEO_SECTION_SLUGS for segment in sections)


# The words sites name their weather section by, diacritics folded ("vejr", "väder" as "vader",
# "időjárás" as "idojaras", Swahili "hali-ya-hewa"): the section's pages are forecasts for a
# place, "/vejr/vestkobing". Words that also name climate or time ("clima", "tempo", "vreme")
# are not here: those sections hold stories.
WEATHER_SECTION_SLUGS = frozenset(
    {"weather", "wetter", "meteo", "vejr", "vejret", "vaer", "vaeret", "vader", "weer",
     "tiempo", "el-tiempo", "pogoda", "pocasi", "idojaras", "saa", "hava-durumu", "cuaca",
     "thoi-tiet", "tenki", "hali-ya-hewa", "vremea", "orai", "ilm"}
)  # fmt: skip


def names_weather_page(address: str | None) -> bool:
    """The page's address is a forecast's: no query, a segment of WEATHER_SECTION_SLUGS, then at
    most one more, a place's name (at most MAX_SITE_PAGE_SLUG_WORDS words, no digit). A weather
    story has its headline's slug, a date or an id ("/weather/2025/01/08/a2025010810442")."""
    read = _address_segments(address)
    if read is None or read[1]:
        return False
    segments = [folded(segment).lower() for segment in read[0]]
    for position, segment in enumerate(segments):
        if segment in WEATHER_SECTION_SLUGS:
            after = segments[position + 1 :]
            return not after or (
                len(after) == 1
                and len(_slug_words(after[0])) <= MAX_SITE_PAGE_SLUG_WORDS
                and _DIGIT.search(after[0]) is None
            )
    return False


# The words a CMS routes a tag's, a category's or a topic's page by, as the segment before its
# name ("/tag/wildfire-smoke", "/etiqueta/habitatge", "/thema/klimawandel", Blogger's
# "/search/label/Cycling"), diacritics folded: the page lists what is filed under the name. (An
# encyclopedia files its articles under "/topic/<name>": that word is not here.)
TOPIC_ROUTE_SLUGS = frozenset(
    {"tag", "tags", "tagi", "etiqueta", "etiquetas", "etichetta", "etichette", "label",
     "labels", "category", "categories", "categoria", "categorias", "categorie", "kategorie",
     "kategoria", "kategori", "kategorija", "thema", "themen", "tema", "temas", "teme", "temat",
     "tematy", "schlagwort", "schlagworte", "stichwort", "sujet", "sujets", "rubrique",
     "rubriques", "rubrik", "argomento", "argomenti", "onderwerp", "onderwerpen", "section",
     "sections", "seccion", "secciones", "dossier", "dossiers", "serie", "series", "serier",
     "serien", "topics"}
)  # fmt: skip
# ... and the words it routes an author's page by ("/author/jane-doe", WordPress's; "/autoren/",
# "/forfattere/"): the page lists the author's stories under their biography.
AUTHOR_ROUTE_SLUGS = frozenset(
    {"author", "authors", "autor", "autores", "autora", "autoras", "autori", "autore",
     "autoren", "autorzy", "auteur", "auteurs", "forfatter", "forfattere", "forfattare",
     "yazar", "yazarlar", "avtor", "avtory", "szerzo", "szerzok", "penulis", "writer",
     "writers", "columnist", "columnists", "kolumnist", "kolumnisten"}
)  # fmt: skip


def names_topic_page(address: str | None) -> bool:
    """The page's address is a tag's, a category's, a topic's, a series' or an author's page: no
    query, a last segment without a digit or a file extension (the name: "wildfire-smoke"), after
    a segment that is one of TOPIC_ROUTE_SLUGS or AUTHOR_ROUTE_SLUGS. A story filed under a topic
    or an author has its own slug, its date or its id after the name
    ("/tema/seca/2023/obras-da-barragem")."""
    read = _address_segments(address)
    if read is None:
        return False
    segments, query = read
    if query or len(segments) < 2:
        return False
    name = segments[-1]
    if _DIGIT.search(name) or _FILE_EXTENSION.search(name):
        return False
    route = folded(segments[-2]).lower()
    return route in TOPIC_ROUTE_SLUGS or route in AUTHOR_ROUTE_SLUGS


# A story's address names it by its headline's words in its last segment: a slug of at least this
# many words (between hyphens, underscores or pluses) of at least this many letters
# ("belediye-ihalesinde-dikkat-ceken-ayrinti") ...
MIN_STORY_SLUG_WORDS = 3
MIN_SLUG_WORD_LETTERS = 4
# ... which a page written in Latin letters (at least this share of its letters, diacritics
# folded) can be read against: a word is on the page when its first letters are (a slug writes
# the stem of a headline's inflected word: "kitabxanasi" for the locative "kitabxanasinda").
MIN_LATIN_LETTER_SHARE = 0.5
SLUG_WORD_STEM_LETTERS = 5
# Letters that sites transliterate rather than drop when they write an address ("große" is
# "grosse", Turkish's dotless i is "i"), and German's umlauts as its addresses also write them
# ("fähre" is "faehre" as often as "fahre").
_TRANSLITERATED = str.maketrans(
    {"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "\u0131": "i", "ə": "e", "ł": "l", "đ": "d",
     "ð": "d", "þ": "th"}
)  # fmt: skip
_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue"})


def shows_none_of_address(address: str | None, text: str) -> bool:
    """The address's last segment is a story's slug (MIN_STORY_SLUG_WORDS words of at least
    MIN_SLUG_WORD_LETTERS letters) and `text` (the page's title and body), written in Latin
    letters as the slug is, holds none of its words (their first SLUG_WORD_STEM_LETTERS letters,
    diacritics folded as addresses fold them): the story the address names is not on the page
    (removed, moved, blocked by a court's order, not found), whatever the page still declares
    about it. A slug transliterated from another script cannot be read against the page's text:
    not asked."""
    read = _address_segments(address)
    if read is None or not read[0]:
        return False
    slug = _FILE_EXTENSION.sub("", folded(read[0][-1]).lower())
    # Split as a headline's slug is written, not as `_slug_words` splits: a dot joins the parts
    # of a route ("news.apx.-content-articles-..."), whose words name no story.
    words = [
        word
        for word in re.split(r"[-_+]", slug)
        if len(word) >= MIN_SLUG_WORD_LETTERS and word.isalpha()
    ]
    if len(words) < MIN_STORY_SLUG_WORDS:
        return False
    lowered = text.lower().translate(_TRANSLITERATED)
    shown = folded(lowered)
    letters = sum(map(str.isalpha, text))
    if not letters or sum(map(str.isalpha, shown)) < MIN_LATIN_LETTER_SHARE * letters:
        return False
    spelled = (shown, folded(lowered.translate(_UMLAUTS)))
    return not any(
        word[:SLUG_WORD_STEM_LETTERS] in variant for word in words for variant in spelled
    )


def folded(text: str) -> str:
    """`text` without diacritics ("prywatności" is "prywatnosci", "adatvédelem" "adatvedelem"),
    as sites transliterate the words of their addresses; an ASCII text as it is."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def is_site_page(tree: Element, address: str | None, container: Element | None) -> bool:
    """The page's address is a short, shallow path linked by a short link in a footer of the
    page outside its body, or by a menu's short link outside it that marks it as the current
    page: one of the site's own pages (imprint, privacy, contact, about)."""
    path = _site_path(address)
    if path is None:
        return False
    host = urlsplit(address or "").netloc.lower()
    bars: dict[Element, bool | None] = {}  # each element's verdict as a bar, read once
    for footer in _FOOTERS(tree)[:MAX_FOOTERS]:
        if container is not None and (footer is container or container in footer.iterancestors()):
            continue  # the body's own footer
        for link in footer.iter("a"):
            if _links_site_page(link, path, host) and _in_link_bar(link, footer, bars):
                return True
    for link in _CURRENT_PAGE_LINKS(tree)[:MAX_CURRENT_PAGE_LINKS]:
        if container is not None and container in link.iterancestors():
            continue  # a link of the body's own
        if (
            _links_site_page(link, path, host)
            and _in_link_bar(link, None, bars)
            and not _tabs_of_page(link, path, host)
        ):
            return True
    return False


def _tabs_of_page(link: Element, path: str, host: str) -> bool:
    """The current-page link is a tab of the page itself: every link of its bar (the nearest
    element holding MIN_BAR_LINKS links or more) is the page or a view under it ("Code" at
    /owner/project beside "Issues" at /owner/project/issues). A repository's, a profile's or a
    product's tabs mark the page as current; a site's menu marks its own page among pages beside
    it (/about beside /news and /contact)."""
    for node in link.iterancestors():
        links = node.findall(".//a")
        if len(links) < MIN_BAR_LINKS:
            continue
        return all(_at_or_under(each, path, host) for each in links)
    return False


def _at_or_under(link: Element, path: str, host: str) -> bool:
    """The link goes to `path` or below it on `host`."""
    parts = _on_host(link, host)
    if parts is None:
        return False
    target = parts.path.strip("/")
    return target == path or target.startswith(path + "/")


def _links_site_page(link: Element, path: str, host: str) -> bool:
    """A link of at most MAX_SITE_LINK_WORDS words to the site page's path on its own host. A
    link with a query or a fragment is an action on the page or a place in it (a wiki's "Info",
    `?action=info`; "Edit"; "Print"), not the site's link to one of its pages."""
    words = len(text_of(link).split())
    if not 0 < words <= MAX_SITE_LINK_WORDS:
        return False
    parts = _on_host(link, host)
    return (
        parts is not None
        and not parts.query
        and not parts.fragment
        and unquote(parts.path).strip("/") == path
    )


def _on_host(link: Element, host: str) -> SplitResult | None:
    """The parts of the link's address when it is on `host` (or relative); None for another
    host or an address that cannot be read."""
    try:
        parts = urlsplit((link.get("href") or "").strip())
    except ValueError:  # "http://[oops/x": a broken host
        return None
    if parts.netloc and parts.netloc.lower() != host:
        return None
    return parts


def _in_link_bar(link: Element, footer: Element | None, bars: dict[Element, bool | None]) -> bool:
    """The link is one of a bar of at least MIN_BAR_LINKS short links (the site's own pages), not
    of a list of headlines that happens to hold a short one (a footer's "recent posts").
    `bars` keeps each ancestor's verdict (`_bar_verdict`): the links of one bar share it, and
    reading it again for each of them cost the square of the bar (a footer of 50,000 links to the
    page's address: hours)."""
    for node in link.iterancestors():
        if node not in bars:
            bars[node] = _bar_verdict(node)
        verdict = bars[node]
        if verdict is not None:
            return verdict
        if node is footer:
            return False
    return False


def _bar_verdict(node: Element) -> bool | None:
    """Whether the links of `node` make a bar of short links; None for fewer than MIN_BAR_LINKS."""
    links = list(node.iter("a"))
    if len(links) < MIN_BAR_LINKS:
        return None
    return all(len(text_of(each).split()) <= MAX_SITE_LINK_WORDS for each in links)


def _site_path(address: str | None) -> str | None:
    """The path of a page that may be one of the site's own, without its slashes and its
    percent-escapes (the digits of "%CF%83" are no id's, and a page's links write its escapes in
    either case); None for an address that reads as an article's (deep, or a headline's slug) or
    for the home page."""
    if not address or urlsplit(address).query:
        return None  # an address with a query is a script's: an article id, a search
    path = unquote(urlsplit(address).path).strip("/")
    segments = [segment for segment in path.split("/") if segment]
    if not segments or len(segments) > MAX_SITE_PAGE_SEGMENTS:
        return None
    slug = segments[-1]
    if len(_slug_words(slug)) > MAX_SITE_PAGE_SLUG_WORDS or any(c.isdigit() for c in slug):
        return None
    return path


def names_item(path: str) -> bool:
    """Path segments that name an item rather than a section or a view: one holds a digit (an
    id, a date) or a slug of more than MAX_UNDATED_SLUG_WORDS words (a headline's)."""
    return any(
        any(c.isdigit() for c in segment) or len(_slug_words(segment)) > MAX_UNDATED_SLUG_WORDS
        for segment in unquote(path).split("/")
    )


def _slug_words(slug: str) -> list[str]:
    """The words of an address's last segment, without a file extension ("privacy.html")."""
    return re.split(r"[-_+.]", _FILE_EXTENSION.sub("", slug))


# Data without prose: a row or a list item longer than this is prose (a listicle's item, an
# article set in a layout table's cells), not a datum (an hour and a price, a candidate and
# their votes) ...
MAX_DATUM_CHARS = 80
# ... the body has at least this many data, each short and holding a figure (as many as
# records, MIN_RECORDS), while its other blocks (headings, a status line, a note) together are
# shorter than an article's body (MIN_BODY_CHARS): without its figures the page would be too
# short to be an article.
MIN_DATA_ITEMS = MIN_RECORDS
_DIGIT = re.compile(r"\d")


def _is_short_row(kind: str, chars: int) -> bool:
    """A table row or list item of at most MAX_DATUM_CHARS characters (`chars`, whitespace left
    out): a datum's length."""
    return kind in (TABLE, LIST_ITEM) and chars <= MAX_DATUM_CHARS


def is_datum(kind: str, text: str) -> bool:
    """A short table row or list item that holds a figure: an hour and a price, a candidate and
    their votes."""
    return _is_short_row(kind, len(squeezed(text))) and _DIGIT.search(text) is not None


def data_chars(blocks: list[Block]) -> int:
    """The characters (without whitespace) of the data among `blocks` (`is_datum`), 0 when they
    are fewer than MIN_DATA_ITEMS."""
    data = [squeezed(text) for kind, text in blocks if is_datum(kind, text)]
    return sum(map(len, data)) if len(data) >= MIN_DATA_ITEMS else 0


def is_data_body(blocks: list[Block]) -> bool:
    """At least MIN_DATA_ITEMS short table rows and list items that hold a figure, and besides
    them a line of text (CP) but less than an article's text: a page of figures with a heading
    and a note, not an article with a table. (Figures without a line of text are too short:
    `extractors.short_article.has_prose`.)"""
    rest = figures = 0
    line = False
    for kind, text in blocks:
        chars = len(squeezed(text))
        if _is_short_row(kind, chars):
            figures += _DIGIT.search(text) is not None
        else:
            rest += chars
            line = line or len(text) >= CP
            if rest >= MIN_BODY_CHARS:
                return False
    # Without one line of text (a status, a note) the body is figures alone: too short.
    return line and figures >= MIN_DATA_ITEMS


def is_figures_page(blocks: list[Block]) -> bool:
    """At least MIN_DATA_ITEMS data (`is_datum`) whose text outweighs the rest of the body, and
    prose beside them (paragraphs of CP characters or more that end as sentences end) shorter
    than an article's body (MIN_BODY_CHARS): a page of figures in a story's template (a TV
    guide, a tide table, a snow report) with its notes, its disclaimer and its "last updated"
    line. `is_data_body` asks the same of all the text besides the figures; this asks it of the
    prose, so that the page's headings, labels and longer rows (a station's name, a film's
    line) do not pass for an article's text. An article beside its table tells it in prose of
    an article's length; a list's article outweighs its figures with its longer items."""
    data = data_chars = rest = prose = 0
    for kind, text in blocks:
        if kind == CAPTION:
            continue
        chars = len(squeezed(text))
        if _is_short_row(kind, chars) and _DIGIT.search(text) is not None:  # `is_datum`
            data += 1
            data_chars += chars
            continue
        rest += chars
        if kind in TEXT_KINDS and len(text) >= CP and ends_as_sentence(text):
            prose += chars
            if prose >= MIN_BODY_CHARS:
                return False  # an article's prose: settled by its first paragraphs
    return data >= MIN_DATA_ITEMS and data_chars >= rest


# An intro above teasers: at least this many siblings of one template beside the body ...
MIN_TEASERS_BESIDE = 4
# ... each no longer than a card and led by a link of at least this many words (a headline) ...
TEASER_HEADLINE_WORDS = 3
MAX_TEASER_CHARS = 600
# ... that holds at least this share of the teaser's text, not all of it (the rest: a date,
# a section, a summary of a sentence or two: a headline of 80 characters over a summary of 150;
# a paragraph holding a link is no teaser, its link a small share of it).
TEASER_LINK_SHARE = 0.25


def teasers_beside(container: Element, template: Callable[[Element], list[Element]]) -> bool:
    """The body's container has, beside it under its parent, a list of at least
    MIN_TEASERS_BESIDE teasers of one template (`template`), each led by a linked headline."""
    region = container.getparent()
    if region is None:
        return False
    # The list is the region's own (its children) or a sibling's of the body (a list element
    # beside it): a sidebar's or a footer's lists sit deeper, in boxes of their own. A page's
    # header block (its heading, the intro, a button) may hold the body: the list is then
    # beside that block.
    parents = [region, *(node for node in region if node is not container)]
    above = region.getparent()
    if above is not None:
        parents += [node for node in above if node is not region]
    return any(_holds_teasers(parent, container, template) for parent in parents)


def _holds_teasers(
    parent: Element, container: Element, template: Callable[[Element], list[Element]]
) -> bool:
    if len(parent) < MIN_TEASERS_BESIDE:
        return False
    counts = Counter(child.tag for child in parent)
    seen: set[Element] = set()
    for child in parent:
        if counts[child.tag] < MIN_TEASERS_BESIDE or child is container or child in seen:
            continue
        group = [each for each in template(child) if each is not container]
        seen.update(group)
        if sum(map(_is_teaser, group)) >= MIN_TEASERS_BESIDE:
            return True
    return False


def _is_teaser(element: Element) -> bool:
    text = squeezed(text_of(element))
    if not text or len(text) > MAX_TEASER_CHARS:
        return False
    for link in element.iter("a"):
        headline = squeezed(text_of(link))
        if len(text_of(link).split()) >= TEASER_HEADLINE_WORDS:
            # A teaser has text of its own besides its headline (a date, a section): links one
            # after another are an article's related stories.
            return TEASER_LINK_SHARE * len(text) <= len(headline) < len(text)
    return False


# A poll or a quiz: a form the reader answers by choosing among at least this many options
# (radio buttons) ...
MIN_CHOICES = 2
# ... within this many elements after the page's first `<h1>` (the question under its heading).
# An article with a poll sets the poll in or after a body long enough to be an article; a
# short article's "e-mail this story" form has no choices.
MAX_CHOICE_FORM_SIBLINGS = 3
_RADIOS = etree.XPath(".//input[translate(@type, 'RADIO', 'radio')='radio']")


# An error page names its HTTP status in its headline ("404", "Error 410", "503: ..."): a number
# of the status codes a server answers a reader's request with (client and server errors), a
# word of its own in a headline of at most this many words (an article's headline that holds
# such a number, a road or a flight, is longer, and dated).
HTTP_ERROR_CODES = frozenset(
    {"400", "401", "403", "404", "405", "408", "410", "429", "451", "500", "502", "503", "504"}
)
MAX_ERROR_HEADLINE_WORDS = 6
_HEADLINE_TOKENS = re.compile(r"\w+")


def names_http_error(tree: Element) -> bool:
    """The page's first `<h1>` is a short headline holding an HTTP error status as a word of its
    own: an error page (a soft 404 served with status 200, a removed story's 410)."""
    h1 = first_element(tree, "h1")
    if h1 is None:
        return False
    words = _HEADLINE_TOKENS.findall(text_of(h1))
    return len(words) <= MAX_ERROR_HEADLINE_WORDS and not HTTP_ERROR_CODES.isdisjoint(words)


def asks_under_headline(tree: Element) -> bool:
    """A form of at least MIN_CHOICES radio buttons right after the page's first `<h1>` with
    text, or right after the block that heads the page with it (a quiz's header: its picture,
    headline and intro). An `<h1>` of a logo alone names the site, not a question: the block
    after the site's header is the whole page (a town hall's page survey at its foot)."""
    h1 = next((h1 for h1 in tree.iter("h1") if text_of(h1).strip()), None)
    if h1 is None:
        return False
    header = h1.getparent()
    headings = (h1,) if header is None or header.tag == "body" else (h1, header)
    return any(_choices_after(heading) for heading in headings)


def _choices_after(element: Element) -> bool:
    for index, sibling in enumerate(element.itersiblings()):
        if index >= MAX_CHOICE_FORM_SIBLINGS:
            break
        if isinstance(sibling.tag, str) and len(_RADIOS(sibling)) >= MIN_CHOICES:
            return True
    return False


# Linked entries: at least this many entries under one parent (as many as records, MIN_RECORDS),
# each led by a link to a page of its own and followed by a line of text of its own (a name and
# its dates, a feed and what it carries), no longer than a record (MAX_RECORD_CHARS). An entry is
# a run of lines between blank lines (old layouts set a list between `<br>`s), a list item, or a
# term of a definition list with its descriptions. Records (`records_share`) are elements of at
# least two fields; these are not: the text of their own is the link's tail or a sibling's.
MIN_LINKED_ENTRIES = MIN_RECORDS
_ENTRY_TAGS = ("li", "dt")
_ENTRY_CHILD_TAGS = ("br", *_ENTRY_TAGS)


def is_linked_entries(
    blocks: list[Block], container: Element | None, text: str | None = None
) -> bool:
    """The body is mostly linked entries under one parent, and without them less than an
    article's body (MIN_BODY_CHARS) is left: an index of notices set out between line breaks,
    a page listing the site's feeds. `text`: the body's running text without whitespace
    (`squeezed`), when the caller has it."""
    if container is None:
        return False
    if text is None:
        text = squeezed(running_text(blocks))
    if not text:
        return False
    for parent in _entry_parents(container):
        # The entries are parts of the parent's text, so they take at most all of it there: a
        # parent holding too little of the body (a list of links beside an article's text) is
        # told without cutting it into entries.
        if len(text) - len(text_of(parent)) >= MIN_BODY_CHARS:
            continue
        for entries in _entry_runs(parent):
            shown = _shown_in_body(entries, text)
            if len(shown) >= MIN_LINKED_ENTRIES and len(text) - sum(shown) < MIN_BODY_CHARS:
                return True
    return False


def _entry_parents(container: Element) -> list[Element]:
    """The elements under `container` (itself included) with at least MIN_LINKED_ENTRIES
    breaks, list items or terms among their children (in the order of their first such child).

    Counted from the breaks, items and terms, found in C: an XPath counting each tag among every
    element's children read the whole container three times over (1.5 % of a median page)."""
    counts: Counter[tuple[Element, str]] = Counter()
    for element in container.iter(*_ENTRY_CHILD_TAGS):
        if element is not container:
            counts[element.getparent(), element.tag] += 1
    return list(
        dict.fromkeys(
            parent for (parent, _), count in counts.items() if count >= MIN_LINKED_ENTRIES
        )
    )


def _entry_runs(parent: Element) -> Iterator[list[tuple[Element, str]]]:
    """The parent's entries led by a link, each as its link and its whole text, in each of the
    ways entries may be set out under it (its lines, its list items, its terms)."""
    # Breaks counted in C first: an article's paragraphs have none between them.
    if sum(1 for _ in parent.iterchildren("br")) >= MIN_LINKED_ENTRIES:
        for blank_lines in (True, False):
            lines = _lines_between_breaks(parent, blank_lines)
            if len(lines) >= MIN_LINKED_ENTRIES:
                yield [entry for entry in map(_led_by_link, lines) if entry is not None]
    for tag in _ENTRY_TAGS:
        items = list(parent.iterchildren(tag))
        if len(items) >= MIN_LINKED_ENTRIES:
            groups = [[item, *_descriptions(item)] for item in items]
            yield [entry for entry in map(_led_by_link, groups) if entry is not None]


def _descriptions(term: Element) -> list[Element]:
    """A definition list's descriptions of `term` (the `<dd>`s after it); none for a list item."""
    if term.tag != "dt":
        return []
    found = []
    for sibling in term.itersiblings():
        if sibling.tag != "dd":
            break
        found.append(sibling)
    return found


def _lines_between_breaks(parent: Element, blank_lines: bool) -> list[list[Element | str]]:
    """The parent's content cut at its `<br>` children: at blank lines (two breaks with only
    spaces between) when `blank_lines`, else at every break. Each piece is a text or an element."""
    runs: list[list[Element | str]] = [[parent.text or ""]]
    after_break = False  # only spaces since the last break
    for child in parent:
        if child.tag == "br":
            if not blank_lines or after_break:
                runs.append([])
            runs[-1].append(child.tail or "")
            after_break = not (child.tail or "").strip()
            continue
        runs[-1].extend((child, child.tail or ""))
        after_break = False
    return [run for run in runs if not _blank(run)]


def _blank(pieces: list[Element | str]) -> bool:
    return all(isinstance(piece, str) and not piece.strip() for piece in pieces)


def _led_by_link(pieces: list[Element | str]) -> tuple[Element, str] | None:
    """The entry's leading link and its whole text, when its first text is a link's (perhaps in
    bold), and it is no longer than a record and has text besides the link."""
    lead = next((piece for piece in pieces if not _blank([piece])), None)
    if not isinstance(lead, etree._Element) or not isinstance(lead.tag, str):
        return None
    if lead.tag != "a" and ((lead.text or "").strip() or not len(lead)):
        return None  # its text begins before any link (read without building it)
    link = lead if lead.tag == "a" else next(lead.iter("a"), None)
    if link is None:
        return None
    own = squeezed(text_of(link))
    whole = squeezed("".join(p if isinstance(p, str) else text_of(p) for p in pieces))
    if not own or not whole.startswith(own) or len(whole) > MAX_RECORD_CHARS:
        return None
    return (link, whole) if len(whole) > len(own) else None


def _shown_in_body(entries: list[tuple[Element, str]], text: str) -> list[int]:
    """For each entry the body shows, the characters it takes there: the whole entry, or its
    text besides its link (a method leaves link text out); entries to one address count once."""
    addresses: set[str] = set()
    shown = []
    for link, whole in entries:
        address = (link.get("href") or "").strip()
        if not address or address in addresses:
            continue
        addresses.add(address)
        rest = whole[len(squeezed(text_of(link))) :]
        if whole in text:
            shown.append(len(whole))
        elif rest in text:
            shown.append(len(rest))
    return shown


# A notice and its choices alone: at least this many buttons on the page (accept, refuse,
# customise; yes, no) ...
MIN_NOTICE_BUTTONS = 2
# ... and besides the body and the buttons' labels, less text on the page than one
# content-bearing paragraph (Algorithm 2.1's CP): no navigation, no footer, no headline of a
# story. An article's page has a site around it (a menu, a footer line), even a bare one.
MAX_TEXT_BESIDE_NOTICE = CP
# Input types that are buttons (a `<button>` is one whatever its type).
_BUTTON_TYPES = frozenset({"submit", "button"})
# What a page's text holds that a reader does not see as text: scripts, styles, templates, the
# text a browser with scripts never shows (noscript); and the buttons' labels.
_UNSHOWN_TAGS = ("script", "style", "noscript", "template", "button")


def is_notice_with_choices(tree: Element, blocks: list[Block]) -> bool:
    """The page is a short notice (the body) and buttons to answer it, and nothing else: a
    consent wall served in place of the page, an age check, an edition chooser."""
    page = first_element(tree, "body")
    if page is None or not _has_buttons(page):
        return False
    # The page's text counted in C, less what is not shown.
    shown = len(squeezed(text_of(page))) - sum(map(len, map(squeezed, _unshown_texts(page))))
    return shown - len(squeezed(running_text(blocks))) < MAX_TEXT_BESIDE_NOTICE


def _has_buttons(page: Element) -> bool:
    """At least MIN_NOTICE_BUTTONS buttons (`<button>`, or an `<input>` of a button's type);
    lxml picks the two tags in C."""
    count = 0
    for element in page.iter("button", "input"):
        if element.tag == "button" or (element.get("type") or "").lower() in _BUTTON_TYPES:
            count += 1
            if count >= MIN_NOTICE_BUTTONS:
                return True
    return False


def _unshown_texts(page: Element) -> Iterator[str]:
    """The texts of the page's unshown elements (`_UNSHOWN_TAGS`), the outermost only (their text
    holds their descendants')."""
    counted: set[Element] = set()
    for element in page.iter(*_UNSHOWN_TAGS):
        if not counted.isdisjoint(element.iterancestors(*_UNSHOWN_TAGS)):
            continue
        counted.add(element)
        yield text_of(element)


# A form page: a form in the body's container that takes an e-mail address or a password and
# shows at least as much text as the body itself (its fields' labels, the choices it offers): a
# sign-up, a registration, a newsletter page, whose body is the intro and the legal note around
# the form. An article's newsletter box is small beside it; a search form (a text field, lists
# of options) says nothing of the page.
_TEXT_FORMS = etree.XPath(
    ".//form[.//input[translate(@type, 'EMAIL', 'email')='email'"
    " or translate(@type, 'PASWORD', 'pasword')='password']]"
)


def form_outweighs_body(blocks: list[Block], container: Element | None) -> bool:
    """A form of `_TEXT_FORMS` (an e-mail or password field) in the body's container shows at
    least as much text as the body."""
    if container is None:
        return False
    forms = _TEXT_FORMS(container)
    if not forms:
        return False
    shown = sum(len(squeezed(text_of(form))) for form in _outermost(forms))
    return shown >= len(squeezed(running_text(blocks)))
