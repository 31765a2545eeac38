"""ctypes binding of build/libtpgemm.so for the Python benchmarks and tests (no torch needed here).

Configs, single-process and multi-process contexts, ops and every op setter and launch. Every failing
call raises TpgError with tpg_status_string and tpg_last_error, so a failure on the GPU machine says
what went wrong without a debugger. Op.set_torch_tensors checks torch tensors against the op and holds them.
"""
import contextlib
import ctypes
import math
import operator
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIB_PATH = Path(os.environ.get("TPGEMM_LIB", ROOT / "build" / "libtpgemm.so"))

TPG_OK, TPG_ERR_INVALID_ARGUMENT, TPG_ERR_NO_DEVICE, TPG_ERR_BOOTSTRAP, TPG_ERR_NCCL = 0, 1, 5, 13, 14
TRANSPORTS = {"peer": 0, "nccl": 1}  # tpg_transport
DTYPES = {"bf16": 0, "fp16": 1, "e4m3": 2, "e5m2": 3, "fp32": 4}  # tpg_dtype


def enum_value(table: dict, key, what: str) -> int:
    """table[key], or a ValueError that names the allowed keys (a bare KeyError said only the key)."""
    if key not in table:
        raise ValueError(f"unknown {what} {key!r}: one of {', '.join(table)}")
    return table[key]


def c_name(text, what: str):
    """A str for a const char * argument, None for NULL: "" stays "" (tpg_config_find refuses an empty name; mapping
    it to NULL picked the schedule's default instead). Anything else is a TypeError naming the argument `what`."""
    if text is not None and not isinstance(text, str):
        raise TypeError(f"{what} = {text!r} must be a str or None, not {type(text).__name__}")
    return None if text is None else text.encode()
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
# str(dtype) of the torch tensors of each type (Op.set_torch_tensors)
TORCH_DTYPES = {"bf16": "torch.bfloat16", "fp16": "torch.float16", "e4m3": "torch.float8_e4m3fn",
                "e5m2": "torch.float8_e5m2", "fp32": "torch.float32"}
INTERRUPTS = (KeyboardInterrupt, SystemExit)  # raised by a bootstrap callback: re-raised as themselves

# int (*)(const void *send, void *recv, size_t bytes, void *user)
ALLGATHER_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)


class RankConfig(ctypes.Structure):
    _fields_ = [("tp", ctypes.c_int), ("rank", ctypes.c_int), ("device", ctypes.c_int),
                ("timeout_ns", ctypes.c_uint64), ("allgather", ALLGATHER_FN), ("user", ctypes.c_void_p),
                ("share_devices", ctypes.c_int), ("transport", ctypes.c_int)]


class CtxConfig(ctypes.Structure):
    _fields_ = [("tp", ctypes.c_int), ("devices", ctypes.POINTER(ctypes.c_int)), ("timeout_ns", ctypes.c_uint64),
                ("share_devices", ctypes.c_int)]


class OpDesc(ctypes.Structure):
    _fields_ = [("config", ctypes.c_int), ("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64),
                ("l", ctypes.c_int64), ("alpha", ctypes.c_float), ("beta", ctypes.c_float)]


INT_TYPES = (ctypes.c_int, ctypes.c_int64, ctypes.c_uint64, ctypes.c_void_p)  # c_void_p: an address, unsigned


def in_range(value, ctype, what: str):
    """value where the C type holds it, as an int, else a ValueError (ctypes would wrap it silently: m = 2**70 became
    64, a pointer 2**64 + 16 became 16). Any integer ctypes takes counts: an int, or what has __index__ (numpy's and
    torch's integers, which ctypes wrapped alike: tp = np.int64(2**32 + 2) reached C as 2). A finite number that a
    C float cannot hold is a ValueError too (ctypes made alpha = 1e39 inf); inf and nan pass as given."""
    if ctype is ctypes.c_float and isinstance(value, (int, float)) and not isinstance(value, bool):
        if math.isfinite(float(value)) and not math.isfinite(ctypes.c_float(value).value):
            raise ValueError(f"{what} = {value!r} is outside the range of its C type (float, |x| <= 3.4028235e38)")
    if ctype in INT_TYPES and not isinstance(value, (bool, float)) and hasattr(type(value), "__index__"):
        value = operator.index(value)
        bits, signed = 8 * ctypes.sizeof(ctype), ctype(-1).value == -1
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        if not lo <= value <= hi:
            raise ValueError(f"{what} = {value} is outside the range of its C type ({lo}..{hi})")
    return value


# What C takes, for an argument of each ctypes type (a TypeError says it)
C_TAKES = {ctypes.c_int: "an int", ctypes.c_int64: "an int64_t", ctypes.c_uint64: "a uint64_t",
           ctypes.c_size_t: "a size_t", ctypes.c_float: "a float",
           ctypes.c_void_p: "a pointer (an int address or None)", ctypes.c_char_p: "a const char * (bytes or None)"}


def c_takes(ctype) -> str:
    if ctype in C_TAKES:
        return C_TAKES[ctype]
    target = getattr(ctype, "_type_", None)
    return f"a {target.__name__} * (ctypes.byref of one, or None)" if isinstance(target, type) else ctype.__name__


def c_int_arg(value, what: str) -> int:
    """value as a C int (in_range), else a TypeError or ValueError naming `what`: what a wrapper checks before a
    collective call, so that a refused argument can still take part in it (Op._join_refused)."""
    if isinstance(value, float) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{what} = {value!r} ({type(value).__name__}) is not an int")
    return in_range(value, ctypes.c_int, what)


def join_rank(rank) -> int:
    """The rank a refused tpg_op_set_tensors joins the collective call with: rank where a C int holds it (C refuses
    the call for its NULL tensors), else -1, which C refuses too (ctypes refused a rank of 2**40 before C was called,
    and the peers waited)."""
    try:
        return c_int_arg(rank, "rank")
    except (TypeError, ValueError):
        return -1


def checked(ctype, what: str):
    """An argtypes entry for ctype: an integer argument passes in_range first (ctypes wraps it silently: tp = 2**32 + 2
    reached C as 2); a value of the wrong type is a TypeError naming `what`, the value and what C takes (ctypes said
    only "wrong type"). ctypes raises either as an ArgumentError naming the argument's position."""
    class Checked:
        @staticmethod
        def from_param(value):
            value = in_range(value, ctype, what)
            if ctype is ctypes.c_void_p and isinstance(value, (str, bytes, bytearray)):  # ctypes passed the text's
                raise TypeError(f"{what} = {value!r} ({type(value).__name__}) is not {c_takes(ctype)}")  # address
            try:
                return ctype.from_param(value)
            except TypeError:
                raise TypeError(f"{what} = {value!r} ({type(value).__name__}) is not {c_takes(ctype)}") from None

    Checked.__name__ = f"checked_{ctype.__name__}"
    Checked.ctype = ctype  # what the C prototype says (tests compare it with the header)
    return Checked


def fitted(struct, *values):
    """struct(*values), each integer checked against its field's C type first (in_range); a value of the wrong type
    is a TypeError naming the field (ctypes' own named none)."""
    out = struct()
    for (name, ctype), value in zip(struct._fields_, values):
        what = f"{struct.__name__}.{name}"
        try:
            setattr(out, name, in_range(value, ctype, what))
        except TypeError as e:
            raise TypeError(f"{what} = {value!r}: {e}") from None
    return out


class Tensors(ctypes.Structure):
    _fields_ = [("a", ctypes.c_void_p), ("b", ctypes.c_void_p), ("c", ctypes.c_void_p), ("d", ctypes.c_void_p),
                ("scale_a", ctypes.c_void_p), ("scale_b", ctypes.c_void_p)]


class ShardShape(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in ("a_rows", "a_cols", "b_rows", "b_cols", "d_rows", "d_cols", "d_row0",
                                              "d_col0", "a_row0", "a_col0", "b_row0", "b_col0")]


class ConfigInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("schedule", ctypes.c_char_p), ("kernel", ctypes.c_char_p),
                ("tp", ctypes.c_int), ("dtype", ctypes.c_int), ("bm", ctypes.c_int), ("bn", ctypes.c_int),
                ("bk", ctypes.c_int), ("stages", ctypes.c_int), ("acc", ctypes.c_int), ("fp8_promote", ctypes.c_int),
                ("partials", ctypes.c_int), ("pull_partials", ctypes.c_int),
                ("wave_weight", ctypes.c_int), ("stream_k", ctypes.c_int), ("copy_engine_partials", ctypes.c_int),
                ("by_name", ctypes.c_int)]


class DispatchEntry(ctypes.Structure):
    _fields_ = [("model", ctypes.c_char_p), ("layer", ctypes.c_char_p), ("m", ctypes.c_int64), ("n", ctypes.c_int64),
                ("k", ctypes.c_int64), ("dtype", ctypes.c_int), ("schedule", ctypes.c_char_p), ("tp", ctypes.c_int),
                ("config", ctypes.c_int), ("tuned", ctypes.c_int)]


class TpgError(RuntimeError):
    def __init__(self, status, what, detail):
        super().__init__(f"{what}: status {status}: {detail}")
        self.status = status


def signatures():
    """name -> (its arguments' C types, its result's) of every function load binds (tests/test_tpgemm_lib.py passes
    its stand-in library's arguments through them, as ctypes passes the real one's)."""
    vp, i, p = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER
    return {
        "tpg_status_string": ([i], ctypes.c_char_p), "tpg_last_error": ([vp], ctypes.c_char_p),
        "tpg_config_find": ([ctypes.c_char_p, ctypes.c_char_p, i, i, p(i)], i),
        "tpg_config_count": ([], i), "tpg_config_get": ([i, p(ConfigInfo)], i),
        "tpg_config_pick": ([ctypes.c_char_p, i, i, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, p(i)], i),
        "tpg_config_pick_sms": ([ctypes.c_char_p, i, i, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, i, p(i)], i),
        "tpg_dispatch_find": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, i,
                               ctypes.c_char_p, i, p(DispatchEntry)], i),
        "tpg_ctx_create": ([p(CtxConfig), p(vp)], i), "tpg_ctx_create_rank": ([p(RankConfig), p(vp)], i),
        "tpg_ctx_destroy": ([vp], i), "tpg_ctx_rank": ([vp], i), "tpg_ctx_device": ([vp, i], i),
        "tpg_output_dtype": ([i], i),
        "tpg_op_create": ([vp, p(OpDesc), p(vp)], i), "tpg_op_destroy": ([vp], i),
        "tpg_op_shard_shape": ([vp, i, p(ShardShape)], i), "tpg_op_set_tensors": ([vp, i, p(Tensors)], i),
        "tpg_op_run_rank": ([vp, i, vp], i), "tpg_op_sync": ([vp], i), "tpg_op_set_copy_chunks": ([vp, i], i),
        "tpg_op_set_overlap_barriers": ([vp, i], i), "tpg_op_set_gather_copy_engine": ([vp, i], i),
        "tpg_op_set_rs_ring": ([vp, i], i), "tpg_op_set_pdl": ([vp, i], i),
        "tpg_dtype_size": ([i], ctypes.c_size_t), "tpg_dtype_name": ([i], ctypes.c_char_p),
        "tpg_dispatch_count": ([], i), "tpg_dispatch_get": ([i, p(DispatchEntry)], i), "tpg_ctx_tp": ([vp], i),
        "tpg_op_set_scalars": ([vp, ctypes.c_float, ctypes.c_float], i), "tpg_op_run": ([vp, p(vp)], i),
    }


def load(path=LIB_PATH):
    if not Path(path).exists():
        raise FileNotFoundError(f"{path} not found; build it with `ninja build/libtpgemm.so`")
    lib = ctypes.CDLL(str(path))
    for name, (args, res) in signatures().items():
        fn = getattr(lib, name)
        fn.argtypes = [checked(t, f"{name}'s argument {j + 1}") for j, t in enumerate(args)]
        fn.restype = res
    return lib


# How a reduce-scatter config moves its partials across GPUs (generator/tune.py ROUTES: the same names): route ->
# (the tpg_config_info field that says so, None for the push; the word the errors use; the tp_bench flag that times a
# config's twin on that route)
ROUTES = {"push": (None, "pushed", "--alt-push-partials"),
          "pull": ("pull_partials", "pulled", "--alt-pull-partials"),
          "ce": ("copy_engine_partials", "copy-engine", "--alt-copy-engine-partials")}


def partial_route(info):
    """The route (a key of ROUTES) of a config_info dict or a `tpgemm --list --json` row; an all-gather config and
    a TP = 1 instance move no partials and read "push", as their fields do."""
    return next((r for r, (field, _, _) in ROUTES.items() if field and info[field]), "push")


def twin_index(infos, index, route):
    """Lib.twin over the configs' infos (a list in table order): the config with infos[index]'s schedule, TP and
    kernel whose partials take `route` - of those, the one of its family (<family>[_push|_pull|_ce]_tp<N>) where
    several are; ValueError where that leaves more than one (a tuned or experimental config on the same kernel)."""
    word, flag = enum_value(ROUTES, route, "route")[1:]
    want = infos[index]
    if partial_route(want) == route:
        raise ValueError(f"config {want['name']} has its partials {word} already")
    key = (want["schedule"], want["tp"], want["kernel"])
    found = [i for i, c in enumerate(infos)
             if partial_route(c) == route and (c["schedule"], c["tp"], c["kernel"]) == key]
    family = re.sub(r"(_(push|pull|ce))?_tp[0-9]+$", "", want["name"])
    kin = [i for i in found if re.fullmatch(rf"{re.escape(family)}(_(push|pull|ce))?_tp[0-9]+", infos[i]["name"])]
    found = kin or found
    if len(found) > 1:
        names = ", ".join(infos[i]["name"] for i in found)
        raise ValueError(f"config {want['name']}: {len(found)} {word} twins ({names}): name one with --alt-config")
    if not found:
        raise ValueError(f"config {want['name']} has no {word} twin (a config with {word} partials, schedule "
                         f"{want['schedule']}, tp {want['tp']}, kernel {want['kernel']}): add one to schedules.yaml, "
                         f"or leave out {flag}")
    return found[0]


class Lib:
    """Thin checked wrapper: every method raises TpgError on a non-OK status."""

    def __init__(self, path=LIB_PATH):
        self.lib = load(path)

    def check(self, status, what, ctx=None, cause=None):
        """TpgError on a non-OK status: tpg_last_error (of ctx, a handle or None) and tpg_status_string; `cause`
        becomes its __cause__."""
        if status != TPG_OK:
            # bytes: a message cut inside a character or a path in another encoding must not hide the error
            text = self.lib.tpg_status_string(status).decode(errors="backslashreplace")
            last = (self.lib.tpg_last_error(ctx) or b"").decode(errors="backslashreplace")
            error = TpgError(status, what, f"{last} ({text})" if last else text)
            if cause is None:
                raise error
            raise error from cause

    def config(self, name=None, schedule=None, tp=1, dtype="bf16"):
        idx = ctypes.c_int(-1)
        st = self.lib.tpg_config_find(c_name(name, "name"), c_name(schedule, "schedule"), tp,
                                      enum_value(DTYPES, dtype, "dtype"), ctypes.byref(idx))
        self.check(st, f"tpg_config_find(name={name}, schedule={schedule}, tp={tp}, dtype={dtype})")
        return idx.value

    def config_info(self, index):
        info = ConfigInfo()
        self.check(self.lib.tpg_config_get(index, ctypes.byref(info)), f"tpg_config_get({index})")
        return {"name": info.name.decode(), "schedule": info.schedule.decode(), "kernel": info.kernel.decode(),
                "tp": info.tp, "dtype": info.dtype, "pull_partials": bool(info.pull_partials),
                "copy_engine_partials": bool(info.copy_engine_partials), "by_name": bool(info.by_name)}

    def tuned_or_default(self, schedule, tp, dtype, m, n, k):
        """(config index, tuned): the config `python3 -m generator tune` chose when the dispatch table's tuned
        row for this GEMM has exactly its m, n and k, else tpg_config_pick's default for the schedule. Stricter
        than tpg_dispatch_find, which also returns a tuned row whose m is within TPG_TUNED_M_REACH of m
        (tpgemm.h): at another M (tp_bench --tokens) this times the default where a user would get the tuned one."""
        e = DispatchEntry()
        st = self.lib.tpg_dispatch_find(None, None, m, n, k, enum_value(DTYPES, dtype, "dtype"),
                                        c_name(schedule, "schedule"), tp, ctypes.byref(e))
        if st == TPG_OK and e.tuned and (e.m, e.n, e.k) == (m, n, k):
            return e.config, True
        return self.config_pick(schedule, tp, dtype, m, n, k), False

    def config_pick(self, schedule, tp, dtype, m, n, k):
        """The schedule's default config for this GEMM (schedules.yaml prefer_from_local_k)."""
        idx = ctypes.c_int(-1)
        m, n, k = (in_range(v, ctypes.c_int64, name) for v, name in ((m, "m"), (n, "n"), (k, "k")))
        st = self.lib.tpg_config_pick(c_name(schedule, "schedule"), in_range(tp, ctypes.c_int, "tp"),
                                      enum_value(DTYPES, dtype, "dtype"), m, n, k, ctypes.byref(idx))
        self.check(st, f"tpg_config_pick(schedule={schedule}, tp={tp}, dtype={dtype}, {m}x{n}x{k})")
        return idx.value

    def local_config(self, index, tp=1):
        """The local GEMM of fused config `index` at TP = tp: the same config family (its name with _tp<tp>),
        which runs the family's TP = 1 kernel (schedules.yaml configs[].kernel_tp1: the `*_wide` reduce-scatter
        configs run their _rs kernel only where partials move), else a config with the same schedule and
        kernel at tp, else the schedule's default at tp."""
        want = self.config_info(index)
        family = re.sub(r"_tp[0-9]+$", f"_tp{tp}", want["name"])
        same_kernel = None
        for i in range(self.lib.tpg_config_count()):
            c = self.config_info(i)
            if c["tp"] != tp or c["schedule"] != want["schedule"]:
                continue
            if c["name"] == family:
                return i
            if c["kernel"] == want["kernel"] and same_kernel is None:
                same_kernel = i
        if same_kernel is not None:
            return same_kernel
        return self.config(schedule=want["schedule"], tp=tp, dtype=DTYPE_NAMES[want["dtype"]])

    def twin(self, index, route):
        """The config that runs fused config `index`'s kernel and schedule at its TP with its partials moved by
        `route` (a key of ROUTES; schedules.yaml twins <family>_push / _pull / _ce). ValueError when config `index`
        moves them so already, or when there is no such config."""
        return twin_index([self.config_info(i) for i in range(self.lib.tpg_config_count())], index, route)

    def pull_twin(self, index):
        """twin(index, "pull")."""
        return self.twin(index, "pull")

    def ctx_rank(self, tp, rank, device, allgather, timeout_ns=0, share_devices=False, transport="peer"):
        """allgather: a Python callable (send: bytes) -> a bytes-like object of tp * len(send) bytes, rank order.
        What it raises fails the C call and is raised again when that returns (Ctx.check).
        transport: "peer" (CUDA peer access, NVLink) or "nccl" (tpgemm.h: TPG_TRANSPORT_NCCL)."""
        if not callable(allgather):  # C refuses a NULL one at once; anything else failed inside the callback
            raise TypeError(f"allgather must be a callable (send: bytes) -> bytes, not {type(allgather).__name__}")
        ctx = Ctx(self, None, keep=None)

        def trampoline(send, recv, nbytes, user):
            try:
                out = bytes(memoryview(allgather(ctypes.string_at(send, nbytes))))  # any bytes-like; not an int
                if len(out) != tp * nbytes:  # the TpgError's cause too (C says only that the callback returned 2)
                    wrong = ValueError(f"allgather on rank {rank}: the callback returned {len(out)} bytes, expected "
                                       f"{tp * nbytes} (tp {tp} x {nbytes})")
                    if ctx.failed is None:
                        ctx.failed = (ValueError, wrong, None)
                    print(f"tpgemm bootstrap {wrong}", file=sys.stderr, flush=True)
                    return 2
                ctypes.memmove(recv, out, len(out))
                return 0
            except BaseException as e:  # an exception must not unwind through C: kept for Ctx.check
                if ctx.failed is None or isinstance(e, INTERRUPTS):  # the first failure, or an interrupt
                    ctx.failed = sys.exc_info()
                print(f"tpgemm bootstrap allgather failed on rank {rank}: {e!r}", file=sys.stderr, flush=True)
                return 1
        ctx.keep = ALLGATHER_FN(trampoline)
        cfg = fitted(RankConfig, tp, rank, device, timeout_ns, ctx.keep, None, int(share_devices),
                         enum_value(TRANSPORTS, transport, "transport"))
        handle = ctypes.c_void_p()
        st = self.lib.tpg_ctx_create_rank(ctypes.byref(cfg), ctypes.byref(handle))
        ctx.check(st, f"tpg_ctx_create_rank(tp={tp}, rank={rank}, device={device})")  # tpg_last_error(NULL)
        ctx.handle = handle
        return ctx

    def ctx_local(self, devices, timeout_ns=0, share_devices=False):
        arr = (ctypes.c_int * len(devices))(*devices)
        cfg = fitted(CtxConfig, len(devices), arr, timeout_ns, int(share_devices))
        ctx = ctypes.c_void_p()
        st = self.lib.tpg_ctx_create(ctypes.byref(cfg), ctypes.byref(ctx))
        self.check(st, f"tpg_ctx_create(devices={devices})")
        return Ctx(self, ctx, keep=None)


class Ctx:
    def __init__(self, lib, handle, keep):
        self.lib, self.handle, self.keep = lib, handle, keep  # keep: the callback must outlive the context
        self.failed = None  # sys.exc_info() of what the bootstrap callback raised during the current C call

    def check(self, status, what):
        """Lib.check on this context, after what its bootstrap callback raised during the call, if anything:
        KeyboardInterrupt and SystemExit are raised again as themselves, anything else is the TpgError's
        __cause__."""
        failed, self.failed = self.failed, None
        if failed and isinstance(failed[1], INTERRUPTS):
            raise failed[1].with_traceback(failed[2])
        self.lib.check(status, what, self.handle, cause=failed[1] if failed else None)

    def multi_process(self):
        """A live context of tpg_ctx_create_rank (its op calls are collective)."""
        return bool(self.handle) and self.lib.lib.tpg_ctx_rank(self.handle) >= 0

    def op(self, config, m, n, k, l=1, alpha=1.0, beta=0.0):
        """tpg_op_create. Multi-process: collective; arguments refused here (fitted: whatever it raises - a TypeError,
        a ValueError, ctypes' OverflowError for alpha = 10**400) still take part, with a NULL desc, which fails every
        rank's call (tpgemm.h) instead of leaving the peers waiting."""
        op = ctypes.c_void_p()
        what = f"tpg_op_create(config={config}, m={m}, n={n}, k={k})"
        try:
            desc = fitted(OpDesc, config, m, n, k, l, alpha, beta)
        except Exception:
            if self.multi_process():
                with contextlib.suppress(TpgError):
                    self.check(self.lib.lib.tpg_op_create(self.handle, None, ctypes.byref(op)), what)
            raise
        st = self.lib.lib.tpg_op_create(self.handle, ctypes.byref(desc), ctypes.byref(op))
        self.check(st, what)
        return Op(self, op, desc)

    def destroy(self):
        if self.handle:
            st = self.lib.lib.tpg_ctx_destroy(self.handle)
            self.check(st, "tpg_ctx_destroy")
            self.handle = None


def tensor_pointers(rank, shape, l, operand, output, device, a, b, d, c=None, scale_a=None, scale_b=None):
    """Op.set_tensors' arguments from torch tensors (anything with is_contiguous(), dtype, device.index, numel() and
    data_ptr()), None = not passed. ValueError naming the first tensor that is not contiguous, not of its type (A, B:
    `operand`, C, D: `output`, the scales: fp32; names of DTYPES), not on the rank's `device`, or with fewer
    elements than its shard (`shape`: Op.shard_shape's dict; `l`: the op's batch count)."""
    ptrs = {}
    for name, t, dtype, shard in (("a", a, operand, "a"), ("b", b, operand, "b"), ("d", d, output, "d"),
                                  ("c", c, output, "d"), ("scale_a", scale_a, "fp32", None),
                                  ("scale_b", scale_b, "fp32", None)):
        if t is None:
            ptrs[name] = 0
            continue
        elems = shape[f"{shard}_rows"] * shape[f"{shard}_cols"] * l if shard else 1
        why = ("is not contiguous" if not t.is_contiguous() else
               f"has dtype {t.dtype}, not {TORCH_DTYPES[dtype]} ({dtype})" if str(t.dtype) != TORCH_DTYPES[dtype] else
               f"is on device {t.device.index}, not on rank {rank}'s device {device}"
               if device >= 0 and t.device.index != device else  # < 0: a rank not of this process (C says so)
               f"has {t.numel()} elements, fewer than its shard's {elems}" if t.numel() < elems else None)
        if why:
            raise ValueError(f"set_torch_tensors(rank={rank}): tensor {name} {why}")
        ptrs[name] = t.data_ptr()
    return ptrs


class Op:
    def __init__(self, ctx, handle, desc):
        self.ctx, self.handle, self.desc = ctx, handle, desc
        self.held = {}  # rank -> the tensors of its last set_torch_tensors (after a failed set, the old and the
        # rejected ones: peers may map either): alive while the op or a peer may read them

    def _call(self, fn, shown, *args):
        """tpg_op_<fn>(handle, *args), checked (the error names it with `shown` in parentheses, None: bare); after
        destroy() no call but TpgError "op destroyed"."""
        what = f"tpg_op_{fn}" if shown is None else f"tpg_op_{fn}({shown})"
        self._require_live(what)
        self.ctx.check(getattr(self.ctx.lib.lib, "tpg_op_" + fn)(self.handle, *args), what)

    def _require_live(self, what):
        if self.handle is None:
            raise TpgError(TPG_ERR_INVALID_ARGUMENT, what, "op destroyed (Op.destroy was called)")

    def _join_refused(self, fn, *args):
        """Multi-process: a collective call that this rank refused before C saw its arguments still takes part, with
        arguments C refuses (tpgemm.h: a rank whose own arguments are wrong takes part and fails every rank), so that
        its peers fail too instead of waiting in the all-gather. Its TpgError is dropped: the caller raises its own."""
        if self.handle is not None and self.ctx.multi_process():
            with contextlib.suppress(TpgError):
                self._call(fn, "refused", *args)

    def shard_shape(self, rank):
        s = ShardShape()
        self._call("shard_shape", None, rank, ctypes.byref(s))
        return {name: getattr(s, name) for name, _ in ShardShape._fields_}

    def set_tensors(self, rank, a, b, d, c=0, scale_a=0, scale_b=0):
        """Device pointers (ints); scale_a / scale_b: fp8 configs' per-tensor scales (device floats), 0 = none.
        Nothing is checked or held: torch tensors go through set_torch_tensors. Multi-process: a rank or pointer refused
        here (not an int) still joins the collective call, with none."""
        try:
            rank = c_int_arg(rank, "rank")
            t = fitted(Tensors, a, b, c or None, d, scale_a or None, scale_b or None)
        except Exception:
            self._join_refused("set_tensors", join_rank(rank), ctypes.byref(Tensors()))
            raise
        self._call("set_tensors", f"rank={rank}", rank, ctypes.byref(t))
        self.held.pop(rank, None)

    def set_torch_tensors(self, rank, a, b, d, c=None, scale_a=None, scale_b=None):
        """set_tensors with torch tensors (None = not passed), first checked against the op (tensor_pointers: each
        contiguous, of the config's type, on the rank's device, at least its shard's size; else ValueError) and then
        held by the op until this rank's next set or destroy(), so that a temporary is not freed under its graphs.
        Multi-process: a rank whose tensors or rank fail the checks (whatever it raises: not a tensor, a rank out of
        range, ...) still joins the collective call, with none: the library refuses them, every rank's call fails, and
        no rank is left waiting."""
        lib = self.ctx.lib
        try:
            rank = c_int_arg(rank, "rank")
            shape = self.shard_shape(rank)  # TpgError "op destroyed" after destroy(), or a rank out of range
            operand = lib.config_info(self.desc.config)["dtype"]
            ptrs = tensor_pointers(rank, shape, self.desc.l, DTYPE_NAMES[operand],
                                   DTYPE_NAMES[lib.lib.tpg_output_dtype(operand)],
                                   lib.lib.tpg_ctx_device(self.ctx.handle, rank), a, b, d, c, scale_a, scale_b)
        except Exception:
            self._join_refused("set_tensors", join_rank(rank), ctypes.byref(Tensors()))
            raise
        try:
            self.set_tensors(rank, **ptrs)
        except TpgError:  # peers may map either set until a call succeeds (tpgemm.h, tpg_op_set_tensors): keep both
            self.held[rank] = (self.held.get(rank), (a, b, d, c, scale_a, scale_b))
            raise
        self.held[rank] = (a, b, d, c, scale_a, scale_b)

    def set_copy_chunks(self, chunks):
        """All-gather: each shard's copy in `chunks` pieces (tpg_op_set_copy_chunks; collective over NCCL: a value
        refused here still joins, as 0, which C refuses on every rank)."""
        try:
            chunks = c_int_arg(chunks, "chunks")
        except Exception:
            self._join_refused("set_copy_chunks", 0)
            raise
        self._call("set_copy_chunks", chunks, chunks)

    def set_overlap_barriers(self, enable):
        """TP >= 2: the GEMM beside the start barrier (tpg_op_set_overlap_barriers)."""
        self._call("set_overlap_barriers", int(bool(enable)), int(bool(enable)))

    def set_gather_copy_engine(self, enable):
        """A gathered all-gather walk's shards by copy-engine nodes, not the GEMM's pulls
        (tpg_op_set_gather_copy_engine)."""
        self._call("set_gather_copy_engine", int(bool(enable)), int(bool(enable)))

    def set_rs_ring(self, enable):
        """A one-hop reduce-scatter walk kept a ring (tpg_op_set_rs_ring)."""
        self._call("set_rs_ring", int(bool(enable)), int(bool(enable)))

    def set_scalars(self, alpha, beta=0.0):
        """tpg_op_set_scalars: D = alpha * A @ B.T + beta * C from the next call (beta != 0 needs every local rank's
        C). This rank's only, not collective: every rank must pass the same alpha. A value a C float cannot hold
        is a ValueError (in_range), not a silent inf."""
        self._call("set_scalars", f"alpha={alpha}, beta={beta}", alpha, beta)

    def set_pdl(self, enable):
        """TP = 1: launch the GEMM with programmatic dependent launch (tpg_op_set_pdl; no effect at TP > 1)."""
        self._call("set_pdl", int(bool(enable)), int(bool(enable)))

    def run(self, streams=None):
        """tpg_op_run: every local rank's graph at once, rank r's on streams[r] (a cudaStream_t handle or a
        torch.cuda.Stream, as run_rank takes; a sequence of the context's TP, of which a multi-process rank's call
        reads its own), or with None each on the context's stream of its rank (the op's calls then run one after
        another with the context's other ops). Asynchronous; on capturing streams it adds the graphs to the capture.
        A sequence of another length is a ValueError (C reads tp entries)."""
        if streams is None:
            return self._call("run", None, None)
        self._require_live("tpg_op_run")
        tp, streams = self.ctx.lib.lib.tpg_ctx_tp(self.ctx.handle), list(streams)
        if len(streams) != tp:
            raise ValueError(f"run: {len(streams)} streams for a context of TP = {tp} (one a rank, or None)")
        handles = [getattr(s, "cuda_stream", s) for s in streams]
        for r, h in enumerate(handles):  # a TypeError / ValueError naming the entry (ctypes' array said neither)
            checked(ctypes.c_void_p, f"streams[{r}]").from_param(h)
        self._call("run", f"{tp} streams", (ctypes.c_void_p * tp)(*handles))

    def run_rank(self, rank, stream):
        """tpg_op_run_rank on `stream`: a cudaStream_t handle (an int; 0 or None: CUDA's legacy default stream, used
        as given) or a torch.cuda.Stream (its cuda_stream). Asynchronous; on a stream being captured it adds the op's
        graph to the capture (tpgemm.h). Every rank is launched once per call."""
        self._call("run_rank", f"rank={rank}", rank, getattr(stream, "cuda_stream", stream))

    def sync(self):
        self._call("sync", None)

    def destroy(self):
        if self.handle:
            st = self.ctx.lib.lib.tpg_op_destroy(self.handle)
            self.handle = None
            self.held.clear()
            self.ctx.check(st, "tpg_op_destroy")
