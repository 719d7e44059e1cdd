"""Per-function 512-bit vectors for element-wise loops (LLVM's ``prefer-vector-width``).

On CPUs with AVX-512 LLVM still vectorises with 256-bit registers unless a function asks for
more (the CPU's "prefer 256-bit" tuning). numba sets this only process-wide
(``NUMBA_CPU_FEATURES``), which would also widen every reassociated reduction in lsokl and so
change its summation orders. :func:`wide_vectors`, called at the top of a compiled function,
marks that one function ``"prefer-vector-width"="512"`` and ``noinline`` (inlined into a caller,
its loop would be vectorised by the caller's preference), nothing else.

Only element-wise loops without reassociation may use it: each element's arithmetic is the same
instructions at any width, so results are bit for bit the 256-bit ones (tested in
``tests/learners/test_vector_width.py``). On CPUs without AVX-512 the attribute does nothing.

numba has no per-function target attribute, so this sets it on the function being lowered from
inside an ``@intrinsic``; llvmlite's attribute set accepts only a fixed list of names, so the
string attribute is added past its check (``set.add``). Should a future llvmlite refuse that,
the function compiles without the attribute (256-bit vectors, the same results).
"""
from __future__ import annotations

from numba import types
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
