"""The online kernel learners of the LSOKL paper (Lu et al., JMLR 2016, spec ``ALGORITHMS.md``):
the unbudgeted kernel Perceptron and OGD, the budget baselines (RBP, Forgetron, Projectron,
Projectron++, BPA-S, BOGD), NORMA (regression), and FOGD and NOGD; each for the binary,
multi-class and regression tasks where the paper has them. One strict online pass each.
"""
