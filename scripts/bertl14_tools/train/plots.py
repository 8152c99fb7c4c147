"""The pictures of `bertl14 report`, `bertl14 train` and `bertl14 bench` (matplotlib, drawn off-screen to PNG).

    confusion_png(gold, pred, path, title)           counts in every non-empty cell, 3 to 50+ labels
    threshold_png(curve, chosen, path, title)        in-domain accuracy and out-of-domain false accepts
                                                     against min_score, the chosen min_score marked
    tradeoff_png(points, path, name)                 accuracy against flash and work buffer
    training_png(history, path, title, ...)        loss and validation accuracy by epoch (+ the threshold table)
    training_summary_png(summary, path)              the same from a training.json
    bench_instructions_png(rep, path)                instructions per sentence against tokens, log axes
    bench_stages_png(rep, path)                      where the instructions go, share per stage

Each takes plain lists/dicts (what report.json, training.json and bench's JSON hold), so a picture can be drawn
again from those files.
"""
from __future__ import annotations

import math
from pathlib import Path

DPI = 110
ACCURACY_COLOR = "#1f77b4"
FALSE_ACCEPT_COLOR = "#d62728"
LOSS_COLOR = "#7f7f7f"


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(fig, path: Path) -> None:
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    _pyplot().close(fig)


# ---- confusion matrix ----------------------------------------------------------------------------------------

def confusion_matrix(gold: list[str], pred: list[str]) -> tuple[list[str], list[list[int]]]:
    """(labels, counts[expected][predicted]) over every label that occurs in either list, sorted."""
    labels = sorted(set(gold) | set(pred))
    index = {lab: i for i, lab in enumerate(labels)}
    m = [[0] * len(labels) for _ in labels]
    for g, p in zip(gold, pred):
        m[index[g]][index[p]] += 1
    return labels, m


def confusion_png(gold: list[str], pred: list[str], path: Path, title: str) -> dict:
    """Rows: expected labels (with their count), columns: predicted. Every non-empty cell shows its count; correct
    answers (the diagonal) in blues, errors in reds, each shaded by its share of the row, so a row's mistakes stand
    out whatever its size. Cell and font sizes follow the number of labels (legible from 3 to 50 and more).
    Returns what was drawn: {"labels", "cells": {(row, column): text}, "cell_inches", "count_font"}."""
    import numpy as np
    plt = _pyplot()
    labels, counts = confusion_matrix(gold, pred)
    m = np.array(counts, dtype=int)
    n = len(labels)
    share = m / np.maximum(1, m.sum(axis=1, keepdims=True))
    cell = 0.55 if n <= 10 else 0.4 if n <= 25 else 0.3           # inches a cell
    tick_font = 9 if n <= 10 else 8 if n <= 25 else 7
    count_font = 10 if n <= 10 else 7 if n <= 25 else 6
    longest = max((len(lab) for lab in labels), default=4) + 6
    margin = 0.075 * tick_font * longest / 10                     # inches for the longest tick label
    side = max(2.0, n * cell)
    fig = plt.figure(figsize=(side + margin + 1.2, side + margin + 0.9))
    ax = fig.add_axes((margin / (side + margin + 1.2), margin / (side + margin + 0.9),
                       side / (side + margin + 1.2), side / (side + margin + 0.9)))
    diag = np.eye(n, dtype=bool)
    right = np.ma.masked_where(~diag | (m == 0), share)
    wrong = np.ma.masked_where(diag | (m == 0), share)
    ax.imshow(np.zeros_like(share), cmap="Greys", vmin=0, vmax=1)   # white background
    ax.imshow(right, cmap="Blues", vmin=-0.15, vmax=1)
    ax.imshow(wrong, cmap="Reds", vmin=-0.15, vmax=1)
    cells = {}
    for i, j in zip(*np.nonzero(m)):
        dark = share[i, j] > 0.55
        cells[(int(i), int(j))] = ax.text(j, i, str(m[i, j]), ha="center", va="center", fontsize=count_font,
                                          color="white" if dark else "black",
                                          fontweight="bold" if i != j else "normal").get_text()
    totals = m.sum(axis=1)
    ax.set_xticks(range(n), labels, rotation=90, fontsize=tick_font)
    ax.set_yticks(range(n), [f"{lab} ({t})" if t else lab for lab, t in zip(labels, totals)], fontsize=tick_font)
    ax.set_xticks(np.arange(-0.5, n, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, n, 1), minor=True)
    ax.grid(which="minor", color="#e0e0e0", linewidth=0.5)
    ax.tick_params(which="minor", length=0)
    ax.set_xlabel("answered (predicted)", fontsize=tick_font + 1)
    ax.set_ylabel("expected (sentences)", fontsize=tick_font + 1)
    ax.set_title(f"{title}\nblue: right answers, red: wrong; shade = share of the row", fontsize=tick_font + 2)
    _save(fig, path)
    return {"labels": labels, "cells": cells, "cell_inches": cell, "count_font": count_font}


# ---- threshold curve ----------------------------------------------------------------------------------------------

def threshold_png(curve: list[dict], chosen: float | None, path: Path, title: str,
                  bound: float | None = None, named: float | None = None) -> None:
    """curve: rows {min_score, accuracy, ood_false_accept (None without out-of-domain data)} in threshold order.
    The x axis stretches the top of the range (where calibrated models put their threshold): ticks 0, 0.5, 0.9,
    0.95, 0.99. `chosen` is marked with its two values; `bound` (a false-accept limit) is drawn when given;
    `named`: the curve is of a registry's sentences, those with a name held at this threshold (min_score_named)."""
    plt = _pyplot()
    import numpy as np
    xs = np.array([r["min_score"] for r in curve], dtype=float)
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    _min_score_axis(ax, xs)
    acc = [r["accuracy"] for r in curve]
    ax.step(xs, acc, where="post", color=ACCURACY_COLOR, linewidth=2, label="in-domain accuracy")
    has_ood = any(r.get("ood_false_accept") is not None for r in curve)
    if has_ood:
        fa = [r.get("ood_false_accept") for r in curve]
        ax.step(xs, fa, where="post", color=FALSE_ACCEPT_COLOR, linewidth=2,
                label="out-of-domain false accepts")
    if bound is not None and has_ood:
        ax.axhline(bound, color=FALSE_ACCEPT_COLOR, linestyle=":", linewidth=1,
                   label=f"false-accept bound {bound:.0%}")
    if chosen is not None:
        row = min(curve, key=lambda r: abs(r["min_score"] - chosen))
        ax.axvline(chosen, color="black", linestyle="--", linewidth=1)
        text = f"min_score {chosen:g}" + (f"\nmin_score_named {named:g}" if named is not None else "") \
            + f"\naccuracy {row['accuracy']:.3f}"
        if has_ood and row.get("ood_false_accept") is not None:
            text += f"\nfalse accepts {row['ood_false_accept']:.1%}"
        ax.plot([chosen], [row["accuracy"]], "o", color=ACCURACY_COLOR)
        if has_ood and row.get("ood_false_accept") is not None:
            ax.plot([chosen], [row["ood_false_accept"]], "o", color=FALSE_ACCEPT_COLOR)
        # the box on the side of the line with more room, so that it never covers the axis and its label
        left_half = ax.transAxes.inverted().transform(ax.transData.transform((chosen, 0.5)))[0] < 0.5
        ax.annotate(text, (chosen, 0.5), xytext=(8 if left_half else -8, 0), textcoords="offset points",
                    ha="left" if left_half else "right", va="center",
                    fontsize=9, bbox={"boxstyle": "round", "fc": "white", "ec": "#999999"})
    if named is not None:
        ax.set_xlabel(f"min_score of the sentences without a registry name (those with one: {named:g})")
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("share of sentences")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3, fontsize=9, frameon=False)
    _save(fig, path)


def _min_score_axis(ax, xs) -> None:
    """An x axis of min_score that spreads 0.9 .. 0.999 as widely as 0 .. 0.9 (-log10(1 - t); 1.0 is clipped to
    the end), where calibrated models put their threshold."""
    import numpy as np
    fwd = lambda t: -np.log10(np.clip(1.0 - np.asarray(t, dtype=float), 1e-3, None))   # noqa: E731
    inv = lambda u: 1.0 - 10.0 ** (-np.asarray(u, dtype=float))                       # noqa: E731
    ax.set_xscale("function", functions=(fwd, inv))
    lo, hi = float(min(xs)), float(max(xs))
    ticks = [t for t in (0, 0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.999) if lo <= t <= hi]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xlim(lo, min(hi, 0.999) if hi > 0.999 else hi)
    ax.set_xlabel("min_score (a top score below it answers none)")


# ---- trade-off ----------------------------------------------------------------------------------------------------

def tradeoff_png(points: list[dict], path: Path, name: str) -> None:
    """points: {max_seq_len, prune_heads, flash, work_buffer, accuracy}. Two panels sharing the accuracy axis: against
    the model's flash (set by the pruned heads) and against its work buffer (set by max_seq_len and the heads).
    Colour: max_seq_len; marker: heads pruned; no text on the points, the legend says which is which."""
    if not points:
        return
    plt = _pyplot()
    seqs = sorted({p["max_seq_len"] for p in points})
    prunes = sorted({p["prune_heads"] for p in points})
    colors = plt.get_cmap("viridis")([0.1 + 0.75 * i / max(1, len(seqs) - 1) for i in range(len(seqs))])
    markers = "osD^vP*X"
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.4), sharey=True)
    for si, seq in enumerate(seqs):
        for pi, prune in enumerate(prunes):
            pts = [p for p in points if p["max_seq_len"] == seq and p["prune_heads"] == prune]
            for p in pts:
                kw = {"marker": markers[pi % len(markers)], "color": colors[si], "linestyle": "none"}
                if p["flash"] is not None:   # nearly the same flash at every max_seq_len: rings of decreasing size
                    left.plot(p["flash"] / 1024, p["accuracy"], markersize=14 - 3.5 * si, markerfacecolor="none",
                              markeredgewidth=1.6, **kw)
                if p["work_buffer"] is not None:
                    right.plot(p["work_buffer"] / 1024, p["accuracy"], markersize=9, alpha=0.85, **kw)
    for si, seq in enumerate(seqs):   # one max_seq_len's points joined on the right
        pts = sorted((p for p in points if p["max_seq_len"] == seq and p["work_buffer"] is not None),
                     key=lambda p: p["work_buffer"])
        right.plot([p["work_buffer"] / 1024 for p in pts], [p["accuracy"] for p in pts], color=colors[si],
                   linewidth=0.8, alpha=0.5)
    left.set_xlabel("model flash (KB: weights + vocabulary)")
    right.set_xlabel("work buffer (KB of RAM)")
    left.set_ylabel("accuracy")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], color=colors[i], marker="o", linestyle="none", label=f"max_seq_len {s}")
               for i, s in enumerate(seqs)]
    handles += [Line2D([], [], color="#555555", marker=markers[i % len(markers)], linestyle="none",
                       label=f"{p} head{'s' if p != 1 else ''} pruned") for i, p in enumerate(prunes)]
    right.legend(handles=handles, loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=9, frameon=False)
    fig.suptitle(f"{name}: accuracy against memory (--prune-heads, --max-seq-len)", fontsize=11)
    _save(fig, path)


# ---- training curve -----------------------------------------------------------------------------------------------

# history keys drawn (those present): losses on the left axis, accuracies on the right
LOSS_KEYS = (("train_loss", "training loss", "-"), ("val_loss", "validation loss", "--"))
ACCURACY_KEYS = (("val_accuracy", "validation accuracy", "#1f77b4", "-"),
                 ("in_domain_accuracy", "in-domain validation accuracy", "#2ca02c", "-"),
                 ("balanced_accuracy", "balanced validation accuracy (mean over intents)", "#9467bd", "-"),
                 ("lowest_intent", "lowest intent's validation accuracy", "#ff7f0e", ":"),
                 ("val_slot_spans", "slot spans (validation)", "#8c564b", "-."))


def _history_value(row: dict, key: str):
    value = row.get(key)
    return value.get("accuracy") if isinstance(value, dict) else value


def training_png(history: list[dict], path: Path, title: str, selection: dict | None = None,
                 kept_epoch: int | None = None, bound: float | None = None) -> None:
    """history: one row an epoch {epoch, train_loss, val_loss, val_accuracy, in_domain_accuracy, ...}; the keys
    present are drawn (losses on the left axis, accuracies on the right) and the epoch kept is marked. With
    `selection` ({table: [{min_score, in_domain_accuracy, ood_false_accept}], min_score}) a second panel shows the
    validation threshold table min_score was chosen on."""
    plt = _pyplot()
    has_table = bool(selection and selection.get("table"))
    if not history and has_table:     # no epochs of its own (an average of trained models): the threshold panel alone
        fig, axes = plt.subplots(1, 1, figsize=(6.6, 4.4), squeeze=False)
        _threshold_table_panel(axes[0][0], selection, bound, f"{title}: validation, the min_score chosen on it")
        _save(fig, path)
        return
    panels = 2 if has_table else 1
    fig, axes = plt.subplots(1, panels, figsize=(6.6 * panels, 4.4), squeeze=False)
    ax = axes[0][0]
    epochs = [r["epoch"] for r in history]
    lines = []
    losses = [k for k in LOSS_KEYS if any(_history_value(r, k[0]) is not None for r in history)]
    for key, label, style in losses:
        pts = [(r["epoch"], _history_value(r, key)) for r in history if _history_value(r, key) is not None]
        lines += ax.plot(*zip(*pts), style, color=LOSS_COLOR, marker=".", label=label)
    if losses:
        ax.set_ylabel("loss")
        ax.set_ylim(bottom=0)
    acc_ax = ax.twinx() if losses else ax
    for key, label, color, style in ACCURACY_KEYS:
        pts = [(r["epoch"], _history_value(r, key)) for r in history if _history_value(r, key) is not None]
        if pts:
            lines += acc_ax.plot(*zip(*pts), style, color=color, marker="o", markersize=3.5, label=label)
    acc_ax.set_ylim(-0.02, 1.02)
    acc_ax.set_ylabel("accuracy")
    if kept_epoch is not None and len(history) > 1:
        lines.append(ax.axvline(kept_epoch, color="black", linestyle="--", linewidth=1, label=f"epoch kept ({kept_epoch})"))
    ax.set_xlabel("epoch")
    if epochs:
        step = max(1, math.ceil(len(epochs) / 12))
        ax.set_xticks(epochs[::step])
        ax.set_xlim(min(epochs) - 0.3, max(epochs) + 0.3)
    ax.grid(alpha=0.3)
    if lines:
        ax.legend(lines, [ln.get_label() for ln in lines], loc="upper center", bbox_to_anchor=(0.5, -0.15),
                  ncol=2, fontsize=8, frameon=False)
    ax.set_title(title, fontsize=10)
    if panels == 2:
        _threshold_table_panel(axes[0][1], selection, bound, "validation: the min_score chosen on it")
    _save(fig, path)


def _threshold_table_panel(ax, selection: dict, bound: float | None, title: str) -> None:
    table = [{"min_score": r["min_score"], "accuracy": r["in_domain_accuracy"],
              "ood_false_accept": r.get("ood_false_accept")} for r in selection["table"]]
    _threshold_axes(ax, table, selection.get("min_score"), bound)
    ax.set_title(title, fontsize=10)


def training_summary_png(summary: dict, path: Path) -> None:
    """training.png of a model folder from its training.json (what `bertl14 train` writes)."""
    training = summary.get("training") or {}
    selection = dict((summary.get("results") or {}).get("selection") or {})
    if "min_score" in summary:
        selection["min_score"] = summary["min_score"]
    from ..reference.answer import MAX_VAL_FALSE_ACCEPT as bound
    title = Path(path).parent.name + (": training" if training.get("history") else
                                       f" (an average of {len(training['average'])} models)" if training.get("average")
                                       else "")
    training_png(training.get("history") or [], path, title, selection or None, training.get("kept_epoch"), bound)


def _threshold_axes(ax, table: list[dict], chosen: float | None, bound: float | None) -> None:
    """The validation threshold table as points (its grid is coarse), the chosen one marked."""
    xs = [r["min_score"] for r in table]
    _min_score_axis(ax, xs)
    ax.plot(xs, [r["accuracy"] for r in table], "-o", markersize=3, color=ACCURACY_COLOR, label="in-domain accuracy")
    if any(r.get("ood_false_accept") is not None for r in table):
        ax.plot(xs, [r["ood_false_accept"] for r in table], "-o", markersize=3, color=FALSE_ACCEPT_COLOR,
                label="out-of-domain false accepts")
        if bound is not None:
            ax.axhline(bound, color=FALSE_ACCEPT_COLOR, linestyle=":", linewidth=1, label=f"bound {bound:.0%}")
    if chosen is not None:
        row = min(table, key=lambda r: abs(r["min_score"] - chosen))
        fa = f", false accepts {row['ood_false_accept']:.1%}" if row.get("ood_false_accept") is not None else ""
        ax.axvline(chosen, color="black", linestyle="--", linewidth=1,
                   label=f"min_score {chosen:g}: accuracy {row['accuracy']:.3f}{fa}")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2, frameon=False)


# ---- benchmark ----------------------------------------------------------------------------------------------------

def bench_instructions_png(rep: dict, path: Path) -> dict:
    """Instructions per sentence against tokens, both axes logarithmic (16 and 32 tokens as far apart as 256 and
    512), the right axis an estimate in ms at rep["cpu_hz"] (the board's clock, one instruction a cycle; no axis
    without one); the measured lengths are the ticks and the typed sentence (tokenizer included) is a star."""
    plt = _pyplot()
    cpu_hz = rep.get("cpu_hz")
    fig, ax = plt.subplots(figsize=(7.2, 4.6))
    engines = sorted({r["engine"] for r in rep["results"] if "instructions" in r})
    lengths = sorted({r["seq_len"] for r in rep["results"] if "instructions" in r})
    for i, e in enumerate(engines):
        color = f"C{i}"
        rs = sorted((r for r in rep["results"] if r["engine"] == e and not r.get("sentence") and "instructions" in r),
                    key=lambda r: r["seq_len"])
        if rs:
            ax.plot([r["seq_len"] for r in rs], [r["instructions"] for r in rs], "-o", color=color, label=e)
        for r in rep["results"]:
            if r["engine"] == e and r.get("sentence") and "instructions" in r:
                ax.plot([r["seq_len"]], [r["instructions"]], "*", markersize=13, color=color,
                        markeredgecolor="black", markeredgewidth=0.5)
    if any(r.get("sentence") for r in rep["results"]):
        ax.plot([], [], "*", color="#777777", markersize=11, label="a typed sentence (tokenizer included)")
    per = {e: {r["seq_len"]: r["instructions"] for r in rep["results"]
               if r["engine"] == e and "instructions" in r and not r.get("sentence")} for e in engines}
    common = set.intersection(*(set(v) for v in per.values())) if per else set()
    fastest = min(engines, key=lambda e: sum(per[e][n] for n in common), default=None)
    for r in rep["results"]:   # the fastest engine's time under each of its points
        if r["engine"] == fastest and "instructions" in r and cpu_hz:
            ax.annotate(f"{r['instructions'] / cpu_hz * 1e3:.0f} ms", (r["seq_len"], r["instructions"]),
                        xytext=(0, -13), textcoords="offset points", ha="center", fontsize=7, color="#333333")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    lowest = min((r["instructions"] for r in rep["results"] if "instructions" in r), default=None)
    if lowest:
        ax.set_ylim(bottom=lowest / 2)   # room for the time under the lowest point
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.minorticks_off()
    ax.set_xlabel("tokens ([CLS] and [SEP] included)")
    ax.set_ylabel("instructions per sentence")
    if cpu_hz:
        sec = ax.secondary_yaxis("right", functions=(lambda v: v / cpu_hz * 1e3, lambda ms: ms * cpu_hz / 1e3))
        sec.set_ylabel(f"ms at {cpu_hz / 1e6:g} MHz (estimate: 1 instruction a cycle)")
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(f"{rep['model']} on {rep['board']} (QEMU -icount)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    drawn = {"xscale": ax.get_xscale(), "yscale": ax.get_yscale(), "xticks": lengths}
    _save(fig, path)
    return drawn


def bench_stages_png(rep: dict, path: Path, stage_names: list[str] | None = None) -> None:
    """Where the instructions go: one bar a (kernels, tokens) run, each stage's share of the sentence (100 %
    stacked, so short inputs are as readable as long ones), the total over the bar."""
    plt = _pyplot()
    import numpy as np
    rs = [r for r in rep["results"] if r.get("stages")]
    if not rs:
        return
    names = stage_names or list(rs[0]["stages"])
    totals = np.array([max(1, sum(r["stages"].get(s, 0) for s in names)) for r in rs], dtype=float)
    fig, ax = plt.subplots(figsize=(max(6.5, 0.7 * len(rs) + 2.5), 4.6))
    xs = np.arange(len(rs))
    bottom = np.zeros(len(rs))
    for i, s in enumerate(names):
        vals = np.array([r["stages"].get(s, 0) for r in rs], dtype=float) / totals * 100
        ax.bar(xs, vals, bottom=bottom, label=s, color=plt.get_cmap("tab10")(i % 10), width=0.75)
        for x, v, b in zip(xs, vals, bottom):
            if v >= 8:
                ax.text(x, b + v / 2, f"{v:.0f}%", ha="center", va="center", fontsize=7, color="white")
        bottom += vals
    for x, t in zip(xs, totals):
        ax.text(x, 101, f"{t / 1e6:.1f}M" if t < 1e9 else f"{t / 1e9:.2f}G", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(xs, [f"{r['engine'].replace('bertl14-', '')}\n{r['seq_len']}" for r in rs], fontsize=8)
    ax.set_ylim(0, 108)
    ax.set_ylabel("share of the sentence's instructions (%)")
    ax.set_xlabel("kernels and tokens (total instructions above each bar)")
    ax.set_title(f"{rep['model']}: instructions by stage", fontsize=10)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    _save(fig, path)
