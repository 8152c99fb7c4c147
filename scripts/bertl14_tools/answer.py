"""What the firmware answers for a classification, for the host tools (predict, eval, report, validate).

The score threshold (app/src/protocol.c):

    in_domain(label, score_milli, min_score_milli) -> bool
        the device's rule: score_milli >= min_score_milli, and the label `none` is never in domain
    device_answer(label, score_milli, min_score_milli) -> (intent, best)
        ("HassTurnOn", None) in domain; ("none", "HassTurnOn") under the threshold; ("none", None) when the
        model's own `none` class won (the firmware prints no `best=` then)
    to_milli(value) -> int                 a threshold in 0..1 as the converter compiles it (BERTL14_MIN_SCORE_MILLI)
    model_min_score_milli(model) -> int    the model's own threshold (training.json `min_score`, via the manifest)
"""
from __future__ import annotations

import json
from pathlib import Path

from .errors import UserError

NONE_LABEL = "none"


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


def _manifest_source(folder: Path, manifest: dict | None = None) -> Path | None:
    if manifest is None:
        mpath = Path(folder) / "manifest.json"
        if not mpath.is_file():
            return None
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    rel = (manifest.get("sources") or {}).get("path")
    return (Path(folder) / rel).resolve() if rel else None
