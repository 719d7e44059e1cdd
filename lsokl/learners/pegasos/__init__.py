"""Pegasos on a budget (Wang, Crammer, Vucetic, ICML 2010; spec ``BUDGETED_PEGASOS.md``):
PegasosM, BPegasosM with removal, projection or merging, BudgetedSVM's BSGD-M/R
(:mod:`.bpegasos`), and DOGMA's budgeted Projectron (:mod:`.prjtrn`).
"""
