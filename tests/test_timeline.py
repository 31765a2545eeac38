"""Tier 1 (no GPU): bench/timeline.py on small traces - a hand-written one and the C writer's own output
(build/tests/test_trace with TPG_TRACE_DUMP). matplotlib is absent on CI, so the summary path and the
"no matplotlib" message are tested here; the PNG path runs where matplotlib is installed
(BENCHMARKS.md, "Timeline of one call")."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import timeline  # noqa: E402


def X(name, cat, pid, tid, ts, dur, **args):
    return {"name": name, "cat": cat, "ph": "X", "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def fake_trace():
    """rank 0: 1 CTA x 2 warpgroups, stage 0 tiles then a 20 us flag wait, then stage 1; rank 1 idle."""
    ev = [{"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "rank 0 (cuda 0)"}},
          {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "rank 1 (cuda 1)"}},
          X("start barrier", "barrier", 0, 0, 0.0, 5.0),
          X("end barrier", "barrier", 0, 0, 95.0, 5.0),
          X("copy+flag stage 1", "copy", 0, 1, 5.0, 40.0, stage=1),
          X("flag wait stage 1", "flag_wait", 0, 100, 25.0, 20.0, stage=1),
          X("stage 1", "tile", 1, 101, 10.0, 10.0, stage=1, tile=0, mainloop_us=8.0, epilogue_us=2.0)]
    for wg in (0, 1):
        tid = 101 + wg
        ev += [X("stage 0", "tile", 0, tid, 10.0, 30.0, stage=0, tile=0, mainloop_us=25.0, epilogue_us=5.0),
               X("epilogue", "epilogue", 0, tid, 35.0, 5.0),
               X("stage 1", "tile", 0, tid, 50.0, 40.0, stage=1, tile=1, mainloop_us=30.0, epilogue_us=10.0),
               X("partial wait", "partial_wait", 0, tid, 81.0, 4.0, stage=1, tile=1)]
    return {"traceEvents": ev, "tpgemm": {
        "config": "ag_rota_bf16_tp2", "schedule": "AllGather1D_TilingCD_RotatingA", "kernel": "k", "tp": 2,
        "m": 256, "n": 512, "k": 64, "start_exit_offset_us": [0.0, 0.75],
        "devices": [{"rank": 0, "kernel_begin_us": 10.0, "kernel_end_us": 90.0, "dropped": 3},
                    {"rank": 1, "kernel_begin_us": -1, "kernel_end_us": -1}]}}


def test_summary_numbers():
    s = timeline.summarize(fake_trace())
    r0 = s[0]
    assert r0["window_us"] == (10.0, 90.0) and r0["consumer_lanes"] == 2 and r0["ctas"] == 1
    # stage 0: 2 x 30 us over 2 lanes x 80 us; stage 1: 2 x 40 us
    assert r0["stages"][0]["busy_fraction"] == pytest.approx(60 / 160)
    assert r0["stages"][1]["busy_fraction"] == pytest.approx(80 / 160)
    assert r0["stages"][1]["mainloop_fraction"] == pytest.approx(60 / 160)
    assert r0["busy_fraction"] == pytest.approx(140 / 160)
    assert r0["flag_wait"] == {"count": 1, "total_us": 20.0, "max_us": 20.0, "gave_up": 0}
    assert r0["partial_wait"]["count"] == 2 and r0["partial_wait"]["total_us"] == pytest.approx(8.0)
    assert [b[0] for b in r0["barriers"]] == ["start barrier", "end barrier"]
    assert r0["copies"] == [("copy+flag stage 1", 5.0, 40.0, "inferred")]
    assert r0["dropped"] == 3
    r1 = s[1]  # no kernel window in the metadata: the tiles' extent
    assert r1["window_us"] == (10.0, 20.0) and r1["busy_fraction"] == pytest.approx(1.0)


def test_nodes_timed_by_cuda_events_are_summarized_per_kind_and_stage():
    """The writer's node spans (args.measured "cuda_events": trace_events.c) read as one line per node kind and stage,
    first begin to last end, pieces counted; the REDUCE (cat "reduce") among them."""
    doc = fake_trace()
    ev = doc["traceEvents"]
    ev[:] = [e for e in ev if e.get("cat") != "copy"]
    node = lambda name, cat, ts, dur, kind, stage, piece: X(name, cat, 0, 1, ts, dur, measured="cuda_events",  # noqa
                                                           node=kind, stage=stage, piece=piece, peer=1)
    ev += [node("copy stage 1 piece 0 from rank 1", "copy", 5.0, 20.0, "copy", 1, 0),
           node("copy stage 1 piece 1 from rank 1", "copy", 25.0, 18.0, "copy", 1, 1),
           node("flag stage 1", "copy", 43.0, 2.0, "flag", 1, 0),
           node("REDUCE", "reduce", 90.0, 6.0, "REDUCE", -1, 0)]
    for e in ev[-4:]:
        e["args"]["before_dependency"] = False  # as trace_events.c writes it on every node: false is not "placed"
    s = timeline.summarize(doc)
    assert s[0]["copies"] == [("copy stage 1 (2 pieces)", 5.0, 38.0, "CUDA events"),
                              ("flag stage 1", 43.0, 2.0, "CUDA events"), ("REDUCE", 90.0, 6.0, "CUDA events")]
    text = timeline.format_summary(doc, s)
    assert "copy stage 1 (2 pieces) (CUDA events): 5.0 .. 43.0 us" in text and "REDUCE (CUDA events): 90.0 .. 96.0" in text
    # a stage whose copies come from several ranks (the gathered walk), and a node placed before its dependency
    ev[-4]["args"]["peer"] = 2
    ev[-1]["args"]["before_dependency"] = True
    s = timeline.summarize(doc)
    assert s[0]["copies"][0][0] == "copy stage 1 (2 copies from 2 ranks)"
    assert s[0]["copies"][-1] == ("REDUCE", 90.0, 6.0, "CUDA events; 1 placed before its dependency")
    # a copy-engine partial's bands (ce_partials.c) count as bands
    ev += [node("partial copy stage 0 band 0 to rank 1", "copy", 50.0, 4.0, "partial copy", 0, 0),
           node("partial copy stage 0 band 1 to rank 1", "copy", 56.0, 4.0, "partial copy", 0, 1)]
    assert ("partial copy stage 0 (2 bands)", 50.0, 10.0, "CUDA events") in timeline.summarize(doc)[0]["copies"]


def test_waits_that_gave_up_are_counted_and_said():
    """A timed-out call's trace (args.gave_up, trace version 5): the summary counts the waits that gave up and says
    so; a trace without them says nothing of it."""
    doc = fake_trace()
    assert "gave up" not in timeline.format_summary(doc, timeline.summarize(doc))
    for e in doc["traceEvents"]:
        if e.get("cat") == "partial_wait" and e["pid"] == 0:
            e.setdefault("args", {})["gave_up"] = True
            break
    s = timeline.summarize(doc)
    assert s[0]["partial_wait"]["gave_up"] == 1 and s[0]["flag_wait"]["gave_up"] == 0
    text = timeline.format_summary(doc, s)
    assert "partial waits: 2, total 8.0 us, max" in text and "1 gave up (timed out)" in text


def test_cli_without_matplotlib_prints_summary_and_says_so(tmp_path, capsys, monkeypatch):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(fake_trace()))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as on CI: import fails
    assert timeline.main([str(path), "--png", str(tmp_path / "t.png")]) == 0
    out = capsys.readouterr().out
    assert "rank 0 (cuda 0): kernel 10.0 .. 90.0 us (80.0 us), 1 CTAs, 2 consumer lanes, busy 87.5%" in out
    assert "3 records dropped" in out
    assert "stage 0: 2 tile records, busy 37.5% (mainloop 31.2%)" in out
    assert "flag waits: 1, total 20.0 us" in out
    assert "copy+flag stage 1 (inferred): 5.0 .. 45.0 us" in out
    assert "rank 1 +0.750 us" in out
    assert "matplotlib is not installed" in out
    assert not (tmp_path / "t.png").exists()


def test_rejects_a_file_without_trace_events(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{}")
    with pytest.raises(SystemExit, match="not a trace-event file"):
        timeline.load(str(path))


def c_writer_output(tmp_path):
    """The JSON of runtime/src/cli/trace_json.c from the synthetic buffers of tests/c/test_trace.c."""
    exe = ROOT / "build" / "tests" / "test_trace"
    if not exe.exists():
        pytest.skip("build/tests/test_trace is missing (ninja; tests/test_build.py reports why)")
    dump = tmp_path / "c.json"
    r = subprocess.run([str(exe), "two_devices_convert"], env=dict(os.environ, TPG_TRACE_DUMP=str(dump)),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return timeline.load(str(dump))


def test_reads_the_c_writers_output(tmp_path):
    doc = c_writer_output(tmp_path)
    s = timeline.summarize(doc)
    assert sorted(s) == [0, 1]
    assert s[0]["ctas"] == 2 and s[0]["consumer_lanes"] == 3
    assert s[0]["flag_wait"]["count"] == 2 and s[0]["partial_wait"]["count"] == 1
    assert s[0]["dropped"] == 2
    assert s[0]["stages"][0]["mean_lead_us"] == pytest.approx(1.0)  # CTA 1: k-block 0 out at 9 us, mainloop at 10
    # the writer aligns the devices on the start barrier's exit: rank 1's clock, 2.5 us ahead, is taken back
    assert doc["tpgemm"]["aligned"] == "start_barrier"
    assert s[1]["window_us"][0] == pytest.approx(s[0]["window_us"][0])
    assert timeline.align_clocks(doc) == {**doc, "tpgemm": {**doc["tpgemm"], "clocks_aligned": True}}  # nothing to do
    raw = timeline.summarize(timeline.align_clocks(doc, align=False))  # --no-align: each GPU's own clock again
    assert raw[1]["window_us"][0] == pytest.approx(raw[0]["window_us"][0] + 2.5)
    # a clock 300 us behind: raw times below zero are still times (the writer marks a missing one with -1 exactly)
    assert doc["tpgemm"]["shift_us"] == pytest.approx([0.0, 2.5])  # what the writer took back
    late = {**doc, "tpgemm": {**doc["tpgemm"], "start_exit_offset_us": [0.0, -300.0], "shift_us": [0.0, -300.0]}}
    raw = timeline.summarize(timeline.align_clocks(late, align=False))
    assert raw[1]["window_us"] == pytest.approx((s[1]["window_us"][0] - 300.0, s[1]["window_us"][1] - 300.0))
    back = timeline.align_clocks(timeline.align_clocks(late, align=False))
    assert timeline.summarize(back)[1]["window_us"] == pytest.approx(s[1]["window_us"])  # the round trip
    text = timeline.format_summary(doc, s)
    assert "rank 1 (cuda 3)" in text and "rank 1 +2.500 us" in text


def test_the_writers_ids_are_perfettos_and_read_back_as_ranks(tmp_path):
    """The file holds pid = rank + 1 and tids unique across ranks, none 0 (Perfetto special-cases pid 0 and has
    merged tid 0 with 1); timeline.load reads them back as rank and track, and a version-1 file as it is."""
    c_writer_output(tmp_path)
    raw = json.loads((tmp_path / "c.json").read_text())
    assert raw["tpgemm"]["version"] == 5 and raw["tpgemm"]["ids"] == {"pid": "rank + 1", "tid_stride": 100000}
    ids = {(e["pid"], e["tid"]) for e in raw["traceEvents"]}
    assert {p for p, _ in ids} == {1, 2} and all(t > 0 for _, t in ids)
    assert len({t for _, t in ids}) == len(ids)  # no tid under two pids
    read = timeline.rank_ids(raw)
    assert {e["pid"] for e in read["traceEvents"]} == {0, 1}
    assert {e["tid"] for e in read["traceEvents"] if e.get("cat") == "tile"} == {101, 102, 105}  # 100 + 4 * cta + lane
    assert read["traceEvents"][0] == {**raw["traceEvents"][0], "pid": 0, "tid": raw["traceEvents"][0]["tid"] - 100000}
    old = fake_trace()
    assert timeline.rank_ids(old) is old  # version 1 (no version): pid = rank already
    with pytest.raises(SystemExit, match="tid_stride"):
        timeline.rank_ids({**old, "tpgemm": {**old["tpgemm"], "version": 2}})


def test_alignment_shifts_each_device_by_its_start_barrier_offset():
    doc = fake_trace()
    al = timeline.align_clocks(doc)
    before = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    after = [e for e in al["traceEvents"] if e.get("ph") == "X"]
    for a, b in zip(before, after):
        assert b["ts"] == pytest.approx(a["ts"] - (0.75 if a["pid"] == 1 else 0.0))
    assert al["tpgemm"]["clocks_aligned"] and not doc["tpgemm"].get("clocks_aligned")  # the input is untouched
    assert al["tpgemm"]["devices"][1]["kernel_begin_us"] == -1  # "no window" stays as it is
    s = timeline.summarize(al)
    assert s[1]["window_us"] == pytest.approx((10.0 - 0.75, 20.0 - 0.75))


def test_no_align_takes_back_what_the_writer_shifted_not_each_ranks_own_offset():
    """Ranks 0 and 1 on one GPU, 2 on another: the writer shifted rank 2 by its offset and rank 1 not at all (one
    timer with rank 0; its offset is polling latency), so --no-align moves rank 2 alone (tpgemm.shift_us)."""
    doc = fake_trace()
    doc["tpgemm"].update(aligned="start_barrier", start_exit_offset_us=[0.0, 0.75], shift_us=[0.0, 0.0])
    before = [(e["pid"], e["ts"]) for e in doc["traceEvents"] if e.get("ph") == "X"]
    after = [(e["pid"], e["ts"]) for e in timeline.align_clocks(doc, align=False)["traceEvents"] if e.get("ph") == "X"]
    assert after == before  # rank 1 was not shifted: nothing to take back
    doc["tpgemm"]["shift_us"] = [0.0, 0.5]
    raw = timeline.align_clocks(doc, align=False)
    after = [e["ts"] for e in raw["traceEvents"] if e.get("ph") == "X"]
    assert after == pytest.approx([ts + (0.5 if pid == 1 else 0.0) for pid, ts in before])
    again = [e["ts"] for e in timeline.align_clocks(raw)["traceEvents"] if e.get("ph") == "X"]  # and back
    assert again == pytest.approx([ts for _, ts in before])


def test_per_record_means():
    s = timeline.summarize(fake_trace())[0]["stages"]
    assert s[0]["mean_mainloop_us"] == pytest.approx(25.0) and s[0]["mean_epilogue_us"] == pytest.approx(5.0)
    assert s[1]["mean_mainloop_us"] == pytest.approx(30.0) and s[1]["mean_epilogue_us"] == pytest.approx(10.0)
    text = timeline.format_summary(fake_trace(), timeline.summarize(fake_trace()))
    assert "per record mainloop 25.00 us, epilogue 5.00 us" in text


def test_epilogue_split_where_recorded():
    """Tiles whose record carries issue_us / flush_us (a plain epilogue, trace_json.c) get per-stage means;
    stages without them print no split."""
    doc = fake_trace()
    for e in doc["traceEvents"]:
        if e.get("cat") == "tile" and e["pid"] == 0 and e["args"]["stage"] == 1:
            e["args"].update(issue_us=7.0, flush_us=3.0)
    s = timeline.summarize(doc)[0]["stages"]
    assert s[1]["split_tiles"] == 2
    assert s[1]["mean_issue_us"] == pytest.approx(7.0) and s[1]["mean_flush_us"] == pytest.approx(3.0)
    assert s[0]["mean_issue_us"] is None
    text = timeline.format_summary(doc, timeline.summarize(doc))
    assert "epilogue 10.00 us (after any partial wait, to the last store issued 7.00 us, then flag flush 3.00 us; 2 records)" in text
    assert "epilogue 5.00 us (" not in text


def test_producer_lead_of_k_block_0():
    """Load records (producer lane, tid 100 for CTA 0): k-block 0 issued at ts + slot_wait_us, set against the
    first mainloop start of the same unit (both warpgroups' records: the earlier one counts)."""
    doc = fake_trace()
    doc["traceEvents"] += [X("loads stage 0", "loads", 0, 100, 2.0, 20.0, stage=0, tile=0, slot_wait_us=1.0),
                           X("loads stage 1", "loads", 0, 100, 52.0, 20.0, stage=1, tile=1, slot_wait_us=0.5)]
    s = timeline.summarize(doc)[0]["stages"]
    assert s[0]["mean_lead_us"] == pytest.approx(10.0 - 3.0) and s[0]["mean_slot_wait_us"] == pytest.approx(1.0)
    assert s[1]["mean_lead_us"] == pytest.approx(50.0 - 52.5)  # issued after the mainloop started waiting
    text = timeline.format_summary(doc, timeline.summarize(doc))
    assert "k-block 0 of a unit issued -2.50 us before its first mainloop start" in text
    assert timeline.summarize(fake_trace())[0]["stages"][0]["mean_lead_us"] is None  # no load records: no line
    assert "ring full" not in text  # records without ring-full figures (older traces): no line


def test_producer_lead_counts_the_earlier_warpgroup_and_means_divide_by_records():
    """The lead is taken from the unit's first mainloop start over both warpgroups (not the later one); the per-record
    means divide by the records, whatever the lanes."""
    doc = fake_trace()
    for e in doc["traceEvents"]:  # warpgroup 1 (tid 102) starts its stage-0 record later
        if e.get("cat") == "tile" and e["pid"] == 0 and e["tid"] == 102 and e["args"]["stage"] == 0:
            e["ts"] = 12.0
    doc["traceEvents"] += [X("loads stage 0", "loads", 0, 100, 2.0, 20.0, stage=0, tile=0, slot_wait_us=1.0),
                           X("stage 0", "tile", 0, 101, 60.0, 1.0, stage=0, tile=5, mainloop_us=1.0,
                             epilogue_us=2.0)]  # a third stage-0 record, on a lane already counted
    s = timeline.summarize(doc)[0]["stages"]
    assert s[0]["mean_lead_us"] == pytest.approx(10.0 - 3.0)
    assert s[0]["mean_mainloop_us"] == pytest.approx((25.0 + 25.0 + 1.0) / 3)
    assert s[0]["mean_epilogue_us"] == pytest.approx((5.0 + 5.0 + 2.0) / 3)


def test_ring_full_fraction_is_cycle_weighted():
    """The share of the producer's issue time spent waiting for a free slot after k-block 0, summed in cycles
    over a stage's load records (a short unit weighs less than a long one)."""
    doc = fake_trace()
    doc["traceEvents"] += [X("loads stage 0", "loads", 0, 100, 2.0, 20.0, stage=0, tile=0, slot_wait_us=1.0,
                             ring_full_cycles=300, issue_cycles=1000),
                           X("loads stage 0", "loads", 0, 100, 30.0, 20.0, stage=0, tile=0, slot_wait_us=1.0,
                             ring_full_cycles=2700, issue_cycles=3000)]
    s = timeline.summarize(doc)[0]["stages"]
    assert s[0]["ring_full_fraction"] == pytest.approx(3000 / 4000)
    assert s[1].get("ring_full_fraction") is None
    assert "ring full 75.0% of the producer's issue time" in timeline.format_summary(doc, timeline.summarize(doc))


def whole_trace():
    """One device, 1 x 2 tiles in each of 2 stages, each tile with its epilogue and a partial wait inside it."""
    ev = []
    for s in (0, 1):
        for t in (0, 1):
            b = 10.0 + 40.0 * s + 20.0 * t
            ev += [X(f"stage {s}", "tile", 0, 101, b, 15.0, stage=s, tile=t, stored=True),
                   X("epilogue", "epilogue", 0, 101, b + 10.0, 5.0),
                   X("partial wait", "partial_wait", 0, 101, b + 10.0, 1.0, stage=s, tile=t)]
    return {"traceEvents": ev, "tpgemm": {"l": 1, "devices": [
        {"rank": 0, "grid": 1, "ctas_written": 1, "dropped": 0, "ctas_dropped": 0, "tiles_m": 1, "tiles_n": 2,
         "stages": 2, "records": 4, "kernel_begin_us": 10.0, "kernel_end_us": 90.0}]}}


def test_the_check_passes_a_whole_timeline_and_names_what_is_missing():
    from timeline_check import problems
    assert problems(whole_trace()) == []
    doc = whole_trace()
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e["args"].get("tile") != 1 or e["args"]["stage"] != 1
                          or e["cat"] != "tile"]  # stage 1's tile 1 lost (its epilogue and wait stay)
    doc["tpgemm"]["devices"][0].update(dropped=3, ctas_written=0, kernel_begin_us=-1)
    found = problems(doc)
    assert "rank 0: 3 records dropped past a lane's cap" in found
    assert "rank 0: 0 of 1 CTAs wrote a trace block" in found
    assert any("wrote no window" in p for p in found)
    assert "rank 0 stage 1: 1 distinct stored tiles of 2" in found
    assert "rank 0: 3 flag-wait, loads and tile spans for the 4 records written" in found
    assert "rank 0: 4 epilogue spans for 3 tiles" in found
    assert sum("is in no tile of its lane" in p for p in found) == 2  # that tile's epilogue and partial wait


def test_the_check_fails_what_it_cannot_check_against_or_spans_lost_from_a_whole_file():
    """A review cut a real trace and --check still passed: without the tpgemm block, without a device's tiling, with
    one epilogue or every producer's loads removed."""
    from timeline_check import problems
    doc = whole_trace()
    del doc["tpgemm"]
    assert problems(doc) and "no tpgemm block" in problems(doc)[0]
    doc = whole_trace()
    del doc["tpgemm"]["devices"][0]["tiles_n"]
    assert any("gives no tiling" in p for p in problems(doc))
    doc = whole_trace()
    doc["traceEvents"].remove(next(e for e in doc["traceEvents"] if e["cat"] == "epilogue"))
    assert problems(doc) == ["rank 0: 3 epilogue spans for 4 tiles"]
    doc = whole_trace()
    doc["tpgemm"]["devices"][0]["records"] = 6  # two producer records whose loads spans are gone
    assert problems(doc) == ["rank 0: 4 flag-wait, loads and tile spans for the 6 records written"]


def test_a_device_with_one_kernel_time_missing_takes_its_window_from_the_tiles():
    doc = fake_trace()
    doc["tpgemm"]["devices"][0]["kernel_end_us"] = -1  # the writer's mark of a missing time; the begin is there
    assert timeline.summarize(doc)[0]["window_us"] == (10.0, 90.0)  # the tiles' extent, not (10.0, -1)
    doc["tpgemm"]["devices"][0].update(kernel_begin_us=-1, kernel_end_us=85.0)
    assert timeline.summarize(doc)[0]["window_us"] == (10.0, 90.0)


def test_the_check_holds_its_counts_and_nesting_to_the_writers_precision():
    """More CTAs than the grid is as wrong as fewer; a producer's loads spans count as records; a span outside its
    tile by more than the JSON's rounding (3 decimals) is named, within it not."""
    from timeline_check import problems
    doc = whole_trace()
    doc["tpgemm"]["devices"][0]["ctas_written"] = 2
    assert problems(doc) == ["rank 0: 2 of 1 CTAs wrote a trace block"]
    doc = whole_trace()
    doc["traceEvents"].append(X("loads stage 0", "loads", 0, 100, 9.0, 20.0, stage=0, tile=0, slot_wait_us=0.0))
    doc["tpgemm"]["devices"][0]["records"] = 5
    assert problems(doc) == []
    doc["tpgemm"]["devices"][0]["records"] = 0  # a writer that counted none, with spans in the file
    assert problems(doc) == ["rank 0: 5 flag-wait, loads and tile spans for the 0 records written"]
    for past, named in ((0.001, False), (0.01, True)):
        doc = whole_trace()
        ep = next(e for e in doc["traceEvents"] if e["cat"] == "epilogue")
        ep["dur"] += past  # its tile ends at b + 15.0, where the epilogue ended
        assert any("is in no tile of its lane" in p for p in problems(doc)) == named, past


def test_check_sets_the_exit_status(tmp_path, capsys):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(whole_trace()))
    assert timeline.main([str(path), "--check"]) == 0
    assert "check: the timeline is whole" in capsys.readouterr().out
    doc = whole_trace()
    doc["tpgemm"]["devices"][0]["dropped"] = 1
    path.write_text(json.dumps(doc))
    assert timeline.main([str(path), "--check"]) == 1
    assert "check: FAILED, 1 problem(s)" in capsys.readouterr().out
    assert timeline.main([str(path)]) == 0  # without --check: the summary alone


def test_the_check_reads_the_c_writers_output(tmp_path):
    """The C writer's synthetic buffers drop records past a cap of 4 and hold a few tiles of a 4 x 3 tiling."""
    from timeline_check import problems
    found = problems(c_writer_output(tmp_path))
    assert all(f"rank {r}: 2 records dropped past a lane's cap" in found for r in (0, 1)), found
    assert not any("is in no tile" in p for p in found), found  # the writer nests epilogues and waits in their tiles


def test_stream_k_parts_are_counted_and_only_the_finisher_stores():
    """Trace version 3 labels a split tile's records (trace_json.c): the summary counts contributions and finishers
    per stage, and the check counts a tile stored by its finisher, not by a contribution."""
    from timeline_check import problems
    doc = whole_trace()
    doc["traceEvents"] += [X("stage 0 stream-K part", "tile", 0, 102, 10.0, 9.0, stage=0, tile=1, stored=False,
                             stream_k="contribution"), X("epilogue", "epilogue", 0, 102, 17.0, 2.0)]
    doc["tpgemm"]["devices"][0]["records"] += 1
    for e in doc["traceEvents"]:
        if e["cat"] == "tile" and e["args"]["stage"] == 0 and e["args"]["tile"] == 1 and e["tid"] == 101:
            e["args"]["stream_k"] = "finisher"
    s = timeline.summarize(doc)[0]["stages"]
    assert (s[0]["sk_contributions"], s[0]["sk_finishers"]) == (1, 1)
    assert (s[1]["sk_contributions"], s[1]["sk_finishers"]) == (0, 0)
    text = timeline.format_summary(doc, timeline.summarize(doc))
    assert "stage 0: 3 tile records (of which 1 stream-K contributions, 1 finishers)" in text
    assert "stage 1: 2 tile records, busy" in text
    assert problems(doc) == []
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e["args"].get("stream_k") != "finisher"]
    assert "rank 0 stage 0: 1 distinct stored tiles of 2" in problems(doc)  # the contribution alone stores nothing


def test_the_summary_gives_each_devices_timer_step():
    """Trace version 3 gives each device's %globaltimer step (trace_json.c): the summary says it; older files, not."""
    doc = fake_trace()
    doc["tpgemm"]["devices"][0]["timer_step_ns"] = 32
    text = timeline.format_summary(doc, timeline.summarize(doc))
    assert "busy 87.5%, 3 records dropped (cap), timer step 32 ns" in text
    assert "timer step" not in timeline.format_summary(fake_trace(), timeline.summarize(fake_trace()))


@pytest.mark.parametrize("args", [["--expect-timed"], ["--expect-timed", "--config", "ag_rota_bf16_tp2"]])
def test_trace_case_wants_a_name_after_expect_timed(args):
    """tests/gpu/trace_case.sh: --expect-timed without a node's name (at the end, or before the next flag) is a usage
    error (exit 2, said), not a failed check nor a name taken from tpgemm's flags; the parsing needs no GPU."""
    r = subprocess.run(["bash", str(ROOT / "tests" / "gpu" / "trace_case.sh"), *args], capture_output=True, text=True)
    assert r.returncode == 2 and "--expect-timed needs a node's summary name" in r.stderr, (r.returncode, r.stderr)


def test_the_picture_of_a_timed_out_call_is_drawn(tmp_path):
    """Where matplotlib is installed (not on CI): the PNG of a trace with waits and a barrier that gave up is written
    (drawn in red, with its legend entry)."""
    pytest.importorskip("matplotlib", reason="matplotlib is not installed (CI): the summary path is tested above")
    doc = fake_trace()
    for e in doc["traceEvents"]:
        if e.get("cat") in ("partial_wait", "flag_wait", "barrier"):
            e.setdefault("args", {})["gave_up"] = True
    path, png = tmp_path / "t.json", tmp_path / "t.png"
    path.write_text(json.dumps(doc))
    assert timeline.main([str(path), "--png", str(png)]) == 0
    assert png.stat().st_size > 10000


def test_the_check_fails_a_call_without_matplotlib_too(tmp_path, capsys, monkeypatch):
    """bench/run_trace.sh runs --check --png: where matplotlib is missing the picture is skipped, not the verdict."""
    doc = whole_trace()
    doc["tpgemm"]["devices"][0]["dropped"] = 1
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert timeline.main([str(path), "--check", "--png", str(tmp_path / "t.png")]) == 1
    assert "matplotlib is not installed" in capsys.readouterr().out


@pytest.mark.parametrize("aligned", [None, "none (ranks share a GPU)"])
def test_no_align_leaves_a_raw_or_unaligned_file_as_it_is(aligned):
    """--no-align: a file without the writer's `aligned` (raw clocks) or with "none ..." (nothing was shifted) keeps
    its times; only a file the writer aligned is shifted back."""
    doc = fake_trace()
    if aligned is not None:
        doc["tpgemm"]["aligned"] = aligned
    before = [e["ts"] for e in doc["traceEvents"] if e.get("ph") == "X"]
    after = [e["ts"] for e in timeline.align_clocks(doc, align=False)["traceEvents"] if e.get("ph") == "X"]
    assert after == before


def test_a_batched_trace_is_checked_against_every_batchs_tiles():
    """l = 2: each stage holds tiles_m x tiles_n tiles of each of two batches, so the one batch written is half."""
    from timeline_check import problems
    doc = whole_trace()
    doc["tpgemm"]["l"] = 2
    assert "rank 0 stage 0: 2 distinct stored tiles of 4" in problems(doc)


def test_a_tile_index_past_the_stage_is_named():
    from timeline_check import problems
    doc = whole_trace()
    for e in doc["traceEvents"]:
        if e["cat"] == "tile" and e["args"]["stage"] == 1 and e["args"]["tile"] == 1:
            e["args"]["tile"] = 2  # tiles_m x tiles_n = 2: index 2 is outside, and tile 1 of stage 1 is missing
    found = problems(doc)
    assert any("outside" in p for p in found), found
