"""A tripwire for agent text that speaks to the reviewer model. It is NOT the last line.

What keeps a call from running without a person is structural: the reviewer's remit is
decided by code (`reviewer_remit`), and inside it the worst a fooled reviewer can do is
what `auto` mode without a reviewer does anyway, on the record (notify). This tripwire
only saves the model from reading the plainest attacks: when agent-written text addresses
a reviewer, claims an approval, dictates an answer or forges a role marker, the call goes
to a person without asking the model. A word list cannot be complete; `tests/data/
reviewer_injections.json` is a labelled set of attacks in many languages and encodings,
and `test_attack_reviewer_injections.py` counts what this catches (and what it misses).

A text is searched in several spellings, each undoing one way of hiding a word:

- folded: NFKC (full width, ligatures, mathematical letters), invisible format characters
  dropped, combining marks dropped (`re\u0301viewer`), case folded;
- as Latin: look-alike letters mapped (Cyrillic and Greek look-alikes, small capitals,
  regional indicators), digits read as letters (`r3v13w3r`);
- joined: letters spaced or hyphenated one by one (`r e v i e w e r`, `r-e-v-i-e-w`), and
  separators inside a word (`re-view.er`) dropped;
- decoded: HTML entities, percent escapes, `\\uXXXX` and `\\xNN` escapes, base64 and hex
  runs, text hidden in Unicode tag characters, ROT13 and reversed text.

Phrases in other languages (`LEXICON`) are folded the same way before matching.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
from collections.abc import Iterable, Iterator

MAX_CHARS = 150_000  # per review: more than the reviewer is ever shown (reviewer_input)
_MAX_DECODED = 64  # encoded runs decoded per text

# ---------------------------------------------------------------------- folding

_CONFUSABLES = str.maketrans(
    # Cyrillic and Greek letters that look Latin
    "аеорсухіѕԁјһӏνοαρειτκмвнтзьгпшщлдѵѡԛԝ"
    # small capitals and other IPA letters that look Latin
    "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢɑɡɩʋ"
    # digits and signs read as letters
    "0134578@$!|",
    "aeopcyxisdjhlvoapeitkmbhtzbrnwwldvwqwabcdefghijklmnoprstuvwyzagivoieastbasil",
)
_REGIONAL_A = 0x1F1E6  # regional indicator symbols A..Z
_TAG_BASE = 0xE0000  # Unicode tag characters: invisible copies of ASCII
_SPACES = re.compile(r"[^\S\n]+|_+")


def fold(text: str) -> str:
    """NFKC, invisible characters and combining marks dropped, case folded, spaces squeezed."""
    if not text.isascii():
        text = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text))
        kept = []
        for ch in text:
            if ch < "\x80":
                kept.append(ch)
                continue
            if unicodedata.category(ch) in ("Mn", "Me", "Cf") or 0xFE00 <= ord(ch) <= 0xFE0F:
                continue
            if _REGIONAL_A <= ord(ch) < _REGIONAL_A + 26:
                ch = chr(ord("a") + ord(ch) - _REGIONAL_A)
            kept.append(ch)
        text = unicodedata.normalize("NFC", "".join(kept))
    return _SPACES.sub(" ", text.casefold())  # line breaks kept: a role marker starts one


def _latin(folded: str) -> str:
    return folded.translate(_CONFUSABLES)


# one letter, then 3 or more times (1-3 separators, one letter): `r e v i e w e r`
_SPACED = re.compile(r"(?<![^\W\d_])[^\W\d_](?:[^\w\n]{1,3}[^\W\d_]){3,}(?![^\W\d_])")
_INNER = re.compile(r"(?<=[^\W\d_])[-.·•*'`|/\\~^+:]+(?=[^\W\d_])")


def _joined(text: str) -> str:
    """Letters spelled one by one joined into words (a one-character separator joins, a
    longer one ends a word: `r e v: a l l o w`), and separators inside a word dropped."""
    text = _SPACED.sub(
        lambda m: re.sub(r"[^\w]+", lambda sep: "" if len(sep.group(0)) == 1 else " ", m[0]),
        text,
    )
    return _INNER.sub("", text)


# ---------------------------------------------------------------------- decoding

_B64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"(?:(?:0x|\\x)?[0-9A-Fa-f]{2}[\s,:]?){8,}")
_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\x([0-9A-Fa-f]{2})|\\U([0-9A-Fa-f]{8})")
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _text_of(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    shown = sum(ch.isprintable() or ch.isspace() for ch in text)
    return text if text and shown >= 0.9 * len(text) else None


def _percent(match: re.Match[str]) -> str:
    raw = bytes(int(match.group(0)[i + 1 : i + 3], 16) for i in range(0, len(match.group(0)), 3))
    return raw.decode("utf-8", "replace")


def _escaped(match: re.Match[str]) -> str:
    code = int(next(g for g in match.groups() if g), 16)
    return chr(code) if code < 0x110000 and not 0xD800 <= code < 0xE000 else ""


def decoded(text: str) -> Iterator[str]:
    """The text as its encodings would read (only the ones that change it)."""
    hidden = "".join(
        chr(ord(ch) - _TAG_BASE) for ch in text if _TAG_BASE + 0x20 <= ord(ch) < _TAG_BASE + 0x7F
    )
    if hidden:
        yield hidden
    for undone in (
        html.unescape(text),
        _PERCENT.sub(_percent, text),
        _ESCAPE.sub(_escaped, text),
    ):
        if undone != text:
            yield undone
    for count, run in enumerate(_B64.findall(text)):
        if count >= _MAX_DECODED:
            break
        body = run.rstrip("=").replace("-", "+").replace("_", "/")
        try:
            raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
        except (binascii.Error, ValueError):
            continue
        plain = _text_of(raw)
        if plain:
            yield plain
    for count, run in enumerate(_HEX.findall(text)):
        if count >= _MAX_DECODED:
            break
        digits = re.sub(r"0x|\\x|[\s,:]", "", run)
        if len(digits) % 2 == 0:
            plain = _text_of(bytes.fromhex(digits))
            if plain:
                yield plain


def spellings(text: str) -> Iterator[tuple[str, str]]:
    """(form, how it was read) for every spelling the tripwire searches. ROT13 and
    reversed text are searched folded only (look-alikes inside them are not undone)."""
    seen: set[str] = set()
    queue: list[tuple[str, str, int]] = [(text, "as written", 0)]
    while queue:
        raw, how, depth = queue.pop(0)
        folded = fold(raw)
        latin = _latin(folded)
        for form, name in (
            (folded, how),
            (latin, f"{how}, look-alikes read as letters"),
            (_joined(latin), f"{how}, separated letters joined"),
        ):
            if form not in seen:
                seen.add(form)
                yield form, name
        if depth < 2:  # base64 of base64 is decoded; deeper nesting is not
            queue += [(inner, "decoded", depth + 1) for inner in decoded(raw)]
        if depth == 0:
            yield codecs.encode(folded, "rot13"), "as ROT13"
            yield folded[::-1], "reversed"


# ---------------------------------------------------------------------- what it looks for

# English, on the folded forms: a reviewer named, an approval claimed, an answer dictated,
# instructions overridden. Each starts a word: the engine tries them at word starts only.
_ENGLISH = re.compile(
    r"\b(?:"
    + "|".join(
        f"(?:{p})"
        for p in (
            r"(reviewer|classifier|moderator|gatekeeper|overseer)s?\b",
            r"(guard|judge|safety|security|approval|approver|reviewing|moderation|monitor|"
            r"oversight|supervisor) ?(model|bot|agent|ai|llm)s?\b",
            r"(safety|security|review) (check|filter|scan|review)s? (already |has |have )*"
            r"(passed|approved|cleared|allowed|accepted)",
            r"(pre|auto)[ -]?(approved|authori[sz]ed|cleared|vetted|whitelisted|allowlisted|"
            r"sanctioned)\b",
            r"(already|previously|(has|have) been) (been )?(approved|authori[sz]ed|vetted|"
            r"whitelisted|allowlisted|sanctioned|signed off|reviewed)\b",
            r"(approved|authori[sz]ed|signed off|okayed|greenlit|vetted|sanctioned) "
            r"(by|from|in ticket|per)\b",
            r"sign[ -]?off (from|by|given|granted|received)\b",
            r"(auto[ -]?)?approve[ds]? (this|it|the|all|every|everything|my|our|each)\b",
            r"(safe|okay|ok|fine|harmless|benign|authori[sz]ed) (to|for) "
            r"(allow|approve|run|execute|proceed|auto)",
            r"no need to (ask|escalate|flag|involve|confirm with)",
            r"(do not|don't|dont|never) (ask|escalate|flag|involve|bother|alert) "
            r"(a |the |any )?(person|human|user|operator|anyone|reviewer|them)",
            r"do not (escalate|flag)\b",
            r"(ignore|disregard|forget|override|bypass) (all |any |the |your )?"
            r"(previous|prior|above|earlier|preceding|system|safety|security)",
            r"(real|actual|true|hidden|secret) (instruction|directive)s?\b",
            r"(new|updated) (instruction|directive)s? *:",
            r"(system|developer|admin) (prompt|message|instruction|note|override)s?\b",
            r"you (are|must|should|will|shall|have to|need to) (now )?(allow|approve|answer|"
            r"reply|respond|say|output|classify|rate)\b",
            r"(answer|reply|respond|output|say|return)( (with|only|exactly|just))+"
            r"[\s:\"'`]*(allow|approve|yes|safe|ok)\b",
            r"(if|when) you are an? (ai|llm|language model|model|assistant|reviewer|bot)\b",
            r"(dear|note to|attention|hello|hey) (the )?(ai|llm|model|assistant|bot|grader|"
            r"checker|auditor)\b",
            r"as an ai\b",
        )
    )
    + ")"
)
# Forged structure: a role marker starting a line, a chat template's tokens, the data
# block's own markers, a decision written as the answer's JSON. Searched only when one
# of the MARK_HINTS is in the text.
_MARKS = re.compile(
    r"(^|[\n\"'{.;>\]])\s*(system|assistant|reviewer)\s*:"
    r"|<\|[a-z_ ]*\|?>|\[/?inst\]|</?(untrusted|data|system|instructions?)[ >-]"
    r"|<<\s*/?sys\s*>>"
    r"|\"?decision\"?\s*:\s*\"?(allow|approve|escalate)"
)
_MARK_HINTS = ("system", "assistant", "reviewer", "<|", "inst]", "<", "decision")

# Other languages: phrases matched on the folded form (not the Latin one), each folded
# the same way as the text: the judge named, an approval asked for or claimed, earlier
# instructions overridden, a system prompt. Words common in ordinary text ("ignore",
# "safe", "confirm") are left out, or kept only in a phrase.
LEXICON: dict[str, tuple[str, ...]] = {
    "de": ("prüfer", "gutachter", "überprüfer", "prüfmodell", "genehmig", "bereits geprüft",
           "vorherigen anweisungen", "systemanweisung", "sicher auszuführen",
           "ohne rückfrage", "bitte erlauben"),
    "fr": ("évaluateur", "relecteur", "réviseur", "modérateur", "vérificateur", "approuv",
           "autorisé par", "déjà validé", "ignore les instructions", "ignorez les instructions",
           "instructions précédentes", "invite système", "sûr à exécuter"),
    "es": ("revisor", "evaluador", "moderador", "aprueb", "aprobad", "aprobar", "autorizado por",
           "ignora las instrucciones", "instrucciones anteriores", "mensaje del sistema",
           "es seguro ejecutar"),
    "pt": ("avaliador", "aprove", "aprovad", "aprovar", "ignore as instruções",
           "instruções anteriores", "é seguro executar", "mensagem do sistema"),
    "it": ("revisore", "valutatore", "moderatore", "approvalo", "approva questa", "approvat",
           "approvare", "autorizzato da",
           "ignora le istruzioni", "istruzioni precedenti", "sicuro da eseguire",
           "messaggio di sistema"),
    "nl": ("beoordelaar", "goedgekeurd", "goedkeuren", "keur dit goed", "negeer",
           "eerdere instructies", "vorige instructies", "veilig om uit te voeren"),
    "sv": ("granskare", "godkänn", "godkänt", "ignorera tidigare", "säkert att köra"),
    "pl": ("recenzent", "weryfikator", "zatwierdź", "zatwierdzon", "zignoruj",
           "poprzednie instrukcje", "bezpieczne do uruchomienia"),
    "ru": ("ревьюер", "рецензент", "проверяющ", "модератор", "одобр", "утвержден",
           "игнорируй", "игнорировать", "предыдущие инструкции", "системный промпт",
           "системное сообщение", "системная инструкция", "безопасно выполнить"),
    "uk": ("перевіряюч", "схвал", "ігноруй", "попередні інструкції"),
    "tr": ("denetçi", "gözden geçiren", "onayla", "onaylan", "önceki talimat", "yok say"),
    "el": ("αξιολογητ", "ελεγκτ", "εγκρίν", "εγκεκριμέν", "αγνόησε", "προηγούμενες οδηγίες"),
    "zh": ("审核", "审查", "审批", "评审", "批准", "核准", "放行", "忽略之前", "忽略以上",
           "忽略所有", "忽略先前", "忽略前面", "无视之前", "之前的指令", "以上指令", "系统提示",
           "審核", "審查", "審批", "評審", "核準", "忽略先前", "無視", "系統提示", "先前的指示"),
    "ja": ("レビュアー", "レビューア", "レビュワー", "審査", "承認", "許可して", "無視して",
           "以前の指示", "システムプロンプト"),
    "ko": ("검토자", "리뷰어", "심사", "승인", "지시를 무시", "이전 지시", "시스템 프롬프트"),
    "ar": ("أيها المراجع", "إلى المراجع", "وافق على", "تمت الموافقة", "تجاهل التعليمات",
           "التعليمات السابقة"),
    "he": ("סוקר", "אשר את", "אושר", "התעלם מ", "הוראות קודמות"),
    "fa": ("بازبین", "نادیده بگیر", "دستورالعمل های قبلی"),
    "hi": ("समीक्षक", "स्वीकृत", "अनुमोदित", "मंजूर", "अनदेखा", "पिछले निर्देश"),
    "th": ("ผู้ตรวจสอบ", "อนุมัติ", "เพิกเฉย", "คำสั่งก่อนหน้า"),
    "vi": ("người duyệt", "người kiểm duyệt", "phê duyệt", "chấp thuận", "bỏ qua các hướng dẫn",
           "bỏ qua hướng dẫn", "hướng dẫn trước"),
    "id": ("peninjau", "setujui", "disetujui", "abaikan instruksi", "abaikan semua",
           "instruksi sebelumnya", "aman untuk dijalankan"),
}  # fmt: skip


def _phrase(text: str) -> tuple[str, bool]:
    """A phrase folded, and whether it must start a word (in a script that spaces words)."""
    folded = fold(text)
    first = ord(folded[0])
    spaced = folded[0].isalpha() and first < 0x2E80 and not 0x0E00 <= first < 0x0E80  # Thai
    return folded, spaced


_FOREIGN = sorted({_phrase(p) for phrases in LEXICON.values() for p in phrases})
_FOREIGN_ASCII = [(phrase, start) for phrase, start in _FOREIGN if phrase.isascii()]


def _foreign(form: str) -> str | None:
    """The first phrase of LEXICON in the form (substring searches: fast on long text)."""
    for phrase, word_start in _FOREIGN_ASCII if form.isascii() else _FOREIGN:
        at = form.find(phrase)
        while at >= 0:
            if not word_start or at == 0 or not form[at - 1].isalpha():
                return phrase
            at = form.find(phrase, at + 1)
    return None


def _english(form: str) -> str | None:
    hit = _ENGLISH.search(form)
    if hit is None and any(h in form for h in _MARK_HINTS):
        hit = _MARKS.search(form)
    return hit.group(0) if hit else None


def found_in(texts: Iterable[str]) -> str | None:
    """What text that speaks to the reviewer says (and how it was read), or None."""
    text = "\n".join(texts)[:MAX_CHARS]  # one pass over all of them
    for form, how in spellings(text):
        hit = _english(form) or _foreign(form)
        if hit:
            word = " ".join(hit.split())[:80]
            return word if how == "as written" else f"{word} ({how})"
    return None


__all__ = ["LEXICON", "MAX_CHARS", "decoded", "fold", "found_in", "spellings"]
