"""`bertl14 report`: per-intent precision/recall/F1, a confusion matrix, the threshold curve and a trade-off plot.

The model is evaluated with the integer reference (or `--engine c|float`) through the converter, so
the figures are those of the converted model at each `--prune-heads` and `max_seq_len` point. With the
model's shipped `min_score` (or `--min-score`) it also gives the accuracy the device answers with
(a score under the threshold answers `none`) and, with `--ood FILE`, the out-of-domain false-accept rate;
threshold.png draws both against every min_score, one threshold for every sentence, the model's marked (the
pictures: plots.py).
With `--entities FILE` (a registry, docs/registry.md) every sentence goes through the registry matcher first,
as on a device with that registry: known names become placeholders before tokenizing, and the figures at the
model's thresholds answer a sentence with a name under `min_score_named` (or `--min-score-named`), as the firmware.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..reference.infer import per_label_scores


def markdown_table(rows: list[dict], accuracy: float) -> str:
    lines = ["| intent | precision | recall | F1 | support |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['label']} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | {r['support']} |")
    macro = sum(r["f1"] for r in rows) / max(1, len(rows))
    lines.append(f"| **all** (accuracy {accuracy:.4f}) | | | macro {macro:.3f} | {sum(r['support'] for r in rows)} |")
    return "\n".join(lines) + "\n"


def confusion_png(gold: list[str], pred: list[str], path: Path, title: str) -> dict:
    from .plots import confusion_png as draw
    return draw(gold, pred, path, title)


# min_score values of the threshold curve, in thousandths: every 0.01 up to 0.9, then every 0.001 (calibrated
# models put their threshold near the top)
THRESHOLD_GRID = list(range(0, 900, 10)) + list(range(900, 1001))


def threshold_curve(gold: list[str], scored: list[tuple[str, int]], ood_scored: list[tuple[str, int]] | None,
                    extra_milli: int | None = None, named: list[bool] | None = None,
                    named_milli: int | None = None, ood_named: list[bool] | None = None) -> list[dict]:
    """In-domain accuracy and out-of-domain false-accept rate (None without out-of-domain data) at every
    min_score of THRESHOLD_GRID (and `extra_milli`), answered by the device's rule (apply_min_score); with `named`
    (and `ood_named`), the sentences in which the registry replaced a name keep the threshold `named_milli`."""
    grid = sorted(set(THRESHOLD_GRID) | ({extra_milli} if extra_milli is not None else set()))
    rows = []
    for t in grid:
        answers = apply_min_score(scored, t, named, named_milli)
        row = {"min_score": t / 1000, "accuracy": round(sum(g == a for g, a in zip(gold, answers)) / len(gold), 4),
               "ood_false_accept": None}
        if ood_scored:
            row["ood_false_accept"] = round(sum(a != "none" for a in apply_min_score(ood_scored, t, ood_named,
                                                                                     named_milli))
                                            / len(ood_scored), 4)
        rows.append(row)
    return rows


def false_accept_bound() -> float | None:
    """The out-of-domain false-accept bound `bertl14 train` chooses min_score under (drawn for reference)."""
    from ..reference.answer import MAX_VAL_FALSE_ACCEPT
    return MAX_VAL_FALSE_ACCEPT


def manifest_memory(manifest: dict) -> tuple[int | None, int | None]:
    """(flash bytes of the model data, work-buffer bytes) from a converted model's manifest."""
    flash = manifest.get("flash_bytes")
    if isinstance(flash, dict):
        flash = flash.get("total")
    ram = manifest.get("work_buffer_bytes")
    return (int(flash) if flash is not None else None), (int(ram) if ram is not None else None)


def predict_scored(model, engine: str, texts: list[str], entities=None, named: list[bool] | None = None) \
        -> list[tuple[str, int]]:
    """(best label, score in thousandths) of every text, without a threshold (infer.Answerer: with `entities`,
    the names replaced first, as on the device); integer engines give the device's score. With a `named` list,
    whether the registry replaced a name in each text is appended to it (the device's named threshold)."""
    from .. import ui
    from ..reference.infer import Answerer
    run = Answerer(model, engine, entities, min_score_milli=0, min_score_named_milli=0)
    out = []
    for t in ui.progress(texts, desc=f"predict ({engine})", unit="sent", leave=False):
        a = run(t)
        out.append((a.label, a.score_milli))
        if named is not None:
            named.append(bool(a.slots))
    return out


def predict_all(model, engine: str, texts: list[str], entities=None) -> list[str]:
    return [label for label, _ in predict_scored(model, engine, texts, entities)]


def apply_min_score(scored: list[tuple[str, int]], min_score_milli: int, named: list[bool] | None = None,
                    min_score_named_milli: int | None = None) -> list[str]:
    """The device's answers (answer.device_answer) for (label, score in thousandths) pairs at a threshold in
    thousandths; with `named` (whether the registry replaced a name in each text) the named threshold for those
    (answer.threshold_for)."""
    from ..reference.answer import device_answer, threshold_for
    if named is None or min_score_named_milli is None:
        return [device_answer(label, milli, min_score_milli)[0] for label, milli in scored]
    return [device_answer(label, milli, threshold_for(int(n), min_score_milli, min_score_named_milli))[0]
            for (label, milli), n in zip(scored, named)]


def run(args) -> int:
    from .. import textio, ui
    from ..model.convert import ConvertOptions
    from ..reference.infer import check_labels
    from ..model.folder import open_model

    numbered = textio.read_jsonl_numbered(args.data, "--data", need=("text", "intent"))   # before any work
    ood_numbered = textio.read_jsonl_numbered(args.ood, "--ood", need=("text",)) if args.ood else []
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from ..reference.answer import thresholds_for, to_milli
    model = open_model(args.model, progress=ui.show_progress())
    check_labels(numbered, model.labels, args.data)
    texts, gold = [r["text"] for _, r in numbered], [str(r["intent"]) for _, r in numbered]
    ent = None
    if args.entities:
        from ..reference.infer import Entities
        ent = Entities(args.entities, model, args.engine)
    named: list[bool] = []
    scored = predict_scored(model, args.engine, texts, ent, named)
    pred = [label for label, _ in scored]
    acc = sum(g == p for g, p in zip(gold, pred)) / len(gold)
    # the device's thresholds: the plain one, and with a registry the one for sentences with a name
    milli, named_milli = thresholds_for(model, None if args.min_score is None else to_milli(args.min_score),
                                        None if args.min_score_named is None else
                                        to_milli(args.min_score_named, "--min-score-named"))
    min_score = milli / 1000
    at_threshold = {"min_score": min_score, "accuracy": sum(g == p for g, p in zip(
        gold, apply_min_score(scored, milli, named, named_milli))) / len(gold)}
    if ent:
        at_threshold.update(min_score_named=named_milli / 1000, sentences_with_names=sum(named))
    ood_scored, ood_named = None, None
    if args.ood:
        ood_texts = [r["text"] for _, r in ood_numbered]
        ood_named = []
        ood_scored = predict_scored(model, args.engine, ood_texts, ent, ood_named)
        for key, t, tn in (("ood_false_accept_no_threshold", 0, 0), ("ood_false_accept", milli, named_milli)):
            accepted = sum(p != "none" for p in apply_min_score(ood_scored, t, ood_named, tn))
            at_threshold[key] = {"n": len(ood_texts), "accepted": accepted, "rate": accepted / len(ood_texts)}
    rows = per_label_scores(gold, pred)
    name = Path(args.model).name
    with_registry = f", names masked with the registry {Path(args.entities).name}" if args.entities else ""
    (out / "per_intent.md").write_text(f"# {name} on {Path(args.data).name} ({args.engine} engine{with_registry})\n\n"
                                       + markdown_table(rows, acc), encoding="utf-8")
    confusion_png(gold, pred, out / "confusion.png", f"{name} ({args.engine}) on {Path(args.data).name}{with_registry}, "
                  f"accuracy {acc:.4f} (no threshold)")
    # with a registry the sentences with a name keep min_score_named: the marked point is the device's answer
    curve = threshold_curve(gold, scored, ood_scored, milli, named if ent else None, named_milli,
                            ood_named if ent and args.ood else None)
    from .plots import threshold_png
    threshold_png(curve, min_score, out / "threshold.png",
                  f"{name} ({args.engine}): {Path(args.data).name}"
                  + (f" and out-of-domain {Path(args.ood).name}" if args.ood else "") + with_registry,
                  bound=false_accept_bound(), named=named_milli / 1000 if ent else None)
    points = []
    if not args.no_tradeoff:
        heads = json.loads((Path(args.model) / "config.json").read_text()).get("num_attention_heads", 1) \
            if (Path(args.model) / "config.json").exists() else 1
        for seq in args.seq_lens:
            for prune in range(heads):
                m = open_model(args.model, ConvertOptions(max_seq_len=seq, prune_heads=prune, progress=False),
                               progress=False)
                p = predict_all(m, args.engine, texts, ent)
                flash, ram = manifest_memory(m.manifest)
                points.append({"max_seq_len": seq, "prune_heads": prune, "flash": flash, "work_buffer": ram,
                               "accuracy": sum(g == q for g, q in zip(gold, p)) / len(gold)})
        tradeoff_png(points, out / "tradeoff.png", name)
    summary = {"model": str(args.model), "data": str(args.data), "engine": args.engine, "n": len(gold),
               "entities": Path(args.entities).name if args.entities else None,
               "accuracy": acc, "macro_f1": sum(r["f1"] for r in rows) / len(rows), "at_min_score": at_threshold,
               "ood": args.ood, "tradeoff": points, "threshold_curve": curve}
    (out / "report.json").write_text(json.dumps(summary, indent=1) + "\n")
    if args.json:
        ui.emit_json(summary)
        return 0
    ood = at_threshold.get("ood_false_accept")
    named_note = f" ({named_milli / 1000} with a registry name)" if ent else ""
    print(f"{out}: accuracy {acc:.4f}, macro-F1 {summary['macro_f1']:.4f}; at min_score {min_score}{named_note}: accuracy "
          f"{at_threshold['accuracy']:.4f}" + (f", out-of-domain false accepts {ood['accepted']}/{ood['n']} = "
                                              f"{ood['rate']:.4f}" if ood else "")
          + "; per_intent.md, confusion.png, threshold.png" + (", tradeoff.png" if points else ""))
    return 0


def tradeoff_png(points: list[dict], path: Path, name: str) -> None:
    from .plots import tradeoff_png as draw
    draw(points, path, name)


def register(subparsers) -> None:
    p = subparsers.add_parser("report", help="per-intent scores, confusion matrix, threshold curve and trade-off plot",
                              description=__doc__.splitlines()[0])
    from .. import ui
    p.add_argument("--model", required=True, help="Hugging Face model folder (or a converted one)")
    p.add_argument("--data", required=True, metavar="FILE.jsonl",
                   help="JSON lines with \"text\" and \"intent\" (every intent one of the model's labels, or none)")
    p.add_argument("--out", required=True, help="output folder (per_intent.md, confusion.png, threshold.png, "
                                                "tradeoff.png, report.json)")
    p.add_argument("--engine", default="ref", choices=["ref", "c", "float"],
                   help="ref: the Python integer reference (bit-exact with the device); c: the C library; "
                        "float: the unquantized model (default ref)")
    ui.int_list_argument(p, "--seq-lens", [16, 32, 64], 8, 512,
                         "max_seq_len values of the trade-off plot")
    p.add_argument("--no-tradeoff", action="store_true", help="only the table and the confusion matrix")
    p.add_argument("--min-score", type=ui.fraction,
                   help="score threshold in 0..1, compared in thousandths as on the device (default: the model's "
                        "own min_score from training.json, else 0); alone, also the threshold of sentences with a "
                        "registry name")
    p.add_argument("--min-score-named", type=ui.fraction, metavar="X",
                   help="with --entities: the threshold of the sentences in which the registry replaced a name "
                        "(default: the model's own min_score_named, as the firmware)")
    p.add_argument("--entities", metavar="FILE",
                   help="registry (YAML or *_home.json): names become placeholders before tokenizing, as on a device")
    p.add_argument("--ood", metavar="FILE.jsonl",
                   help="out-of-domain sentences (intent none): false-accept rate with and without min_score")
    ui.add_output_options(p, "print report.json's figures as one JSON object instead of the summary line")
    p.set_defaults(func=run)
