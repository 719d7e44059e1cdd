"""Hints to the compiler and the CPU for compiled loops: 512-bit vectors per function, and
prefetches. Neither changes any arithmetic.

**512-bit vectors** (:func:`wide_vectors`). On CPUs with AVX-512 LLVM still vectorises with
256-bit registers unless a function asks for more (the CPU's "prefer 256-bit" tuning). numba
sets this only process-wide (``NUMBA_CPU_FEATURES``), which would also widen every reassociated
reduction in lsokl and so change its summation orders. :func:`wide_vectors`, called at the top
of a compiled function, marks that one function ``"prefer-vector-width"="512"`` and ``noinline``
(inlined into a caller, its loop would be vectorised by the caller's preference), nothing else.
Only element-wise loops without reassociation may use it: each element's arithmetic is the same
instructions at any width, so results are bit for bit the 256-bit ones (tested in
``tests/learners/test_cpu_hints.py``). On CPUs without AVX-512 the attribute does nothing.
numba has no per-function target attribute, so this sets it on the function being lowered from
inside an ``@intrinsic``; llvmlite's attribute set accepts only a fixed list of names, so the
string attribute is added past its check (``set.add``). Should a future llvmlite refuse that,
the function compiles without the attribute (256-bit vectors, the same results).

**Prefetch** (:func:`prefetch`): LLVM's ``llvm.prefetch`` on one array element, which numba
does not expose. A loop whose iterations read rows at random (a pass over a permuted stream)
asks for the next row's cache lines while it works on this one.
"""
from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

PREFER_512 = '"prefer-vector-width"="512"'


@intrinsic
def wide_vectors(typingctx):
    """Mark the calling compiled function for 512-bit vectors, not inlined (see module doc)."""

    def codegen(context, builder, signature, args):
        attributes = builder.function.attributes
        try:
            set.add(attributes, PREFER_512)
            attributes.add("noinline")
        except (TypeError, ValueError):  # a future llvmlite: keep the default width
            pass
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def prefetch(typingctx, array, index):
    """Ask the CPU to bring ``array[index]``'s cache line in (read, keep in all levels); a hint
    only: no load happens, and an index past the end is harmless (nothing is dereferenced)."""
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        ary_type, _ = signature.args
        ary = context.make_array(ary_type)(context, builder, args[0])
        byte_ptr = ir.IntType(8).as_pointer()
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), byte_ptr)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, ir.IntType(32),
                                                             ir.IntType(32), ir.IntType(32)]),
            "llvm.prefetch.p0")
        builder.call(fn, [ptr, ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), 3),
                          ir.Constant(ir.IntType(32), 1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen


#: the size of a cache line, which one prefetch brings in
CACHE_LINE = 64


@njit(inline="always")
def prefetch_csr_row(indptr, indices, values, i):
    """Ask for CSR row i's indices and values, every cache line of them (a pass over a permuted
    stream reads rows at random: a9a's 5 MB of them mostly miss the caches); indptr[i] itself is
    best asked for a step earlier (:func:`prefetch_next_csr_rows`)."""
    p, pe = indptr[i], indptr[i + 1]
    if pe > p:
        for q in range(p, pe, max(CACHE_LINE // indices.itemsize, 1)):
            prefetch(indices, q)
        for q in range(p, pe, max(CACHE_LINE // values.itemsize, 1)):
            prefetch(values, q)
        prefetch(indices, pe - 1)
        prefetch(values, pe - 1)


@njit(inline="always")
def prefetch_next_csr_rows(indptr, indices, values, order, t, stop):
    """While step t of a pass over CSR rows ``order[start:stop]`` is played: ask for the row of
    step t + 1 and the row offsets of step t + 2."""
    if t + 2 < stop:
        prefetch(indptr, order[t + 2])
    if t + 1 < stop:
        prefetch_csr_row(indptr, indices, values, order[t + 1])
