"""Mini-batch learners of the DSG paper (Dai et al., NIPS 2014; spec ``DSG.md``): doubly
stochastic gradients (:mod:`.dsg`), kernel NORMA and SDCA (:mod:`.kernel_sgd`), and random-feature
/ Nystrom Pegasos and SDCA (:mod:`.feature_linear`), over one mini-batch shell (:mod:`.minibatch`).
"""
