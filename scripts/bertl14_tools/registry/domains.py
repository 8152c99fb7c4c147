"""The domains of the registry's names and the intents that accept them (docs/registry.md, "The domain of a name").

    DOMAINS                                          a domain's index is its number on the device
    load_intent_domains(model_dir) -> dict | None    the model folder's intent_domains.json (data.dataset.intent_domains)
    label_domain_masks(labels, table) -> list[int]   label index -> bit d for DOMAINS[d]
    name_domain_mask(domains) -> int                 bits of the matched names' known domains (0: no rule)

The answer side of the rule (which labels may answer, and their score) is reference/answer.py.
"""
from __future__ import annotations

from pathlib import Path

from ..textio import read_intent_table

DOMAINS = ("", "light", "fan", "switch", "lock", "cover", "media_player", "climate", "vacuum", "lawn_mower",
           "sensor", "binary_sensor", "scene", "script", "button", "valve", "humidifier", "water_heater",
           "todo", "weather", "timer", "input_boolean", "alarm_control_panel", "camera", "siren")
NONE_LABEL = "none"             # the model's out-of-domain label
ALL_DOMAINS = 0xFFFFFFFF        # a label that is never filtered (none, intents that take no name)
INTENT_DOMAINS_FILE = "intent_domains.json"   # in a model folder (model/hf.py: a conversion's input, carried along)


def load_intent_domains(model_dir: str | Path) -> dict[str, list[str]] | None:
    """intent -> the domains its {name} accepts (None: the model ships no table, so nothing is filtered)."""
    return read_intent_table(model_dir, INTENT_DOMAINS_FILE, "domain")


def domain_bit(domain: str | int) -> int:
    """The bit of a domain (a name, or its index in DOMAINS as the table stores it); 0 for unknown."""
    index = domain if isinstance(domain, int) else (DOMAINS.index(domain) if domain in DOMAINS else 0)
    return 1 << index if 0 < index < 32 else 0


def label_domain_masks(labels: list[str], table: dict[str, list[str]]) -> list[int]:
    """One uint32 per label: bit d set when the intent accepts a name of domain DOMAINS[d]. `none` and
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
    """The bits of the matched entity names' domains (DOMAINS indices; 0 = unknown adds nothing)."""
    mask = 0
    for d in domains:
        mask |= domain_bit(int(d))
    return mask
