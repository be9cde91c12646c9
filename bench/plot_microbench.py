#!/usr/bin/env python3
"""Plots the CSV written by `mgk-microbench --csv FILE` into one PNG.

Per GPU pair: (1) best bandwidth over SM counts versus message size, one line per
mechanism; (2) time per transfer versus message size (latency at small sizes);
(3) bandwidth versus SM count at the largest message, for the SM-driven mechanisms.

usage: plot_microbench.py results.csv [-o results.png]
"""
import argparse
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

MECHANISMS = ["copy_engine", "tma_store", "reg_store", "reg_load"]


def read_samples(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_microbench: {path} has no samples")
    for r in rows:
        r["pair"] = (int(r["src_gpu"]), int(r["dst_gpu"]))
        r["sms"] = int(r["sms"])
        r["bytes"] = int(r["bytes"])
        r["time_us"] = float(r["time_us"])
        r["gbps"] = float(r["gbps"])
    return rows


def best_per_size(rows):
    """{(pair, mechanism): {bytes: best sample}}"""
    best = defaultdict(dict)
    for r in rows:
        slot = best[(r["pair"], r["mechanism"])]
        if r["bytes"] not in slot or r["gbps"] > slot[r["bytes"]]["gbps"]:
            slot[r["bytes"]] = r
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", help="CSV written by mgk-microbench --csv")
    parser.add_argument("-o", "--output", help="PNG to write (default: the CSV's name with .png)")
    args = parser.parse_args()
    output = args.output or (args.csv.rsplit(".", 1)[0] + ".png")

    rows = read_samples(args.csv)
    best = best_per_size(rows)
    pairs = sorted({r["pair"] for r in rows})
    fig, axes = plt.subplots(len(pairs), 3, figsize=(18, 4.8 * len(pairs)), squeeze=False)
    for row, pair in enumerate(pairs):
        ax_bw, ax_lat, ax_sms = axes[row]
        for mech in MECHANISMS:
            points = best.get((pair, mech))
            if not points:
                continue
            sizes = sorted(points)
            ax_bw.plot(sizes, [points[s]["gbps"] for s in sizes], marker="o", label=mech)
            ax_lat.plot(sizes, [points[s]["time_us"] for s in sizes], marker="o", label=mech)
            if mech != "copy_engine":
                largest = max(r["bytes"] for r in rows if r["pair"] == pair and r["mechanism"] == mech)
                by_sms = sorted(
                    (r["sms"], r["gbps"])
                    for r in rows
                    if r["pair"] == pair and r["mechanism"] == mech and r["bytes"] == largest
                )
                ax_sms.plot([s for s, _ in by_sms], [g for _, g in by_sms], marker="o", label=f"{mech} ({largest >> 20} MB)")
        title = f"GPU {pair[0]} -> GPU {pair[1]}"
        ax_bw.set(xscale="log", xlabel="message bytes", ylabel="GB/s (best over SM counts)", title=f"{title}: bandwidth")
        ax_lat.set(xscale="log", yscale="log", xlabel="message bytes", ylabel="us per transfer", title=f"{title}: time")
        ax_sms.set(xscale="log", xlabel="SMs (blocks)", ylabel="GB/s", title=f"{title}: bandwidth vs SMs, largest message")
        for ax in (ax_bw, ax_lat, ax_sms):
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
