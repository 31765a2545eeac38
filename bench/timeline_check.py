"""Is a traced call's timeline whole? bench/timeline.py --check (and bench/run_trace.sh) runs it on the JSON that
build/trace/tpgemm --trace writes; tests/test_timeline.py on the C writer's synthetic output. A timeline that lost
records, CTAs or tiles would show a call faster or emptier than it was, so each of these is a problem:
- a device whose kernel wrote no trace (no window), or fewer CTA blocks than its grid, or CTAs past the buffer
- records dropped past a lane's cap
- per device and stage, the stored tiles other than every tile of the stage once: tiles_m x tiles_n x l of the
  kernel's own tiling (trace_format.h), counted as distinct tile indices (a cooperative tile has one record per
  warpgroup; a stream-K tile is stored by its finisher alone: its contributions' records say stored: false)
- an epilogue or partial wait outside every tile of its lane (the nesting tile > epilogue > partial wait)
- per device, span events other than one per record the writer counted (`records`: a flag wait, a producer's
  loads or a tile each) or other than one epilogue per tile
- no `tpgemm` block, or a device in it without its tiling: nothing to check against is a problem, not a pass."""
from __future__ import annotations

from collections import defaultdict

EPS_US = 0.002  # the JSON's 3 decimals


def _device_problems(d: dict) -> list[str]:
    r = d.get("rank")
    out = []
    if d.get("kernel_begin_us", -1) == -1:  # the writer's mark of a missing time (a raw one may be negative)
        out.append(f"rank {r}: the GEMM wrote no window (kernel built without -DTPG_TRACE?)")
    if d.get("grid") is not None and d.get("ctas_written") is not None and d["ctas_written"] != d["grid"]:
        out.append(f"rank {r}: {d['ctas_written']} of {d['grid']} CTAs wrote a trace block")
    for key, what in (("dropped", "records dropped past a lane's cap"), ("ctas_dropped", "CTAs past the buffer")):
        if d.get(key):
            out.append(f"rank {r}: {d[key]} {what}")
    return out


def _tile_problems(doc: dict) -> list[str]:
    meta = doc.get("tpgemm", {})
    l = meta.get("l") or 1
    devices = {d.get("rank"): d for d in meta.get("devices", [])}
    stored = defaultdict(set)  # (pid, stage) -> tile indices
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "tile" and e.get("args", {}).get("stored", True):
            stored[(e["pid"], e["args"]["stage"])].add(e["args"]["tile"])
    out = []
    for rank, d in sorted(devices.items(), key=lambda kv: kv[0]):
        if not (d.get("tiles_m") and d.get("tiles_n") and d.get("stages")):
            out.append(f"rank {rank}: the tpgemm block gives no tiling (tiles_m, tiles_n, stages): tiles not checked")
            continue
        want = d["tiles_m"] * d["tiles_n"] * l
        for s in range(d["stages"]):
            got = stored.get((rank, s), set())
            outside = sorted(t for t in got if not 0 <= t < want)
            if len(got) != want or outside:
                out.append(f"rank {rank} stage {s}: {len(got)} distinct stored tiles of {want}"
                           + (f", indices outside 0..{want - 1}: {outside[:5]}" if outside else ""))
    return out


def _nesting_problems(doc: dict) -> list[str]:
    tiles = defaultdict(list)
    inner = []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        if e.get("cat") == "tile":
            tiles[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
        elif e.get("cat") in ("epilogue", "partial_wait"):
            inner.append(e)
    out = []
    for e in inner:
        b, f = e["ts"], e["ts"] + e["dur"]
        if not any(tb - EPS_US <= b and f <= te + EPS_US for tb, te in tiles[(e["pid"], e["tid"])]):
            out.append(f"rank {e['pid']} lane {e['tid']}: {e.get('name')} at {b:.3f} us (+{e['dur']:.3f}) is in no "
                       "tile of its lane")
    return out


RECORD_CATS = ("flag_wait", "loads", "tile")  # trace_json.c: the span each kept record writes (a tile adds its epilogue)


def _count_problems(doc: dict) -> list[str]:
    spans = defaultdict(lambda: defaultdict(int))  # pid -> cat -> spans
    for e in doc["traceEvents"]:
        if e.get("ph") == "X":
            spans[e.get("pid")][e.get("cat")] += 1
    out = []
    for d in doc.get("tpgemm", {}).get("devices", []):
        r, got = d.get("rank"), spans.get(d.get("rank"), {})
        kept = sum(got.get(c, 0) for c in RECORD_CATS)
        if d.get("records") is not None and kept != d["records"]:
            out.append(f"rank {r}: {kept} flag-wait, loads and tile spans for the {d['records']} records written")
        if got.get("epilogue", 0) != got.get("tile", 0):
            out.append(f"rank {r}: {got.get('epilogue', 0)} epilogue spans for {got.get('tile', 0)} tiles")
    return out


def problems(doc: dict) -> list[str]:
    """Every problem found (empty: the timeline is whole)."""
    devices = doc.get("tpgemm", {}).get("devices", [])
    if not devices:
        return ["no tpgemm block with devices: not a whole build/trace/tpgemm --trace file (nothing to check against)"]
    return ([p for d in devices for p in _device_problems(d)] + _tile_problems(doc) + _nesting_problems(doc)
            + _count_problems(doc))
