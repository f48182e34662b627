"""Multilingual publisher sites with labelled in-body notices and traps (the notice benchmark).

`build_publishers(seed)` makes two publishers per language (English, German, French, Spanish,
Italian, Portuguese, Dutch), each with a run of articles in publication order; `render(article)`
gives the page a crawler would fetch. Every block of an article carries a label: `STORY` for the
article's own text, a notice class (what a publisher writes inside the article container:
copyright lines, dated print-edition lines, "Related: <headline>" and photo-credit lines,
newsletter promos in several wordings, follow-us, subscription and licence lines) or a trap
class (text that looks like boilerplate but is the story's: corrections and other editorial
notes, a column's templated intro that goes on with the article's own sentence, attribution
lines, a quote shared by two stories, tables, short paragraphs that open with "Read", "Photo"
...). Each publisher has its own wordings and places, several per notice family, dates in its
language, and changes a wording after its first twenty articles, as publishers do.

Deterministic (one seed), stdlib only; imports nothing outside crawler/newsroom.
"""

from __future__ import annotations

import html
import json
import random
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from crawler.newsroom.model import BASE_DATE
from newsharvest_bench.polyglot import LANGUAGES, Polyglot

STORY = "story"
# Notice classes
RIGHTS = "rights"
PRINT_DATED = "print_dated"
RELATED = "related_line"
CREDIT = "photo_credit"
FAMILY = "variant_family"
FOLLOW = "follow_us"
SUBSCRIBE = "subscription"
LICENSE = "license"
NOTICE_CLASSES = (RIGHTS, PRINT_DATED, RELATED, CREDIT, FAMILY, FOLLOW, SUBSCRIBE, LICENSE)
# Traps: the story's own text
EDITORIAL = "editorial_note"
COLUMN = "column_intro"
ATTRIBUTION = "attribution"
SHARED_QUOTE = "shared_quote"
TABLE = "table"
COMMON_START = "common_start"
FOREIGN_QUOTE = "foreign_quote"  # a story sentence quoting another language's follow-us line
TRAP_CLASSES = (EDITORIAL, COLUMN, ATTRIBUTION, SHARED_QUOTE, TABLE, COMMON_START, FOREIGN_QUOTE)

PUBLISHERS_PER_LANGUAGE = 2
DEFAULT_ARTICLES = 40
HOURS_BETWEEN_ARTICLES = (2.0, 16.0)
STORY_PARAGRAPHS = (4, 10)
NEW_WORDING_FROM = 24  # a publisher changes a notice's wording after its cold start
# Shares of articles carrying each trap (every publisher has every trap).
EDITORIAL_SHARE = 0.15
COLUMN_SHARE = 0.2
ATTRIBUTION_SHARE = 0.15
SHARED_QUOTE_PAIRS = 2
TABLE_SHARE = 0.1
COMMON_START_SHARE = 0.25
CAPTION_SHARE = 0.4
# Variants of a notice type a publisher already repeats, from its VARIANTS_FROM-th article on
# (after its first wordings established the type): a follow-us line in a neighbouring language
# in place of its own, a second newsletter promo beside its own (in the neighbouring language
# or another newsletter of its own). Drawn from a generator of their own, so the rest of the
# corpus is what it was without them.
VARIANTS_FROM = 8
FOREIGN_FOLLOW_SHARE = 0.3
SECOND_PROMO_SHARE = 0.3
FOREIGN_QUOTE_SHARE = 0.1
# The other language of the lexicon a publisher's page sometimes carries (Canada, Belgium,
# South Tyrol, the Iberian border).
NEIGHBOUR = {"en": "fr", "de": "fr", "fr": "nl", "es": "pt", "it": "de", "pt": "es", "nl": "fr"}
# A story sentence that quotes a neighbouring language's follow-us line (mid-article: a trap).
QUOTED_PHRASE = {
    "en": 'Posters reading "{phrase}" appeared across {place} overnight, {person} said.',
    "de": "Plakate mit der Aufschrift \u201e{phrase}\u201c hingen über Nacht in ganz {place}, "
    "sagte {person}.",
    "fr": "Des affiches \u00ab {phrase} \u00bb sont apparues cette nuit dans tout {place}, selon "
    "{person}.",
    "es": "Carteles con el lema \u00ab{phrase}\u00bb aparecieron por todo {place} durante la "
    "noche, dijo {person}.",
    "it": "Manifesti con la scritta \u00ab{phrase}\u00bb sono comparsi in tutta {place} nella "
    "notte, ha detto {person}.",
    "pt": "Cartazes com a frase \u00ab{phrase}\u00bb apareceram por toda {place} durante a "
    "noite, disse {person}.",
    "nl": 'Affiches met de tekst "{phrase}" verschenen vannacht overal in {place}, zei {person}.',
}
AGENCIES = ("Reuters", "AFP", "AP", "dpa", "EFE", "ANSA", "Lusa", "ANP", "Getty Images", "imago")


@dataclass(frozen=True)
class Labelled:
    kind: str  # paragraph | quote | caption | table | heading
    text: str
    label: str  # STORY, a notice class or a trap class
    new_wording: bool = False  # a notice wording the publisher started using late


@dataclass
class PublisherArticle:
    url: str
    domain: str
    site: str
    language: str
    title: str
    published: datetime
    author: str
    blocks: list[Labelled] = field(default_factory=list)

    @property
    def notices(self) -> list[Labelled]:
        return [b for b in self.blocks if b.label in NOTICE_CLASSES]


# --- What each language's publishers write ----------------------------------------------------


@dataclass(frozen=True)
class NoticeWords:
    """One language's notice and trap wordings ({site}, {year}, {date}, {name}, ... filled in)."""

    rights: tuple[str, ...]
    rights_late: str  # the wording used from NEW_WORDING_FROM on
    print_lines: tuple[str, ...]
    related_labels: tuple[str, ...]
    credit: tuple[str, ...]
    newsletter: tuple[str, ...]  # newsletter names
    family_shared_end: str  # the CTA every promo of a suffix family ends with
    family_leads: tuple[str, ...]  # the varying first sentences (the last one comes late)
    family_shared_start: str  # the opening every promo of a prefix family starts with
    family_tails: tuple[str, ...]
    follow: tuple[str, ...]
    subscribe: tuple[str, ...]
    license: tuple[str, ...]
    editorial: tuple[str, ...]  # {clause}: the article's own words
    column_names: tuple[str, ...]
    column_intro: tuple[str, ...]  # {column}, {clause}
    attribution: tuple[str, ...]
    common_start: tuple[str, ...]  # {num}, {month}, {person}
    table_header: tuple[str, ...]
    by: str


WORDS: dict[str, NoticeWords] = {
    "en": NoticeWords(
        rights=("\u00a9 {year} {publisher}. All rights reserved.",
                "Copyright {year} {publisher}. This material may not be published, broadcast, "
                "rewritten or redistributed."),
        rights_late="\u00a9 {year} {publisher} | All rights reserved | Terms of use apply.",
        print_lines=("This article appeared in the print edition of {date}.",
                     "A version of this article appears in print on {date}, Section {section}, "
                     "Page {page} of {site} with the headline: {headline}."),
        related_labels=("Related:", "Read more:", "Also on {site}:"),
        credit=("Photo: {person}/{agency}", "Photo: {agency}", "Image: {person} for {site}"),
        newsletter=("The Morning Briefing", "First Edition", "The Daily Catch-Up"),
        family_shared_end="Sign up for {name}, our free daily newsletter.",
        family_leads=("Want more stories like this?", "Start your day informed.",
                      "The news you need before breakfast.", "Don't miss tomorrow's top stories.",
                      "Five minutes, every weekday morning.", "Busy day ahead?"),
        family_shared_start="{name} newsletter:",
        family_tails=("the five stories you need to know, every weekday at 7 a.m.",
                      "our editors' picks, delivered before breakfast",
                      "everything that matters in {place}, in one email",
                      "the day's news, explained in five minutes",
                      "a smarter start to your morning, free",
                      "local news you will not find anywhere else"),
        follow=("Follow {site} on Facebook, Instagram and X for the latest news.",
                "Follow us on WhatsApp for breaking news alerts."),
        subscribe=("Subscribe now for unlimited access to {site} journalism.",
                   "Become a subscriber: unlimited articles, the e-paper and puzzles."),
        license=("This article is republished under a Creative Commons license (CC BY-ND 4.0).",),
        editorial=("Correction: An earlier version of this article misstated {clause}.",
                   "Clarification: This article has been updated to make clear that {clause}.",
                   "Editor's note: {clause}.",
                   "Update: Since this article was published, {clause}.",
                   "Correction: An earlier version of this story incorrectly said that {clause}."),
        column_names=("Money Matters", "Ask the Doctor", "On the Bench"),
        column_intro=("In this week's {column} column, our correspondent reports that {clause}.",
                      "Welcome to {column}, the weekly column in which we look at why {clause}."),
        attribution=("This story was originally published by {partner}.",
                     "{person} contributed reporting.",
                     "Reporting by {person}; Editing by {person2}"),
        common_start=("Read together, the reports from {place} and {place2} paint a bleak picture.",
                      "Photo radar units will be installed in {place} from {month}, {person} said.",
                      "Related costs in {place} rose by {num} percent, {person} found.",
                      "Follow-up inspections in {place} are planned for {month}, said {person}.",
                      "Subscribers in {place} pay {num} dollars a month, {person} noted."),
        table_header=("Year", "Votes", "Share"),
        by="By",
    ),
    "de": NoticeWords(
        rights=("\u00a9 {year} {publisher}. Alle Rechte vorbehalten.",
                "Copyright \u00a9 {year} {publisher} \u2013 Alle Rechte vorbehalten. "
                "Vervielfältigung nur mit Genehmigung."),
        rights_late="\u00a9 {publisher} {year} \u2013 Alle Rechte vorbehalten | Nachdruck "
                    "nur mit Genehmigung der Redaktion.",
        print_lines=("Dieser Artikel erschien in der gedruckten Ausgabe vom {date}.",
                     "Erschienen in der Printausgabe vom {date}, Seite {page}.",
                     "Aus der Zeitung vom {date}"),
        related_labels=("Lesen Sie auch:", "Mehr zum Thema:", "Auch bei {site}:"),
        credit=("Foto: {agency}/{person}", "Foto: {person}", "Bild: {agency}"),
        newsletter=("Der Morgen", "Das Update", "Der Tag kompakt"),
        family_shared_end="Abonnieren Sie jetzt unseren Newsletter {name}.",
        family_leads=("Keine Nachricht mehr verpassen?", "Gut informiert in den Tag.",
                      "Das Wichtigste aus der Region, jeden Morgen.",
                      "Sie wollen mehr Geschichten wie diese?", "Fünf Minuten, die sich lohnen.",
                      "Neu: jetzt auch am Wochenende."),
        family_shared_start="Newsletter {name}:",
        family_tails=("die wichtigsten Nachrichten des Tages, jeden Morgen um 6 Uhr",
                      "unsere Empfehlungen für den Feierabend",
                      "alles, was in {place} wichtig ist, in einer E-Mail",
                      "der Tag in fünf Minuten erklärt", "kostenlos und jederzeit kündbar",
                      "Lokales, das Sie nirgendwo sonst finden"),
        follow=("Folgen Sie uns auf Instagram, Facebook und WhatsApp.",
                "Folgen Sie {site} auf Facebook und X."),
        subscribe=("Jetzt abonnieren und alle Artikel von {site} lesen.",
                   "Sie wollen weiterlesen? Jetzt gratis testen: vier Wochen für 0 Euro."),
        license=("Dieser Text steht unter der Lizenz Creative Commons BY 4.0.",),
        editorial=("Berichtigung: In einer früheren Version dieses Artikels hieß es, {clause}.",
                   "Korrektur: {clause}. Wir haben den Fehler korrigiert.",
                   "Anmerkung der Redaktion: {clause}.",
                   "Aktualisierung: Nach Erscheinen dieses Artikels wurde bekannt, dass "
                   "{clause}."),
        column_names=("Geld und Recht", "Die Woche in {place}"),
        column_intro=("In unserer Kolumne {column} geht es diesmal um diese Nachricht: {clause}.",),
        attribution=("Mit Material von dpa und Reuters.",
                     "Dieser Artikel erschien zuerst bei {partner}."),
        common_start=("Mehr als {num} Menschen aus {place} kamen zu der Versammlung mit {person}.",
                      "Lesen konnten die Ratsmitglieder in {place} den Bericht erst am Vorabend.",
                      "Foto- und Filmaufnahmen hatte {person} im Saal in {place} untersagt.",
                      "Auch interessant ist der Blick auf die Zahlen aus {place} und {place2}."),
        table_header=("Jahr", "Stimmen", "Anteil"),
        by="Von",
    ),
    "fr": NoticeWords(
        rights=("\u00a9 {publisher} {year}. Tous droits réservés.",
                "Tous droits de reproduction réservés \u2013 \u00a9 {year} {publisher}"),
        rights_late="\u00a9 {year} {publisher}. Tous droits réservés. Reproduction interdite "
                    "sans autorisation.",
        print_lines=("Cet article a été publié dans l'édition imprimée du {date}.",
                     "Paru dans l'édition du {date} du journal.",
                     "Article paru dans {site} du {date}"),
        related_labels=("Lire aussi :", "À lire aussi :", "Sur le même sujet :"),
        credit=("Photo : {person} / {agency}", "Crédit photo : {agency}", "Photo : {agency}"),
        newsletter=("Le Brief du matin", "L'Essentiel", "La Lettre du soir"),
        family_shared_end="Inscrivez-vous à notre newsletter {name}.",
        family_leads=("Ne manquez plus aucune info.", "Commencez la journée bien informé.",
                      "Toute l'actualité de votre région, chaque matin.",
                      "Vous aimez nos articles ?", "Cinq minutes pour tout savoir.",
                      "Nouveau : aussi le week-end."),
        family_shared_start="Newsletter {name} :",
        family_tails=("les cinq infos à connaître, chaque matin à 7 heures",
                      "la sélection de la rédaction, avant le petit-déjeuner",
                      "tout ce qui compte à {place}, dans un seul e-mail",
                      "l'actualité du jour expliquée en cinq minutes",
                      "gratuite et sans engagement", "l'info locale que vous ne lirez nulle part"),
        follow=("Suivez-nous sur Facebook, Instagram et X.",
                "Retrouvez-nous sur WhatsApp pour ne rien manquer."),
        subscribe=("Abonnez-vous pour lire tous les articles de {site}.",
                   "Offre spéciale : 1 euro le premier mois, sans engagement."),
        license=("Cet article est publié sous licence Creative Commons BY-ND 4.0.",),
        editorial=("Rectificatif : une version précédente de cet article indiquait que {clause}.",
                   "Précision : {clause}.", "Note de la rédaction : {clause}.",
                   "Mise à jour : depuis la publication de cet article, {clause}."),
        column_names=("Le Décryptage", "Question d'argent"),
        column_intro=("Dans notre chronique {column} de la semaine, nous expliquons pourquoi "
                      "{clause}.",),
        attribution=("Avec AFP.", "Cet article a d'abord été publié par {partner}."),
        common_start=("Plus de {num} habitants de {place} sont venus écouter {person}.",
                      "Lire le rapport sur {place} prend plusieurs heures, reconnaît {person}.",
                      "Photographier le conseil de {place} reste interdit, rappelle {person}.",
                      "Voir le chantier de {place} avancer rassure {person} depuis {month}."),
        table_header=("Année", "Voix", "Part"),
        by="Par",
    ),
    "es": NoticeWords(
        rights=("\u00a9 {year} {publisher}. Todos los derechos reservados.",
                "Copyright \u00a9 {publisher} {year}. Queda prohibida la reproducción total o "
                "parcial."),
        rights_late="\u00a9 {publisher} {year} | Todos los derechos reservados | Prohibida su "
                    "reproducción.",
        print_lines=("Este artículo se publicó en la edición impresa del {date}.",
                     "Publicado en la edición de papel del {date}, página {page}."),
        related_labels=("Lee también:", "Te puede interesar:", "Más en {site}:"),
        credit=("Foto: {person} ({agency})", "Foto: {agency}", "Imagen: {person}"),
        newsletter=("El Despertador", "La Mañana", "Lo Esencial"),
        family_shared_end="Suscríbete gratis a nuestro boletín {name}.",
        family_leads=("¿No quieres perderte nada?", "Empieza el día bien informado.",
                      "Toda la actualidad de tu ciudad, cada mañana.",
                      "¿Te ha gustado este artículo?", "Cinco minutos que valen la pena.",
                      "Novedad: ahora también los fines de semana."),
        family_shared_start="Boletín {name}:",
        family_tails=("las cinco noticias del día, cada mañana a las 7",
                      "la selección de la redacción antes del desayuno",
                      "todo lo que importa en {place}, en un solo correo",
                      "la actualidad explicada en cinco minutos", "gratis y sin compromiso",
                      "información local que no encontrarás en otro sitio"),
        follow=("Síguenos en Facebook, X e Instagram.",
                "Sigue a {site} en WhatsApp y recibe las últimas noticias."),
        subscribe=("Suscríbete para seguir leyendo todas nuestras noticias.",
                   "Hazte suscriptor: acceso ilimitado a {site} por 1 euro al mes."),
        license=("Este artículo se publica bajo una licencia Creative Commons BY-SA 4.0.",),
        editorial=("Fe de erratas: una versión anterior de este artículo afirmaba que {clause}.",
                   "Aclaración: {clause}.", "Nota del editor: {clause}.",
                   "Actualización: tras la publicación de esta noticia, {clause}."),
        column_names=("La Lupa", "Dinero y Derechos"),
        column_intro=("En nuestra columna {column} de esta semana explicamos por qué {clause}.",),
        attribution=("Con información de EFE y Europa Press.",
                     "Publicado originalmente en {partner}."),
        common_start=("Más de {num} vecinos de {place} acudieron a escuchar a {person}.",
                      "Leer el informe sobre {place} lleva horas, admite {person}.",
                      "Fotografiar el pleno de {place} sigue prohibido, recuerda {person}.",
                      "Ver avanzar las obras de {place} tranquiliza a {person} desde {month}."),
        table_header=("Año", "Votos", "Porcentaje"),
        by="Por",
    ),
    "it": NoticeWords(
        rights=("\u00a9 Riproduzione riservata",
                "Copyright \u00a9 {year} {publisher} \u2013 Tutti i diritti riservati."),
        rights_late="\u00a9 {year} {publisher}. Tutti i diritti riservati. Vietata la "
                    "riproduzione anche parziale.",
        print_lines=("Questo articolo è stato pubblicato nell'edizione cartacea del {date}.",
                     "Articolo uscito sul giornale del {date}, pagina {page}."),
        related_labels=("Leggi anche:", "Potrebbe interessarti:", "Su {site}:"),
        credit=("Foto: {agency}", "Foto: {person}/{agency}", "Immagine: {agency}"),
        newsletter=("Il Buongiorno", "La Giornata", "Prima Pagina"),
        family_shared_end="Iscriviti alla newsletter {name}.",
        family_leads=("Non vuoi perdere nessuna notizia?", "Inizia la giornata informato.",
                      "Le notizie della tua città, ogni mattina.",
                      "Ti è piaciuto questo articolo?", "Cinque minuti che valgono la pena.",
                      "Novità: anche nel fine settimana."),
        family_shared_start="Newsletter {name}:",
        family_tails=("le cinque notizie del giorno, ogni mattina alle 7",
                      "la selezione della redazione prima di colazione",
                      "tutto quello che conta a {place}, in una sola email",
                      "l'attualità spiegata in cinque minuti", "gratuita e senza impegno",
                      "notizie locali che non troverai altrove"),
        follow=("Seguici su Facebook, Instagram e X.",
                "Segui {site} su WhatsApp per le ultime notizie."),
        subscribe=("Abbonati ora per leggere tutti gli articoli di {site}.",
                   "Offerta speciale: il primo mese a 1 euro, disdici quando vuoi."),
        license=("Questo articolo è pubblicato con licenza Creative Commons BY-NC 4.0.",),
        editorial=("Rettifica: in una precedente versione di questo articolo si affermava che "
                   "{clause}.", "Precisazione: {clause}.", "Nota della redazione: {clause}.",
                   "Aggiornamento: dopo la pubblicazione di questo articolo, {clause}."),
        column_names=("Il Punto", "Soldi e Diritti"),
        column_intro=("Nella rubrica {column} di questa settimana spieghiamo perché {clause}.",),
        attribution=("Con informazioni di ANSA.", "Pubblicato originariamente su {partner}."),
        common_start=("Più di {num} residenti di {place} sono venuti ad ascoltare {person}.",
                      "Leggere la relazione su {place} richiede ore, ammette {person}.",
                      "Fotografare l'aula di {place} resta vietato, ricorda {person}.",
                      "Vedere il cantiere di {place} avanzare rassicura {person} da {month}."),
        table_header=("Anno", "Voti", "Quota"),
        by="Di",
    ),
    "pt": NoticeWords(
        rights=("\u00a9 {year} {publisher}. Todos os direitos reservados.",
                "Copyright \u00a9 {publisher} {year}. Proibida a reprodução sem autorização."),
        rights_late="\u00a9 {publisher} {year} | Todos os direitos reservados | Proibida a "
                    "reprodução.",
        print_lines=("Este artigo foi publicado na edição impressa de {date}.",
                     "Publicado na edição em papel de {date}, página {page}."),
        related_labels=("Leia também:", "Veja também:", "Mais em {site}:"),
        credit=("Foto: {person}/{agency}", "Foto: {agency}", "Imagem: {person}"),
        newsletter=("O Essencial", "Bom Dia", "A Manhã"),
        family_shared_end="Subscreva a nossa newsletter {name}.",
        family_leads=("Não quer perder nenhuma notícia?", "Comece o dia bem informado.",
                      "Toda a atualidade da sua cidade, todas as manhãs.",
                      "Gostou deste artigo?", "Cinco minutos que valem a pena.",
                      "Novidade: agora também ao fim de semana."),
        family_shared_start="Newsletter {name}:",
        family_tails=("as cinco notícias do dia, todas as manhãs às 7",
                      "a seleção da redação antes do pequeno-almoço",
                      "tudo o que importa em {place}, num só email",
                      "a atualidade explicada em cinco minutos", "grátis e sem compromisso",
                      "notícias locais que não encontra em mais lado nenhum"),
        follow=("Siga-nos no Facebook, no Instagram e no X.",
                "Siga {site} no WhatsApp e receba as últimas notícias."),
        subscribe=("Assine já e leia todos os artigos de {site}.",
                   "Torne-se assinante: acesso ilimitado por 1 euro no primeiro mês."),
        license=("Este artigo é publicado sob uma licença Creative Commons BY 4.0.",),
        editorial=("Correção: uma versão anterior deste artigo referia que {clause}.",
                   "Esclarecimento: {clause}.", "Nota do editor: {clause}.",
                   "Atualização: depois da publicação deste artigo, {clause}."),
        column_names=("Contas à Vida", "O Ponto"),
        column_intro=("Na coluna {column} desta semana explicamos porque {clause}.",),
        attribution=("Com informações da Lusa.", "Publicado originalmente em {partner}."),
        common_start=("Mais de {num} moradores de {place} vieram ouvir {person}.",
                      "Ler o relatório sobre {place} demora horas, admite {person}.",
                      "Fotografar a assembleia de {place} continua proibido, lembra {person}.",
                      "Ver a obra de {place} avançar tranquiliza {person} desde {month}."),
        table_header=("Ano", "Votos", "Percentagem"),
        by="Por",
    ),
    "nl": NoticeWords(
        rights=("\u00a9 {year} {publisher}. Alle rechten voorbehouden.",
                "Copyright \u00a9 {publisher} {year}. Niets uit deze uitgave mag worden "
                "verveelvoudigd zonder toestemming."),
        rights_late="\u00a9 {publisher} {year} | Alle rechten voorbehouden | Overname alleen "
                    "met toestemming.",
        print_lines=("Dit artikel verscheen in de papieren krant van {date}.",
                     "Dit artikel stond op {date} in de krant, pagina {page}."),
        related_labels=("Lees ook:", "Meer over dit onderwerp:", "Ook op {site}:"),
        credit=("Foto: {agency} / {person}", "Foto: {agency}", "Beeld: {person}"),
        newsletter=("De Ochtend", "Het Dagelijks Nieuws", "De Avond"),
        family_shared_end="Meld je aan voor onze nieuwsbrief {name}.",
        family_leads=("Geen nieuws meer missen?", "Begin de dag goed geïnformeerd.",
                      "Het nieuws uit je regio, elke ochtend.",
                      "Vond je dit artikel interessant?", "Vijf minuten die het waard zijn.",
                      "Nieuw: nu ook in het weekend."),
        family_shared_start="Nieuwsbrief {name}:",
        family_tails=("de vijf belangrijkste berichten, elke ochtend om 7 uur",
                      "de keuze van de redactie, voor het ontbijt",
                      "alles wat telt in {place}, in één e-mail",
                      "het nieuws van de dag in vijf minuten uitgelegd",
                      "gratis en altijd opzegbaar", "lokaal nieuws dat je nergens anders leest"),
        follow=("Volg ons op Facebook, Instagram en X.",
                "Volg {site} via WhatsApp voor het laatste nieuws."),
        subscribe=("Neem een abonnement en lees alle artikelen van {site}.",
                   "Word abonnee: onbeperkt lezen voor 1 euro de eerste maand."),
        license=("Dit artikel wordt gepubliceerd onder een Creative Commons-licentie "
                 "(CC BY 4.0).",),
        editorial=("Rectificatie: in een eerdere versie van dit artikel stond dat {clause}.",
                   "Correctie: {clause}.", "Noot van de redactie: {clause}.",
                   "Update: na publicatie van dit artikel werd bekend dat {clause}."),
        column_names=("Geldzaken", "De Week"),
        column_intro=("In onze rubriek {column} leggen we deze week uit waarom {clause}.",),
        attribution=("Met medewerking van ANP.", "Dit artikel verscheen eerder bij {partner}."),
        common_start=("Meer dan {num} inwoners van {place} kwamen luisteren naar {person}.",
                      "Lezen kost tijd: het rapport over {place} is lang, zegt {person}.",
                      "Foto's maken in de raadszaal van {place} blijft verboden, zegt {person}.",
                      "Zien dat de bouw in {place} vordert, stelt {person} sinds {month} gerust."),
        table_header=("Jaar", "Stemmen", "Aandeel"),
        by="Door",
    ),
}  # fmt: skip

SITE_NAMES = {
    "en": (("The Harbour Courier", "Harbour Courier Media Ltd"),
           ("Midland Evening Post", "Midland Post Group")),
    "de": (("Nordstädter Rundschau", "Rundschau Verlag GmbH"),
           ("Allgemeine Zeitung am Main", "AZ Mediengruppe")),
    "fr": (("Le Courrier de l'Ouest", "Éditions du Courrier"),
           ("La Voix du Rhône", "Groupe La Voix")),
    "es": (("Diario del Levante", "Ediciones del Levante S.L."),
           ("La Gaceta del Norte", "Grupo Gaceta")),
    "it": (("Il Corriere della Pianura", "Editoriale Pianura S.p.A."),
           ("La Gazzetta del Lago", "Gruppo Gazzetta")),
    "pt": (("Jornal do Litoral", "Litoral Media S.A."), ("Diário da Serra", "Grupo Serra")),
    "nl": (("Het Noorder Dagblad", "Noorder Media B.V."), ("De Rivierbode", "Rivierbode Groep")),
}  # fmt: skip


# --- A publisher's habits ----------------------------------------------------------------------


@dataclass(frozen=True)
class Habits:
    """Which notices a publisher writes, where, and how often (the share of its articles)."""

    rights: bool  # a rights line ends every article (else a licence line)
    print_share: float
    related_share: float
    related_mid: bool  # "Related:" lines inside the story rather than after it
    credit_share: float
    family_suffix: bool  # the promo family shares its ending (else its opening)
    family_mid: bool  # the promo sits after the second or third paragraph
    follow: bool  # a follow-us line after the rights line
    subscribe_share: float


HABITS = (
    Habits(True, 0.7, 0.5, False, 0.4, True, True, True, 0.0),
    Habits(False, 0.0, 0.4, True, 0.0, False, False, False, 0.6),
)


@dataclass
class Publisher:
    domain: str
    index: int  # the publisher's number within its language: picks its wordings
    name: str
    publisher: str
    language: str
    habits: Habits
    rng: random.Random
    writer: Polyglot
    words: NoticeWords
    variants: random.Random  # draws the late variants (VARIANTS_FROM), apart from `rng`
    newsletter: str = ""
    column: str = ""
    headlines: list[str] = field(default_factory=list)

    def fill(self, template: str, when: datetime, **extra: str) -> str:
        values = {
            "site": self.name,
            "publisher": self.publisher,
            "year": str(when.year),
            "name": self.newsletter,
            "place": self.writer.place(),
            "place2": self.writer.place(),
            "person": self.writer.person(),
            "person2": self.writer.person(),
            "agency": self.rng.choice(AGENCIES),
            "column": self.column,
            "partner": f"{self.rng.choice(('the ', ''))}{self.writer.place()} Post",
            "num": str(self.rng.randint(3, 900)),
            "month": self.writer.month_name(self.rng.randint(1, 12)),
        }
        values.update(extra)
        return template.format(**values)


def build_publishers(
    seed: int = 1, articles_per_site: int = DEFAULT_ARTICLES
) -> list[PublisherArticle]:
    """Every publisher's articles, each publisher's in publication order."""
    out: list[PublisherArticle] = []
    for language in LANGUAGES:
        for index in range(PUBLISHERS_PER_LANGUAGE):
            site, legal = SITE_NAMES[language][index]
            rng = random.Random(f"{seed}|publishers|{language}|{index}")
            words = WORDS[language]
            publisher = Publisher(
                domain=f"{language}-{index + 1}.publisher.test",
                index=index,
                name=site,
                publisher=legal,
                language=language,
                habits=HABITS[index % len(HABITS)],
                rng=rng,
                writer=Polyglot(language, f"{seed}|{language}|{index}"),
                words=words,
                variants=random.Random(f"{seed}|variants|{language}|{index}"),
            )
            publisher.newsletter = rng.choice(words.newsletter)
            publisher.column = rng.choice(words.column_names).format(place=publisher.writer.place())
            out += _articles(publisher, articles_per_site)
    _share_quotes(out, random.Random(f"{seed}|publishers|quotes"))
    return out


def _articles(publisher: Publisher, count: int) -> list[PublisherArticle]:
    rng = publisher.rng
    when = BASE_DATE - timedelta(hours=sum(HOURS_BETWEEN_ARTICLES) / 2 * count)
    articles = []
    for ordinal in range(count):
        when += timedelta(hours=rng.uniform(*HOURS_BETWEEN_ARTICLES))
        title = publisher.writer.headline()
        publisher.headlines.append(title)
        slug = "-".join(w for w in title.lower().split()[:6] if w.isalnum()) or "story"
        article = PublisherArticle(
            url=f"http://{publisher.domain}/{when:%Y/%m/%d}/{slug}-{ordinal + 1}",
            domain=publisher.domain,
            site=publisher.name,
            language=publisher.language,
            title=title,
            published=when.replace(microsecond=0),
            author=publisher.writer.person(),
        )
        article.blocks = _compose(publisher, article, ordinal)
        articles.append(article)
    return articles


# --- One article's blocks ----------------------------------------------------------------------


def _compose(publisher: Publisher, article: PublisherArticle, ordinal: int) -> list[Labelled]:
    rng, words, writer = publisher.rng, publisher.words, publisher.writer
    story = [Labelled("paragraph", p, STORY) for p in writer.story(rng.randint(*STORY_PARAGRAPHS))]
    if rng.random() < COLUMN_SHARE:
        template = rng.choice(words.column_intro)
        intro = publisher.fill(template, article.published, clause=writer.clause())
        story.insert(0, Labelled("paragraph", intro, COLUMN))
    if rng.random() < CAPTION_SHARE:
        story.insert(1, Labelled("caption", writer.sentence(), STORY))
    if rng.random() < TABLE_SHARE:
        rows = [" | ".join(words.table_header)]
        rows += [f"{2020 + i} | {rng.randint(900, 9000)} | {rng.randint(5, 60)}" for i in range(3)]
        story.insert(len(story) - 1, Labelled("table", "\n".join(rows), TABLE))
    if rng.random() < COMMON_START_SHARE:
        line = publisher.fill(rng.choice(words.common_start), article.published)
        story.insert(rng.choice((1, len(story))), Labelled("paragraph", line, COMMON_START))
    if rng.random() < ATTRIBUTION_SHARE:
        credit = publisher.fill(rng.choice(words.attribution), article.published)
        story.append(Labelled("paragraph", credit, ATTRIBUTION))
    if len(story) >= 3 and publisher.variants.random() < FOREIGN_QUOTE_SHARE:
        at = publisher.variants.randint(1, len(story) - 2)  # mid-article, never at an edge
        story.insert(at, _foreign_quote(publisher, article.published))
    if rng.random() < EDITORIAL_SHARE:
        template = rng.choice(words.editorial)
        note = publisher.fill(template, article.published, clause=writer.clause())
        at = 0 if rng.random() < 0.3 else len(story)
        story.insert(at, Labelled("paragraph", note, EDITORIAL))
    return _place_notices(publisher, article, ordinal, story)


def _place_notices(
    publisher: Publisher, article: PublisherArticle, ordinal: int, story: list[Labelled]
) -> list[Labelled]:
    rng, habits, words = publisher.rng, publisher.habits, publisher.words
    when = article.published
    late = ordinal >= NEW_WORDING_FROM
    blocks = list(story)
    tail: list[Labelled] = []
    related = _related(publisher, when) if rng.random() < habits.related_share else []
    if habits.related_mid and related:
        at = min(len(blocks) - 1, rng.randint(2, 4))
        blocks[at:at] = related
    else:
        tail += related
    promo = _promo(publisher, when, late) if rng.random() < 0.5 else None
    promos = [promo] if promo is not None else []
    if promo is not None and ordinal >= VARIANTS_FROM:
        promos += _second_promo(publisher, when)
    if promos and habits.family_mid:
        at = min(len(blocks) - 1, rng.randint(2, 3))
        blocks[at:at] = promos
    else:
        tail += promos
    if rng.random() < habits.credit_share:
        text = publisher.fill(rng.choice(words.credit), when)
        blocks.insert(0, Labelled("paragraph", text, CREDIT))
    if rng.random() < habits.subscribe_share:
        tail.append(Labelled("paragraph", publisher.fill(rng.choice(words.subscribe), when),
                             SUBSCRIBE))  # fmt: skip
    if rng.random() < habits.print_share:
        tail.append(_print_line(publisher, when))
    tail += _rights(publisher, when, late, ordinal >= VARIANTS_FROM)
    return blocks + tail


def _related(publisher: Publisher, when: datetime) -> list[Labelled]:
    rng = publisher.rng
    earlier = publisher.headlines[:-1] or [publisher.writer.headline()]
    labels = publisher.words.related_labels
    usual = labels[publisher.index % len(labels)]  # a site's own label, now and then another
    label = publisher.fill(usual if rng.random() < 0.8 else rng.choice(labels), when)
    return [
        Labelled("paragraph", f"{label} {rng.choice(earlier)}", RELATED)
        for _ in range(rng.choice((1, 1, 2)))
    ]


def _promo(publisher: Publisher, when: datetime, late: bool) -> Labelled:
    """One wording of the publisher's newsletter promo; the last wording only comes late."""
    rng, words = publisher.rng, publisher.words
    if publisher.habits.family_suffix:
        leads = words.family_leads if late else words.family_leads[:-1]
        lead = rng.choice(leads)
        text = f"{lead} {publisher.fill(words.family_shared_end, when)}"
        new = lead == words.family_leads[-1]
    else:
        tails = words.family_tails if late else words.family_tails[:-1]
        tail = rng.choice(tails)
        text = f"{publisher.fill(words.family_shared_start, when)} {publisher.fill(tail, when)}"
        new = tail == words.family_tails[-1]
    return Labelled("paragraph", text, FAMILY, new_wording=new)


def _print_line(publisher: Publisher, when: datetime) -> Labelled:
    rng = publisher.rng
    day = when + timedelta(days=1)
    template = publisher.words.print_lines[publisher.index % len(publisher.words.print_lines)]
    if rng.random() < 0.3:
        template = rng.choice(publisher.words.print_lines)
    text = publisher.fill(
        template,
        when,
        date=publisher.writer.date(day.day, day.month, day.year),
        section=rng.choice("ABCD"),
        page=str(rng.randint(1, 32)),
        headline=publisher.headlines[-1],
    )
    return Labelled("paragraph", text, PRINT_DATED)


def _second_promo(publisher: Publisher, when: datetime) -> list[Labelled]:
    """Now and then a second promo beside the usual one: the neighbouring language's, or
    another of the publisher's newsletters worded as the other family."""
    draw = publisher.variants
    if draw.random() >= SECOND_PROMO_SHARE:
        return []
    if draw.random() < 0.5:
        other = WORDS[NEIGHBOUR[publisher.language]]
        text = publisher.fill(other.family_shared_end, when, name=other.newsletter[0])
    else:
        words = publisher.words
        name = next(n for n in words.newsletter if n != publisher.newsletter)
        if publisher.habits.family_suffix:
            start = publisher.fill(words.family_shared_start, when, name=name)
            text = f"{start} {publisher.fill(words.family_tails[0], when)}"
        else:
            end = publisher.fill(words.family_shared_end, when, name=name)
            text = f"{words.family_leads[0]} {end}"
    return [Labelled("paragraph", text, FAMILY, new_wording=True)]


def _foreign_quote(publisher: Publisher, when: datetime) -> Labelled:
    other = WORDS[NEIGHBOUR[publisher.language]]
    phrase = publisher.fill(other.follow[0], when)
    return Labelled("paragraph", publisher.fill(QUOTED_PHRASE[publisher.language], when,
                                                 phrase=phrase), FOREIGN_QUOTE)  # fmt: skip


def _rights(publisher: Publisher, when: datetime, late: bool, variants: bool) -> list[Labelled]:
    rng, words, habits = publisher.rng, publisher.words, publisher.habits
    out = []
    if habits.rights:
        usual = words.rights[publisher.index % len(words.rights)]
        text = publisher.fill(words.rights_late if late else usual, when)
        out.append(Labelled("paragraph", text, RIGHTS, new_wording=late))
    else:
        out.append(Labelled("paragraph", publisher.fill(words.license[0], when), LICENSE))
    if habits.follow:
        follow = words.follow[0] if not late else rng.choice(words.follow)
        if variants and publisher.variants.random() < FOREIGN_FOLLOW_SHARE:
            follow = WORDS[NEIGHBOUR[publisher.language]].follow[0]
        out.append(Labelled("paragraph", publisher.fill(follow, when), FOLLOW,
                            new_wording=follow != words.follow[0]))  # fmt: skip
    return out


def _share_quotes(articles: list[PublisherArticle], rng: random.Random) -> None:
    """A quote paragraph two stories of one publisher share (a follow-up quoting it again)."""
    by_domain: dict[str, list[PublisherArticle]] = {}
    for article in articles:
        by_domain.setdefault(article.domain, []).append(article)
    for domain_articles in by_domain.values():
        writer = Polyglot(domain_articles[0].language, f"quotes|{domain_articles[0].domain}")
        for _ in range(SHARED_QUOTE_PAIRS):
            first, second = rng.sample(domain_articles, 2)
            quote = Labelled("quote", writer.sentence(), SHARED_QUOTE)
            for article in (first, second):
                at = min(2, len(article.blocks) - 1)
                article.blocks.insert(at, quote)


# --- Rendering ---------------------------------------------------------------------------------


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def render(article: PublisherArticle) -> str:
    """The article page as the publisher serves it: chrome around an article container that
    holds the story and the notices (a notice is a paragraph there, like the story's)."""
    body = "\n".join(_block_html(block) for block in article.blocks)
    meta = {
        "@context": "https://schema.org",
        "@type": "NewsArticle",
        "headline": article.title,
        "datePublished": article.published.isoformat(),
        "inLanguage": article.language,
        "author": {"@type": "Person", "name": article.author},
        "publisher": {"@type": "Organization", "name": article.site},
    }
    by = WORDS[article.language].by
    nav = "".join(f'<li><a href="/{s.lower()}/">{s}</a></li>' for s in NAV_SECTIONS)
    return f"""<!DOCTYPE html>
<html lang="{article.language}"><head><meta charset="utf-8">
<title>{_esc(article.title)} | {_esc(article.site)}</title>
<link rel="canonical" href="{html.escape(article.url)}">
<script type="application/ld+json">{json.dumps(meta, ensure_ascii=False)}</script>
</head><body>
<header class="site-header"><a class="logo" href="/">{_esc(article.site)}</a>
<nav><ul>{nav}</ul></nav></header>
<main><article class="story">
<h1>{_esc(article.title)}</h1>
<p class="byline">{by} {_esc(article.author)} \u00b7
<time datetime="{article.published.isoformat()}">{article.published:%Y-%m-%d %H:%M}</time></p>
<div class="story-body">
{body}
</div></article>
<aside class="most-read"><h2>Most read</h2><ul>
<li><a href="/a">{_esc(article.site)} weekly quiz</a></li><li><a href="/b">Weather</a></li>
</ul></aside></main>
<footer><p><a href="/about/">About</a> \u00b7 <a href="/privacy/">Privacy</a> \u00b7
<a href="/contact/">Contact</a></p></footer>
</body></html>
"""


NAV_SECTIONS = ("News", "Politics", "Business", "Sport", "Culture", "Opinion")


def _block_html(block: Labelled) -> str:
    text = _esc(block.text)
    if block.kind == "caption":
        image = zlib.crc32(block.text.encode()) % 10_000
        img = f'<img src="/img/{image}.jpg" alt="">'
        return f"<figure>{img}<figcaption>{text}</figcaption></figure>"
    if block.kind == "quote":
        return f"<blockquote><p>{text}</p></blockquote>"
    if block.kind == "table":
        rows = [row.split(" | ") for row in block.text.split("\n")]
        head = "".join(f"<th>{_esc(c)}</th>" for c in rows[0])
        cells = ("".join(f"<td>{_esc(c)}</td>" for c in row) for row in rows[1:])
        body = "".join(f"<tr>{row}</tr>" for row in cells)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if block.label == RELATED:  # a link on some sites, plain bold text on others
        label, _, headline = block.text.partition(": ")
        if zlib.crc32(block.text.encode()) % 10 < 7:
            return f"<p><strong>{_esc(label)}:</strong> {_esc(headline)}</p>"
        link = f'<a href="/more">{_esc(headline)}</a>'
        return f'<p class="related"><strong>{_esc(label)}:</strong> {link}</p>'
    if block.label in NOTICE_CLASSES:
        return f'<p class="notice"><em>{text}</em></p>'
    return f"<p>{text}</p>"
