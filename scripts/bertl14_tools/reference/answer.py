"""What the firmware answers for a classification, for the host tools (predict, eval, report, validate).

The score threshold (app/src/protocol.c):

    in_domain(label, score_milli, min_score_milli) -> bool
        the device's rule: score_milli >= min_score_milli, and the label `none` is never in domain
    device_answer(label, score_milli, min_score_milli) -> (intent, best)
        ("HassTurnOn", None) in domain; ("none", "HassTurnOn") under the threshold; ("none", None) when the
        model's own `none` class won (the firmware prints no `best=` then)
    threshold_for(names, min_score_milli, min_score_named_milli) -> int
        the threshold a sentence is answered with: the named one when the registry replaced at least one name,
        area or floor in it (`names` of them), else the plain one
    to_milli(value) -> int                 a threshold in 0..1 as the converter compiles it (BERTL14_MIN_SCORE_MILLI)
    model_min_score_milli(model) -> int    the model's own threshold (training.json `min_score`, via the manifest)
    model_min_score_named_milli(model) -> int
        its threshold for sentences with a registry name (training.json `min_score_named`, else `min_score`)
    thresholds_for(model, plain, named) -> (plain, named)   the thresholds the host tools answer with

The domain rule (app/src/intent.c, bertl14_classify_allowed): with a registry, a device's name becomes [NAME]
before the model reads the sentence, so the model cannot tell a fan from a blind; the registry can. When the
matcher found entity names whose domains are known, the answer is the best label, by the model's logits,
among the intents that accept at least one of those domains (`none` and the intents that never take a name
stay allowed), and its score is that label's softmax probability from the same logits:

    allowed_labels(masks, name_mask) -> list[bool] | None
    classify_allowed(logits, allowed) -> (label, score_q16)   the Python twin of bertl14_classify_allowed

The domain table itself (intent_domains.json, label and name domain masks) is registry/domains.py.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import UserError
from ..registry.domains import NONE_LABEL

MAX_VAL_FALSE_ACCEPT = 0.05     # `bertl14 train` chooses min_score under this out-of-domain false-accept rate


# ---- the score threshold ------------------------------------------------------------------------------------------
def in_domain(label: str, score_milli: int, min_score_milli: int) -> bool:
    """protocol.c: `r.score_milli >= min_score && strcmp(name, "none") != 0` (min_score: threshold_for)."""
    return int(score_milli) >= int(min_score_milli) and label != NONE_LABEL


def device_answer(label: str, score_milli: int, min_score_milli: int) -> tuple[str, str | None]:
    """(intent, best): what the firmware prints as `intent=` and `best=` (None: no best= field)."""
    if in_domain(label, score_milli, min_score_milli):
        return label, None
    return NONE_LABEL, (None if label == NONE_LABEL else label)


def threshold_for(names: int, min_score_milli: int, min_score_named_milli: int) -> int:
    """protocol.c: `r.n_slots > 0 ? APP_MIN_SCORE_NAMED_MILLI : APP_MIN_SCORE_MILLI`."""
    return min_score_named_milli if names > 0 else min_score_milli


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
    from ..model.convert import manifest_source, model_min_score_milli as source_min_score_milli
    source = getattr(model, "source_dir", None) or manifest_source(Path(model.path), model.manifest)
    return source_min_score_milli(Path(source)) if source else 0


def model_min_score_named_milli(model) -> int:
    """The threshold a firmware built from this model answers a sentence with a registry name with by default
    (CONFIG_APP_MIN_SCORE_NAMED=-1): the converter's `min_score_named_milli` (manifest.json,
    BERTL14_MIN_SCORE_NAMED_MILLI), else the source folder's training.json `min_score_named`, else the plain
    threshold (model_min_score_milli)."""
    value = model.manifest.get("min_score_named_milli")
    if value is not None:
        return int(value)
    from ..model.convert import manifest_source, training_threshold_milli
    source = getattr(model, "source_dir", None) or manifest_source(Path(model.path), model.manifest)
    value = training_threshold_milli(Path(source), "min_score_named") if source else None
    return model_min_score_milli(model) if value is None else value


def min_score_for(model, override: float | None) -> int:
    """--min-score X when given, else the model's own threshold."""
    return model_min_score_milli(model) if override is None else to_milli(override)


def thresholds_for(model, min_score_milli: int | None, min_score_named_milli: int | None) -> tuple[int, int]:
    """(plain, named) thresholds in thousandths: each as given, None the model's own, except that a plain one
    given alone is also the named one (one threshold for every sentence: `--min-score 0` stays the plain
    argmax)."""
    plain = model_min_score_milli(model) if min_score_milli is None else int(min_score_milli)
    if min_score_named_milli is not None:
        return plain, int(min_score_named_milli)
    return plain, (model_min_score_named_milli(model) if min_score_milli is None else plain)


# ---- the domain rule ----------------------------------------------------------------------------------------------
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
    from .integer import div_round, exp_q23
    logits = np.asarray(logits, np.int64)
    ok = np.ones(len(logits), bool) if allowed is None else np.asarray(allowed, bool)
    if not ok.any():
        ok[:] = True
    label = int(np.flatnonzero(ok)[np.argmax(logits[ok])])
    e = exp_q23(logits[label] - logits[ok])
    return label, min(65535, int(div_round(int(exp_q23(np.zeros(1, np.int64))[0]) << 16, int(e.sum()))))

