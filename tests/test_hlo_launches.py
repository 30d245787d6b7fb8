"""`benchmarks/hlo_launches.py`: kernel launches per loop trip, counted
from an optimized HLO dump. A hand-written module of the shape the H200's
dump has (a dynamic loop over chunks, a 32-trip instruction loop, a
3-trip loop inside it), then a program compiled here."""
from __future__ import annotations

import importlib.util
import pathlib
import sys

import jax
import jax.numpy as jnp

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "hlo_launches", ROOT / "benchmarks" / "hlo_launches.py")
hlo_launches = importlib.util.module_from_spec(_spec)
sys.modules["hlo_launches"] = hlo_launches   # for its dataclass
_spec.loader.exec_module(hlo_launches)

_TRIPS = ('backend_config={{"known_induction_variable":{{"tuple_index":"0"}},'
          '"known_trip_count":{{"n":"{n}"}}}}')
MODULE = f"""HloModule jit_frame, is_scheduled=true

%fused_add (p: s32[8]) -> s32[8] {{
  %p = s32[8]{{0}} parameter(0)
  ROOT %add = s32[8]{{0}} add(s32[8]{{0}} %p, s32[8]{{0}} %p)
}}

%slot_cond (t: (s32[], s32[8])) -> pred[] {{
  %t = (s32[], s32[8]{{0}}) parameter(0)
  ROOT %lt = pred[] fusion((s32[], s32[8]{{0}}) %t), kind=kLoop, calls=%fused_add
}}

%slot_body (t: (s32[], s32[8])) -> (s32[], s32[8]) {{
  %t = (s32[], s32[8]{{0}}) parameter(0)
  %x = s32[8]{{0}} get-tuple-element((s32[], s32[8]{{0}}) %t), index=1
  %f1 = s32[8]{{0}} fusion(s32[8]{{0}} %x), kind=kLoop, calls=%fused_add
  %c1 = s32[8]{{0}} copy(s32[8]{{0}} %f1)
  %c2 = s32[8]{{0}} copy(s32[8]{{0}} %c1)
  ROOT %r = (s32[], s32[8]{{0}}) tuple(s32[8]{{0}} %c2)
}}

%instruction_cond (t: (s32[], s32[8])) -> pred[] {{
  %t = (s32[], s32[8]{{0}}) parameter(0)
  ROOT %lt = pred[] fusion((s32[], s32[8]{{0}}) %t), kind=kLoop, calls=%fused_add
}}

%instruction_body (t: (s32[], s32[8])) -> (s32[], s32[8]) {{
  %t = (s32[], s32[8]{{0}}) parameter(0)
  %f1 = s32[8]{{0}} fusion((s32[], s32[8]{{0}}) %t), kind=kLoop, calls=%fused_add
  %f2 = s32[8]{{0}} fusion(s32[8]{{0}} %f1), kind=kInput, calls=%fused_add
  %w = (s32[], s32[8]{{0}}) while((s32[], s32[8]{{0}}) %t), condition=%slot_cond, body=%slot_body, metadata={{op_name="jit(frame)/instruction_loop/while/body/while"}}, {_TRIPS.format(n=3)}
  ROOT %r = (s32[], s32[8]{{0}}) tuple(s32[8]{{0}} %f2)
}}

%chunk_cond (t: (s32[], s32[8])) -> pred[] {{
  %t = (s32[], s32[8]{{0}}) parameter(0)
  ROOT %lt = pred[] fusion((s32[], s32[8]{{0}}) %t), kind=kLoop, calls=%fused_add
}}

%chunk_body (t: (s32[], s32[8])) -> (s32[], s32[8]) {{
  %t = (s32[], s32[8]{{0}}) parameter(0)
  %w = (s32[], s32[8]{{0}}) while((s32[], s32[8]{{0}}) %t), condition=%instruction_cond, body=%instruction_body, metadata={{op_name="jit(frame)/instruction_chunks/while/body/instruction_loop/while"}}, {_TRIPS.format(n=32)}
  ROOT %c = (s32[], s32[8]{{0}}) copy((s32[], s32[8]{{0}}) %w)
}}

ENTRY %main (p: s32[8]) -> s32[8] {{
  %p = s32[8]{{0}} parameter(0)
  %t = (s32[], s32[8]{{0}}) tuple(s32[8]{{0}} %p)
  %w = (s32[], s32[8]{{0}}) while((s32[], s32[8]{{0}}) %t), condition=%chunk_cond, body=%chunk_body, metadata={{op_name="jit(frame)/instruction_chunks/while"}}
  ROOT %x = s32[8]{{0}} fusion((s32[], s32[8]{{0}}) %w), kind=kLoop, calls=%fused_add
}}
"""


def test_counts_launches_per_trip_through_nested_loops():
    chunks, = hlo_launches.loops(MODULE)
    assert chunks.trip_count is None and chunks.scope.endswith(
        "instruction_chunks/while")
    instruction, = chunks.loops
    slots, = instruction.loops
    assert (instruction.trip_count, slots.trip_count) == (32, 3)
    # A slot's trip: its fusion and 2 copies, plus its condition's kernel.
    assert dict(slots.launches) == {"fusion": 2, "copy": 2}
    assert slots.per_trip == 4
    # An instruction: 2 fusions and its condition's, then 3 slot trips and
    # the slot loop's last check.
    assert instruction.per_trip == 3 + 3 * 4 + 1
    assert chunks.per_trip == 2 + 32 * 16 + 1


def test_rows_select_by_scope():
    rows = hlo_launches.rows(MODULE, "instruction_loop/while")
    assert [(r["depth"], r["trip_count"], r["per_trip"]) for r in rows] == [
        (1, 32, 16)]


def test_reads_a_program_compiled_here():
    def program(x):
        def chunk(c):
            return jax.lax.fori_loop(0, 4, lambda _, y: jnp.sin(y) * 1.5, c)
        return jax.lax.while_loop(lambda c: c[0] < 10.0, chunk, x)
    text = jax.jit(program).lower(jnp.ones(64)).compile().as_text()
    loops = list(hlo_launches.flattened(hlo_launches.loops(text)))
    assert loops and loops[0][1].trip_count is None
    assert all(loop.per_trip >= 1 for _, loop in loops)
