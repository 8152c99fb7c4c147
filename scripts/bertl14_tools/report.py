"""`bertl14 report`: per-intent precision/recall/F1, a confusion matrix and an accuracy/memory trade-off plot.

The model is evaluated with the integer reference (or `--engine c|float`) through the converter, so
the figures are those of the converted model at each `--prune-heads` and `max_seq_len` point. With the
model's shipped `min_score` (or `--min-score`) it also gives the accuracy the device answers with
(a score under the threshold answers `none`) and, with `--ood FILE`, the out-of-domain false-accept rate.
With `--entities FILE` (a registry, docs/registry.md) every sentence goes through the registry matcher first,
as on a device with that registry: known names become placeholders before tokenizing.
"""
from __future__ import annotations

import json
from pathlib import Path


def per_label_scores(gold: list[str], pred: list[str]) -> list[dict]:
    """Precision, recall, F1 and support of every gold label, in label order."""
    rows = []
    for lab in sorted(set(gold)):
        tp = sum(g == p == lab for g, p in zip(gold, pred))
        fp = sum(p == lab and g != lab for g, p in zip(gold, pred))
        fn = sum(g == lab and p != lab for g, p in zip(gold, pred))
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        rows.append({"label": lab, "precision": prec, "recall": rec, "f1": f1, "support": tp + fn})
    return rows


def markdown_table(rows: list[dict], accuracy: float) -> str:
    lines = ["| intent | precision | recall | F1 | support |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['label']} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | {r['support']} |")
    macro = sum(r["f1"] for r in rows) / max(1, len(rows))
    lines.append(f"| **all** (accuracy {accuracy:.4f}) | | | macro {macro:.3f} | {sum(r['support'] for r in rows)} |")
    return "\n".join(lines) + "\n"


def confusion_png(gold: list[str], pred: list[str], path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    labels = sorted(set(gold) | set(pred))
    index = {lab: i for i, lab in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)), dtype=int)
    for g, p in zip(gold, pred):
        m[index[g], index[p]] += 1
    norm = m / np.maximum(1, m.sum(axis=1, keepdims=True))
    size = max(6, 0.28 * len(labels))
    fig, ax = plt.subplots(figsize=(size, size))
    ax.imshow(norm, cmap="Blues", vmin=0, vmax=1)
    ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    for i, j in zip(*np.nonzero(m)):
        if i != j:
            ax.text(j, i, str(m[i, j]), ha="center", va="center", fontsize=6, color="red")
    ax.set_xlabel("predicted")
    ax.set_ylabel("expected")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def manifest_memory(manifest: dict) -> tuple[int | None, int | None]:
    """(flash bytes of the model data, work-buffer bytes) from a converted model's manifest."""
    flash = manifest.get("flash_bytes")
    if isinstance(flash, dict):
        flash = flash.get("total")
    ram = manifest.get("work_buffer_bytes")
    return (int(flash) if flash is not None else None), (int(ram) if ram is not None else None)


def predict_scored(model, engine: str, texts: list[str], entities=None) -> list[tuple[str, int]]:
    """(best label, score in thousandths) of every text, without a threshold (infer.Answerer: with `entities`,
    the names replaced first, as on the device); integer engines give the device's score."""
    from . import ui
    from .infer import Answerer
    run = Answerer(model, engine, entities, min_score_milli=0)
    out = []
    for t in ui.progress(texts, desc=f"predict ({engine})", unit="sent", leave=False):
        a = run(t)
        out.append((a.label, a.score_milli))
    return out


def predict_all(model, engine: str, texts: list[str], entities=None) -> list[str]:
    return [label for label, _ in predict_scored(model, engine, texts, entities)]


def apply_min_score(scored: list[tuple[str, int]], min_score_milli: int) -> list[str]:
    """The device's answers (answer.device_answer) for (label, score in thousandths) pairs at a threshold in
    thousandths."""
    from .answer import device_answer
    return [device_answer(label, milli, min_score_milli)[0] for label, milli in scored]


def run(args) -> int:
    from . import textio, ui
    from .convert import ConvertOptions
    from .infer import check_labels
    from .modelio import open_model

    numbered = textio.read_jsonl_numbered(args.data, "--data", need=("text", "intent"))   # before any work
    ood_numbered = textio.read_jsonl_numbered(args.ood, "--ood", need=("text",)) if args.ood else []
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from .answer import min_score_for
    model = open_model(args.model, progress=ui.show_progress())
    check_labels(numbered, model.labels, args.data)
    texts, gold = [r["text"] for _, r in numbered], [str(r["intent"]) for _, r in numbered]
    ent = None
    if args.entities:
        from .infer import Entities
        ent = Entities(args.entities, model, args.engine)
    scored = predict_scored(model, args.engine, texts, ent)
    pred = [label for label, _ in scored]
    acc = sum(g == p for g, p in zip(gold, pred)) / len(gold)
    milli = min_score_for(model, args.min_score)
    min_score = milli / 1000
    at_threshold = {"min_score": min_score,
                    "accuracy": sum(g == p for g, p in zip(gold, apply_min_score(scored, milli))) / len(gold)}
    if args.ood:
        ood_texts = [r["text"] for _, r in ood_numbered]
        ood_scored = predict_scored(model, args.engine, ood_texts, ent)
        for key, t in (("ood_false_accept_no_threshold", 0), ("ood_false_accept", milli)):
            accepted = sum(p != "none" for p in apply_min_score(ood_scored, t))
            at_threshold[key] = {"n": len(ood_texts), "accepted": accepted, "rate": accepted / len(ood_texts)}
    rows = per_label_scores(gold, pred)
    name = Path(args.model).name
    with_registry = f", names masked with the registry {Path(args.entities).name}" if args.entities else ""
    (out / "per_intent.md").write_text(f"# {name} on {Path(args.data).name} ({args.engine} engine{with_registry})\n\n"
                                       + markdown_table(rows, acc), encoding="utf-8")
    confusion_png(gold, pred, out / "confusion.png", f"{name} ({args.engine}), accuracy {acc:.4f}")
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
               "ood": args.ood, "tradeoff": points}
    (out / "report.json").write_text(json.dumps(summary, indent=1) + "\n")
    if args.json:
        ui.emit_json(summary)
        return 0
    ood = at_threshold.get("ood_false_accept")
    print(f"{out}: accuracy {acc:.4f}, macro-F1 {summary['macro_f1']:.4f}; at min_score {min_score}: accuracy "
          f"{at_threshold['accuracy']:.4f}" + (f", out-of-domain false accepts {ood['accepted']}/{ood['n']} = "
                                              f"{ood['rate']:.4f}" if ood else "")
          + "; per_intent.md, confusion.png" + (", tradeoff.png" if points else ""))
    return 0


def tradeoff_png(points: list[dict], path: Path, name: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    if not points:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for k, seq in enumerate(sorted({p["max_seq_len"] for p in points})):
        pts = [p for p in points if p["max_seq_len"] == seq]
        ax.plot([p["prune_heads"] for p in pts], [p["accuracy"] for p in pts], marker="o", label=f"max_seq_len {seq}")
        for p in pts:
            if p["flash"] is not None:
                ax.annotate(f"seq {seq}: {p['flash'] / 1024:.0f}K flash, {(p['work_buffer'] or 0) / 1024:.1f}K RAM",
                            (p["prune_heads"], p["accuracy"]), fontsize=6, textcoords="offset points",
                            xytext=(6, 4 - 9 * k))
    ax.set_xticks(sorted({p["prune_heads"] for p in points}))
    ax.set_xlabel("heads pruned per layer (--prune-heads)")
    ax.set_ylabel("accuracy")
    ax.set_title(f"{name}: accuracy against memory")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def register(subparsers) -> None:
    p = subparsers.add_parser("report", help="per-intent scores, confusion matrix and trade-off plot",
                              description=__doc__.splitlines()[0])
    from . import ui
    p.add_argument("--model", required=True, help="Hugging Face model folder (or a converted one)")
    p.add_argument("--data", required=True, metavar="FILE.jsonl",
                   help="JSON lines with \"text\" and \"intent\" (every intent one of the model's labels, or none)")
    p.add_argument("--out", required=True, help="output folder (per_intent.md, confusion.png, tradeoff.png, "
                                                "report.json)")
    p.add_argument("--engine", default="ref", choices=["ref", "c", "float"],
                   help="ref: the Python integer reference (bit-exact with the device); c: the C library; "
                        "float: the unquantized model (default ref)")
    ui.int_list_argument(p, "--seq-lens", [16, 32, 64], 8, 512,
                         "max_seq_len values of the trade-off plot")
    p.add_argument("--no-tradeoff", action="store_true", help="only the table and the confusion matrix")
    p.add_argument("--min-score", type=ui.fraction,
                   help="score threshold in 0..1, compared in thousandths as on the device (default: the model's "
                        "own min_score from training.json, else 0)")
    p.add_argument("--entities", metavar="FILE",
                   help="registry (YAML or *_home.json): names become placeholders before tokenizing, as on a device")
    p.add_argument("--ood", metavar="FILE.jsonl",
                   help="out-of-domain sentences (intent none): false-accept rate with and without min_score")
    ui.add_output_options(p, "print report.json's figures as one JSON object instead of the summary line")
    p.set_defaults(func=run)
