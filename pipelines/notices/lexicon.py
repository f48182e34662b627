"""The notice stage's language data: date words, lexical priors, lines that are never notices.

Seven languages (English, German, French, Spanish, Italian, Portuguese, Dutch), keyed by their
ISO 639-1 code. Everything here is data plus the compiled rules built from it; the logic that
uses it is in learner.py. Every pattern runs on *folded* text (Unicode NFKC, case folded, so
"ß" reads "ss" and typographic apostrophes are turned into "'" first).

- Date words: month names (full and abbreviated) and weekday names. A name that is also an
  ordinary word somewhere ("may", "mai", "mar", "sept", "mei", "jan") is only folded in the
  article's own language, or next to a number (a date: "10 mai 2025", "May 3"), so "the council
  may vote" keeps its "may" while "published on 10 mai 2025" loses its date whatever the page
  declares.
- Priors (`PRIOR_RULES`): phrasings a story itself rarely uses, one rule per kind and language.
  The learner applies the rules of the article's language and of English (boilerplate is often
  left in English), and every language's when the language is unknown.
- Editorial notes (`EDITORIAL_RULES`): corrections, clarifications, editor's notes and updates,
  as a leading label ("Correction:", "Berichtigung:", "Rectificatif :", "Fe de erratas:") or
  as the sentence that says it ("An earlier version of this article ..."). They are the most
  important sentence of their article and are never removed.
- Attribution lines (`ATTRIBUTION_RULES`): "This story was originally published by ...", "Mit
  Material von dpa": part of the story, never removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl")
FALLBACK_LANGUAGE = "en"  # boilerplate is often left in English whatever the page's language

# --- Date words --------------------------------------------------------------------------------

MONTHS: dict[str, tuple[str, ...]] = {
    "en": (
        "january", "february", "march", "april", "may", "june", "july", "august", "september",
        "october", "november", "december",
        "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    ),
    "de": (
        "januar", "jänner", "februar", "märz", "april", "mai", "juni", "juli", "august",
        "september", "oktober", "november", "dezember",
        "jan", "feb", "mär", "mrz", "apr", "jun", "jul", "aug", "sep", "sept", "okt", "nov", "dez",
    ),
    "fr": (
        "janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
        "octobre", "novembre", "décembre",
        "janv", "févr", "fév", "avr", "juil", "sept", "oct", "nov", "déc",
    ),
    "es": (
        "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre",
        "setiembre", "octubre", "noviembre", "diciembre",
        "ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "sept", "oct", "nov", "dic",
    ),
    "it": (
        "gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto",
        "settembre", "ottobre", "novembre", "dicembre",
        "gen", "feb", "mar", "apr", "mag", "giu", "lug", "ago", "set", "ott", "nov", "dic",
    ),
    "pt": (
        "janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro",
        "outubro", "novembro", "dezembro",
        "jan", "fev", "mar", "abr", "mai", "jun", "jul", "ago", "set", "out", "nov", "dez",
    ),
    "nl": (
        "januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september",
        "oktober", "november", "december",
        "jan", "feb", "mrt", "apr", "jun", "jul", "aug", "sep", "sept", "okt", "nov", "dec",
    ),
}  # fmt: skip

WEEKDAYS: dict[str, tuple[str, ...]] = {
    "en": ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    "de": ("montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonnabend",
           "sonntag"),
    "fr": ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
    "es": ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"),
    "it": ("lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica"),
    # "segunda-feira" tokenises as "segunda" "feira": "feira" is folded with the day name.
    "pt": ("segunda", "terça", "quarta", "quinta", "sexta", "feira", "sábado", "domingo"),
    "nl": ("maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag", "zondag"),
}  # fmt: skip

# Date words that are also ordinary words (or names) in one of the languages: folded only in
# their own language or next to a number. Everything else is folded whatever the language.
AMBIGUOUS_DATE_WORDS = frozenset(
    {
        "may", "march", "august", "jan", "mar", "sept", "set", "mai", "mag", "gen", "ago",
        "out", "dec", "dez", "ene", "mei", "juni", "juli", "april", "segunda", "quarta",
        "quinta", "sexta", "feira", "domingo", "sabato", "giu", "lug", "ott", "fev",
    }
)  # fmt: skip
MONTH_TOKEN = "<month>"
WEEKDAY_TOKEN = "<day>"


def date_words(language: str | None) -> dict[str, str]:
    """Token -> class token, for words folded without looking at their neighbours."""
    own = {language} if language in MONTHS else set(LANGUAGES)
    out: dict[str, str] = {}
    for lang in LANGUAGES:
        for word in MONTHS[lang]:
            if word not in AMBIGUOUS_DATE_WORDS or lang in own:
                out[word] = MONTH_TOKEN
        for word in WEEKDAYS[lang]:
            if word not in AMBIGUOUS_DATE_WORDS or lang in own:
                out[word] = WEEKDAY_TOKEN
    return out


def dated_words() -> dict[str, str]:
    """Every language's date words: folded next to a number ("10 mai", "May 3") anywhere."""
    out = {word: MONTH_TOKEN for names in MONTHS.values() for word in names}
    out.update({word: WEEKDAY_TOKEN for names in WEEKDAYS.values() for word in names})
    return out


# --- Rules -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    """A regex on folded text, tried only when one of its keywords occurs (speed): a word of
    the block, or a fragment of its text (phrases, symbols, word beginnings marked "*")."""

    name: str
    language: str
    words: frozenset[str] | None  # None (and no fragments): the rule is always tried
    fragments: tuple[str, ...]
    pattern: re.Pattern[str]

    def matches(self, folded: str, words: frozenset[str] | set[str] | None = None) -> bool:
        if self.words is None:  # an anchored label rule
            return self.pattern.match(folded) is not None
        if words is None:
            words = set(_KEYWORD_WORD.findall(folded))
        hit = not self.words.isdisjoint(words)
        if not hit and not any(map(folded.__contains__, self.fragments)):
            return False
        return self.pattern.search(folded) is not None


_KEYWORD_WORD = re.compile(r"\w\w+")


def _rule(name: str, language: str, keywords: str, pattern: str) -> Rule:
    words, fragments = set(), []
    for keyword in keywords.split("|"):
        if keyword.endswith("*"):
            fragments.append(keyword[:-1])
        elif _KEYWORD_WORD.fullmatch(keyword):
            words.add(keyword)
        else:
            fragments.append(keyword)
    return Rule(name, language, frozenset(words), tuple(fragments), re.compile(pattern))


PRIOR_RIGHTS = "rights"  # copyright and reproduction lines: tail and lead zones
PRIOR_PRINT = "print"  # print-edition lines: tail and lead zones
PRIOR_APPEAL = "appeal"  # reader-support and contact appeals: tail and lead zones
PRIOR_FOLLOW = "follow"  # follow-us lines: tail and lead zones
PRIOR_LICENSE = "license"  # Creative Commons and republication licences: tail and lead zones
PRIOR_CALL = "call_to_action"  # newsletter sign-ups, subscriptions, tip lines: anywhere
PRIOR_RELATED = "related"  # "Related: <headline>", "Lire aussi : <titre>": anywhere
PRIOR_CREDIT = "credit"  # "Photo: <name>/<agency>", "Foto: dpa": anywhere
# Kinds a story never phrases this way wherever they stand; the others only count in the
# lead (before the story starts) and the tail (after it ends).
ANYWHERE_PRIORS = frozenset({PRIOR_CALL, PRIOR_RELATED, PRIOR_CREDIT})

_PLATFORMS = (
    r"(?:facebook|twitter|x|instagram|tiktok|threads|linkedin|youtube|whatsapp|telegram|"
    r"bluesky|mastodon|snapchat|pinterest|google news|social media|den sozialen medien|"
    r"les réseaux sociaux|las redes sociales|os redes sociais|i social|sociale media)"
)
_FOLLOW_KEYS = "facebook|twitter|instagram|tiktok|threads|linkedin|youtube|whatsapp|telegram|"
_FOLLOW_KEYS += "bluesky|mastodon| x|snapchat|pinterest|google news|social|sozialen|réseaux|"
_FOLLOW_KEYS += "redes|sociale"

# Labels that open a templated "see also" line; the learner requires a label line (the label,
# a separator, then a headline-shaped slot), so "Read more about the plan online." is no match.
_RELATED_LABELS = {
    "en": r"related(?: coverage| stories| story| articles?| content| reading| video)?|"
    r"read more|read also|also read|see also|more on this(?: story| topic)?|further reading|"
    r"recommended(?: reading)?|you (?:may|might) also like|(?:more|also) (?:from|on) [\w' ]{1,40}",
    "de": r"lesen sie (?:auch|mehr)|mehr zum thema|auch interessant|siehe auch|zum thema|"
    r"das könnte sie auch interessieren|weitere artikel|passend zum thema|"
    r"(?:mehr|auch) (?:bei|von|auf) [\w' ]{1,40}",
    "fr": r"(?:à )?lire (?:aussi|également|la suite)|(?:à )?voir aussi|sur le même sujet|"
    r"en savoir plus|notre sélection|(?:plus|aussi) sur [\w' ]{1,40}",
    "es": r"lee también|lea también|leer más|te puede interesar|le puede interesar|"
    r"ver también|relacionad[oa]s?|más información|también te puede interesar|"
    r"(?:más|también) en [\w' ]{1,40}",
    "it": r"leggi anche|leggi ancora|potrebbe interessarti|vedi anche|approfondimenti|"
    r"correlati|per approfondire|ti potrebbe interessare|(?:altro |anche )?su [\w' ]{1,40}",
    "pt": r"leia (?:também|mais)|veja também|saiba mais|relacionad[oa]s?|"
    r"você também pode gostar|(?:pode|poderá) interessar|(?:mais|também) (?:em|no|na) [\w' ]{1,40}",
    "nl": r"lees (?:ook|meer)|zie ook|meer over(?: dit onderwerp)?|gerelateerd|ook interessant|"
    r"(?:meer|ook) (?:op|bij) [\w' ]{1,40}",
}
_CREDIT_LABELS = {
    "en": r"photos?|photograph|image|picture|credit|photo credit|illustration",
    "de": r"fotos?|bild(?:er)?|bildquelle|illustration",
    "fr": r"photos?|crédits? photo|crédits?|illustration|image",
    "es": r"fotos?|fotografía|imagen|créditos?|ilustración",
    "it": r"fotos?|fotografia|immagine|crediti|illustrazione",
    "pt": r"fotos?|fotografia|imagem|créditos?|ilustração",
    "nl": r"foto'?s?|beeld|illustratie",
}
_LABEL_END = r"\s*[:|\u00bb\u203a\u2014\u2013]"


def _label_rule(name: str, language: str, labels: str) -> Rule:
    """A label opening the block; anchored, so trying it costs next to nothing (no keywords)."""
    return Rule(name, language, None, (), re.compile(rf"\W*(?:{labels}){_LABEL_END}"))


_PRIOR_TABLE: tuple[tuple[str, str, str, str], ...] = (
    # (kind, language, keywords, pattern)
    (PRIOR_CALL, "en", "newsletter|newsletters|subscribe|tip|tips|subscriber|miss",
     r"\b(?:sign up|subscribe) (?:for|to)\b.{0,80}\bnewsletters?\b"
     r"|\bnewsletters?\b.{0,80}\b(?:sign up|subscribe) (?:here|now|today|for free|free)\b"
     r"|\bsubscribe (?:today|now|here)\b|\bhave a (?:news )?tip\b|\bbecome a subscriber\b"
     r"|\b(?:send|email) us your (?:news )?tips\b|\bnever miss a story\b"),
    (PRIOR_CALL, "de", "newsletter|abonn*|jetzt",
     r"\bnewsletter\b.{0,80}\b(?:abonnieren|bestellen|anmelden)\b"
     r"|\b(?:abonnieren|bestellen) sie\b.{0,60}\bnewsletter|\bunser(?:en)? newsletter\b"
     r"|\bjetzt (?:abonnieren|abo abschliessen|gratis testen|testen)\b|\bjetzt abonnent\b"),
    (PRIOR_CALL, "fr", "newsletter|abonnez|inscrivez|lettre d'information",
     r"\b(?:inscrivez-vous|abonnez-vous)\b|\bnotre (?:newsletter|lettre d'information)\b"),
    (PRIOR_CALL, "es", "suscr*|boletín|newsletter|apúntate",
     r"\bsuscríbe(?:te|se)\b|\bnuestro boletín\b|\bnuestra newsletter\b|\bhazte suscriptor\b"
     r"|\bapúntate\b.{0,40}\b(?:boletín|newsletter)"),
    (PRIOR_CALL, "it", "iscriviti|abbonati|newsletter",
     r"\biscriviti\b.{0,60}\b(?:newsletter|notiziario)|\babbonati (?:ora|subito|a|al)\b"
     r"|\bla nostra newsletter\b"),
    (PRIOR_CALL, "pt", "assin*|inscreva|subscreva|newsletter",
     r"\b(?:assine|inscreva-se|subscreva)\b.{0,60}\b(?:newsletter|boletim)"
     r"|\bassine (?:já|agora)\b|\bnossa newsletter\b|\btorne-se assinante\b"),
    (PRIOR_CALL, "nl", "nieuwsbrief|abonn*|schrijf",
     r"\bmeld je aan\b.{0,40}\bnieuwsbrief|\bschrijf je in\b.{0,40}\bnieuwsbrief"
     r"|\bneem een abonnement\b|\bonze nieuwsbrief\b|\babonneer je\b|\bword abonnee\b"),
    # A label naming the newsletter ("The Morning Briefing newsletter: ...", "Nieuwsbrief De
    # Ochtend: ..."), in any language (English rules apply to every article).
    (PRIOR_CALL, "en", "newsletter|nieuwsbrief|boletín|boletim|notiziario|lettre d'information",
     r"^\W*[^:|.!?]{0,40}\b(?:newsletter|nieuwsbrief|boletín|boletim|notiziario"
     r"|lettre d'information)\b[^:|.!?]{0,40}[:|]"),
    (PRIOR_RIGHTS, "en", "\u00a9|(c)|copyright|rights reserved|may not be",
     r"\u00a9|\(c\)\s*\d{4}|\bcopyright\s+(?:\u00a9\s*)?\d{4}|\ball rights reserved"
     r"|\bmay not be (?:re)?(?:published|produced|broadcast|rewritten|redistributed|copied)"),
    (PRIOR_RIGHTS, "de", "rechte|nachdruck|vervielfältigung",
     r"\balle rechte vorbehalten\b|\bnachdruck\b.{0,40}\bgenehmigung"
     r"|\bvervielfältigung\b.{0,60}\b(?:untersagt|verboten|nur mit)"),
    (PRIOR_RIGHTS, "fr", "droits réservés|reproduction",
     r"\btous droits réservés\b|\breproduction (?:strictement )?interdite"
     r"|\btoute reproduction\b.{0,60}\binterdite"),
    (PRIOR_RIGHTS, "es", "derechos reservados|reproducción",
     r"\btodos los derechos reservados\b|\bprohibida (?:su|la) reproducción"),
    (PRIOR_RIGHTS, "it", "diritti riservati|riproduzione",
     r"\btutti i diritti riservati\b|\briproduzione riservata\b|\bvietata la riproduzione"),
    (PRIOR_RIGHTS, "pt", "direitos reservados|reprodução",
     r"\btodos os direitos reservados\b|\bproibida a reprodução"),
    (PRIOR_RIGHTS, "nl", "rechten voorbehouden|niets uit deze",
     r"\balle rechten voorbehouden\b|\bniets uit deze (?:uitgave|publicatie) mag"),
    (PRIOR_PRINT, "en", "print",
     r"\bappear(?:s|ed)? in print\b|\bin the print edition\b"
     r"|\bversion of this (?:article|story) (?:appears|appeared)\b"),
    (PRIOR_PRINT, "de", "ausgabe*|zeitung*",
     r"\berschien(?:en)?\b.{0,40}\b(?:gedruckten |print-?)?ausgabe\b|\bprintausgabe\b"
     r"|\bgedruckten ausgabe\b|\baus der (?:gedruckten )?zeitung vom\b"),
    (PRIOR_PRINT, "fr", "édition|paru",
     r"\b(?:édition|version) (?:imprimée|papier)\b|\bparu dans (?:l'|notre )?édition\b"
     r"|\b(?:article )?paru dans\b.{0,60}\bdu \d{1,2}(?:er)? \w+ \d{4}"),
    (PRIOR_PRINT, "es", "edición", r"\bedición (?:impresa|de papel|en papel)\b"),
    (PRIOR_PRINT, "it", "edizione|giornale",
     r"\bedizione (?:cartacea|stampata)\b|\b(?:uscito|pubblicato) sul giornale del\b"),
    (PRIOR_PRINT, "pt", "edição|versão",
     r"\b(?:edição|versão) (?:impressa|em papel)\b"),
    (PRIOR_PRINT, "nl", "krant|editie",
     r"\b(?:papieren|gedrukte) (?:krant|editie)\b|\b(?:verscheen|stond)\b.{0,40}\bin de krant\b"),
    (PRIOR_APPEAL, "en", "inbox|corrections|journalism|tips",
     r"\bin your inbox\b|\b(?:send|email) (?:your )?(?:corrections|tips)\b"
     r"|\bsupport (?:our|independent|local) journalism\b|\bjournalism is supported by\b"),
    # A subscription offer: an offer and its price for the first month, in any of the languages.
    (PRIOR_APPEAL, "en", "first month|premier mois|primo mese|primer mes|primeiro mês|"
     "ersten monat|eerste maand",
     r"\b(?:offer|offre|offerta|oferta|angebot|aanbieding)\b.{0,60}\b(?:first month|premier mois"
     r"|primo mese|primer mes|primeiro mês|ersten monat|eerste maand)\b"),
    (PRIOR_APPEAL, "de", "journalismus|postfach",
     r"\bunterstützen sie (?:unseren|unabhängigen|den|guten) journalismus\b"
     r"|\bin ihr(?:em)? postfach\b"),
    (PRIOR_APPEAL, "fr", "journalisme|boîte mail|boîte de réception",
     r"\bsoutenez (?:notre|le|un) journalisme\b|\bdans votre boîte (?:mail|de réception)\b"),
    (PRIOR_APPEAL, "es", "periodismo|bandeja",
     r"\bapoya (?:nuestro|el) periodismo\b|\ben tu bandeja de entrada\b"),
    (PRIOR_APPEAL, "it", "giornalismo|casella",
     r"\bsostieni (?:il nostro|il) giornalismo\b|\bnella tua casella\b"),
    (PRIOR_APPEAL, "pt", "jornalismo|caixa de entrada",
     r"\bapoie (?:o nosso|nosso|o) jornalismo\b|\bna sua caixa de entrada\b"),
    (PRIOR_APPEAL, "nl", "journalistiek|mailbox|inbox",
     r"\bsteun (?:onze|onafhankelijke) journalistiek\b|\bin je (?:mailbox|inbox)\b"),
    (PRIOR_FOLLOW, "en", _FOLLOW_KEYS,
     rf"\b(?:follow|like|join) (?:us|@?[\w.]+(?: [\w.]+){{0,3}}) on {_PLATFORMS}"),
    (PRIOR_FOLLOW, "de", _FOLLOW_KEYS,
     rf"\bfolgen sie (?:uns|[\w.]+(?: [\w.]+){{0,3}}) (?:auf|bei|in) {_PLATFORMS}"),
    (PRIOR_FOLLOW, "fr", "suivez|retrouvez-nous",
     rf"\b(?:suivez-nous|retrouvez-nous|suivez [\w.]+(?: [\w.]+){{0,3}}) sur {_PLATFORMS}"),
    (PRIOR_FOLLOW, "es", "síguenos|sigue|síganos",
     rf"\bs[ií]g(?:uenos|anos)\b|\bsigue a [\w.]+(?: [\w.]+){{0,3}} en {_PLATFORMS}"),
    (PRIOR_FOLLOW, "it", "seguici|segui",
     rf"\bseguici\b|\bsegui [\w.]+(?: [\w.]+){{0,3}} su {_PLATFORMS}"),
    (PRIOR_FOLLOW, "pt", "siga-nos|siga",
     rf"\bsiga-nos\b|\bsiga [\w.]+(?: [\w.]+){{0,3}} n[oa] {_PLATFORMS}"),
    (PRIOR_FOLLOW, "nl", "volg",
     rf"\bvolg (?:ons|[\w.]+(?: [\w.]+){{0,3}}) (?:op|via) {_PLATFORMS}"),
    # "Creative Commons" is a name: the English rule covers every language.
    (PRIOR_LICENSE, "en", "creative|cc by|cc-by", r"\bcreative[ -]commons\b|\bcc[ -]by\b"),
)  # fmt: skip


def _prior_rules() -> tuple[Rule, ...]:
    rules = [_rule(*row) for row in _PRIOR_TABLE]
    for language in LANGUAGES:
        rules.append(_label_rule(PRIOR_RELATED, language, _RELATED_LABELS[language]))
        rules.append(_label_rule(PRIOR_CREDIT, language, _CREDIT_LABELS[language]))
    return tuple(rules)


PRIOR_RULES = _prior_rules()


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Merged rules and the union of their keywords: a block with none of them is only tried
    against the anchored label rules."""

    rules: tuple[Rule, ...]
    words: frozenset[str]
    fragments: tuple[str, ...]
    labels: tuple[Rule, ...]  # the anchored rules (no keywords)

    def first_match(self, folded: str, words: set[str]) -> str | None:
        if self.words.isdisjoint(words) and not any(map(folded.__contains__, self.fragments)):
            rules = self.labels
        else:
            rules = self.rules
        for rule in rules:
            if rule.matches(folded, words):
                return rule.name
        return None


def rule_set(rules: tuple[Rule, ...]) -> RuleSet:
    merged = merge_rules(rules)
    keyed = [r for r in merged if r.words is not None]
    return RuleSet(
        rules=merged,
        words=frozenset().union(*(r.words or () for r in keyed)),
        fragments=tuple(dict.fromkeys(f for r in keyed for f in r.fragments)),
        labels=tuple(r for r in merged if r.words is None),
    )


def merge_rules(rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    """One rule per kind, in the order the kinds first occur: its keywords the union of the
    keywords (always tried when one rule is), its pattern the alternation of the patterns."""
    kinds: dict[str, list[Rule]] = {}
    for rule in rules:
        kinds.setdefault(rule.name, []).append(rule)
    merged = []
    for name, group in kinds.items():
        words: frozenset[str] | None = None
        fragments: tuple[str, ...] = ()
        if all(r.words is not None for r in group):
            words = frozenset().union(*(r.words or () for r in group))
            fragments = tuple(dict.fromkeys(f for r in group for f in r.fragments))
        pattern = re.compile("|".join(f"(?:{r.pattern.pattern})" for r in group))
        merged.append(Rule(name, "", words, fragments, pattern))
    return tuple(merged)


# Two independent cues of a rights line, in any language: a copyright mark or "Copyright
# <year>", and a reservation ("all rights reserved", "tous droits réservés", "riproduzione
# riservata" ...). In the tail of an article such a line is a notice even after the cold start.
_COPYRIGHT_MARK = re.compile(r"\u00a9|\(c\)\s*\d{4}|\bcopyright\b")
_RESERVATION = re.compile(
    r"\brights reserved|\brechte vorbehalten|\bdroits (?:de reproduction )?réservés"
    r"|\bderechos reservados|\bdiritti riservati|\briproduzione riservata"
    r"|\bdireitos reservados|\brechten voorbehouden"
)


def is_strong_rights(folded: str) -> bool:
    return _COPYRIGHT_MARK.search(folded) is not None and _RESERVATION.search(folded) is not None


# --- Editorial notes: never removed ----------------------------------------------------------

_EDITORIAL_LABELS = (
    r"corrections?|corrected|clarifications?|editor'?s'? note|note from the editor|updates?|"
    r"updated|erratum|errata|"
    r"berichtigung|korrektur|richtigstellung|klarstellung|(?:anmerkung|hinweis) der redaktion|"
    r"aktualisierung|aktualisiert|nachtrag|"
    r"rectificatif|correctif|précisions?|note de la rédaction|mise à jour|mis à jour|"
    r"fe de (?:erratas|errores)|corrección|rectificación|aclaración|nota del editor|"
    r"nota de la redacción|actualización|actualizado|"
    r"rettifica|correzione|errata corrige|precisazione|nota della redazione|"
    r"nota dell'editore|aggiornamento|aggiornato|"
    r"correção|correcção|esclarecimento|retificação|rectificação|nota do editor|"
    r"nota da (?:redação|redacção)|atualização|actualização|atualizado|"
    r"rectificatie|correctie|verbetering|noot van de redactie|naschrift|bijgewerkt|aanvulling"
)
# The label, an optional "(date)" or "[time]", a separator, then the note itself.
EDITORIAL_LABEL = re.compile(
    rf"^[\W_]*(?:{_EDITORIAL_LABELS})(?:\s*[(\[][^)\]]{{0,40}}[)\]])?\s*[:.\u2014\u2013|-]\s*(.*)",
    re.DOTALL,
)
# The sentence that says the article was corrected, in any of the languages.
_EDITORIAL_SENTENCES = (
    r"\ban earlier version of this (?:article|story|report|post)\b"
    r"|\bthis (?:article|story) (?:has been|was) (?:updated|corrected|amended|changed)\b"
    r"|\beine (?:frühere|ältere|vorherige) (?:version|fassung) dieses (?:artikels|beitrags|textes)"
    r"|\bin einer (?:früheren|vorherigen) (?:version|fassung)\b"
    r"|\bdieser (?:artikel|beitrag|text) wurde (?:aktualisiert|korrigiert|berichtigt)\b"
    r"|\b(?:une|dans une) (?:version précédente|précédente version|version antérieure)\b"
    r"|\bcet article a été (?:corrigé|modifié|rectifié|mis à jour)\b"
    r"|\buna versión anterior de (?:este|esta)\b"
    r"|\beste (?:artículo|texto) (?:ha sido|fue) (?:corregido|actualizado|modificado)\b"
    r"|\buna (?:precedente versione|versione precedente) di questo\b"
    r"|\bquesto articolo è stato (?:corretto|aggiornato|modificato)\b"
    r"|\buma versão anterior (?:deste|desta)\b"
    r"|\beste (?:artigo|texto) foi (?:corrigido|atualizado|actualizado|alterado)\b"
    r"|\been (?:eerdere|vorige) versie van dit (?:artikel|bericht|stuk)\b"
    r"|\bdit (?:artikel|bericht) is (?:aangepast|gecorrigeerd|bijgewerkt)\b"
)
EDITORIAL_SENTENCE = _rule(
    "editorial",
    "",
    "version|versión|versão|versie|fassung|updated|corrected|amended|changed|wurde|été|sido|"
    "fue|stato|foi|is aangepast|gecorrigeerd|bijgewerkt",
    _EDITORIAL_SENTENCES,
)

# --- Attribution: part of the story ----------------------------------------------------------

ATTRIBUTION_RULES = (
    _rule(
        "attribution",
        "",
        "originally|first|contributed| by|material von|zuerst|ursprünglich|initialement|"
        "origine|d'abord|originalmente|inicialmente|información de|originariamente|collaborato|"
        "informações|colaborou|oorspronkelijk|eerder|medewerking|avec|informazioni",
        r"\b(?:originally|first) (?:published|appeared)\b"
        r"|\bcontributed (?:reporting|to this (?:report|story|article))\b"
        r"|\b(?:reporting|writing|editing) by\b"
        r"|\bmit material (?:von|der|des)\b|\b(?:erschien|erschienen) zuerst\b"
        r"|\bursprünglich (?:erschienen|veröffentlicht)\b"
        r"|\b(?:publié|paru) (?:initialement|à l'origine|d'abord)\b"
        r"|\binitialement (?:publié|paru)\b"
        r"|\ba d'abord été publié\b"
        r"|\bpublicad[oa] originalmente\b|\boriginalmente publicad[oa]\b"
        r"|\bcon información de\b|\bpubblicato originariamente\b|\bha collaborato\b"
        r"|^\W*avec (?:l')?(?:afp|reuters|ap|ats|belga)\b|\bcon informazioni d[ai]\b"
        r"|\bcom informações d[aeo]s?\b|\bcolaborou\b"
        r"|\boorspronkelijk (?:verschenen|gepubliceerd)\b|\bverscheen eerder (?:bij|in|op)\b"
        r"|\bmet medewerking van\b",
    ),
)

# Bylines: the short lead lines that name the author ("By Ana Ruiz", "Von Max Muster").
BYLINE = re.compile(r"^\W*(?:by|von|par|por|di|de|da|door)\s+\w")
