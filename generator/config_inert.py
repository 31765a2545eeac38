"""Fields that would do nothing where they are set. Each is refused rather than accepted in silence: whoever sets one
expects an effect (a by_name config's preference, the grouped walk's size on a Hilbert walk, fp32 partials where no
partial moves - which also took the config out of the default picks and labelled it in `tpgemm --list`)."""
from .schedules import SCHEDULES

PICK_FIELDS = ("prefer_from_local_k", "prefer_from_local_k_tp1", "wave_weight")


def kernel_errors(k: dict, raster_group_default: int) -> list[tuple[str, str, str]]:
    """(field, problem, allowed) of a kernels[] entry's inert fields (the default raster_group, which the tuner's
    Hilbert candidates spell out, is the kernel without one)."""
    if k.get("raster") == "hilbert" and k.get("raster_group") not in (None, raster_group_default):
        return [("raster_group", f"raster_group {k['raster_group']} with raster: hilbert, whose walk is a table the "
                 "runtime builds: raster_group sizes the grouped walk only",
                 f"no raster_group (or {raster_group_default}), or raster: grouped")]
    return []


def config_errors(c: dict, kernel_at: dict) -> list[tuple[str, str, str]]:
    """(field, problem, allowed) of a configs[] entry's inert fields; kernel_at maps each of its TP degrees to the
    kernels[] entry it runs there (None where unknown: reported elsewhere)."""
    out = []
    if c.get("by_name"):
        out += [(f, f"{f} in a by_name config, which is never a default pick: {f} only orders default picks",
                 f"no {f}, or by_name: false") for f in PICK_FIELDS if c.get(f) is not None]
    comm = SCHEDULES.get(c.get("schedule"), {}).get("comm")
    for tp, k in sorted(kernel_at.items()):
        if not k or k.get("partials") != "f32" or (comm != "allgather" and tp != 1):
            continue
        field = "kernel_tp1" if tp == 1 and c.get("kernel_tp1") else "kernel"
        if comm == "allgather":
            out.append((field, f"kernel {k.get('name')!r} has partials: f32, and {c.get('schedule')} moves no partials "
                        "(its GEMM reads copied shards)", "a kernel without partials: f32"))
        else:
            out.append((field, f"kernel {k.get('name')!r} has partials: f32 at tp 1, where nothing moves between GPUs",
                        "kernel_tp1: a kernel without partials: f32 (with by_name: true to keep the config out of the "
                        "default picks), or tp values >= 2"))
        break  # one error a config: each of its other TPs would only repeat it
    return out
