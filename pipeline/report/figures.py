"""The report's pictures: matplotlib figures as inline PNG `<img>` tags (no files, no network).

matplotlib is imported here, inside the functions, so only making a report loads it. Figures
are built with `matplotlib.figure.Figure` (no pyplot: no GUI backend, no global state). Labels
are mostly ASCII (stage names, units, reasons); corpus text never goes into a plot, and a bar
label that no font here can draw (a source's name in its own script) is numbered in the
picture and written beside it as HTML text (fonts.py), never drawn as empty boxes.

Usage:
    img = bar_chart(["extract", "filter"], [1000, 280], title="documents", bad=[False, True])
    img = histogram(values, bins=40, title="words per sentence", xlabel="words")
    img = line_chart({"loss": (steps, losses)}, title="loss", xlabel="step")
    img = score_chart(steps, means, sds, title="probe", ylabel="f1", baseline=("random", .4, .02))
"""
from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence

from .fonts import plot_labels

RED = "#c62828"
BLUE = "#1f6fb4"
GREY = "#9e9e9e"


def _figure(width: float = 7.5, height: float = 3.2, ncols: int = 1):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    axes = fig.subplots(1, ncols)
    return fig, axes


def to_img(fig, alt: str) -> str:
    """The figure as an <img> with an inline base64 PNG."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    alt = alt.replace('"', "'").replace("<", "(").replace(">", ")")
    return f'<img alt="{alt}" src="data:image/png;base64,{data}">'


def bar_chart(labels: Sequence[str], values: Sequence[float], title: str, xlabel: str = "",
              bad: Sequence[bool] | None = None, log: bool = False, fmt: str = "{:,.0f}",
              limit: float | None = None) -> str:
    """Horizontal bars, the first label on top; `bad` bars in red; each bar labelled; `limit`
    draws a dashed line there (and keeps it in view)."""
    labels, legend = plot_labels(labels)
    fig, ax = _figure(height=0.9 + 0.32 * max(1, len(labels)))
    colors = [RED if b else BLUE for b in (bad or [False] * len(labels))]
    y = list(range(len(labels)))
    ax.barh(y, values, color=colors)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    if log and any(v > 0 for v in values):
        ax.set_xscale("log")
    for yi, v in zip(y, values):
        ax.annotate(fmt.format(v), (v, yi), xytext=(3, 0), textcoords="offset points",
                    va="center", fontsize=8)
    ax.margins(x=0.15)
    if not log:
        ax.set_xlim(left=0, right=max([ax.get_xlim()[1], 1.3 * (limit or 0)]))
    if limit is not None:
        ax.axvline(limit, color=RED, linestyle="--", linewidth=1)
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    return to_img(fig, title) + legend


def panels(charts: Sequence[tuple[str, Sequence[str], Sequence[float], Sequence[bool]]],
           title: str) -> str:
    """Several bar charts side by side sharing their labels: (title, labels, values, bad);
    a value None is drawn as "-" (the stage has no such figure)."""
    shown, legend = plot_labels(charts[0][1])   # the charts share their labels
    charts = [(sub, shown, values, bad) for sub, _labels, values, bad in charts]
    n_labels = max(len(c[1]) for c in charts)
    fig, axes = _figure(width=3.4 * len(charts), height=1.0 + 0.32 * n_labels, ncols=len(charts))
    axes = list(axes) if len(charts) > 1 else [axes]
    from matplotlib.ticker import EngFormatter

    for i, (ax, (sub, labels, values, bad)) in enumerate(zip(axes, charts)):
        y = list(range(len(labels)))
        ax.barh(y, [v or 0 for v in values], color=[RED if b else BLUE for b in bad])
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.set_yticks(y, labels if i == 0 else [""] * len(labels))
        ax.invert_yaxis()
        ax.set_title(sub, fontsize=10)
        ax.margins(x=0.2)
        for yi, v in zip(y, values):
            ax.annotate("-" if v is None else _short(v), (v or 0, yi), xytext=(3, 0),
                        textcoords="offset points", va="center", fontsize=8)
    fig.suptitle(title, fontsize=11)
    return to_img(fig, title) + legend


def _short(v: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= size:
            return f"{v / size:.1f}{unit}"
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def histogram(values: Sequence[float], title: str, xlabel: str, bins=40, ylabel: str = "count",
              marks: Mapping[str, float] | None = None, weights: Sequence[float] | None = None,
              log: bool = False) -> str:
    """A histogram; `marks` draws labelled vertical lines (a limit, a mean); `log`: a log
    count axis, so that rare values stay visible beside a tall bar."""
    fig, ax = _figure()
    ax.hist(values, bins=bins, weights=weights, color=BLUE, edgecolor="white", linewidth=0.4,
            log=log)
    for label, x in (marks or {}).items():
        ax.axvline(x, color=RED, linestyle="--", linewidth=1)
        ax.annotate(label, (x, 1), xycoords=("data", "axes fraction"), xytext=(3, -12),
                    textcoords="offset points", color=RED, fontsize=8)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))   # counts: whole numbers
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return to_img(fig, title)


def line_chart(series: Mapping[str, tuple[Sequence[float], Sequence[float]]], title: str,
               xlabel: str = "step", ylabel: str = "", points: Mapping | None = None,
               log: bool = False) -> str:
    """Lines (name -> (x, y)); `points` (name -> (x, y)) drawn as markers, e.g. eval points."""
    fig, ax = _figure()
    for name, (x, y) in series.items():
        ax.plot(x, y, label=name, linewidth=1.2)
    for name, (x, y) in (points or {}).items():
        ax.plot(x, y, "o--", label=name, markersize=4, linewidth=0.8)
    if log:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if len(series) + len(points or {}) > 1:
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return to_img(fig, title)


def score_chart(steps: Sequence[float], means: Sequence[float], sds: Sequence[float], title: str,
                ylabel: str, xlabel: str = "pretraining step",
                baseline: tuple[str, float, float] | None = None,
                reference: tuple[str, float] | None = None) -> str:
    """A score against steps with error bars (sd); `baseline` (label, mean, sd): a grey
    horizontal line with its ±sd band; `reference` (label, value): a dotted blue line."""
    fig, ax = _figure()
    ax.errorbar(steps, means, yerr=sds, fmt="o-", color=BLUE, capsize=3, markersize=4,
                linewidth=1.2, label="checkpoints (mean ± sd over seeds)")
    if reference is not None:
        ax.axhline(reference[1], color=BLUE, linestyle=":", linewidth=1, label=reference[0])
    if baseline is not None:
        label, mean, sd = baseline
        ax.axhline(mean, color=GREY, linestyle="--", linewidth=1.2, label=label)
        if sd:
            ax.axhspan(mean - sd, mean + sd, color=GREY, alpha=0.2, linewidth=0)
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return to_img(fig, title)
