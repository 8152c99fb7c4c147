"""Test sentences for tokenizer parity, generated (never read from the public test set).

`intent_sentences(lang, n, seed)`: Home Assistant intent templates (home-assistant-intents, hassil syntax) expanded
by bertl14_tools.data.dataset's seeded random walk, slot values from our own lists (zh-CN's for zh-HK and zh-TW), then
varied in case and punctuation so cased vocabularies see capitals. `random_unicode(n, seed)`: strings drawn from
all planes plus the scripts tokenizers get wrong most often. `ADVERSARIAL`: the hand-made list.
"""
from __future__ import annotations

import random

LANGS = ("en", "zh-CN", "zh-HK", "zh-TW")

ADVERSARIAL = [
    "", " ", "   \t\n\r  ", "\u00a0\u3000\u2003\u2028\u2029\u202f\u205f\u1680", "\x0b\x0c\x1c\x1d\x1e\x1f\x85",
    "only whitespace \u3000 here\u00a0too", "tab\tseparated\nlines\r\nwindows",
    "café naïve résumé Ångström Ørsted façade coöperate", "CAFÉ NAÏVE RÉSUMÉ", "e\u0301 cafe\u0301 a\u0300\u0301\u0302b",
    "İstanbul ıi ß ẞ ǅ ǈ ǋ ﬁ ﬂ Σ ΟΔΟΣ ὈΔΥΣΣΕΎΣ", "Ⅻ ⅻ ① ⒜ ㎏ ℃ ™ Ω K Å",
    "ＦＵＬＬ－ｗｉｄｔｈ　ｆｏｒｍｓ！？　１２３", "ｈｅｌｌｏ，ｗｏｒｌｄ。", "ｶﾀｶﾅ ﾊﾝｶｸ",
    "emoji 😀😃 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ #️⃣ 🇨🇳🇺🇸", "zero\u200bwidth\u200cjoiners\u200dand\ufeffbom\u2060",
    "soft\u00adhyphen", "bidi \u202aembed\u202c \u200e\u200f\u2066iso\u2069",
    "控制\x01字符\x07与\x1b[31m转义", "\x7f\x80", "replacement \ufffd char", "private \ue000\uf8ff use",
    "noncharacters \ufdd0 \uffff \U0010fffe", "unassigned \u0378 \U0003ffff \U000e0080",
    "mixed 中文English混合Text 한국어 日本語のテキスト Русский текст العربية עברית हिन्दी ไทย",
    "打开客厅的灯，然后关掉卧室的空调！", "開啟客廳的燈，然後關掉睡房的冷氣。", "把溫度調到二十五度",
    "𠀀𠀁 𪜀 𫝀 𫠠 𬺰 𮯠 丽 丽", "﨎﨏 兀 嗀", "⺀ ⼀ 〇 々 〆 ゝ ヽ ー",
    "a" * 99, "a" * 100, "a" * 101, "b" * 200, "ab" * 100, "x" + "\u0301" * 150, "é" * 100, "É" * 101,
    "supercalifragilisticexpialidocious" * 6, "中" * 200, "word " * 200, "😀" * 120,
    "a.b,c;d:e!f?g'h\"i(j)k[l]m{n}o<p>q/r\\s|t`u~v@w#x$y%z^&*_-+=", "¡¿«»‹›„“”‘’‚—–…·•†‡§¶",
    "[CLS] [SEP] [PAD] [UNK] [MASK] [mask] [Cls] [[MASK]] x[SEP]y [unused0] [MASK", "[",
    "don't won't y'all rock'n'roll 1,000,000.50 3.14e-10 10:30pm 50% $5 #1 @home",
    "Turn ON the LIGHTS in the Living-Room!!!", "what's the temperature?", "set   brightness\tto 50 %",
    "ﬃ ﬄ ﬅ", "Ǆemal ǅemal ǆemal", "ΐ ΰ ᾈ ᾼ ῼ", "ǰ ẖ ẗ ẘ ẙ", "Ꭰ ꭰ Ᏸ ᏸ", "𐐀 𐐨 𞤀 𞤢",
    "\u0f73 \u0f75 \u0f81 \u0344 \u0340 \u0343", "\U00011938 \U0001d15e \U0001d1bb", "\u1734 \u166d \u2e43",
    "각 갂 힣 ᄀ ᅡ ᆨ ㄱ ㅏ", "กรุงเทพมหานคร", "ئۇيغۇرچە", "\u0915\u094d\u0937", "a\u0308\u0304 o\u0323\u0302",
]


def _vary(text: str, rng: random.Random) -> str:
    r = rng.random()
    if r < 0.25:
        text = text[:1].upper() + text[1:]
    elif r < 0.35:
        text = text.upper()
    elif r < 0.45:
        text = text.title()
    elif r < 0.55:
        text = "".join(c.upper() if rng.random() < 0.3 else c for c in text)
    if rng.random() < 0.3:
        text += rng.choice(["?", "!", ".", "…", "。", "？", "！", " please", "，谢谢", " :)"])
    return text


def intent_sentences(lang: str, n: int, seed: int = 0) -> list[str]:
    """n sentences (duplicates allowed) from the templates of `lang`."""
    import home_assistant_intents
    from hassil.intents import Intents

    from bertl14_tools.data import dataset as data

    rng = random.Random(f"{lang}-{seed}")
    slot_lang = "en" if lang == "en" else "zh-CN"
    intents = data.load_intents(lang) if lang in data.LANGUAGES else Intents.from_dict(
        {**home_assistant_intents.get_intents(lang), "language": lang})
    expander = data.Expander(intents, lang if lang in data.LANGUAGES else slot_lang,
                             data.load_slot_values(slot_lang), rng)
    templates = [(name, d, s) for name in sorted(intents.intents) for d, s in expander.templates(name)]
    out = []
    while len(out) < n:
        name, d, s = templates[rng.randrange(len(templates))]
        try:
            text = expander.sample(name, d, s).text
        except Exception:  # a template needing a list we have no values for: skip it
            continue
        out.append(_vary(text, rng) if lang == "en" or rng.random() < 0.3 else text)
    return out


POOLS = [(0x20, 0x7F), (0xA0, 0x250), (0x250, 0x370), (0x300, 0x370), (0x370, 0x530), (0x590, 0x800),
         (0x900, 0xE00), (0x1100, 0x1200), (0x1E00, 0x2000), (0x2000, 0x2070), (0x2E80, 0x3100),
         (0x3400, 0x4DC0), (0x4E00, 0xA000), (0xAC00, 0xD7A4), (0xF900, 0xFB00), (0xFE00, 0xFFFF),
         (0x10000, 0x1D000), (0x1F000, 0x1FB00), (0x20000, 0x2FA20), (0xE0000, 0xE0080), (0, 0x110000)]


def random_unicode(n: int, seed: int = 0, max_len: int = 60) -> list[str]:
    """n random strings of valid code points (no surrogates, no NUL), words separated by spaces now and then."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        chars = []
        pool = rng.choice(POOLS)
        for _ in range(rng.randint(0, max_len)):
            if rng.random() < 0.15:
                pool = rng.choice(POOLS)
            if rng.random() < 0.12:
                chars.append(" ")
                continue
            cp = rng.randrange(*pool)
            if 0xD800 <= cp <= 0xDFFF or cp == 0:
                cp = 0x20
            chars.append(chr(cp))
        out.append("".join(chars))
    return out
