"""PNG plots of bench/results.json (matplotlib, Agg backend: no display needed).

.venv/bin/python bench/plots.py [bench/results.json]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

JSONDict = dict[str, Any]
HERE = Path(__file__).resolve().parent
SWEEP_LABELS = {
    "messages": "messages in the history (200 participants)",
    "participants": "participants (100 messages)",
    "memories": "memories per user (100 messages, 20 participants)",
}
COLORS = {"median": "#2b6cb0", "p95": "#90cdf4", "floor": "#38a169", "queries": "#c05621", "before": "#a0aec0",
          "after": "#2b6cb0"}  # fmt: skip


def _queries(value: int | list[int]) -> int:
    return max(value) if isinstance(value, list) else value


def _machine_note(results: JSONDict) -> str:
    m = results.get("machine", {})
    db = results.get("database", {}).get("server_version", "")
    return f"{m.get('cpu_count')} cores, {m.get('cpu_model')}, Python {m.get('python')}, {db}"


def plot_assembly(results: JSONDict, out: Path) -> Path:
    sweeps = results["assembly"]["sweeps"]
    fig, axes = plt.subplots(1, len(sweeps), figsize=(4.6 * len(sweeps), 3.8), squeeze=False)
    for ax, (name, sweep) in zip(axes[0], sweeps.items(), strict=True):
        points = sweep["points"]
        xs = [p["shape"][sweep["parameter"]] for p in points]
        labels = [str(x) for x in xs]
        positions = range(len(xs))
        ax.plot(positions, [p["median_ms"] for p in points], "o-", color=COLORS["median"], label="median")
        ax.plot(positions, [p["p95_ms"] for p in points], "s--", color=COLORS["p95"], label="p95")
        if all("floor" in p for p in points):
            ax.plot(positions, [p["floor"]["median_ms"] for p in points], "^:", color=COLORS["floor"],
                    label="floor (its SQL on the raw cursor)")  # fmt: skip
        ax.set_xticks(list(positions), labels)
        ax.set_xlabel(SWEEP_LABELS.get(name, name))
        ax.set_ylabel("ms per turn")
        ax.set_ylim(bottom=0)
        twin = ax.twinx()
        twin.bar(positions, [_queries(p["queries_per_turn"]) for p in points], width=0.25, alpha=0.25,
                 color=COLORS["queries"], label="SQL statements")  # fmt: skip
        twin.set_ylabel("SQL statements per turn", color=COLORS["queries"])
        twin.set_ylim(0, max(_queries(p["queries_per_turn"]) for p in points) * 2.5)
        ax.set_zorder(twin.get_zorder() + 1)
        ax.patch.set_visible(False)
        handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
        ax.legend(handles=handles, fontsize=7, loc="upper left")
    fig.suptitle(f"Turn assembly (build_turn_context) — {_machine_note(results)}", fontsize=9)
    fig.tight_layout()
    return _save(fig, out / "assembly.png")


def plot_throughput(results: JSONDict, out: Path) -> Path:
    levels = results["throughput"]["levels"]
    fig, ax = plt.subplots(figsize=(5, 3.6))
    xs = [str(level["channels"]) for level in levels]
    bars = ax.bar(xs, [level["turns_per_second"] for level in levels], color=COLORS["median"])
    for bar, level in zip(bars, levels, strict=True):
        ax.annotate(f"{level['turns_per_second']:.1f}/s", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8)  # fmt: skip
    shape = results["throughput"]["shape"]
    ax.set_xlabel("channels assembling concurrently (threads, one process)")
    ax.set_ylabel("turns per second")
    ax.set_title(f"Throughput — {shape['messages']} messages, {shape['participants']} participants", fontsize=9)
    fig.tight_layout()
    return _save(fig, out / "throughput.png")


def plot_request_scope(results: JSONDict, out: Path) -> Path:
    counts = results["request_scope"]["counts"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.8))
    xs = range(len(counts))
    width = 0.38
    left.bar([x - width / 2 for x in xs], [c["separate"]["total_ms_median"] for c in counts], width,
             color=COLORS["before"], label="scope per persona (no sharing)")  # fmt: skip
    left.bar([x + width / 2 for x in xs], [c["shared"]["total_ms_median"] for c in counts], width,
             color=COLORS["after"], label="one scope per locked turn")  # fmt: skip
    left.set_xticks(list(xs), [str(c["personas"]) for c in counts])
    left.set_xlabel("personas answering one locked turn")
    left.set_ylabel("ms for all persona turns (median)")
    left.legend(fontsize=7)
    multi = [c for c in counts if c["personas"] > 1]
    steps = (
        ("whole turn", "whole_turn"),
        ("participant stage", "participant_stage"),
        ("preparation (shared)", "preparation_step"),
    )
    xs2 = range(len(multi))
    width2 = 0.27
    for offset, (label, step) in zip((-width2, 0.0, width2), steps, strict=True):
        values = [c["later_over_first"][step] for c in multi]
        bars = right.bar([x + offset for x in xs2], values, width2, label=label)
        for bar, value in zip(bars, values, strict=True):
            right.annotate(f"{value:.2f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                           ha="center", va="bottom", fontsize=7)  # fmt: skip
    right.axhline(0.5, color="#e53e3e", linewidth=0.8, linestyle=":", label="half of the first")
    right.set_xticks(list(xs2), [str(c["personas"]) for c in multi])
    right.set_xlabel("personas answering one locked turn")
    right.set_ylabel("later persona / first persona (median)")
    right.legend(fontsize=7)
    fig.suptitle("Participant request scope (100 messages, 200 participants, 10 memories/user)", fontsize=9)
    fig.tight_layout()
    return _save(fig, out / "request_scope.png")


def plot_stt(results: JSONDict, out: Path) -> Path:
    clips = results["stt"]["clips"]
    fig, ax = plt.subplots(figsize=(4.5, 3.4))
    bars = ax.bar([f"{c['clip_seconds']} s clip" for c in clips], [c["rtf"] for c in clips], color=COLORS["median"])
    for bar, clip in zip(bars, clips, strict=True):
        ax.annotate(f"RTF {clip['rtf']:.3f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8)  # fmt: skip
    ax.axhline(1.0, color="#e53e3e", linewidth=0.8, linestyle=":", label="real time")
    ax.set_ylabel("processing s / audio s")
    ax.set_title("Voice transcription (faster-whisper, CPU int8)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _save(fig, out / "stt.png")


def plot_before_after(results: JSONDict, out: Path) -> Path:
    opt = results["optimization"]
    before, after = opt["before"], opt["after"]
    stages = sorted(set(before["stage_median_ms"]) | set(after["stage_median_ms"]))
    labels = ["total (wall)", "total (CPU)", *(s.removesuffix("_ms") for s in stages)]
    values_before = [
        before["median_ms"],
        before["cpu_median_ms"],
        *(before["stage_median_ms"].get(s, 0) for s in stages),
    ]
    values_after = [after["median_ms"], after["cpu_median_ms"], *(after["stage_median_ms"].get(s, 0) for s in stages)]
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    xs = range(len(labels))
    width = 0.38
    ax.bar([x - width / 2 for x in xs], values_before, width, color=COLORS["before"], label="before")
    ax.bar([x + width / 2 for x in xs], values_after, width, color=COLORS["after"], label="after")
    ax.set_xticks(list(xs), labels)
    ax.set_ylabel("median ms per turn")
    ax.set_title("Hot path at 100 messages x 200 participants, before and after", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _save(fig, out / "before_after.png")


def _save(fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def make_plots(results: JSONDict, out: Path) -> list[Path]:
    """Every plot the results have data for."""
    written = []
    if results.get("assembly"):
        written.append(plot_assembly(results, out))
    if results.get("throughput"):
        written.append(plot_throughput(results, out))
    if results.get("request_scope"):
        written.append(plot_request_scope(results, out))
    if results.get("stt", {}).get("measured"):
        written.append(plot_stt(results, out))
    if results.get("optimization"):
        written.append(plot_before_after(results, out))
    return written


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "results.json"
    for path in make_plots(json.loads(source.read_text(encoding="utf-8")), HERE / "results"):
        print(path)


if __name__ == "__main__":
    main()
