#!/usr/bin/env python3
"""Timeline of one traced tpgemm call: a text summary per device and, with matplotlib, a picture.

    ninja trace && build/trace/tpgemm --schedule ... --trace run.json
    python3 bench/timeline.py run.json [--png run.png]

Input: the Chrome/Perfetto trace-event JSON that build/trace/tpgemm writes (runtime/src/cli/trace_json.h
documents the lanes; the same file opens in ui.perfetto.dev or chrome://tracing). Summary per device:
the kernel window, per stage the tiles and the busy fraction of the consumer lanes (tile time / (lanes x
window)), the flag waits (all-gather: producers waiting for a stage's copy), the partial waits
(reduce-scatter: epilogues waiting for a peer's tile), the barriers and the copies (timed by CUDA events, with the
flag copies and a REDUCE, or inferred from the flag waits in traces without them). Picture: one
panel per device, x = time (us, one axis for all devices), one row per consumer warpgroup of each CTA,
tiles coloured by stage (mainloop solid, epilogue light), waits hatched, barriers shaded.

Clocks: %globaltimer is per GPU and the GPUs' timers disagree by up to hundreds of microseconds. The start
barrier ends on every device at the same moment (each leaves when the last one arrived), so each device's
times are shifted by its start-barrier exit offset to rank 0: the writer does it (tpgemm.aligned), and this
script does it for an older file; --no-align shows each GPU's raw clock.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
from collections import defaultdict

import timeline_check

TILE_TID0 = 100  # tid = 100 + 4 * cta + lane (lane 0 producer, 1 + w consumer warpgroup w)
LANES = 4


def load(path: str) -> dict:
    """A trace file, its events read with pid = rank and tid = track (rank_ids)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"timeline.py: cannot read {path}: {e}")
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise SystemExit(f"{path}: not a trace-event file (no traceEvents)")
    return rank_ids(doc)


def rank_ids(doc: dict) -> dict:
    """doc with the ids this module reads: pid = rank, tid = track (TILE_TID0 + LANES * cta + lane, ...). The writer's
    versions 2 and later (trace_json.h, 2026-12-05) write Perfetto's ids, pid = rank + 1 and tid = tpgemm.ids.tid_stride
    * pid + track; version 1 wrote these ones."""
    meta = doc.get("tpgemm", {})
    if meta.get("version", 1) < 2:
        return doc
    stride = meta.get("ids", {}).get("tid_stride")
    if not isinstance(stride, int) or stride <= 0:
        raise SystemExit(f"trace version {meta.get('version')} without tpgemm.ids.tid_stride: not a file this reads")
    out = copy.deepcopy(doc)
    for e in out["traceEvents"]:
        if "pid" in e:
            e["tid"] = e.get("tid", 0) - stride * e["pid"]
            e["pid"] -= 1
    return out


def _present(t) -> bool:
    """A device time the writer recorded: it writes exactly -1 for a missing one (a raw time may be negative)."""
    return isinstance(t, (int, float)) and t != -1


def align_clocks(doc: dict, align: bool = True) -> dict:
    """doc with every device's times on the start-barrier-aligned axis (align) or on its own raw clock (not align):
    each device is shifted by its start-barrier exit offset to rank 0 (pid = rank). The writer aligns its output
    (tpgemm.aligned == "start_barrier", trace_json.c since 2026-12-05) unless the ranks share one GPU, hence one timer
    ("none ..."), which stays as it is either way; an older file (no "aligned") holds raw clocks. Devices without an
    offset are left as they are. The shift is what the writer applied where the file says (tpgemm.shift_us: ranks
    that share a GPU take its first rank's), so undoing and redoing it are a round trip."""
    out = copy.deepcopy(doc)
    meta = out.get("tpgemm", {})
    state = meta.get("aligned")  # the writer's: "start_barrier", or "none..." where it shifted nothing; absent: raw
    offs = meta.get("shift_us") or meta.get("start_exit_offset_us") or []  # the writer's shifts where it says
    shift = {r: o for r, o in enumerate(offs) if isinstance(o, (int, float))}
    if state is None:
        sign = 1 if align else 0
    else:
        sign = -1 if state == "start_barrier" and not align else 0
    for e in out["traceEvents"]:
        if sign and e.get("ph") == "X" and e.get("pid") in shift:
            e["ts"] -= sign * shift[e["pid"]]
    for d in meta.get("devices", []):
        o = shift.get(d.get("rank"))
        for key in ("kernel_begin_us", "kernel_end_us"):
            if sign and o is not None and _present(d.get(key)):
                d[key] -= sign * o
    if sign == 1 and shift:
        meta["aligned"] = "start_barrier"
    elif sign == -1:
        meta["aligned"] = None
    meta["clocks_aligned"] = meta.get("aligned") == "start_barrier"
    return out


def _lane(tid: int) -> tuple[int, int]:
    return (tid - TILE_TID0) // LANES, (tid - TILE_TID0) % LANES


def _producer_leads(tiles: list, loads: list, stages: dict) -> None:
    """Per stage, from the producer's load records: the mean wait for a free slot before a unit's k-block 0,
    how long before the unit's first consumer mainloop start (same CTA) k-block 0 was issued (negative:
    issued after the consumers had started waiting for it), and the share of the producer's issue time it
    found the ring full on the later k-blocks (ring_full_fraction, cycle-weighted over the stage's units)."""
    starts = {}
    for e in tiles:
        key = (_lane(e["tid"])[0], e["args"]["stage"], e["args"]["tile"])
        starts[key] = min(starts.get(key, e["ts"]), e["ts"])
    for e in loads:
        st = e["args"]["stage"]
        s = stages.get(st)
        if s is None:
            continue
        issued = e["ts"] + e["args"]["slot_wait_us"]
        start = starts.get((_lane(e["tid"])[0], st, e["args"]["tile"]))
        s["loads"] = s.get("loads", 0) + 1
        s["slot_wait_us"] = s.get("slot_wait_us", 0.0) + e["args"]["slot_wait_us"]
        if e["args"].get("issue_cycles"):  # traces before 2026-12-01 13:30Z have no ring-full figures
            s["ring_full_cycles"] = s.get("ring_full_cycles", 0) + e["args"]["ring_full_cycles"]
            s["issue_cycles"] = s.get("issue_cycles", 0) + e["args"]["issue_cycles"]
        if start is not None:
            s["lead_units"] = s.get("lead_units", 0) + 1
            s["lead_us"] = s.get("lead_us", 0.0) + (start - issued)
    for s in stages.values():
        s["mean_slot_wait_us"] = s["slot_wait_us"] / s["loads"] if s.get("loads") else None
        s["mean_lead_us"] = s["lead_us"] / s["lead_units"] if s.get("lead_units") else None
        s["ring_full_fraction"] = s["ring_full_cycles"] / s["issue_cycles"] if s.get("issue_cycles") else None


def _copies(spans: list) -> list:
    """The copies' lines of a device: (name, begin, duration, how). A span the C writer inferred (trace_json.c, without
    node events) as it is; the nodes CUDA events timed (args.measured "cuda_events", trace version 4: copies in pieces,
    their flag copies, a REDUCE, the copy-engine partials' bands and their flags) one line per node kind and stage,
    from the first begin to the last end, named with their count - "(N pieces)" from or to one rank ("(N bands)" for a
    copy-engine partial's), "(N copies from K ranks)" - and how many the writer placed before their dependency's end
    (args.before_dependency: the clocks' anchors, trace_json.c)."""
    out, groups = [], defaultdict(list)
    for e in spans:
        a = e.get("args") or {}
        if a.get("measured") == "cuda_events":
            groups[(a.get("node", "?"), a.get("stage", -1))].append(e)
        else:
            out.append((e["name"], e["ts"], e["dur"], "inferred"))
    for (node, stage), es in groups.items():
        b, end = min(e["ts"] for e in es), max(e["ts"] + e["dur"] for e in es)
        peers = {e["args"].get("peer") for e in es}
        unit = "bands" if node.startswith("partial") else "pieces"
        count = "" if len(es) == 1 else f" ({len(es)} {unit})" if len(peers) == 1 else \
            f" ({len(es)} copies from {len(peers)} ranks)"
        name = node if node == "REDUCE" else f"{node} stage {stage}{count}"
        early = sum(1 for e in es if e["args"].get("before_dependency"))
        out.append((name, b, end - b, "CUDA events" + (f"; {early} placed before its dependency" if early else "")))
    return sorted(out, key=lambda c: c[1])


def _gave_up(spans: list) -> int:
    """How many of the waits (or barriers) gave up without seeing their flag: a timed-out call (args.gave_up)."""
    return sum(1 for e in spans if (e.get("args") or {}).get("gave_up"))


def summarize(doc: dict) -> dict:
    """Per device (pid): numbers the text summary and the tests use."""
    meta = doc.get("tpgemm", {})
    dev_info = {d.get("rank"): d for d in meta.get("devices", [])}
    names = {}
    per = defaultdict(lambda: {"tiles": [], "flag_waits": [], "partial_waits": [], "barriers": [], "copies": [],
                               "loads": []})
    for e in doc["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[e["pid"]] = e["args"]["name"]
        if e.get("ph") != "X":
            continue
        d = per[e["pid"]]
        cat = e.get("cat")
        if cat == "tile":
            d["tiles"].append(e)
        elif cat == "flag_wait":
            d["flag_waits"].append(e)
        elif cat == "partial_wait":
            d["partial_waits"].append(e)
        elif cat == "barrier":
            d["barriers"].append(e)
        elif cat in ("copy", "reduce"):
            d["copies"].append(e)
        elif cat == "loads":
            d["loads"].append(e)
    out = {}
    for pid in sorted(per):
        d = per[pid]
        tiles = d["tiles"]
        info = dev_info.get(pid, {})
        if tiles:
            begin = min(e["ts"] for e in tiles)
            end = max(e["ts"] + e["dur"] for e in tiles)
        else:
            begin = end = 0.0
        if _present(info.get("kernel_begin_us", -1)) and _present(info.get("kernel_end_us", -1)):
            begin, end = info["kernel_begin_us"], info["kernel_end_us"]
        window = max(end - begin, 1e-9)
        lanes = sorted({e["tid"] for e in tiles})
        stages = defaultdict(lambda: {"tiles": 0, "busy_us": 0.0, "mainloop_us": 0.0, "epilogue_us": 0.0,
                                      "split_tiles": 0, "issue_us": 0.0, "flush_us": 0.0,
                                      "sk_contributions": 0, "sk_finishers": 0})
        for e in tiles:
            s = stages[e["args"]["stage"]]
            s["tiles"] += 1
            sk = e["args"].get("stream_k")  # trace version 3: a split tile's contributions and its finisher
            if sk in ("contribution", "finisher"):
                s["sk_contributions" if sk == "contribution" else "sk_finishers"] += 1
            s["busy_us"] += e["dur"]
            s["mainloop_us"] += e["args"].get("mainloop_us", 0.0)
            s["epilogue_us"] += e["args"].get("epilogue_us", 0.0)
            if "issue_us" in e["args"]:  # ping-pong: sources, arithmetic and store issue, then a flag's flush
                s["split_tiles"] += 1
                s["issue_us"] += e["args"]["issue_us"]
                s["flush_us"] += e["args"].get("flush_us", 0.0)
        n = max(len(lanes), 1)
        for s in stages.values():
            s["busy_fraction"] = s["busy_us"] / (n * window)
            s["mainloop_fraction"] = s["mainloop_us"] / (n * window)
            # per record (one warpgroup's share of a tile): compare local and fused runs of one kernel
            s["mean_mainloop_us"] = s["mainloop_us"] / max(s["tiles"], 1)
            s["mean_epilogue_us"] = s["epilogue_us"] / max(s["tiles"], 1)
            s["mean_issue_us"] = s["issue_us"] / s["split_tiles"] if s["split_tiles"] else None
            s["mean_flush_us"] = s["flush_us"] / s["split_tiles"] if s["split_tiles"] else None
        _producer_leads(d["tiles"], d["loads"], stages)
        fw = d["flag_waits"]
        pw = d["partial_waits"]
        out[pid] = {
            "name": names.get(pid, f"rank {pid}"),
            "window_us": (begin, end),
            "consumer_lanes": len(lanes),
            "ctas": len({_lane(t)[0] for t in lanes}),
            "stages": dict(sorted(stages.items())),
            "busy_fraction": sum(s["busy_us"] for s in stages.values()) / (n * window),
            "flag_wait": {"count": len(fw), "total_us": sum(e["dur"] for e in fw),
                          "max_us": max((e["dur"] for e in fw), default=0.0), "gave_up": _gave_up(fw)},
            "partial_wait": {"count": len(pw), "total_us": sum(e["dur"] for e in pw),
                             "max_us": max((e["dur"] for e in pw), default=0.0), "gave_up": _gave_up(pw)},
            "barriers": [(e["name"], e["ts"], e["dur"]) for e in d["barriers"]],
            "copies": _copies(d["copies"]),
            "dropped": info.get("dropped", 0),
            "timer_step_ns": info.get("timer_step_ns"),  # trace version 3: the %globaltimer's step on this device
        }
    return out


def format_summary(doc: dict, summary: dict) -> str:
    meta = doc.get("tpgemm", {})
    lines = []
    if meta:
        lines.append(f"{meta.get('config', '?')}: {meta.get('schedule', '?')}, kernel {meta.get('kernel', '?')}, "
                     f"tp {meta.get('tp', '?')}, {meta.get('m')} x {meta.get('n')} x {meta.get('k')}")
        offs = meta.get("start_exit_offset_us") or []
        if offs:
            txt = ", ".join(f"rank {r} {o:+.3f} us" if o is not None else f"rank {r} n/a" for r, o in enumerate(offs))
            note = "; removed below" if meta.get("clocks_aligned") else ""
            lines.append(f"start-barrier exit vs rank 0 (clock skew estimate{note}): {txt}")
    for pid, s in summary.items():
        b, e = s["window_us"]
        lines.append(f"{s['name']}: kernel {b:.1f} .. {e:.1f} us ({e - b:.1f} us), {s['ctas']} CTAs, "
                     f"{s['consumer_lanes']} consumer lanes, busy {100 * s['busy_fraction']:.1f}%"
                     + (f", {s['dropped']} records dropped (cap)" if s["dropped"] else "")
                     + (f", timer step {s['timer_step_ns']} ns" if s.get("timer_step_ns") else ""))
        for st, v in s["stages"].items():
            sk = (f" (of which {v['sk_contributions']} stream-K contributions, {v['sk_finishers']} finishers)"
                  if v["sk_contributions"] or v["sk_finishers"] else "")
            lines.append(f"  stage {st}: {v['tiles']} tile records{sk}, busy {100 * v['busy_fraction']:.1f}% "
                         f"(mainloop {100 * v['mainloop_fraction']:.1f}%), epilogue {v['epilogue_us']:.1f} us total; "
                         f"per record mainloop {v['mean_mainloop_us']:.2f} us, epilogue {v['mean_epilogue_us']:.2f} us"
                         + (f" (after any partial wait, to the last store issued {v['mean_issue_us']:.2f} us, "
                            f"then flag flush {v['mean_flush_us']:.2f} us; {v['split_tiles']} records)"
                            if v["split_tiles"] else ""))
            if v.get("mean_lead_us") is not None:
                lines.append(f"    producer: k-block 0 of a unit issued {v['mean_lead_us']:.2f} us before its first "
                             f"mainloop start (mean of {v['lead_units']}), after {v['mean_slot_wait_us']:.2f} us "
                             f"waiting for a free slot")
            if v.get("ring_full_fraction") is not None:
                lines.append(f"    ring full {100 * v['ring_full_fraction']:.1f}% of the producer's issue time (its "
                             f"waits for a free slot after k-block 0: loads go out as early as the ring allows)")
        fw, pw = s["flag_wait"], s["partial_wait"]
        gave = lambda w: f", {w['gave_up']} gave up (timed out)" if w.get("gave_up") else ""  # noqa: E731
        lines.append(f"  flag waits: {fw['count']}, total {fw['total_us']:.1f} us (summed over CTAs), "
                     f"max {fw['max_us']:.1f} us{gave(fw)}")
        lines.append(f"  partial waits: {pw['count']}, total {pw['total_us']:.1f} us, max {pw['max_us']:.1f} us"
                     f"{gave(pw)}")
        for name, ts, dur in s["barriers"]:
            lines.append(f"  {name}: {ts:.1f} us, {dur:.1f} us")
        for name, ts, dur, how in s["copies"]:
            lines.append(f"  {name} ({how}): {ts:.1f} .. {ts + dur:.1f} us")
    return "\n".join(lines)


def plot(doc: dict, png: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    pids = sorted({e["pid"] for e in ev})
    rows = {}
    for pid in pids:
        tids = sorted({e["tid"] for e in ev if e["pid"] == pid and e["tid"] >= TILE_TID0 and _lane(e["tid"])[1] > 0})
        rows[pid] = {t: i for i, t in enumerate(tids)}
    # a panel grows with its rows up to 8 inches (132 CTAs x 2 warpgroups = ~2 px per row at 130 dpi)
    panel = max(min(1.5 + 0.1 * max(len(r), 1), 8.0) for r in rows.values())
    fig, axes = plt.subplots(len(pids), 1, sharex=True, squeeze=False, figsize=(14, 1 + panel * len(pids)))
    cmap = plt.get_cmap("tab10")
    stages = sorted({e["args"]["stage"] for e in ev if e.get("cat") == "tile"})
    for ax, pid in zip(axes[:, 0], pids):
        row = rows[pid]
        first_row = {}
        for t, i in row.items():
            first_row.setdefault(_lane(t)[0], i)
        bars = defaultdict(list)  # (stage, part) -> [(x, w, y)]
        for e in ev:
            if e["pid"] != pid:
                continue
            cat = e.get("cat")
            if cat == "tile" and e["tid"] in row:
                a = e["args"]
                ml = a.get("mainloop_us", e["dur"])
                bars[(a["stage"], "main")].append((e["ts"], ml, row[e["tid"]]))
                bars[(a["stage"], "epi")].append((e["ts"] + ml, e["dur"] - ml, row[e["tid"]]))
            elif cat == "partial_wait" and e["tid"] in row:
                bars[("pw", "gave up" if _gave_up([e]) else "")].append((e["ts"], e["dur"], row[e["tid"]]))
            elif cat == "flag_wait":
                y = first_row.get(_lane(e["tid"])[0])
                if y is not None:
                    bars[("fw", "gave up" if _gave_up([e]) else "")].append((e["ts"], e["dur"], y))
            elif cat == "barrier":  # one that gave up (a timed-out call, trace version 5) in red
                ax.axvspan(e["ts"], e["ts"] + e["dur"], color="red" if _gave_up([e]) else "0.6", alpha=0.35, lw=0)
            elif cat in ("copy", "reduce"):
                bars[(cat, "")].append((e["ts"], e["dur"], -2))
        for (kind, part), xs in bars.items():
            by_y = defaultdict(list)
            for x, w, y in xs:
                by_y[y].append((x, max(w, 1e-3)))
            for y, spans in by_y.items():
                gave = part == "gave up"  # waits that gave up: filled red under their usual hatch
                if kind == "fw":
                    ax.broken_barh(spans, (y - 0.5, 0.5), facecolor="red" if gave else "none", edgecolor="k",
                                   hatch="xxxx", lw=0.3)
                elif kind == "pw":
                    ax.broken_barh(spans, (y - 0.4, 0.8), facecolor="red" if gave else "white", edgecolor="crimson",
                                   hatch="////", lw=0.3)
                elif kind in ("copy", "reduce"):
                    ax.broken_barh(spans, (y - 0.8, 1.6), facecolor="lightsteelblue" if kind == "copy" else "khaki",
                                   edgecolor="navy", hatch="..", lw=0.5)
                else:
                    c = cmap(stages.index(kind) % 10)
                    ax.broken_barh(spans, (y - 0.45, 0.9), facecolor=c, alpha=1.0 if part == "main" else 0.45, lw=0)
        ax.set_ylim(len(row) + 0.5, -3.5)
        ax.set_ylabel(f"rank {pid}\nCTA x warpgroup")
        ax.set_yticks([-2])
        ax.set_yticklabels(["copies"])
    aligned = doc.get("tpgemm", {}).get("clocks_aligned")
    axes[-1, 0].set_xlabel("time (us, %globaltimer" + (", devices aligned on the start barrier's exit)" if aligned
                                                       else ", raw per-GPU clocks)"))
    handles = [Patch(facecolor=cmap(i % 10), label=f"stage {s} mainloop") for i, s in enumerate(stages)]
    handles += [Patch(facecolor="0.7", label="epilogue = lighter shade"),
                Patch(facecolor="none", edgecolor="k", hatch="xxxx", label="stage-flag wait (producer)"),
                Patch(facecolor="white", edgecolor="crimson", hatch="////", label="partial-flag wait"),
                Patch(facecolor="lightsteelblue", edgecolor="navy", hatch="..", label="copies and flags"),
                Patch(facecolor="khaki", edgecolor="navy", hatch="..", label="REDUCE"),
                Patch(facecolor="0.6", alpha=0.35, label="barrier")]
    if any(_gave_up([e]) for e in ev):
        handles.append(Patch(facecolor="red", alpha=0.6, label="gave up (timed out)"))
    axes[0, 0].legend(handles=handles, loc="upper right", fontsize=7, ncol=2)
    meta = doc.get("tpgemm", {})
    fig.suptitle(f"{meta.get('config', '')} {meta.get('m', '')}x{meta.get('n', '')}x{meta.get('k', '')}")
    fig.tight_layout()
    fig.savefig(png, dpi=130)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", help="trace-event JSON from build/trace/tpgemm --trace")
    ap.add_argument("--png", help="write the picture here (needs matplotlib)")
    ap.add_argument("--no-align", action="store_true",
                    help="raw per-GPU clocks (default: devices aligned on the start barrier's exit)")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless the timeline is whole (bench/timeline_check.py: every CTA, record and tile)")
    args = ap.parse_args(argv)
    doc = load(args.trace)
    doc = align_clocks(doc, align=not args.no_align)
    print(format_summary(doc, summarize(doc)))
    found = timeline_check.problems(doc) if args.check else []
    for p in found:
        print(f"check: {p}")
    if args.check:
        print(f"check: {'FAILED, ' + str(len(found)) + ' problem(s)' if found else 'the timeline is whole'}")
    if args.png and not os.path.isdir(os.path.dirname(os.path.abspath(args.png))):
        print(f"timeline.py: --png {args.png}: its folder does not exist", file=sys.stderr)
        return 2
    if args.png:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print(f"matplotlib is not installed: no picture written to {args.png} (summary only; "
                  "pip install matplotlib)")
            return 1 if found else 0
        plot(doc, args.png)
        print(f"wrote {args.png}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
