"""The TP benchmark's timed windows (bench/tp_bench.py): every rank runs a variant's calls between CUDA events at
the same moment, with the energy and SM clock of its GPU (NVML), and a variant that fails on any rank is dropped
on every rank, so that the ranks keep calling the same collectives in the same order."""
import math
import time

import torch
import torch.distributed as dist

import tp_energy
import tp_plan
import tp_records as R


class Energy:
    """NVML total energy (mJ counter) of this rank's GPU, found by PCI bus id; None when unavailable."""

    def __init__(self, dev):
        self.h = None
        try:
            import pynvml
            pynvml.nvmlInit()
            p = torch.cuda.get_device_properties(dev)
            bus = f"{p.pci_domain_id:08X}:{p.pci_bus_id:02X}:{p.pci_device_id:02X}.0"
            try:
                self.h = pynvml.nvmlDeviceGetHandleByPciBusId(bus)
            except pynvml.NVMLError:  # same numbering as CUDA when CUDA_VISIBLE_DEVICES is not set
                self.h = pynvml.nvmlDeviceGetHandleByIndex(dev)
            self.nvml = pynvml
        except Exception as e:  # energy is reported as None, the timings still count
            print(f"NVML energy unavailable on device {dev}: {e!r}", flush=True)

    def joules(self):
        return self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.h) / 1e3 if self.h else None

    def sm_mhz(self):
        """The SM clock now (NVML), or None: read while a window's work still runs, it shows whether two
        variants at the same power cap run at different clocks (fused calls keep NVLink busy)."""
        try:
            return float(self.nvml.nvmlDeviceGetClockInfo(self.h, self.nvml.NVML_CLOCK_SM)) if self.h else None
        except Exception:
            return None


# --energy-fit (tp_bench.py): each window's joules also from the power fitted over the counter's steps
# (tp_energy.py), and reported from it where every rank's fit held; the delta stays beside it in the window's record.
# The default since a GPU run compared the two (bench/results/experiments/bench_review_0435Z: the fit's spread over
# 8 windows 0.7-2.4%, the delta's 1.0-10.6%); tp_bench.py sets it from --energy-fit / --no-energy-fit.
FIT_ENERGY = True


# A bound on the burst window's calls: it is sized from a two-call timing, which a slow first call makes bogus,
# and must not queue minutes of work (the heat and sustained windows: tp_records.window_calls).
MAX_CALLS = 2000


def allreduce(x, op):
    t = torch.tensor([float(x)], device="cuda", dtype=torch.float64)
    dist.all_reduce(t, op=op)
    return t.item()


def all_ok(ok):
    """True on every rank iff ok on every rank: a variant that failed on one rank is dropped on all, so
    the ranks keep calling the same collectives in the same order."""
    return allreduce(1.0 if ok else 0.0, dist.ReduceOp.MIN) > 0.5


# Device-side idle before a window's start event (cycles; ~5 ms at boost clock): time for this host to
# queue the window's calls, so that the GPUs of all ranks start the timed work together.
LEAD_CYCLES = 10_000_000


def aligned_start():
    """Makes the current stream leave an all-reduce with every other rank's (NCCL: each GPU leaves it
    when the last one arrives), then spin LEAD_CYCLES. Without it a rank whose host launched later
    started its timed calls later, and the burst figure of a short fused call (whose first call waits
    for every rank) read as low as a third of its sustained figure."""
    dist.all_reduce(torch.zeros(1, device="cuda"))
    torch.cuda._sleep(LEAD_CYCLES)


class RankFailure(RuntimeError):
    """A collective step failed on another rank (its own message is in that rank's record of errors)."""


def window(fn, calls, energy, tp):
    """Runs fn `calls` times back to back; returns (seconds, joules per GPU, SM MHz, energy) — max time, mean energy
    (read within ~1 ms of the end event: tp_plan.wait_sampling) and the SM clock sampled every 20 ms while the calls
    run, averaged over samples and ranks; energy: with FIT_ENERGY {"joules_delta", "joules_fit", "fit_stats"} (the
    fit None unless it held on every rank, and then the joules returned; fit_stats this rank's sampler's,
    EnergySampler.stats), else {}. Collective: a failure of this rank's calls is held until every rank has reached
    the same point, then raised on all ranks alike (RankFailure on the ranks whose own calls ran), so the ranks leave
    in step."""
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.synchronize()
    aligned_start()
    failure, sampler, watts = None, None, None
    try:
        if FIT_ENERGY and energy.h:
            sampler = tp_energy.EnergySampler(energy.joules).__enter__()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        j0 = energy.joules()
        s.record()
        t_record = time.monotonic()
        for _ in range(calls):
            fn()
        e.record()
        clocks = tp_plan.wait_sampling(e.query, energy.sm_mhz)  # the SM clock while the queued calls run
        mhz = sum(clocks) / len(clocks) if clocks else None
        e.synchronize()
        j1 = energy.joules()
        elapsed = s.elapsed_time(e) / 1e3
    except Exception as ex:
        failure = ex
    finally:
        if sampler:
            sampler.__exit__(None, None, None)
    if failure is None and sampler and sampler.usable():  # the fitted power over the busy part
        watts = tp_energy.fit_power(sampler.steps, *tp_energy.busy_span(t_record, elapsed))
    if not all_ok(failure is None):
        raise failure or RankFailure("failed on another rank")
    seconds = allreduce(elapsed, dist.ReduceOp.MAX)
    joules = allreduce(j1 - j0 if j0 is not None else -1e30, dist.ReduceOp.SUM) / tp
    mhz = allreduce(mhz if mhz is not None else -1e30, dist.ReduceOp.SUM) / tp
    joules = joules if joules >= 0 else None
    extra = {}
    if FIT_ENERGY:  # collective on every rank alike (the flag is the run's); a fit that failed anywhere counts nowhere
        fit = allreduce(watts * elapsed if watts is not None else -1e30, dist.ReduceOp.SUM) / tp
        extra = {"joules_delta": joules, "joules_fit": fit if fit >= 0 else None,
                 "fit_stats": sampler.stats() if sampler else None}  # this rank's: why a fit did not hold
        joules = extra["joules_fit"] if extra["joules_fit"] is not None else joules
    return seconds, joules, (mhz if mhz >= 0 else None), extra


def guarded(fn):
    """Runs fn; returns None, or the failure's text (cut to 300 characters)."""
    try:
        fn()
        return None
    except Exception as e:
        return repr(e)[:300]


def time_variants(args, live, fns, figures, errors, energy, tp, fused_ops, first=0):
    """Burst then sustained windows of every live variant (fills figures, errors; a variant that fails on any
    rank is dropped on all). fused_ops: variant -> tpgemm op, synced after each of its windows. first: the shape's
    index, which variant each round starts from (tp_plan.round_order)."""
    per_call = {}

    def drop_unless_all_ok(v):
        if not all_ok(v not in errors):
            errors.setdefault(v, "failed on another rank")
            figures.pop(v, None)
            live.remove(v)
            return True
        return False
    for v in list(live):  # warm-up, estimate, then a burst from an idle card
        why = guarded(fns[v])  # local: checked on every rank before the windows' collectives
        if why:
            errors[v] = why
        if drop_unless_all_ok(v):
            continue
        try:
            t, _, _, _ = window(fns[v], 2, energy, tp)
            time.sleep(args.burst_idle)
            calls = min(MAX_CALLS, max(3, math.ceil(0.05 / max(t / 2, 1e-6))))
            t, _, _, _ = window(fns[v], calls, energy, tp)
            per_call[v] = t / calls
            figures[v] = {"burst_s": t / calls, "windows": []}
        except Exception as e:
            errors[v] = repr(e)[:300]
        drop_unless_all_ok(v)
    if live:  # heat: one unmeasured window, so the first measured one starts at the power cap like the rest
        v = tp_plan.heat_variant(live, first)
        try:
            window(fns[v], R.window_calls(args.window, per_call[v]), energy, tp)
        except Exception as e:
            errors[v] = repr(e)[:300]
        drop_unless_all_ok(v)
    for rnd in range(args.rounds):  # sustained windows, variants interleaved round-robin, every other round reversed
        for v in tp_plan.round_order(live, rnd, first):  # and the start rotated by shape: no variant always leads
            try:
                calls = R.window_calls(args.window, per_call[v])
                seconds, joules, mhz, extra = window(fns[v], calls, energy, tp)
                if v in fused_ops:
                    fused_ops[v].sync()  # a device-side timeout surfaces here, not as a fast bogus figure
                figures[v]["windows"].append({"seconds": seconds, "calls": calls, "joules": joules, "sm_mhz": mhz,
                                              **extra})
            except Exception as e:
                errors[v] = repr(e)[:300]
            drop_unless_all_ok(v)
    for v, f in figures.items():
        f["sustained_s"], f["joules"] = R.summarize(f["windows"])
        if v in errors:
            f["sustained_s"] = f["joules"] = None
