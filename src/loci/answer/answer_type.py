"""What kind of answer a question wants, and whether a sentence holds one.

"How much did the car service cost?" wants an amount: of the invoice's sentences, "Total 310.50
GBP, paid by card" answers it and "Full service of the Golf, oil and filters replaced" only shares
its words. An answer without a model prefers the sentences that hold the kind of thing asked for:
an amount or count (a version is a number too), a date or time, a name (a person, a firm, a tool),
or what a person types (a key, a command, a setting). Rules by question word, in English; a
question they do not recognise wants nothing in particular.

What a sentence holds must be new to the question: "Which service receives the events Foam
sends?" is answered by "… sent to Azure Application Insights", not by "Foam collects usage
data", whose only name is the question's own.
"""

from __future__ import annotations

import re
from typing import Literal

AnswerType = Literal["amount", "when", "name", "key", "typed"]

# The things a "which …" or "what …" question can ask for by name.
_NAMED = (
    r"company|person|firm|shop|doctor|tool|service|app|application|extension|plugin|plug-in|"
    r"add-on|addon|library|package|program|platform|provider|product|editor|browser|engine|"
    r"framework|distribution|runner|site|website"
)
_KEYS = r"key|keys|shortcut|key combination|keyboard shortcut|hotkey|key binding"
_TYPED = (
    r"command|setting|option|flag|parameter|variable|address|url|path|folder|directory|file name"
)
_CHORD = r"\b(ctrl|alt|cmd|shift|meta|option|super)\s*[-+]\s*\w+|\bF\d{1,2}\b"
# "which", "what" or "what is the", a few words, then the thing asked for: "which VS Code
# extension", "what is the most popular spelling extension", "which Node version".
_WHICH = r"(which|what)( is| are| was)?( the| a| an)? ([\w-]+ ){0,3}"
_WANTS: tuple[tuple[re.Pattern[str], AnswerType], ...] = (
    (re.compile(rf"\b(how (much|many|long|far|often|old|big|heavy|fast|quickly|high|low|large|"
                rf"small|wide|deep|tall|hot|warm|cold|loud|strong|expensive)|what (price|amount|"
                rf"number|size|percentage|fraction|rate|temperature|speed|voltage|current|"
                rf"frequency|distance|weight|length|width|height|depth|capacity|range|latency|"
                rf"resolution|salary|budget)|cost|price|fee|total|{_WHICH}(version|release))\b",
                re.I), "amount"),
    # "When is …?" asks; "… when I rename a file" only sets the scene.
    (re.compile(r"\b(when (is|was|are|were|do|does|did|will|would|should|can|could|has|have|"
                r"must)|what (date|time|day|year|month)|which (date|day|year)|how soon|"
                r"until when|since when|in what year)\b", re.I), "when"),
    (re.compile(rf"\b(who|whom|whose|{_WHICH}({_NAMED}))\b", re.I), "name"),
    (re.compile(rf"\b({_WHICH}({_KEYS})|what do i press)\b", re.I), "key"),
    (re.compile(rf"\b({_WHICH}({_TYPED})|what do i (type|run))\b", re.I), "typed"),
)  # fmt: skip
# The same kinds asked in German, French, Spanish, Japanese and Chinese: the languages Loci's
# vault benchmarks hold, and the largest it indexes. Japanese and Chinese have no spaces, so their
# words are matched anywhere; the others as whole words. English's rules above come first.
_LATIN_ELSEWHERE: dict[AnswerType, str] = {
    "amount": r"wie (viel|viele|lange|oft|alt|groß|weit|hoch|schnell|schwer|breit|tief|warm|"
              r"teuer)|wieviel|welche[rnms]? (version|release|betrag|preis|temperatur|spannung|"
              r"reichweite|größe)|kostet|kosten|gekostet|preis|anzahl|combien|quelle (version|"
              r"durée|température|taille|latence|portée|tension|hauteur|distance|capacité)|"
              r"quel (prix|budget|montant|poids|tarif|âge)|cuánt[oa]s?|qué versión|precio",
    "when": r"wann|seit wann|bis wann|in welchem jahr|an welchem tag|welches datum|um wie viel "
            r"uhr|quand|quelle date|en quelle année|(à|a) quelle heure|quel jour|jusqu'à quelle "
            r"date|cuándo|qué fecha|en qué año|a qué hora",
    "name": r"wer|wem|wessen|welche[rnms]? (firma|werkzeug|tool|dienst|erweiterung|programm|"
            r"bibliothek|anbieter)|qui|quel(le)? (outil|service|extension|programme|logiciel|"
            r"entreprise)|quién(es)?|qué (herramienta|servicio|extensión|programa|empresa)",
    "key": r"welche[rnms]? (taste|tasten|tastenkombination|tastenkürzel)|tastenkürzel|"
           r"quelle touche|raccourci|qué tecla|atajo",
    "typed": r"welche[rnms]? (befehl|einstellung|option|variable|datei|pfad|flag)|"
             r"quelle commande|quel(le)? (paramètre|option|réglage|fichier|variable)|"
             r"qué (comando|opción|ajuste|archivo|variable|parámetro)",
}  # fmt: skip
_SPACELESS_ELSEWHERE: dict[AnswerType, str] = {
    "amount": r"いくつ|いくら|何個|何回|何人|何件|何秒|何分|何時間|何メートル|何度|何パーセント|"
              r"どのくらい|どれくらい|バージョン|多少|几个|几次|几秒|几层|多长|多久|多大|多高|多重|"
              r"多远|多快|哪个版本|什么版本|价格|费用",
    "when": r"いつ|何年|何月|何日|何時|何曜日|什么时候|何时|哪一年|哪年|哪天|几点|几月|几号",
    "name": r"誰|だれ|どの(ツール|サービス|拡張|プログラム|ライブラリ|会社)|何という|谁|"
            r"(哪个|什么)(工具|服务|扩展|插件|程序|库|公司)",
    "key": r"キー|ショートカット|快捷键|哪个键|什么键|按键",
    "typed": r"コマンド|設定|オプション|フラグ|変数|ファイル名|パス|"
             r"命令|设置|选项|参数|变量|文件名|路径",
}  # fmt: skip
_WANTS_ELSEWHERE: tuple[tuple[re.Pattern[str], AnswerType], ...] = tuple(
    (re.compile(rf"\b({_LATIN_ELSEWHERE[kind]})\b|{_SPACELESS_ELSEWHERE[kind]}", re.I), kind)
    for kind in _LATIN_ELSEWHERE
)
_MONTHS = (
    r"jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|sep(t(ember)?)?|"
    r"oct(ober)?|nov(ember)?|dec(ember)?"
)
_DAYS = r"mon(day)?|tue(s(day)?)?|wed(nesday)?|thu(rs(day)?)?|fri(day)?|sat(urday)?|sun(day)?"
_MONATE = r"januar|februar|märz|april|mai|juni|juli|august|september|oktober|november|dezember"
_CODE = r"`[^`\n]+`"
_CJK = r"\u3040-\u30ff\u3400-\u9fff"
_LATIN_IN_CJK = rf"(?<=[{_CJK}])\s?[A-Za-z][\w.-]*|[A-Za-z][\w.-]*(?=\s?[{_CJK}])"
_HAS: dict[AnswerType, re.Pattern[str]] = {
    "amount": re.compile(
        r"\d[\d.,:]*|\b(one|two|three|four|five|six|seven|eight|nine|ten|"
        r"twelve|twenty|hundred|thousand|dozen)\b",
        re.I,
    ),  # fmt: skip
    "when": re.compile(
        rf"\b(\d{{1,4}}[-/.]\d{{1,2}}([-/.]\d{{1,4}})?|\d{{1,2}}(:\d\d|\.\d\d)\s*(a\.?m\.?|p\.?m\.?)?"
        rf"|\d{{1,2}}\s*(a\.?m\.?|p\.?m\.?)|(19|20)\d\d|{_MONTHS}|{_DAYS}|{_MONATE}|today|tomorrow"
        rf"|yesterday|heute|morgen|gestern"
        rf"|every (day|week|month|year|spring|summer|autumn|winter))\b"
        r"|\d{1,4}\s*[年月日时時]",  # "2024年3月5日": no word boundary inside
        re.I,
    ),
    # A capitalised word that does not start the sentence ("… by Marsh Heating", "Dr. Patel"), a
    # link's label, a name in code ("`vitest`"), or a word in Latin letters in Japanese or
    # Chinese text ("用 skip 跳过"), where it is a name or a command.
    "name": re.compile(rf"(?<=\S )[A-Z][\w'’-]+|\[[^\]\n]+\]\(|{_CODE}|{_LATIN_IN_CJK}"),
    "key": re.compile(_CHORD, re.I),  # "Ctrl-Alt-c", "cmd+alt+v", "F2"
    # Commands and settings: in code or quotes ("Editor: Toggle Vim Mode"), or a --flag.
    "typed": re.compile(
        rf"{_CODE}|\"[^\"\n]{{2,80}}\"|“[^”\n]{{2,80}}”|(?<!\w)--?[a-z][\w-]+|{_LATIN_IN_CJK}",
        re.I,
    ),
}
_WORD = re.compile(r"\w+")


# "how much", "wie viel", "combien": words that ask for a kind of answer, not about a topic.
_ASKING = re.compile(r"\b(?:how|wie)\s+(\w+)|\b(combien|wieviel|cuánt[oa]s?)\b", re.I)


def asking_words(question: str) -> set[str]:
    """The question's words that only say what kind of answer it wants ("much" in "how much
    did it cost"): a passage need not hold them."""
    return {
        (found.group(1) or found.group(2)).lower()
        for found in _ASKING.finditer(question)
        if wanted(found.group(0)) is not None or found.group(2)
    }


def wanted(question: str) -> AnswerType | None:
    """The kind of answer `question` asks for, if its words say."""
    for pattern, kind in (*_WANTS, *_WANTS_ELSEWHERE):
        if pattern.search(question):
            return kind
    return None


def holds(sentence: str, kind: AnswerType, question: str = "") -> bool:
    """Whether `sentence` holds a thing of `kind` that `question` does not already say."""
    asked = {w.lower() for w in _WORD.findall(question)}
    for found in _HAS[kind].finditer(sentence):
        words = {w.lower() for w in _WORD.findall(found.group())}
        if words - asked:
            return True
    return False
