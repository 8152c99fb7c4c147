"""What the firmware answers for a classification, for the host tools (predict, eval, report, validate).

The score threshold (app/src/protocol.c):

    in_domain(label, score_milli, min_score_milli) -> bool
        the device's rule: score_milli >= min_score_milli, and the label `none` is never in domain
    device_answer(label, score_milli, min_score_milli) -> (intent, best)
        ("HassTurnOn", None) in domain; ("none", "HassTurnOn") under the threshold; ("none", None) when the
        model's own `none` class won (the firmware prints no `best=` then)
    to_milli(value) -> int                 a threshold in 0..1 as the converter compiles it (BERTL14_MIN_SCORE_MILLI)
    model_min_score_milli(model) -> int    the model's own threshold (training.json `min_score`, via the manifest)

The domain rule (app/src/intent.c, bertl14_classify_allowed): with a registry, a device's name becomes [NAME]
before the model reads the sentence, so the model cannot tell a fan from a blind; the registry can. When the
matcher found entity names whose domains are known, the answer is the best label, by the model's logits,
among the intents that accept at least one of those domains (`none` and the intents that never take a name
stay allowed), and its score is that label's softmax probability from the same logits:

    load_intent_domains(model_dir) -> dict | None      the model folder's intent_domains.json (data.intent_domains)
    label_domain_masks(labels, table) -> list[int]     label index -> bit d for registry.DOMAINS[d]
    name_domain_mask(domains) -> int                   bits of the matched names' known domains (0: no rule)
    allowed_labels(masks, name_mask) -> list[bool] | None
    classify_allowed(logits, allowed) -> (label, score_q16)   the Python twin of bertl14_classify_allowed
    write_intent_domains(folder, dataset_stats)        intent_domains.json of a model trained on that dataset
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .errors import UserError

NONE_LABEL = "none"
ALL_DOMAINS = 0xFFFFFFFF        # a label that is never filtered (none, intents that take no name)
INTENT_DOMAINS_FILE = "intent_domains.json"


# ---- the score threshold ------------------------------------------------------------------------------------------
def in_domain(label: str, score_milli: int, min_score_milli: int) -> bool:
    """protocol.c: `r.score_milli >= APP_MIN_SCORE_MILLI && strcmp(name, "none") != 0`."""
    return int(score_milli) >= int(min_score_milli) and label != NONE_LABEL


def device_answer(label: str, score_milli: int, min_score_milli: int) -> tuple[str, str | None]:
    """(intent, best): what the firmware prints as `intent=` and `best=` (None: no best= field)."""
    if in_domain(label, score_milli, min_score_milli):
        return label, None
    return NONE_LABEL, (None if label == NONE_LABEL else label)


def to_milli(value: float, what: str = "--min-score") -> int:
    """A threshold in 0..1 in thousandths, rounded as the converter rounds training.json's min_score."""
    value = float(value)
    if not 0 <= value <= 1:
        raise UserError(f"{what} {value:g} is outside 0..1 (a probability; 0 answers the plain argmax)")
    return int(round(value * 1000))


def model_min_score_milli(model) -> int:
    """The threshold a firmware built from this model answers with by default (CONFIG_APP_MIN_SCORE=-1): the
    converter's `min_score_milli` (manifest.json, BERTL14_MIN_SCORE_MILLI), else the source folder's training.json,
    else 0."""
    value = model.manifest.get("min_score_milli")
    if value is not None:
        return int(value)
    source = getattr(model, "source_dir", None) or _manifest_source(model.path, model.manifest)
    path = Path(source) / "training.json" if source else None
    if path is not None and path.is_file():
        return to_milli(json.loads(path.read_text(encoding="utf-8")).get("min_score") or 0, f"{path}: min_score")
    return 0


def min_score_for(model, override: float | None) -> int:
    """--min-score X when given, else the model's own threshold."""
    return model_min_score_milli(model) if override is None else to_milli(override)


# ---- the domain rule ----------------------------------------------------------------------------------------------
def _manifest_source(folder: Path, manifest: dict | None = None) -> Path | None:
    if manifest is None:
        mpath = Path(folder) / "manifest.json"
        if not mpath.is_file():
            return None
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    rel = (manifest.get("sources") or {}).get("path")
    return (Path(folder) / rel).resolve() if rel else None


def find_intent_domains(model_dir: str | Path, source_dir: str | Path | None = None) -> Path | None:
    """intent_domains.json of a model folder: in it, else in the folder it was converted from (a build's
    generated/model names its source in manifest.json)."""
    for folder in (Path(model_dir), source_dir, _manifest_source(Path(model_dir))):
        if folder is not None and (Path(folder) / INTENT_DOMAINS_FILE).is_file():
            return Path(folder) / INTENT_DOMAINS_FILE
    return None


def load_intent_domains(model_dir: str | Path, source_dir: str | Path | None = None) -> dict[str, list[str]] | None:
    """intent -> the domains its {name} accepts (None: the model ships no table, so nothing is filtered)."""
    path = find_intent_domains(model_dir, source_dir)
    if path is None:
        return None
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise UserError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(table, dict) or not all(isinstance(v, list) for v in table.values()):
        raise UserError(f"{path}: expected {{\"Intent\": [\"domain\", ...]}}")
    return table


def domain_bit(domain: str | int) -> int:
    """The bit of a domain (a name, or its index in registry.DOMAINS as the table stores it); 0 for unknown."""
    from .registry import DOMAINS
    index = domain if isinstance(domain, int) else (DOMAINS.index(domain) if domain in DOMAINS else 0)
    return 1 << index if 0 < index < 32 else 0


def label_domain_masks(labels: list[str], table: dict[str, list[str]]) -> list[int]:
    """One uint32 per label: bit d set when the intent accepts a name of domain registry.DOMAINS[d]. `none` and
    the intents the table does not list (they take no name) accept every domain (ALL_DOMAINS)."""
    out = []
    for label in labels:
        if label == NONE_LABEL or label not in table:
            out.append(ALL_DOMAINS)
        else:
            mask = 0
            for d in table[label]:
                mask |= domain_bit(d)
            out.append(mask)
    return out


def name_domain_mask(domains) -> int:
    """The bits of the matched entity names' domains (registry.DOMAINS indices; 0 = unknown adds nothing)."""
    mask = 0
    for d in domains:
        mask |= domain_bit(int(d))
    return mask


def allowed_labels(masks: list[int] | None, name_mask: int) -> list[bool] | None:
    """Which labels may answer (None: all of them: no table, or no matched name of a known domain)."""
    if not masks or not name_mask:
        return None
    return [bool(m & name_mask) for m in masks]


def allowed_words(allowed: list[bool]) -> list[int]:
    """The allowed labels as bertl14_classify_allowed's bit array (bit c % 32 of word c / 32)."""
    words = [0] * ((len(allowed) + 31) // 32)
    for c, ok in enumerate(allowed):
        if ok:
            words[c >> 5] |= 1 << (c & 31)
    return words


def classify_allowed(logits, allowed: list[bool] | None = None) -> tuple[int, int]:
    """(label, score_q16): the first largest logit among the allowed labels (every label when `allowed` is None
    or allows none) and its softmax probability over the allowed labels in Q16, exp_q23(0) /
    sum exp_q23(logit[label] - allowed logits) rounded, capped at 65535: bertl14_classify_allowed bit for bit,
    and reference.classifier_score when every label is allowed."""
    from .reference import div_round, exp_q23
    logits = np.asarray(logits, np.int64)
    ok = np.ones(len(logits), bool) if allowed is None else np.asarray(allowed, bool)
    if not ok.any():
        ok[:] = True
    label = int(np.flatnonzero(ok)[np.argmax(logits[ok])])
    e = exp_q23(logits[label] - logits[ok])
    return label, min(65535, int(div_round(int(exp_q23(np.zeros(1, np.int64))[0]) << 16, int(e.sum()))))


def write_intent_domains(folder: str | Path, dataset_stats: dict) -> Path | None:
    """intent_domains.json of a model trained on a `bertl14 dataset` (its stats.json: language, intents files),
    from the same templates (data.intent_domains); nothing without a language."""
    from .data import intent_domains
    lang = dataset_stats.get("lang")
    if not lang:
        return None
    path = Path(folder) / INTENT_DOMAINS_FILE
    table = intent_domains(lang, dataset_stats.get("intent_files") or None)
    path.write_text(json.dumps(table, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path
