"""Batch learners that fit on a whole training set (holdout protocol only): LIBSVM through
scikit-learn's ``SVC`` (:mod:`.libsvm`, :mod:`.libsvm_subsample`), BudgetedSVM's LLSVM
(:mod:`.llsvm`), MEKA's BKA-SVM (:mod:`.bkasvm`) and a Fastfood SVM (:mod:`.fastfood_svm`), over
the shared shell with a hard time limit (:mod:`.common`).
"""
