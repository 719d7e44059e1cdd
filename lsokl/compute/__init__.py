"""The compute layer shared by the learners (:mod:`lsokl.learners`) and the kernel approximations
(:mod:`lsokl.approx`): compiled kernels and slot buffers (:mod:`.kernels`), random-feature and
Nystrom maps (:mod:`.features`), the task pieces (:mod:`.tasks`), the blocked Perceptron/OGD
(:mod:`.blocked`, :mod:`.fastexp`, :mod:`.window`), duplicate-row memos (:mod:`.duplicates`),
the stream every compiled loop reads (:mod:`.stream`), randomness sources (:mod:`.randomness`),
parameter checks (:mod:`.params`), memory estimates (:mod:`.memory`) and CPU hints
(:mod:`.cpu_hints`).

Nothing here imports the learners, the approximations, the runner or anything above them.
"""
