"""Deterministic news prose in German, French, Spanish, Italian, Portuguese and Dutch.

The companion of textgen.py (English) for multilingual fixtures: sentences are assembled from
per-language grammar pieces (subjects in the nominative, objects with their articles, verbs
already conjugated for the template that uses them), so no inflection is needed and the text
reads like wire copy: officials and institutions acting, numbers, dates, attributed quotes.
Every choice comes from one `random.Random(seed)`; stdlib only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from crawler.newsroom.textgen import TextGenerator


@dataclass(frozen=True)
class Lexis:
    """The pieces of one language."""

    first: tuple[str, ...]
    last: tuple[str, ...]
    places: tuple[str, ...]
    subjects: tuple[str, ...]  # "{place}" is filled in
    objects: tuple[str, ...]
    roles: tuple[str, ...]  # "{place}" is filled in
    times: tuple[str, ...]  # "{day}" is a weekday
    days: tuple[str, ...]
    months: tuple[str, ...]
    sentences: tuple[str, ...]  # templates: {subj} {obj} {obj2} {person} {role} {place} ...
    quotes: tuple[str, ...]  # the quoted words: {obj} {place} {num}
    says: tuple[str, ...]  # '"{quote}", {say} {person}, {role}.'
    headlines: tuple[str, ...]
    quote_marks: tuple[str, str]
    percent: str  # "{num} Prozent"
    date: str  # "{d}. {month} {y}"


def _t(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split("|") if part.strip())


LEXES: dict[str, Lexis] = {
    "de": Lexis(
        first=_t("Anna|Lukas|Sabine|Jonas|Petra|Felix|Monika|Tobias|Claudia|Stefan|Julia|Markus|"
                 "Katrin|Florian|Ute|Matthias|Lena|Ralf|Miriam|Dirk|Aylin|Mehmet|Greta|Jan"),
        last=_t("Müller|Schneider|Fischer|Weber|Meyer|Wagner|Becker|Hoffmann|Schäfer|Koch|Bauer|"
                "Richter|Klein|Wolf|Neumann|Schwarz|Zimmermann|Braun|Krüger|Hartmann|Lange|"
                "Schmitt|Werner|Krause|Lehmann|Köhler|Yilmaz|Kaiser"),
        places=_t("Hamburg|Leipzig|Bremen|Dresden|Hannover|Nürnberg|Freiburg|Kassel|Rostock|"
                  "Augsburg|Münster|Kiel|Erfurt|Potsdam|Regensburg|Ulm|Bielefeld|Mainz|Lübeck|"
                  "Würzburg|Göttingen|Jena|Trier|Bamberg|Osnabrück|Heilbronn|Konstanz|Passau|"
                  "Oldenburg|Gera"),
        subjects=_t("Der Stadtrat von {place}|Die Landesregierung|Das Verkehrsministerium|"
                    "Der Bürgermeister von {place}|Die Gewerkschaft|Der Kreistag|"
                    "Die Stadtverwaltung von {place}|Das Umweltbundesamt|Der Verband|"
                    "Die Polizei in {place}|Das Gericht in {place}|Die Opposition|"
                    "Der Vorstand des Unternehmens|Die Feuerwehr|Das Gesundheitsamt"),
        objects=_t("den Haushalt für das kommende Jahr|einen neuen Bebauungsplan|"
                   "die Sanierung der Brücke|ein Tempolimit in der Innenstadt|"
                   "den Ausbau des Radwegenetzes|die Schließung des Hallenbads|"
                   "eine Erhöhung der Gebühren|den Bau einer Grundschule|"
                   "die Reform der Verwaltung|einen Zuschuss für Vereine|"
                   "die Verlängerung der Straßenbahnlinie|ein Verbot von Einwegbechern|"
                   "die Kürzung der Fördermittel|den Neubau des Rathauses|"
                   "eine Studie zur Luftqualität|die Pläne für das Hafengelände|"
                   "die Umstellung auf Elektrobusse|ein Programm gegen Leerstand"),
        roles=_t("Sprecherin der Stadt|Vorsitzender des Bauausschusses|Ökonomin an der "
                 "Universität {place}|Sprecher der Polizei|Fraktionschefin der Grünen|"
                 "Geschäftsführer des Verbands|Anwohnerin aus {place}|Landrat"),
        times=_t("am {day}|in der vergangenen Woche|bereits im Frühjahr|am späten {day}abend|"
                 "nach langer Debatte|am Rande einer Sitzung|seit Monaten"),
        days=_t("Montag|Dienstag|Mittwoch|Donnerstag|Freitag|Samstag|Sonntag"),
        months=_t("Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|"
                  "November|Dezember"),
        sentences=_t(
            "{subj} hat {time} in {place} {obj} beschlossen.|"
            "{person}, {role}, verteidigte {time} {obj} gegen die Kritik aus {place2}.|"
            "Nach Angaben von {person} kostet {obj} in {place} rund {num} Millionen Euro.|"
            "{subj} lehnte {obj} {time} ab, wie {person} bestätigte.|"
            "Kritiker in {place} werfen {person} vor, {obj} zu lange verzögert zu haben.|"
            "In {place} stieg die Zahl der Anträge für {obj} {time} um {pct}.|"
            "Seit Wochen wird in {place} über {obj} gestritten, sagte {person}.|"
            "{person}, {role}, hält {obj} für überfällig.|"
            "Ob es in {place} für {obj} eine Mehrheit gibt, wollte {person} nicht sagen.|"
            "Bis {month} soll {person} einen Bericht über {obj} vorlegen.|"
            "Zuvor hatte {subj} {obj2} geprüft, berichtete {person} aus {place2}.|"
            "Rund {num} Menschen aus {place} unterschrieben eine Petition gegen {obj}.|"
            "{subj} will {obj} gemeinsam mit {place2} angehen, kündigte {person} an.|"
            "Die Kosten für {obj} in {place} liegen laut {person} um {pct} höher als geplant.|"
            "{person} aus {place} sprach {time} von einem Rückschlag für {obj}.|"
            "Auch {subj} meldete {time} Bedenken gegen {obj} in {place2} an."),
        quotes=_t("Für {place} ist {obj} ein wichtiger Schritt|"
                  "In {place} warten die Menschen seit Jahren auf {obj}|"
                  "Ohne {obj} kann es in {place} nicht weitergehen|"
                  "Wir werden {obj} in {place} genau prüfen|"
                  "Mit {num} Anträgen zu {obj} hat in {place} niemand gerechnet|"
                  "Das Geld für {obj} fehlt in {place} an anderer Stelle"),
        says=_t("sagte|betonte|erklärte|kritisierte|sagt"),
        headlines=_t("{place}: Streit um {obj}|{subj} stimmt für {obj}|{place} debattiert über "
                     "{obj}|Neue Pläne für {obj}|Entscheidung über {obj} vertagt"),
        quote_marks=("\u201e", "\u201c"),
        percent="{num} Prozent",
        date="{d}. {month} {y}",
    ),
    "fr": Lexis(
        first=_t("Camille|Julien|Sophie|Mathieu|Claire|Nicolas|Élodie|Antoine|Isabelle|Thomas|"
                 "Nadia|Pierre|Léa|Karim|Margaux|Olivier|Aurélie|Hugo|Fatou|Bernard"),
        last=_t("Martin|Bernard|Dubois|Durand|Lefebvre|Moreau|Laurent|Simon|Michel|Garcia|"
                "David|Bertrand|Roux|Vincent|Fournier|Morel|Girard|Mercier|Bonnet|Lambert|"
                "Fontaine|Rousseau|Diallo|Benali"),
        places=_t("Lyon|Nantes|Rennes|Bordeaux|Lille|Grenoble|Montpellier|Dijon|Angers|Brest|"
                  "Limoges|Tours|Metz|Rouen|Toulon|Nancy|Perpignan|Caen|Amiens|Besançon|Orléans|"
                  "Reims|Poitiers|Pau|Annecy|Quimper|Valence|Nîmes|Avignon|Lorient"),
        subjects=_t("Le conseil municipal de {place}|La préfecture|Le ministère des Transports|"
                    "Le maire de {place}|Le syndicat|La région|La mairie de {place}|"
                    "L'agence de l'eau|L'association des riverains|La police de {place}|"
                    "Le tribunal de {place}|L'opposition|La direction de l'entreprise|"
                    "Le département|L'agence régionale de santé"),
        objects=_t("le budget de l'année prochaine|un nouveau plan d'urbanisme|la rénovation "
                   "du pont|une limitation de vitesse en centre-ville|l'extension des pistes "
                   "cyclables|la fermeture de la piscine|une hausse des tarifs|la construction "
                   "d'une école|la réforme des services|une aide aux associations|le "
                   "prolongement de la ligne de tramway|l'interdiction des gobelets jetables|"
                   "la baisse des subventions|la rénovation de l'hôtel de ville|une étude sur "
                   "la qualité de l'air|le projet du quartier de la gare|le passage aux bus "
                   "électriques"),
        roles=_t("porte-parole de la mairie|président de la commission des finances|économiste "
                 "à l'université de {place}|porte-parole de la police|cheffe de l'opposition|"
                 "directeur de l'association|habitante de {place}|adjoint au maire"),
        times=_t("{day}|la semaine dernière|dès le printemps|{day} soir|après un long débat|"
                 "en marge d'une réunion|depuis des mois"),
        days=_t("lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche"),
        months=_t("janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|"
                  "novembre|décembre"),
        sentences=_t(
            "{subj} a adopté {time} à {place} {obj}.|"
            "{person}, {role}, a défendu {time} {obj} face aux critiques venues de {place2}.|"
            "Selon {person}, {obj} coûterait à {place} environ {num} millions d'euros.|"
            "{subj} a rejeté {obj} {time}, a confirmé {person}.|"
            "À {place}, les critiques reprochent à {person} d'avoir trop retardé {obj}.|"
            "À {place}, les demandes liées à {obj} ont augmenté de {pct} {time}.|"
            "Depuis des semaines, {obj} divise {place}, a raconté {person}.|"
            "{person}, {role}, juge {obj} indispensable.|"
            "{person} n'a pas voulu dire si {obj} trouverait une majorité à {place}.|"
            "D'ici {month}, {person} doit remettre un rapport sur {obj}.|"
            "Auparavant, {subj} avait examiné {obj2}, a rapporté {person} depuis {place2}.|"
            "Quelque {num} habitants de {place} ont signé une pétition contre {obj}.|"
            "{subj} veut mener {obj} avec {place2}, a annoncé {person}.|"
            "Selon {person}, {obj} coûtera à {place} {pct} de plus que prévu.|"
            "{person}, de {place}, a parlé {time} d'un revers pour {obj}.|"
            "De son côté, {subj} a émis {time} des réserves sur {obj} à {place2}."),
        quotes=_t("Pour {place}, {obj} est une étape importante|"
                  "À {place}, on attend {obj} depuis des années|"
                  "Sans {obj}, {place} ne peut pas avancer|"
                  "Nous allons étudier {obj} de près à {place}|"
                  "Personne à {place} ne s'attendait à {num} demandes pour {obj}|"
                  "L'argent prévu pour {obj} manquera ailleurs à {place}"),
        says=_t("a déclaré|a souligné|a expliqué|a regretté|estime"),
        headlines=_t("{place} : polémique autour de {obj}|{subj} vote {obj}|Ce que {obj} "
                     "change pour {place}|De nouveaux projets pour {obj}|Les critiques contre "
                     "{obj} se multiplient"),
        quote_marks=("\u00ab\u00a0", "\u00a0\u00bb"),
        percent="{num} %",
        date="{d} {month} {y}",
    ),
    "es": Lexis(
        first=_t("Lucía|Javier|Carmen|Alejandro|Elena|Pablo|Marta|Sergio|Laura|Diego|Nuria|"
                 "Andrés|Paula|Raúl|Inés|Álvaro|Rocío|Miguel|Sara|Jorge"),
        last=_t("García|Fernández|González|Rodríguez|López|Martínez|Sánchez|Pérez|Gómez|"
                "Martín|Jiménez|Ruiz|Hernández|Díaz|Moreno|Álvarez|Romero|Navarro|Torres|"
                "Domínguez|Vázquez|Ramos"),
        places=_t("Valencia|Sevilla|Zaragoza|Málaga|Bilbao|Valladolid|Vigo|Gijón|Granada|Alicante|"
                  "Córdoba|Murcia|Pamplona|Santander|Oviedo|Salamanca|Burgos|León|Cáceres|Almería|"
                  "Huelva|Logroño|Girona|Lleida|Tarragona|Cádiz|Jaén|Segovia|Toledo|Badajoz"),
        subjects=_t("El ayuntamiento de {place}|La consejería|El Ministerio de Transportes|"
                    "El alcalde de {place}|El sindicato|La diputación|El pleno municipal de "
                    "{place}|La confederación hidrográfica|La asociación de vecinos|La policía "
                    "local de {place}|El juzgado de {place}|La oposición|La dirección de la "
                    "empresa|El gobierno regional"),
        objects=_t("el presupuesto del próximo año|un nuevo plan urbanístico|la reforma del "
                   "puente|un límite de velocidad en el centro|la ampliación del carril bici|"
                   "el cierre de la piscina municipal|una subida de las tasas|la construcción "
                   "de un colegio|la reforma de la administración|una ayuda para las "
                   "asociaciones|la ampliación de la línea de tranvía|la prohibición de los "
                   "vasos de plástico|el recorte de las subvenciones|una investigación sobre la "
                   "calidad del aire|el proyecto de la estación|la compra de autobuses "
                   "eléctricos"),
        roles=_t("portavoz del ayuntamiento|presidente de la comisión de hacienda|economista de "
                 "la Universidad de {place}|portavoz de la policía|líder de la oposición|"
                 "director de la asociación|vecina de {place}|concejal de urbanismo"),
        times=_t("el {day}|la semana pasada|ya en primavera|el {day} por la noche|tras un largo "
                 "debate|al margen de una reunión|desde hace meses"),
        days=_t("lunes|martes|miércoles|jueves|viernes|sábado|domingo"),
        months=_t("enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|"
                  "noviembre|diciembre"),
        sentences=_t(
            "{subj} aprobó {time} en {place} {obj}.|"
            "{person}, {role}, defendió {time} {obj} frente a las críticas de {place2}.|"
            "Según {person}, {obj} costará a {place} unos {num} millones de euros.|"
            "{subj} rechazó {obj} {time}, según confirmó {person}.|"
            "En {place}, los críticos acusan a {person} de haber retrasado {obj}.|"
            "En {place}, las solicitudes para {obj} aumentaron un {pct} {time}.|"
            "Desde hace semanas, {obj} divide a {place}, contó {person}.|"
            "{person}, {role}, considera {obj} imprescindible.|"
            "{person} no quiso decir si {obj} tendrá mayoría en {place}.|"
            "Antes de {month}, {person} deberá presentar un informe sobre {obj}.|"
            "Antes, {subj} había estudiado {obj2}, informó {person} desde {place2}.|"
            "Unos {num} vecinos de {place} firmaron una petición contra {obj}.|"
            "{subj} quiere abordar {obj} junto a {place2}, anunció {person}.|"
            "Según {person}, {obj} costará a {place} un {pct} más de lo previsto.|"
            "{person}, de {place}, habló {time} de un revés para {obj}.|"
            "Por su parte, {subj} expresó {time} dudas sobre {obj} en {place2}."),
        quotes=_t("Para {place}, {obj} es un paso importante|"
                  "En {place} llevamos años esperando {obj}|Sin {obj}, {place} no puede avanzar|"
                  "Vamos a estudiar {obj} en {place} con detalle|"
                  "Nadie en {place} esperaba {num} solicitudes para {obj}|"
                  "El dinero para {obj} faltará en otro sitio en {place}"),
        says=_t("dijo|subrayó|explicó|lamentó|afirma"),
        headlines=_t("{place}: polémica por {obj}|{subj} vota {obj}|Qué supone {obj} para "
                     "{place}|Nuevos planes para {obj}|Crecen las críticas por {obj}"),
        quote_marks=("\u00ab", "\u00bb"),
        percent="{num} %",
        date="{d} de {month} de {y}",
    ),
    "it": Lexis(
        first=_t("Giulia|Marco|Francesca|Luca|Chiara|Alessandro|Sara|Matteo|Elena|Davide|"
                 "Federica|Paolo|Valentina|Andrea|Martina|Giorgio|Silvia|Stefano|Anna|Roberto"),
        last=_t("Rossi|Russo|Ferrari|Esposito|Bianchi|Romano|Colombo|Ricci|Marino|Greco|Bruno|"
                "Gallo|Conti|De Luca|Mancini|Costa|Giordano|Rizzo|Lombardi|Moretti|Barbieri"),
        places=_t("Torino|Bologna|Firenze|Genova|Verona|Padova|Trieste|Bari|Parma|Modena|Brescia|"
                  "Perugia|Ravenna|Lecce|Trento|Bergamo|Pisa|Siena|Ancona|Udine|Cagliari|Pescara|"
                  "Rimini|Vicenza|Lucca|Como|Novara|Ferrara|Salerno|Treviso"),
        subjects=_t("Il consiglio comunale di {place}|La regione|Il ministero dei Trasporti|"
                    "Il sindaco di {place}|Il sindacato|La provincia|La giunta di {place}|"
                    "L'autorità di bacino|Il comitato dei residenti|La polizia locale di "
                    "{place}|Il tribunale di {place}|L'opposizione|La dirigenza dell'azienda"),
        objects=_t("il bilancio del prossimo anno|un nuovo piano regolatore|il restauro del "
                   "ponte|un limite di velocità in centro|l'estensione delle piste ciclabili|"
                   "la chiusura della piscina|un aumento delle tariffe|la costruzione di una "
                   "scuola|la riforma degli uffici|un contributo alle associazioni|il "
                   "prolungamento della linea del tram|il divieto dei bicchieri di plastica|"
                   "il taglio dei finanziamenti|uno studio sulla qualità dell'aria|il progetto "
                   "dell'area della stazione|l'acquisto di autobus elettrici"),
        roles=_t("portavoce del comune|presidente della commissione bilancio|economista "
                 "dell'Università di {place}|portavoce della polizia|capogruppo "
                 "dell'opposizione|direttore dell'associazione|residente di {place}|assessore"),
        times=_t("{day}|la settimana scorsa|già in primavera|{day} sera|dopo un lungo "
                 "dibattito|a margine di una riunione|da mesi"),
        days=_t("lunedì|martedì|mercoledì|giovedì|venerdì|sabato|domenica"),
        months=_t("gennaio|febbraio|marzo|aprile|maggio|giugno|luglio|agosto|settembre|"
                  "ottobre|novembre|dicembre"),
        sentences=_t(
            "{subj} ha approvato {time} a {place} {obj}.|"
            "{person}, {role}, ha difeso {time} {obj} dalle critiche arrivate da {place2}.|"
            "Secondo {person}, {obj} costerà a {place} circa {num} milioni di euro.|"
            "{subj} ha respinto {obj} {time}, ha confermato {person}.|"
            "A {place} i critici accusano {person} di aver rinviato {obj}.|"
            "A {place} le domande per {obj} sono aumentate del {pct} {time}.|"
            "Da settimane {obj} divide {place}, ha raccontato {person}.|"
            "{person}, {role}, ritiene {obj} indispensabile.|"
            "{person} non ha voluto dire se {obj} avrà una maggioranza a {place}.|"
            "Entro {month} {person} dovrà presentare una relazione su {obj}.|"
            "In precedenza {subj} aveva esaminato {obj2}, ha riferito {person} da {place2}.|"
            "Circa {num} residenti di {place} hanno firmato una petizione contro {obj}.|"
            "{subj} vuole affrontare {obj} insieme a {place2}, ha annunciato {person}.|"
            "Secondo {person}, {obj} costerà a {place} il {pct} in più del previsto.|"
            "{person}, da {place}, ha parlato {time} di una battuta d'arresto per {obj}.|"
            "Anche {subj} ha espresso {time} dubbi su {obj} a {place2}."),
        quotes=_t("Per {place} {obj} è un passo importante|A {place} aspettiamo {obj} da anni|"
                  "Senza {obj} {place} non può andare avanti|"
                  "Esamineremo {obj} a {place} con attenzione|"
                  "Nessuno a {place} si aspettava {num} domande per {obj}|"
                  "I soldi per {obj} mancheranno altrove a {place}"),
        says=_t("ha detto|ha sottolineato|ha spiegato|ha criticato|afferma"),
        headlines=_t("{place}, polemica su {obj}|{subj} vota {obj}|Cosa cambia con {obj} a "
                     "{place}|Nuovi piani per {obj}|Critiche in aumento per {obj}"),
        quote_marks=("\u00ab", "\u00bb"),
        percent="{num} per cento",
        date="{d} {month} {y}",
    ),
    "pt": Lexis(
        first=_t("Ana|João|Mariana|Pedro|Beatriz|Tiago|Inês|Rui|Catarina|Miguel|Sofia|André|"
                 "Joana|Ricardo|Marta|Bruno|Carla|Diogo|Helena|Nuno"),
        last=_t("Silva|Santos|Ferreira|Pereira|Oliveira|Costa|Rodrigues|Martins|Jesus|Sousa|"
                "Fernandes|Gonçalves|Gomes|Lopes|Marques|Alves|Almeida|Ribeiro|Pinto|Carvalho"),
        places=_t("Porto|Braga|Coimbra|Aveiro|Faro|Setúbal|Viseu|Leiria|Évora|Guimarães|Funchal|"
                  "Viana do Castelo|Bragança|Santarém|Portalegre|Beja|Tomar|Chaves|Lagos|Tavira|"
                  "Covilhã|Barcelos|Famalicão|Matosinhos|Sintra|Cascais|Almada|Amadora|Odivelas|"
                  "Loulé"),
        subjects=_t("A câmara municipal de {place}|O governo regional|O Ministério das "
                    "Infraestruturas|O presidente da câmara de {place}|O sindicato|A assembleia "
                    "municipal de {place}|A associação de moradores|A polícia municipal de "
                    "{place}|O tribunal de {place}|A oposição|A administração da empresa"),
        objects=_t("o orçamento do próximo ano|um novo plano diretor|a reabilitação da ponte|"
                   "um limite de velocidade no centro|a expansão das ciclovias|o encerramento "
                   "da piscina municipal|um aumento das taxas|a construção de uma escola|a "
                   "reforma dos serviços|um apoio às associações|o prolongamento da linha do "
                   "metro|a proibição dos copos de plástico|o corte dos subsídios|um estudo "
                   "sobre a qualidade do ar|o projeto da zona da estação|a compra de autocarros "
                   "elétricos"),
        roles=_t("porta-voz da câmara|presidente da comissão de finanças|economista da "
                 "Universidade de {place}|porta-voz da polícia|líder da oposição|diretor da "
                 "associação|moradora de {place}|vereador do urbanismo"),
        times=_t("na {day}|na semana passada|já na primavera|na noite de {day}|após um longo "
                 "debate|à margem de uma reunião|há meses"),
        days=_t("segunda-feira|terça-feira|quarta-feira|quinta-feira|sexta-feira"),
        months=_t("janeiro|fevereiro|março|abril|maio|junho|julho|agosto|setembro|outubro|"
                  "novembro|dezembro"),
        sentences=_t(
            "{subj} aprovou {time} em {place} {obj}.|"
            "{person}, {role}, defendeu {time} {obj} das críticas vindas de {place2}.|"
            "Segundo {person}, {obj} vai custar a {place} cerca de {num} milhões de euros.|"
            "{subj} rejeitou {obj} {time}, confirmou {person}.|"
            "Em {place}, os críticos acusam {person} de ter adiado {obj}.|"
            "Em {place}, os pedidos relativos a {obj} aumentaram {pct} {time}.|"
            "Há semanas que {obj} divide {place}, contou {person}.|"
            "{person}, {role}, considera {obj} indispensável.|"
            "{person} não quis dizer se {obj} terá maioria em {place}.|"
            "Até {month}, {person} deverá apresentar um relatório sobre {obj}.|"
            "Antes, {subj} tinha analisado {obj2}, relatou {person} a partir de {place2}.|"
            "Cerca de {num} moradores de {place} assinaram uma petição contra {obj}.|"
            "{subj} quer tratar {obj} em conjunto com {place2}, anunciou {person}.|"
            "Segundo {person}, {obj} vai custar a {place} mais {pct} do que o previsto.|"
            "{person}, de {place}, falou {time} de um revés para {obj}.|"
            "Também {subj} manifestou {time} reservas sobre {obj} em {place2}."),
        quotes=_t("Para {place}, {obj} é um passo importante|"
                  "Em {place} esperamos há anos por {obj}|Sem {obj}, {place} não pode avançar|"
                  "Vamos analisar {obj} em {place} com cuidado|"
                  "Ninguém em {place} esperava {num} pedidos para {obj}|"
                  "O dinheiro para {obj} vai faltar noutro lado em {place}"),
        says=_t("disse|sublinhou|explicou|criticou|afirma"),
        headlines=_t("{place}: polémica em torno de {obj}|{subj} vota {obj}|O que muda com "
                     "{obj} em {place}|Novos planos para {obj}|Crescem as críticas sobre {obj}"),
        quote_marks=("\u201c", "\u201d"),
        percent="{num} por cento",
        date="{d} de {month} de {y}",
    ),
    "nl": Lexis(
        first=_t("Sanne|Daan|Lotte|Bram|Eva|Thijs|Anouk|Ruben|Fleur|Jeroen|Femke|Sander|"
                 "Marieke|Joost|Iris|Koen|Naima|Pieter|Esther|Wouter"),
        last=_t("de Jong|Jansen|de Vries|van den Berg|van Dijk|Bakker|Janssen|Visser|Smit|"
                "Meijer|de Boer|Mulder|de Groot|Bos|Vos|Peters|Hendriks|van Leeuwen|Dekker|"
                "Brouwer"),
        places=_t("Utrecht|Groningen|Eindhoven|Tilburg|Nijmegen|Arnhem|Haarlem|Leiden|Zwolle|"
                  "Maastricht|Delft|Breda|Amersfoort|Deventer|Alkmaar|Enschede|Apeldoorn|Zaandam|"
                  "Dordrecht|Venlo|Assen|Leeuwarden|Hengelo|Gouda|Hilversum|Roermond|Emmen|Helmond|"
                  "Vlissingen|Middelburg"),
        subjects=_t("De gemeenteraad van {place}|De provincie|Het ministerie van "
                    "Infrastructuur|De burgemeester van {place}|De vakbond|Het "
                    "waterschap|Het college van {place}|De bewonersvereniging|De politie in "
                    "{place}|De rechtbank in {place}|De oppositie|De directie van het bedrijf"),
        objects=_t("de begroting voor volgend jaar|een nieuw bestemmingsplan|de renovatie van "
                   "de brug|een snelheidslimiet in het centrum|de uitbreiding van het "
                   "fietspadennet|de sluiting van het zwembad|een verhoging van de tarieven|de "
                   "bouw van een basisschool|de reorganisatie van de ambtenarij|een subsidie "
                   "voor verenigingen|de verlenging van de tramlijn|een verbod op "
                   "wegwerpbekers|de bezuiniging op de subsidies|een onderzoek naar de "
                   "luchtkwaliteit|de plannen voor het stationsgebied|de overstap op "
                   "elektrische bussen"),
        roles=_t("woordvoerder van de gemeente|voorzitter van de financiële commissie|"
                 "econoom aan de universiteit van {place}|politiewoordvoerder|fractievoorzitter "
                 "van de oppositie|directeur van de vereniging|bewoonster van {place}|wethouder"),
        times=_t("op {day}|vorige week|al in het voorjaar|op {day}avond|na een lang debat|in "
                 "de marge van een vergadering|al maanden"),
        days=_t("maandag|dinsdag|woensdag|donderdag|vrijdag|zaterdag|zondag"),
        months=_t("januari|februari|maart|april|mei|juni|juli|augustus|september|oktober|"
                  "november|december"),
        sentences=_t(
            "{subj} heeft {time} in {place} ingestemd met {obj}.|"
            "{person}, {role}, verdedigde {time} {obj} tegen kritiek uit {place2}.|"
            "Volgens {person} kost {obj} {place} ongeveer {num} miljoen euro.|"
            "{subj} wees {obj} {time} af, bevestigde {person}.|"
            "Critici in {place} verwijten {person} dat {obj} te lang is uitgesteld.|"
            "In {place} steeg het aantal aanvragen voor {obj} {time} met {pct}.|"
            "Al weken verdeelt {obj} {place}, vertelde {person}.|"
            "{person}, {role}, vindt {obj} hard nodig.|"
            "{person} wilde niet zeggen of {obj} in {place} een meerderheid krijgt.|"
            "Voor {month} moet {person} een rapport over {obj} presenteren.|"
            "Eerder had {subj} {obj2} onderzocht, meldde {person} vanuit {place2}.|"
            "Zo'n {num} inwoners van {place} tekenden een petitie tegen {obj}.|"
            "{subj} wil {obj} samen met {place2} aanpakken, kondigde {person} aan.|"
            "Volgens {person} kost {obj} {place} {pct} meer dan gepland.|"
            "{person} uit {place} sprak {time} van een tegenslag voor {obj}.|"
            "Ook {subj} uitte {time} bezwaren tegen {obj} in {place2}."),
        quotes=_t("Voor {place} is {obj} een belangrijke stap|"
                  "In {place} wachten we al jaren op {obj}|Zonder {obj} kan {place} niet verder|"
                  "We gaan {obj} in {place} grondig bekijken|"
                  "Niemand in {place} had {num} aanvragen voor {obj} verwacht|"
                  "Het geld voor {obj} ontbreekt straks ergens anders in {place}"),
        says=_t("zei|benadrukte|legde uit|bekritiseerde|zegt"),
        headlines=_t("{place}: ophef over {obj}|{subj} stemt in met {obj}|Wat {obj} betekent "
                     "voor {place}|Nieuwe plannen voor {obj}|Kritiek op {obj} groeit"),
        quote_marks=("\u2018", "\u2019"),
        percent="{num} procent",
        date="{d} {month} {y}",
    ),
}  # fmt: skip

LANGUAGES = ("en", *LEXES)
ENGLISH_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
PARAGRAPH_SENTENCES = (2, 4)
QUOTE_SHARE = 0.25


class Polyglot:
    """News prose in one language; English is delegated to textgen.TextGenerator."""

    def __init__(self, language: str, seed: int | str = 0) -> None:
        if language not in LANGUAGES:
            raise ValueError(f"no text generator for {language!r}")
        self.language = language
        self.rng = random.Random(f"polyglot|{language}|{seed}")
        self.english = TextGenerator(f"polyglot|{seed}") if language == "en" else None
        self.lexis = LEXES.get(language)

    def choice(self, options: tuple[str, ...]) -> str:
        return options[int(self.rng.random() * len(options))]

    def person(self) -> str:
        if self.english is not None:
            return self.english.person_name()
        return f"{self.choice(self.lexis.first)} {self.choice(self.lexis.last)}"

    def place(self) -> str:
        if self.english is not None:
            return self.english.place()
        return self.choice(self.lexis.places)

    def date(self, day: int, month: int, year: int) -> str:
        """A date as the language writes it in running text ("10. Mai 2025", "May 10, 2025")."""
        if self.english is not None:
            return f"{self.month_name(month)} {day}, {year}"
        lexis = self.lexis
        return lexis.date.format(d=day, month=lexis.months[month - 1], y=year)

    def month_name(self, month: int) -> str:
        if self.english is not None:
            return ENGLISH_MONTHS[month - 1]
        return self.lexis.months[month - 1]

    def _fill(self, template: str, topic: str) -> str:
        lexis = self.lexis
        place = self.choice(lexis.places)
        subject = self.choice(lexis.subjects).format(place=place)
        if not template.startswith("{subj}"):  # "Zuvor hatte der Vorstand ...": lower case
            subject = subject[0].lower() + subject[1:]
        values = {
            "subj": subject,
            "obj": self.choice(lexis.objects),
            "obj2": self.choice(lexis.objects),
            "person": self.person(),
            "role": self.choice(lexis.roles).format(place=place),
            "place": place,
            "place2": self.choice(lexis.places),
            "num": str(self.rng.randint(12, 980)),
            "pct": lexis.percent.format(num=self.rng.randint(2, 48)),
            "month": self.choice(lexis.months),
        }
        values["time"] = self.choice(lexis.times).format(day=self.choice(lexis.days))
        return template.format(**values)

    def sentence(self, topic: str = "local") -> str:
        if self.english is not None:
            return self.english.sentence(topic)
        lexis = self.lexis
        if self.rng.random() < QUOTE_SHARE:
            words = self._fill(self.choice(lexis.quotes), topic)
            start, end = lexis.quote_marks
            role = self.choice(lexis.roles).format(place=self.choice(lexis.places))
            return f"{start}{words}{end}, {self.choice(lexis.says)} {self.person()}, {role}."
        text = self._fill(self.choice(lexis.sentences), topic)
        return text[0].upper() + text[1:]

    def paragraph(self, topic: str = "local") -> str:
        if self.english is not None:
            return self.english.paragraph(topic)
        count = self.rng.randint(*PARAGRAPH_SENTENCES)
        return " ".join(self.sentence(topic) for _ in range(count))

    def story(self, n_paragraphs: int, topic: str = "local") -> list[str]:
        if self.english is not None:
            return self.english.story(topic, n_paragraphs)
        return [self.paragraph(topic) for _ in range(n_paragraphs)]

    def headline(self, topic: str = "local") -> str:
        if self.english is not None:
            return self.english.headline(topic, self.english.new_cast(topic))
        text = self._fill(self.choice(self.lexis.headlines), topic)
        return text[0].upper() + text[1:]

    def clause(self, topic: str = "local") -> str:
        """A sentence without its final full stop, lower-cased start: to continue a sentence."""
        text = self.sentence(topic).rstrip(".")
        if self.language == "de":  # German nouns keep their capital
            return text
        return text[:1].lower() + text[1:]
