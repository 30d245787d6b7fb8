"""Two lowerings of the frame loop, one semantics; and an audit of them.

Why two
-------
XLA runs control flow very differently per backend (`shared/reference/
gpu-notes.md`, BENCHMARKS.md "The frame loop on a GPU"):

* On the CPU a `lax.cond` is a branch, and a `lax.while_loop` predicate is
  a load: skipping work that no console of the batch needs (a batch-wide
  `cond`) pays, and so does stopping the instruction loop the moment the
  last console of the batch finishes its frame.
* On a GPU every `cond` and every iteration of a `while_loop` whose trip
  count XLA cannot see copies its predicate to the host and waits (XLA's
  `ConditionalThunk`, `WhileThunk`). Inside the instruction loop that is
  tens of round trips per emulated instruction.

So the frame loop is traced twice, once per variant, and
`jax.lax.platform_dependent` keeps the one for the backend it is lowered
for (`per_backend`), except in a process whose default backend is the CPU:
there only the CPU's is traced (`cpu_alone`), which cuts a third off a
CPU user's first step, unless `every_backend` asks for both (a program
exported or compiled from here for a GPU):

* `CPU`: batch-wide conds around rare work, the instruction loop stops
  when the batch's last console does;
* `ACCELERATOR`: no `cond` in the instruction loop (the rare work is
  computed and masked, `select`s only) and instructions run in chunks of
  `CHUNK` with a static trip count, the batch's "still running" predicate
  checked once per chunk; consoles that finish inside a chunk are masked.

The accelerator's instruction loop has three shapes (`LOOP_SHAPES`,
`loop_shape`), chosen by how many kernels a GPU launches per emulated
instruction: `packed`, the default, unrolls the TIA-write slots and
carries the registers packed in one array per dtype (`chunked_while`).

Both give the same bits: every change a console makes is gated by its own
`running` mask in both, so a masked instruction is a no-op. The tests run
both on the CPU (`forced`; the environment variable `JAXATARI_LOWERING`,
`cpu` or `accelerator`, forces one for a whole process, as the test suite
does to trace one program, not two). While a variant is traced,
`batch_conds()` says which one it is, so the chips (`console`, `bus`,
`tia`, `updates`) ask it where they would use a batch-wide `cond`.

The audit
---------
`audit(mlir_text)` lists the while loops of a lowered program (StableHLO
text, as `jax.export` gives for a platform without that platform's
hardware), with the conditionals (`stablehlo.case`, `stablehlo.if`) and
the while loops nested in each, following `func.call`s, and whether its
trip count is static. `tests/test_lowering.py` uses it on the preset's
step exported for CUDA.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import threading
from typing import Callable, Iterator, TypeVar

import jax
import jax.numpy as jnp
import numpy as np

CPU = "cpu"
ACCELERATOR = "accelerator"
VARIANTS = (CPU, ACCELERATOR)
CHUNK = 32
"""Instructions per chunk of the accelerator's instruction loop (a frame
is about 5,000 instructions, so at most 31 masked ones are wasted per
frame, under 1%)."""
INSTRUCTION_LOOP = "instruction_loop"
"""The named scope the frame loop traces its instruction loop in (both
lowerings); `audit` finds the loop by it (`in_scope`)."""
INSTRUCTION_CHUNKS = "instruction_chunks"
"""The named scope of the accelerator's loop over chunks."""
RENDER_LOOP = "render_loop"
"""The named scope of the render phase's loop over a frame's TIA log."""

T = TypeVar("T")
ENVIRONMENT_VARIABLE = "JAXATARI_LOWERING"


def _one_of(value: str, choices: tuple[str, ...], kind: str,
            where: str) -> str:
    """`value` if it is one of `choices`; else a ValueError naming the
    `kind` of setting, where it came from and the choices."""
    if value not in choices:
        raise ValueError(f"unknown {kind} {value!r} ({where}); choose one "
                         f"of {choices}")
    return value


def _checked(variant: str | None, where: str) -> str | None:
    if variant is None:
        return None
    return _one_of(variant, VARIANTS, "lowering variant", where)


_forced = jax.make_user_context(default_value=_checked(
    os.environ.get(ENVIRONMENT_VARIABLE) or None, ENVIRONMENT_VARIABLE))
_every_backend = jax.make_user_context(default_value=False)
_tracing = threading.local()


@contextlib.contextmanager
def forced(variant: str | None) -> Iterator[None]:
    """Lower the frame loop as `variant` on any backend (part of the jit
    cache key), e.g. to run the accelerator's program on the CPU; None
    chooses per backend again.

    Raises:
        ValueError: an unknown variant.
    """
    with _forced(_checked(variant, "lowering.forced")):
        yield


@contextlib.contextmanager
def every_backend() -> Iterator[None]:
    """Within, `per_backend` traces both variants even where JAX's default
    backend is the CPU (part of the jit cache key).

    For a program lowered from a CPU process for another platform:
    `jax.export` for CUDA (`cuda_text`), a deviceless compile for a GPU
    (`benchmarks/gpu_aot.py`). Without it such a program carries the
    CPU's variant: the same bits, at the CPU variant's speed there.
    """
    with _every_backend(True):
        yield


def cpu_alone() -> bool:
    """Whether what is traced now is lowered for the CPU alone: JAX's
    default backend is the CPU (no GPU or TPU backend came up, or
    `JAX_PLATFORMS` put the CPU first) and no `every_backend` is entered.

    Then `per_backend` traces the CPU's variant alone: the other branch
    of its `platform_dependent` would be traced only to be pruned (for
    `jax.jit(env.step)` of Pong's preset, 10 of 16.5 s of its trace and
    lowering on a 2-core CPU, BENCHMARKS.md).
    """
    return not _every_backend.value and jax.default_backend() == "cpu"


def on_host(fn: Callable[[], T]) -> T:
    """`fn()` on the host's CPU, lowered as the CPU's variant, when the
    default backend is an accelerator (on the CPU, just `fn()`).

    For host-driven emulation of one console, a jitted call a frame: the
    boot, the start frames and the reset scripts (`boot_cache`). On an
    accelerator each such call would be a program of host round trips,
    and traced as the accelerator's variant on the host's CPU it costs
    about 4x the CPU's (Pong's `make_atari` boot, 2-core CPU: 69.5 s
    against 18.0 s). Both variants give the same bits, so the states are
    the same; they come back as arrays on the default device. Where
    `JAX_PLATFORMS` leaves the CPU out, just `fn()`.
    """
    if jax.default_backend() == "cpu":
        return fn()
    try:
        host = jax.devices("cpu")[0]
    except RuntimeError:   # JAX_PLATFORMS left the CPU out: run it here
        return fn()
    with jax.default_device(host), forced(CPU):
        result = fn()
    return jax.tree.map(
        lambda leaf: jnp.asarray(np.asarray(leaf))
        if isinstance(leaf, jax.Array) else leaf, result)


LOOP_SHAPES = {"loop": (False, False), "unrolled": (True, False),
               "packed": (True, True)}
"""The accelerator's instruction loop, three ways, the same bits: (TIA
write slots unrolled, carry packed). `loop`: the slots are a `fori_loop`
and the carry is the state's leaves; `unrolled`: the slots are
straight-line code; `packed`: that, and the carry's registers packed into
one array per dtype (`Packing`, `chunked_while`).

Compiled for an H100 without one (`benchmarks/gpu_aot.py`, Pong, 4,096
consoles, an undrawn frame), one trip of the instruction loop launched
157 kernels as `loop` (the shape the H200 ran), 92 as `unrolled` and 58
as `packed`; with small updates as selects (`updates.selected`) and
small reductions folded (`folds`), `packed` launches 37, and 32 with its
packed axis first (`Packing`). On the H200 (BENCHMARKS.md, "On an H200:
the second loan"), `packed` ran 2.03x `loop` at 4,096 consoles and
0.78x at 65,536, where its registers were then packed after the batch
(strided reads); `unrolled` ran 1.45x at 4,096. `packed` stays the
default; the next loan times it, packed axis first, against `loop`
(`benchmarks/gpu_session.py`, stage `frames`)."""
DEFAULT_LOOP_SHAPE = "packed"
_loop_shape = jax.make_user_context(default_value=DEFAULT_LOOP_SHAPE)


@contextlib.contextmanager
def loop_shape(name: str) -> Iterator[None]:
    """Traces the accelerator's instruction loop as `name` (one of
    `LOOP_SHAPES`); part of the jit cache key.

    Raises:
        ValueError: an unknown shape.
    """
    if name not in LOOP_SHAPES:
        raise ValueError(f"unknown loop shape {name!r}; choose one of "
                         f"{sorted(LOOP_SHAPES)}")
    with _loop_shape(name):
        yield


GATHER_SHARES = {"collisions": 16, "writes": 4}
"""The accelerator's instruction loop does a TIA draw (collisions and
object positions, no pixels) only for consoles gathered from the batch,
at most one console in each group of `share` consecutive ones a step
(`gathered_share`, `updates.first_in_groups`), rather than for every
console, masked:

* `collisions`: the latches a TIA read sees (`tia.collide`), for the
  consoles whose instruction may read one (Pong: about 1 instruction in
  700);
* `writes`: the TIA writes an instruction logged (up to 3), for the
  consoles that logged any (Pong: about 1 instruction in 7).

A console that needs a slot and finds none waits: one that may read a
latch does not run its instruction this step, one whose writes are not
applied runs nothing until they are. Its state is left as it was, so
the bits are the same whatever the shares (`tests/test_lowering.py`);
only the step count grows where many consoles need a slot at once (an
env's consoles are out of step; consoles run in step from one state
wait at most `share` steps)."""
_gather_shares = jax.make_user_context(
    default_value=tuple(sorted(GATHER_SHARES.items())))


@contextlib.contextmanager
def gather_shares(**shares: int) -> Iterator[None]:
    """Traces the accelerator's loop with the given `GATHER_SHARES`
    (`collisions`, `writes`; 1: every console, in place, no gather); part
    of the jit cache key.

    Raises:
        ValueError: an unknown kind of work or a share below 1.
    """
    merged = dict(_gather_shares.value)
    for kind, share in shares.items():
        if kind not in GATHER_SHARES:
            raise ValueError(f"unknown gathered work {kind!r}; choose from "
                             f"{sorted(GATHER_SHARES)}")
        if int(share) < 1:
            raise ValueError(f"the {kind} share must be at least 1, got "
                             f"{share}")
        merged[kind] = int(share)
    with _gather_shares(tuple(sorted(merged.items()))):
        yield


def gathered_share(kind: str, batch: int) -> int:
    """The share (`GATHER_SHARES`) in which the accelerator's loop gathers
    consoles of a batch of `batch` for `kind` of work, one console a
    group of `share` consecutive ones a step; 0: it does the work for
    all of them in place (a share of 1, a batch no larger than the share,
    or one the share does not divide)."""
    share = dict(_gather_shares.value)[kind]
    if share == 1 or batch <= share or batch % share:
        return 0
    return share


def unrolled_write_slots() -> bool:
    """Whether the accelerator's TIA-write slots are being traced as
    straight-line code (`LOOP_SHAPES`)."""
    return LOOP_SHAPES[_loop_shape.value][0]


def packed_carries() -> bool:
    """Whether the accelerator's chunked loops are being traced with their
    carries packed (`LOOP_SHAPES`, `chunked_while`)."""
    return LOOP_SHAPES[_loop_shape.value][1]


def batch_conds() -> bool:
    """Whether the variant being traced skips rare work by batch-wide
    `lax.cond`s (the CPU's); outside `per_backend`, what the default
    backend would pick."""
    variant = tracing_variant()
    if variant is None:
        variant = _forced.value or (
            CPU if jax.default_backend() == "cpu" else ACCELERATOR)
    return variant == CPU


def skipped_unless(flag: jax.Array, work: Callable[[T], T],
                   operand: T) -> T:
    """`work(operand)`, for work that matters only where `flag` (a
    scalar) holds: its result must be as good as `operand` elsewhere
    (masked writes, a value no one uses).

    In the CPU's lowering the work is skipped where `flag` is off (a
    branch, which XLA:CPU takes inside a kernel loop; under vmap a select
    of both). The accelerator's lowering has no conditional: it always
    does the work."""
    if batch_conds():
        return jax.lax.cond(flag, work, lambda kept: kept, operand)
    return work(operand)


def computed_once(value: jax.Array) -> jax.Array:
    """`value`, which XLA:CPU computes once however many consumers read it.

    XLA fuses an elementwise producer into each of its consumers, where it
    is computed again: the 6502's ALU result, which feeds A, X, Y, SP, P
    and the memory write, was computed five times an instruction. A
    reduction XLA does not duplicate. So in the CPU's lowering
    (`batch_conds()`) the value passes through a max with the dtype's
    least value, over a new axis of two: the same bits, materialized
    once. In the accelerator's (a GPU's, where a reduction would split
    the loop body's kernels) it is `value` as is. An `optimization_barrier`
    would not do: XLA:CPU removes it before fusing.
    """
    if not batch_conds():
        return value
    least = jnp.full_like(value, jnp.iinfo(value.dtype).min)
    return jnp.max(jnp.stack([value, least], axis=-1), axis=-1)


@contextlib.contextmanager
def _as(variant: str) -> Iterator[None]:
    previous = tracing_variant()
    _tracing.variant = variant
    try:
        yield
    finally:
        _tracing.variant = previous


def tracing_variant() -> str | None:
    """The variant being traced (inside `per_backend`'s branch or
    `traced_as`), or None. A jitted function called in such a branch is
    traced for that variant alone, so one shared by both branches must
    take this as a static argument (part of its cache key)."""
    return getattr(_tracing, "variant", None)


def traced_as(variant: str | None, fn: Callable[[], T]) -> T:
    """`fn()`, traced with `batch_conds()` answering for `variant` (None:
    as the caller traces)."""
    if variant is None:
        return fn()
    with _as(variant):
        return fn()


@contextlib.contextmanager
def default_backend_only() -> Iterator[str]:
    """Within, `per_backend` traces the variant of JAX's default backend
    alone (the CPU's on the CPU, the accelerator's elsewhere), unless a
    variant is forced already (`forced`, `JAXATARI_LOWERING`); yields it.

    For a process whose programs all run on the default backend (`jaxatari
    train`, `jaxatari sweep`): both variants give the same bits, so this
    changes only what is traced, which is half (a PBT chunk of A2C on
    Pong, 16 members of 64 envs: 11.0 s against 19.7 s on this CPU).
    Host work keeps its own (`on_host` forces the CPU's). A program
    exported or compiled for another platform inside would carry this
    backend's variant: the same bits, at that variant's speed.
    """
    variant = _forced.value or (CPU if jax.default_backend() == "cpu"
                                else ACCELERATOR)
    with forced(variant):
        yield variant


def per_backend(cpu: Callable[[], T], accelerator: Callable[[], T]) -> T:
    """`cpu()` when lowered for the CPU, `accelerator()` otherwise (or the
    one `forced`), each traced as its variant.

    Both are traced (`jax.lax.platform_dependent`); only the chosen one is
    lowered and compiled. Inside a variant being traced (a `per_backend`
    within another's branch), that variant's own is traced alone, and so
    is the CPU's where nothing traced is lowered for another platform
    (`cpu_alone`).
    """
    variant = (_forced.value or tracing_variant()
               or (CPU if cpu_alone() else None))
    if variant is not None:
        return traced_as(variant, cpu if variant == CPU else accelerator)
    return jax.lax.platform_dependent(
        cpu=lambda: traced_as(CPU, cpu),
        default=lambda: traced_as(ACCELERATOR, accelerator))


PLAIN_KERNEL_MODES = ("gpu", "interpret", "off")
"""Where the accelerator's instruction loop runs a batch's plain
instructions in one Pallas kernel (`plain_kernel`, `console`): "gpu" (the
default) when lowered for a CUDA GPU, XLA's loop elsewhere; "interpret"
everywhere, in Pallas's interpreter (tests, on the CPU); "off" nowhere.
On an H200 the kernel's loop ran 4.0x XLA's (undrawn Pong frames at
4,096 consoles, BENCHMARKS.md "the sixth loan"). A program with the
kernel exported for CUDA (`jax.export`) must allow its Triton call, which
has no compatibility guarantee across versions (`cuda_text` does)."""
KERNEL_VARIABLE = "JAXATARI_PLAIN_KERNEL"


_plain_kernel = jax.make_user_context(default_value=_one_of(
    os.environ.get(KERNEL_VARIABLE) or "gpu", PLAIN_KERNEL_MODES,
    "plain-kernel mode", KERNEL_VARIABLE))


@contextlib.contextmanager
def plain_kernel(mode: str) -> Iterator[None]:
    """Traces the accelerator's loop with the plain kernel's `mode`
    (`PLAIN_KERNEL_MODES`); part of the jit cache key.

    Raises:
        ValueError: an unknown mode.
    """
    with _plain_kernel(_one_of(mode, PLAIN_KERNEL_MODES, "plain-kernel mode",
                               "lowering.plain_kernel")):
        yield


def plain_kernel_mode() -> str:
    """The plain kernel's mode being traced (`PLAIN_KERNEL_MODES`)."""
    return _plain_kernel.value


def with_plain_kernel(kernel: Callable[[bool], T],
                      xla: Callable[[], T]) -> T:
    """`kernel(interpret)` where the plain kernel's mode puts it (on a
    CUDA GPU, or interpreted anywhere), `xla()` elsewhere; for "gpu" both
    are traced (`jax.lax.platform_dependent`) and only the one for the
    platform lowered."""
    mode = plain_kernel_mode()
    if mode == "off":
        return xla()
    if mode == "interpret":
        return kernel(True)
    return jax.lax.platform_dependent(cuda=lambda: kernel(False),
                                      default=xla)


TRITON_CALL = "__gpu$xla.gpu.triton"
"""The custom call a Pallas kernel lowers to for a CUDA GPU."""


def cuda_text(fn: Callable, *args) -> str:
    """`jax.jit(fn)(*args)`'s program lowered for a CUDA GPU without one
    (`jax.export`), as MLIR text for `audit`; the plain kernel's Triton
    call allowed (it has no compatibility guarantee across versions);
    traced for every backend (`every_backend`), so that a variant not
    forced is CUDA's."""
    check = jax.export.DisabledSafetyCheck.custom_call(TRITON_CALL)
    with every_backend():
        return jax.export.export(jax.jit(fn), platforms=["cuda"],
                                 disabled_checks=[check])(*args).mlir_module()


PACKED_MAX = 32
"""The largest leaf `Packing` packs, in elements per console: the
registers and counters. RAM, a screen or a log would be copied every
trip if packed; unpacked, RAM is updated in place and what the loop only
passes through costs nothing."""


def _size(shape: tuple[int, ...], lead: tuple[int, ...]) -> int:
    """Elements per console of a leaf of `shape` (after `lead`)."""
    return int(np.prod(shape[len(lead):], dtype=np.int64))


def _packing(leaves: list[jax.Array], lead: tuple[int, ...],
             limit: int | None = PACKED_MAX):
    """How `Packing` packs `leaves`: the indices of those that lead with
    `lead` and hold at most `limit` elements after it (None: any),
    grouped by dtype (the others ride as they are)."""
    groups: dict = {}
    for index, leaf in enumerate(leaves):
        if (leaf.shape[:len(lead)] == lead
                and (limit is None or _size(leaf.shape, lead) <= limit)):
            groups.setdefault(leaf.dtype, []).append(index)
    return list(groups.values())


class Packing:
    """A loop carry's small leaves as one array per dtype, `(n,) + lead`.

    XLA:GPU copies a loop-carried buffer when the body reads its old value
    after a kernel has written the new one in place; with a state of many
    small leaves that was 45 copies (45 kernel launches) per trip of the
    instruction loop (BENCHMARKS.md, "The GPU program without a GPU").
    Packed, the new registers are written by one concatenation a trip.
    The leaves leading with `lead` (a batch's shape, or ()) and of at
    most `limit` elements after it (`PACKED_MAX`; None: any) are
    flattened after it and concatenated along a new first axis; the
    others ride as they are. (`updates.take_rows` packs this way too, to
    gather a batch's rows one array a dtype.)

    The packed axis leads so that each register is a row across the
    batch, contiguous in memory as the unpacked leaf was. Packed after
    the batch (`lead + (n,)`, each console's registers together), every
    register read was a strided gather of the whole array: on the H200 at
    65,536 consoles that packing ran 0.78x the unpacked loop while it
    ran 2.0x at 4,096, where the array fits in L2 (BENCHMARKS.md, "On an
    H200: the second loan").
    """

    def __init__(self, carry, lead: tuple[int, ...],
                 limit: int | None = PACKED_MAX):
        leaves, self.tree = jax.tree.flatten(carry)
        self.lead, self.shapes = lead, [leaf.shape for leaf in leaves]
        self.groups = _packing(leaves, lead, limit)
        self.packed = {i for group in self.groups for i in group}
        self.sizes = {i: _size(self.shapes[i], lead) for i in self.packed}

    def pack(self, carry):
        """`carry` (of the structure given, its leaves leading with `lead`
        or with another batch: rows gathered from it) as (arrays, other
        leaves)."""
        leaves = jax.tree.leaves(carry)
        rows = lambda leaf: jnp.moveaxis(leaf.reshape(
            leaf.shape[:len(self.lead)] + (-1,)), -1, 0)
        return ([jnp.concatenate([rows(leaves[i]) for i in group], axis=0)
                 for group in self.groups],
                [leaf for i, leaf in enumerate(leaves)
                 if i not in self.packed])

    def unpack(self, packed):
        """The carry that `pack` packed (its arrays may lead with another
        batch than `lead`: rows gathered from it)."""
        arrays, rest = packed
        leaves, others = [None] * len(self.shapes), iter(rest)
        for array, group in zip(arrays, self.groups):
            offset = 0
            for i in group:
                leaves[i] = jnp.moveaxis(
                    array[offset:offset + self.sizes[i]], 0, -1
                ).reshape(array.shape[1:] + self.shapes[i][len(self.lead):])
                offset += self.sizes[i]
        return jax.tree.unflatten(self.tree, [
            leaf if leaf is not None else next(others) for leaf in leaves])


def chunked_while(running: Callable[[T], jax.Array],
                  step: Callable[[T], T], carry: T, lead: tuple[int, ...],
                  scope: str) -> T:
    """`step` in chunks of `CHUNK` (a `fori_loop`, traced in the named
    scope `scope`) while `running(carry)`: the accelerator's loop, its
    predicate read once a chunk. In the accelerator's lowering with
    `packed_carries()`, the carry is packed (`Packing`, over `lead`) from
    before the first chunk to after the last."""
    def chunk_of(step):
        def chunk(carry):
            with jax.named_scope(scope):
                return jax.lax.fori_loop(0, CHUNK, lambda _, c: step(c),
                                         carry)
        return chunk

    if batch_conds() or not packed_carries():
        return jax.lax.while_loop(running, chunk_of(step), carry)
    packing = Packing(carry, lead)
    packed = jax.lax.while_loop(
        lambda p: running(packing.unpack(p)),
        chunk_of(lambda p: packing.pack(step(packing.unpack(p)))),
        packing.pack(carry))
    return packing.unpack(packed)


def counted_loop(count: jax.Array, body: Callable[[jax.Array, T], T],
                 carry: T, lead: tuple[int, ...] = ()) -> T:
    """`body(k, carry)` for k = 0, 1, ... while k < `count` (a traced
    scalar), as the accelerator's variant loops (`chunked_while`, the
    carry's leaves leading with `lead` packed where the shape says): the
    last chunk's extra steps have `k >= count`, and `body` must leave the
    carry as it is for those.
    """
    def step(k_carry):
        k, carry = k_carry
        return k + 1, body(k, carry)

    return chunked_while(lambda c: c[0] < count, step, (jnp.int32(0), carry),
                         lead, "chunk")[1]


# --------------------------------------------------------------------------
# The audit of a lowered program's control flow.
# --------------------------------------------------------------------------

_FUNC = re.compile(r"^  func\.func (?:public |private )?@([\w.$-]+)\(")
_WHILE = re.compile(r"\bstablehlo\.while\(")
_CONDITIONAL = re.compile(
    r"^\s*(%[\w#:]+)?\s*=?\s*\"?stablehlo\.(?:case|if)\"?\((%[\w#]+)")
_CALL = re.compile(r"\bfunc\.call @([\w.$-]+)\(")
_LOC_REF = re.compile(r"loc\((#loc\d*)\)\s*$")
_LOC_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)$")
_COUNTER_BOUND = re.compile(
    r"(%[\w#:]+) = stablehlo\.compare\s+LT,\s+%iterArg\w*,\s+(%c\w*)")
_RETURN = re.compile(r"\bstablehlo\.return\s+(%[\w#:]+)")


@dataclasses.dataclass
class WhileLoop:
    """One `stablehlo.while` of a lowered program.

    Attributes:
        function: the function it is in.
        name: the innermost name of its location (JAX's name stack, e.g.
            `.../instruction_loop/while`), or "".
        static_trip_count: its condition is a loop counter compared with a
            constant (`fori_loop`, `scan`), so XLA knows the trip count (a
            condition that only ands such a bound with other flags, as
            `console._cpu_loop_goes_on`, has none).
        conditionals: `case`/`if` ops inside it (condition and body, through
            calls), save those whose index is a constant (what
            `jax.lax.platform_dependent` leaves for one platform; XLA folds
            them).
        whiles: while loops inside it, through calls.
    """
    function: str
    name: str
    static_trip_count: bool
    conditionals: int = 0
    whiles: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class _Function:
    loops: list            # WhileLoop, in textual order
    items: list            # (kind, payload, enclosing loop indices)


def _location_names(text: str) -> dict:
    """`#locN` -> the first quoted name in its definition chain."""
    defs = {}
    for line in text.splitlines():
        match = _LOC_DEF.match(line)
        if match:
            defs[match.group(1)] = match.group(2)

    def name(ref: str, depth: int = 0) -> str:
        body = defs.get(ref, "")
        quoted = re.match(r'"([^"]*)"', body)
        if quoted or depth > 20:
            return quoted.group(1) if quoted else ""
        inner = re.search(r"(#loc\d*)", body)
        return name(inner.group(1), depth + 1) if inner else ""
    return {ref: name(ref) for ref in defs}


def in_scope(loops: list[WhileLoop], scope: str) -> list[WhileLoop]:
    """The loops of `audit` traced directly inside the named scope
    `scope` (e.g. `INSTRUCTION_LOOP`)."""
    return [loop for loop in loops if loop.name.endswith(f"{scope}/while")]


def _parse_function(lines: list[str], name: str, constants: set) -> _Function:
    """A function's while loops, and its conditionals, calls and loops with
    the loops that enclose each (brace depth tracks the regions)."""
    fn = _Function(loops=[], items=[])
    open_loops: list = []      # (loop index, brace depth at its start)
    folded: set = set()        # results of conditionals on constants
    depth = 0
    in_condition = None
    bounds: set = set()        # compares of a counter with a constant
    for line in lines:
        enclosing = tuple(index for index, _ in open_loops)
        if _WHILE.search(line):
            fn.items.append(("while", len(fn.loops), enclosing))
            fn.loops.append(WhileLoop(function=name, name="",
                                      static_trip_count=False))
            open_loops.append((len(fn.loops) - 1, depth))
            in_condition = len(fn.loops) - 1
        elif _CONDITIONAL.search(line):
            result, index = _CONDITIONAL.search(line).groups()
            if index in constants or index in folded:
                folded.add(result or "")
            else:
                fn.items.append(("conditional", None, enclosing))
        for callee in _CALL.findall(line):
            fn.items.append(("call", callee, enclosing))
        bound = _COUNTER_BOUND.search(line)
        if bound and in_condition is not None and bound.group(2) in constants:
            bounds.add(bound.group(1))
        returned = _RETURN.search(line)
        if returned and in_condition is not None and (
                returned.group(1) in bounds):   # the condition is the bound
            fn.loops[in_condition].static_trip_count = True
        if line.strip().startswith("} do {"):
            in_condition = None
        depth += line.count("{") - line.count("}")
        if open_loops and line.count("}") > line.count("{") and (
                depth == open_loops[-1][1]):
            index = open_loops.pop()[0]
            location = _LOC_REF.search(line)
            fn.loops[index].name = location.group(1) if location else ""
    return fn


def _split_functions(text: str) -> dict:
    functions, current, body = {}, None, []
    for line in text.splitlines():
        match = _FUNC.match(line)
        if match:
            current, body = match.group(1), []
            functions[current] = body
        elif current is not None and line.startswith("  }"):
            current = None
        elif current is not None:
            body.append(line)
    return functions


def audit(text: str) -> list[WhileLoop]:
    """Every while loop of a lowered program (StableHLO text), with what
    lies inside it through calls (see the module docstring)."""
    constants = set(re.findall(r"(%c\w*) = stablehlo\.constant", text))
    names = _location_names(text)
    parsed = {name: _parse_function(lines, name, constants)
              for name, lines in _split_functions(text).items()}
    totals: dict = {}

    def inside(function: str) -> tuple[int, list]:
        """All conditionals and loops in a function, through calls."""
        if function not in totals:
            totals[function] = (0, [])      # recursion guard
            conditionals, loops = 0, []
            for kind, payload, _ in parsed[function].items:
                if kind == "conditional":
                    conditionals += 1
                elif kind == "while":
                    loops.append(parsed[function].loops[payload])
                elif kind == "call" and payload in parsed:
                    more, nested = inside(payload)
                    conditionals, loops = conditionals + more, loops + nested
            totals[function] = (conditionals, loops)
        return totals[function]

    for fn in parsed.values():
        for loop in fn.loops:
            loop.name = names.get(loop.name, loop.name)
        for kind, payload, enclosing in fn.items:
            if kind == "conditional":
                found, loops = 1, []
            elif kind == "while":
                found, loops = 0, [fn.loops[payload]]
            elif kind == "call" and payload in parsed:
                found, loops = inside(payload)
            else:
                continue
            for index in enclosing:
                fn.loops[index].conditionals += found
                fn.loops[index].whiles.extend(loops)
    return [loop for fn in parsed.values() for loop in fn.loops]
