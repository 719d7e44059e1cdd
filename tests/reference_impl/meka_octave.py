"""A harness around the MEKA authors' MATLAB code (``meka.m``, ``Nys.m``; MEKA spec, source R) run
under Octave, and the same computation by :class:`lsokl.approx.meka.MEKA` on identical inputs.

The authors' code is not part of this project: point ``MEKA_MATLAB_DIR`` at the folder holding
their ``meka.m``, ``Nys.m``, ``sqdist.m`` and ``blkdiag_meka.m`` (``meka_released/`` of
github.com/jyotikrd/tpds2018, commit 06acad4f). Nothing of it is changed: Octave runs it with
three stand-ins on the path (``tests/approx/octave/inject/``) that return injected draws instead of
random ones: ``mykmeans`` (returns the injected centres), ``randsample`` (the k-means sample and the
rows of every link block, in meka.m's order) and ``randperm`` (each cluster's landmarks, Nys.m).

:func:`make_case` draws a partition (centres) and every sampled point once; :func:`run_octave`
feeds them to meka.m and :func:`run_lsokl` to lsokl's MEKA (through its draw methods
``_landmark_positions`` / ``_link_positions``, arithmetic untouched). :func:`compare` sets the
two side by side: partition and ranks (read from the support of the authors' U), every diagonal
block W^(s) (up to the sign of each column: an SVD's singular vectors have no fixed sign), the link
matrix (with the same signs) and the relative error.

Own-randomness runs (``run_octave_own``) need the authors' MEX k-means compiled in
``MEKA_MATLAB_DIR`` (their README: ``mex mykmeans.cpp``; under Octave ``mkoctfile --mex
mykmeans.cpp``) and use ``tests/approx/octave/compat/randsample.m`` (Octave's core has no
``randsample``; MATLAB's draws k of the population uniformly without replacement, as this one).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1] / "approx" / "octave"


def authors_dir() -> Path | None:
    d = os.environ.get("MEKA_MATLAB_DIR")
    if not d or not (Path(d) / "meka.m").exists() or shutil.which("octave-cli") is None:
        return None
    return Path(d)


def _cell(arrays) -> np.ndarray:
    out = np.empty(len(arrays), dtype=object)
    for i, a in enumerate(arrays):
        out[i] = np.asarray(a, dtype=np.float64).reshape(1, -1)
    return out


def make_case(X: np.ndarray, k_total: int, gamma: float, c: int, eta: float, seed: int,
              rows=None) -> dict:
    """Every random choice of one meka.m run, drawn here: centres (the authors' k-means on the
    data, lsokl's restatement of mykmeans.cpp), landmark permutations, link rows.

    Positions are 0-based inside each cluster (clusters in label order, members in data order,
    as meka.m's ``find(idx == i)``)."""
    from lsokl.approx.clustering import meka_kmeans, nearest_centre
    from lsokl.approx.meka import allocate_ranks, dropped_pairs
    from lsokl.compute.kernels import gaussian_block

    rng = np.random.default_rng(seed)
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    kmeans_sample = rng.choice(n, 10000, replace=False) if n > 10000 else None
    S = X if kmeans_sample is None else X[kmeans_sample]
    _, centres = meka_kmeans(S, c, rng)
    labels = nearest_centre(X, centres)
    sizes = np.bincount(labels, minlength=c)
    ranks = allocate_ranks(sizes, k_total)
    dropped = dropped_pairs(gaussian_block(centres, centres, gamma), eta)
    perms = [rng.permutation(int(sz)) for sz in sizes]
    links = []
    for s in range(c):
        for t in range(s + 1, c):
            if dropped[s, t]:
                continue
            links.append(rng.choice(int(sizes[s]), int(min(4 * ranks[s], sizes[s])), replace=False))
            links.append(rng.choice(int(sizes[t]), int(min(4 * ranks[t], sizes[t])), replace=False))
    if rows is None:
        err_rows = np.arange(n)
    else:
        err_rows = np.sort(rng.choice(n, int(rows), replace=False))
    return {"X": X, "k_total": int(k_total), "gamma": float(gamma), "c": int(c), "eta": float(eta),
            "centres": centres, "kmeans_sample": kmeans_sample, "perms": perms, "links": links,
            "rows": err_rows}


def run_octave(case: dict, mdir: Path, timeout: float = 1800, harness: str = "meka_injected") -> dict:
    """meka.m on the case's injected draws: {'U': n x K, 'S': K x K, 'err', 'used_randsample', ...}."""
    import scipy.io

    draws = ([case["kmeans_sample"] + 1] if case["kmeans_sample"] is not None else []) + \
        [p + 1 for p in case["links"]]
    with tempfile.TemporaryDirectory() as tmp:
        fin, fout = Path(tmp) / "in.mat", Path(tmp) / "out.mat"
        scipy.io.savemat(fin, {"A": case["X"], "k": float(case["k_total"]), "gamma": case["gamma"],
                               "noc": float(case["c"]), "eta": case["eta"], "centers": case["centres"].T,
                               "randsample": _cell(draws), "randperm": _cell([p + 1 for p in case["perms"]]),
                               "rows": case["rows"].astype(np.float64) + 1})
        script = (f"addpath('{mdir}'); addpath('{HERE}'); addpath('{HERE / 'inject'}'); "
                  f"{harness}('{fin}', '{fout}');")
        _octave(script, timeout)
        out = scipy.io.loadmat(fout)
    return {"U": np.asarray(out["U"], dtype=np.float64), "S": np.asarray(out["S"], dtype=np.float64),
            "err": float(out["err"].squeeze()), "used_randsample": int(out["used_randsample"].squeeze()),
            "used_randperm": int(out["used_randperm"].squeeze()), "n_draws": len(draws)}


def _octave(script: str, timeout: float) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run(["octave-cli", "--no-gui", "-q", "--eval", script], capture_output=True,
                          text=True, timeout=timeout, env=env)
    if proc.returncode != 0 and "error:" in proc.stderr.replace("ignoring const execution_exception", ""):
        raise RuntimeError(f"octave failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc.stdout


def injected_meka(case: dict):
    """lsokl's MEKA whose partition and draws are the case's (arithmetic untouched)."""
    from lsokl.approx.clustering import nearest_centre
    from lsokl.approx.meka import MEKA

    class InjectedMEKA(MEKA):
        def _cluster(self, X, c, rng):
            self.centres_ = case["centres"]
            self.labels_ = nearest_centre(X, self.centres_)

        def _landmark_positions(self, s, n_s, m_s, rng):
            return case["perms"][s][:m_s]

        def _link_positions(self, s, t, u, n_u, take, rng):
            pos = self._queue.pop(0)
            assert len(pos) == take, (s, t, u, len(pos), take)
            return pos

    m = InjectedMEKA(total_rank=case["k_total"], gamma=case["gamma"], clusters=case["c"],
                     eta=case["eta"])
    m._queue = list(case["links"])
    return m


def run_lsokl_nystrom(case: dict):
    """(lsokl's Nys baseline on the case's landmarks (its one cluster's draw), error on its rows)."""
    from lsokl.approx.nystrom import Nystrom
    from lsokl.compute.kernels import gaussian_block

    class InjectedNystrom(Nystrom):
        def _landmarks(self, X, rng):
            return X[case["perms"][0][:self.n_landmarks(X.shape[0])]]

    m = InjectedNystrom(rank=case["k_total"], gamma=case["gamma"]).fit(case["X"])
    X, rows = case["X"], case["rows"]
    G = gaussian_block(X[rows], X, case["gamma"])
    return m, float(np.linalg.norm(G - m.rows(rows)) / np.linalg.norm(G))


def run_lsokl(case: dict):
    """(fitted MEKA, relative error on the case's rows)."""
    from lsokl.compute.kernels import gaussian_block

    m = injected_meka(case).fit(case["X"])
    X, rows = case["X"], case["rows"]
    G = gaussian_block(X[rows], X, case["gamma"])
    err = float(np.linalg.norm(G - m.rows(rows)) / np.linalg.norm(G))
    return m, err


def compare(m, err_py: float, oct: dict) -> dict:
    """Largest differences between lsokl's fit ``m`` and the authors' output ``oct``.

    ranks/partition: each cluster's rows of the authors' U must be supported exactly on that
    cluster's columns, and the column counts are the ranks. Blocks: max |W_oct D - W_py| / max|W|
    with D the column signs; link: max |S_oct - D L D| / max|L|; error: |err_oct - err_py|."""
    U, S = oct["U"], oct["S"]
    offsets = m.offsets_
    signs = np.empty(U.shape[1])
    block_diff = 0.0
    support_ok = U.shape[1] == offsets[-1]
    for s, idx in enumerate(m.members_):
        a0, a1 = offsets[s], offsets[s + 1]
        rows_oct = U[idx]
        outside = np.delete(rows_oct, np.arange(a0, a1), axis=1) if support_ok else rows_oct
        support_ok = support_ok and not np.any(outside)
        Wo, Wp = rows_oct[:, a0:a1], m.blocks_[s]
        d = np.sign(np.sum(Wo * Wp, axis=0))
        d[d == 0] = 1.0
        signs[a0:a1] = d
        block_diff = max(block_diff, float(np.max(np.abs(Wo * d - Wp)) / np.max(np.abs(Wp))))
    L = m.L_
    link_diff = float(np.max(np.abs(signs[:, None] * S * signs[None, :] - L)) / np.max(np.abs(L)))
    return {"support_and_ranks": bool(support_ok), "ranks": m.ranks_.tolist(),
            "dropped": int(np.triu(m.dropped_).sum()), "block_diff": block_diff,
            "link_diff": link_diff, "err_octave": oct["err"], "err_lsokl": err_py,
            "err_diff": abs(oct["err"] - err_py),
            "draws_consumed": oct["used_randsample"] == oct["n_draws"] and oct["used_randperm"] == len(m.members_)}


def run_octave_own(X: np.ndarray, k_total: int, gamma: float, c: int, eta: float, seeds, rows: int,
                   mdir: Path, timeout: float = 3600) -> list[float]:
    """Relative errors of meka.m with its own randomness (MEX k-means, randsample, randperm), one
    per seed, all in one Octave process (the MEX's C ``rand()`` is never seeded by the authors'
    code, so it continues from run to run); the error is the demos' formula on ``rows`` rows."""
    import scipy.io

    with tempfile.TemporaryDirectory() as tmp:
        fin = Path(tmp) / "in.mat"
        scipy.io.savemat(fin, {"A": X})
        seeds = " ".join(str(int(s)) for s in seeds)
        script = (f"addpath('{mdir}'); addpath('{HERE / 'compat'}'); in = load('{fin}'); A = sparse(in.A); "
                  f"n = size(A, 1); opts.noc = {int(c)}; opts.eta = {float(eta)!r}; "
                  f"for seed = [{seeds}], rand('state', seed); randn('state', seed); "
                  f"[U, S] = meka(A, {int(k_total)}, {float(gamma)!r}, opts); "
                  f"rs = randsample(1:n, min(n, {int(rows)})); tmpK = exp(-sqdist(A(rs,:), A) * {float(gamma)!r}); "
                  f"printf('RESULT %d %.17g\\n', seed, full(norm(tmpK - (U(rs',:) * S) * U', 'fro') / norm(tmpK, 'fro'))); end")
        out = _octave(script, timeout)
    return [float(line.split()[2]) for line in out.splitlines() if line.startswith("RESULT ")]


# --------------------------------------------------------------------------- the MEX k-means
def glibc_rand(skip: int = 0):
    """The C library's ``rand()`` as the authors' ``mykmeans.cpp`` calls it (glibc's TYPE_3 additive
    feedback generator, never seeded by the authors' code, i.e. srand(1)), after ``skip`` draws."""
    r = [1]
    for i in range(1, 31):
        hi, lo = divmod(r[i - 1], 127773)
        word = 16807 * lo - 2836 * hi
        r.append(word + 2147483647 if word < 0 else word)
    r += r[:3]
    count = 0
    while True:
        v = (r[-31] + r[-3]) & 0xFFFFFFFF
        r.append(v)
        del r[0]
        count += 1
        if count > 310 + skip:
            yield v >> 1


class CRand:
    """A stand-in for numpy's Generator in :func:`lsokl.approx.clustering.meka_kmeans` that
    draws ``rand() % hi`` from the C library's stream, as ``mykmeans.cpp`` does."""

    def __init__(self, skip: int = 0):
        self.g = glibc_rand(skip)

    def integers(self, lo, hi, size=None):
        assert lo == 0
        if size is None:
            return next(self.g) % hi
        return np.array([next(self.g) % hi for _ in range(size)], dtype=np.int64)


def run_octave_mex_kmeans(X: np.ndarray, c: int, max_iter: int = 10, timeout: float = 600) -> dict:
    """The authors' MEX ``mykmeans`` (compiled in MEKA_MATLAB_DIR) on X, in a fresh Octave. A first
    call with 0 iterations on 64 points and 1000 clusters returns 64 draws of rand() % 1000, which
    locate the position of the C library's stream (Octave's start-up may call rand()); returns
    labels (0-based), centres (c x d) and ``skip``, the draws made before the real call."""
    import scipy.io

    with tempfile.TemporaryDirectory() as tmp:
        fin, fout = Path(tmp) / "in.mat", Path(tmp) / "out.mat"
        scipy.io.savemat(fin, {"A": X})
        _octave(f"addpath('{authors_dir()}'); in = load('{fin}'); probe = mykmeans(sparse(ones(1, 64)), 1000, 0); "
                f"[idx, C] = mykmeans(sparse(in.A)', {int(c)}, {int(max_iter)}); "
                f"save('-v7', '{fout}', 'probe', 'idx', 'C');", timeout)
        out = scipy.io.loadmat(fout)
    probe = out["probe"].ravel().astype(np.int64) - 1
    stream = np.array([v % 1000 for v, _ in zip(glibc_rand(), range(1064))])
    found = [i for i in range(1000) if np.array_equal(stream[i:i + 64], probe)]
    if not found:
        raise RuntimeError("could not locate the C rand() stream: not glibc's rand()?")
    return {"labels": out["idx"].ravel().astype(np.int64) - 1, "centres": out["C"].T.copy(),
            "skip": found[0] + 64}


def mex_dir() -> Path | None:
    d = authors_dir()
    return d if d is not None and any(d.glob("mykmeans.mex*")) else None


# --------------------------------------------------------------------------- Mu Li's nys.m / rnys.m
def mli_dir() -> Path | None:
    """``MLI_NYSTROM_DIR``: a copy of github.com/mli/nystrom (nys.m, rnys.m, rsvd.m; the MEKA spec's
    Nys/RNys baseline code), with octave-cli and MEKA_MATLAB_DIR (for sqdist.m) present."""
    d = os.environ.get("MLI_NYSTROM_DIR")
    if not d or not (Path(d) / "rnys.m").exists() or authors_dir() is None:
        return None
    return Path(d)


def run_octave_mli(case: dict, timeout: float = 600) -> dict:
    """nys.m and rnys.m on the case (X, gamma, k, m, idx 0-based, omega, p, q): their factors."""
    import scipy.io

    with tempfile.TemporaryDirectory() as tmp:
        fin, fout = Path(tmp) / "in.mat", Path(tmp) / "out.mat"
        scipy.io.savemat(fin, {"A": case["X"], "gamma": case["gamma"], "k": float(case["k"]),
                               "m": float(case["m"]), "idx": case["idx"] + 1.0, "omega": case["omega"],
                               "p": float(case["p"]), "q": float(case["q"])})
        _octave(f"addpath('{mli_dir()}'); addpath('{authors_dir()}'); addpath('{HERE}'); "
                f"addpath('{HERE / 'inject'}'); mli_injected('{fin}', '{fout}');", timeout)
        out = scipy.io.loadmat(fout)
    return {k: np.asarray(out[k], dtype=np.float64) if k.startswith(("U", "D")) else float(out[k].squeeze())
            for k in ("U_nys", "D_nys", "U_rnys", "D_rnys", "err_nys", "err_rnys")}


def run_lsokl_mli(case: dict):
    """lsokl's Nys and RNys on the case's landmarks and test matrix: (G~ Nys, G~ RNys)."""
    from lsokl.approx.nystrom import Nystrom
    from lsokl.approx.rnys import RNystrom, randomized_eigenpairs

    lm = case["idx"][:case["m"]]

    class Omega:
        def standard_normal(self, shape):
            assert tuple(shape) == case["omega"].shape, shape
            return case["omega"]

    class N(Nystrom):
        def _landmarks(self, X, rng):
            return X[lm]

    class R(RNystrom):
        def _landmarks(self, X, rng):
            return X[lm]

        def _eigenpairs(self, rng):
            return randomized_eigenpairs(Omega(), int(self.oversample), int(self.power_iterations))

    kw = {"rank": case["k"], "gamma": case["gamma"], "landmark_factor": case["m"] / case["k"]}
    return (N(**kw).fit(case["X"]).to_dense(),
            R(**kw, oversample=case["p"], power_iterations=case["q"]).fit(case["X"]).to_dense())


# --------------------------------------------------------------------------- stored reference data
def save_reference(path: Path, case: dict, oct: dict, **meta) -> None:
    """The case's inputs and the authors' outputs on them (U as its nonzeros, S, err), compressed."""
    U = oct["U"]
    r, col = np.nonzero(U)
    links = case["links"]
    np.savez_compressed(
        path, X=case["X"], k_total=case["k_total"], gamma=case["gamma"], c=case["c"], eta=case["eta"],
        centres=case["centres"], rows=case["rows"].astype(np.int32),
        perms=np.concatenate(case["perms"]).astype(np.int32),
        perm_sizes=np.array([len(p) for p in case["perms"]], dtype=np.int32),
        links=np.concatenate(links).astype(np.int32) if links else np.zeros(0, np.int32),
        link_sizes=np.array([len(p) for p in links], dtype=np.int32),
        U_rows=r.astype(np.int32), U_cols=col.astype(np.int32), U_vals=U[r, col], U_shape=np.array(U.shape),
        S=oct["S"], err=oct["err"], **{f"meta_{k}": v for k, v in meta.items()})


def load_reference(path: Path) -> tuple[dict, dict]:
    """(case, the authors' outputs) from :func:`save_reference`'s file."""
    z = np.load(path)
    split = lambda flat, sizes: np.split(flat.astype(np.int64), np.cumsum(sizes)[:-1]) if len(sizes) else []  # noqa: E731
    case = {"X": z["X"], "k_total": int(z["k_total"]), "gamma": float(z["gamma"]), "c": int(z["c"]),
            "eta": float(z["eta"]), "centres": z["centres"], "kmeans_sample": None,
            "rows": z["rows"].astype(np.int64), "perms": split(z["perms"], z["perm_sizes"]),
            "links": split(z["links"], z["link_sizes"])}
    U = np.zeros(tuple(z["U_shape"]))
    U[z["U_rows"], z["U_cols"]] = z["U_vals"]
    oct = {"U": U, "S": z["S"], "err": float(z["err"]), "used_randsample": len(case["links"]),
           "used_randperm": case["c"], "n_draws": len(case["links"])}
    return case, oct


# --------------------------------------------------------------------------- regenerating the data
# (dataset, how the MEKA configs load it, gamma, clusters, total rank, eta): gamma and c are the
# Table 7/8 values; the ranks are small because the subsets have 300 points; cadata runs with
# eta = 0.3 so that the threshold rule drops blocks.
SMALL = [("pendigits", {"split": "all", "scale": "minmax"}, 2.0, 5, 40, 0.01),
         ("cadata", {"scale": "minmax_pm1"}, 4.0, 5, 40, 0.3),
         ("cpusmall", {"scale": "minmax_pm1"}, 4.0, 5, 50, 0.01),
         ("wine-quality", {"scale": "minmax_pm1"}, 2.0 ** -10, 3, 24, 0.01)]
# the Table 7 (pendigit) and Table 8 (cadata, cpusmall, wine) settings: k per cluster, c
FULL = {"pendigits": ({"split": "all", "scale": "minmax"}, 2.0, 5, 128),
        "cadata": ({"scale": "minmax_pm1"}, 4.0, 5, 128),
        "cpusmall": ({"scale": "minmax_pm1"}, 4.0, 5, 256),
        "wine-quality": ({"scale": "minmax_pm1"}, 2.0 ** -10, 3, 128)}


def main(argv=None) -> int:
    """Regenerate tests/approx/data/meka_octave_*.npz (needs Octave, MEKA_MATLAB_DIR and the
    shared data); ``own`` also the own-randomness errors (needs the compiled MEX k-means)."""
    import argparse
    import csv

    from lsokl import data

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("what", nargs="*", default=["injected"], choices=["injected", "own"])
    ap.add_argument("--seeds", type=int, default=12)
    args = ap.parse_args(argv)
    mdir = authors_dir()
    if mdir is None:
        raise SystemExit("needs octave-cli and MEKA_MATLAB_DIR (the authors' meka_released/ folder)")
    out = Path(__file__).resolve().parents[1] / "approx" / "data"
    out.mkdir(exist_ok=True)
    if "injected" in args.what:
        for name, load, gamma, c, k_total, eta in SMALL:
            X = data.load(name, **load).X
            sub = np.sort(np.random.default_rng(1).choice(X.shape[0], 300, replace=False))
            case = make_case(X[sub], k_total, gamma, c, eta, seed=7)
            oct = run_octave(case, mdir)
            save_reference(out / f"meka_octave_{name}.npz", case, oct, subset_seed=1, draw_seed=7)
            m, err = run_lsokl(case)
            print(name, compare(m, err, oct), flush=True)
        # the release's Nys.m on all points (the Nys baseline of Table 7)
        name, load, gamma = SMALL[0][:3]
        X = data.load(name, **load).X
        sub = np.sort(np.random.default_rng(1).choice(X.shape[0], 300, replace=False))
        case = make_case(X[sub], 20, gamma, 1, 0.0, seed=7)
        oct = run_octave(case, mdir, harness="nys_injected")  # meka.m cannot run with c = 1
        save_reference(out / f"meka_octave_nys_{name}.npz", case, oct, subset_seed=1, draw_seed=7)
    if "injected" in args.what and mex_dir() is not None:
        X = data.load("pendigits", split="all", scale="minmax").X
        X = X[np.sort(np.random.default_rng(2).choice(X.shape[0], 400, replace=False))]
        for c in (5, 40):  # 40 clusters of 400 points: clusters empty out and are repaired
            mex = run_octave_mex_kmeans(X, c)
            np.savez_compressed(out / f"mykmeans_octave_c{c}.npz", X=X, c=c, **mex)
            print("mykmeans", c, mex["skip"], np.bincount(mex["labels"], minlength=c).min(), flush=True)
    if "injected" in args.what and mli_dir() is not None:
        X = data.load("pendigits", split="all", scale="minmax").X
        sub = np.sort(np.random.default_rng(1).choice(X.shape[0], 300, replace=False))
        rng = np.random.default_rng(3)
        k, m, p, q = 20, 40, 10, 1  # the spec's RNys: m = 2k, oversampling 10, q = 1
        case = {"X": X[sub], "gamma": 2.0, "k": k, "m": m, "p": p, "q": q,
                "idx": rng.permutation(len(sub)), "omega": rng.standard_normal((m, k + p))}
        oct = run_octave_mli(case)
        np.savez_compressed(out / "mli_octave_pendigits.npz", **case, **oct)
        print("mli", oct["err_nys"], oct["err_rnys"], flush=True)
    if "own" in args.what:
        path = out / "meka_octave_own_errors.csv"
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["dataset", "k_per_cluster", "clusters", "gamma", "eta", "rows", "octave_seed", "rel_error"])
            for name, (load, gamma, c, k) in FULL.items():
                X = data.load(name, **load).X
                errs = run_octave_own(X, c * k, gamma, c, 0.01, range(1, args.seeds + 1), 1000, mdir)
                for seed, e in zip(range(1, args.seeds + 1), errs):
                    w.writerow([name, k, c, repr(gamma), 0.01, 1000, seed, f"{e:.10g}"])
                f.flush()
                print(name, np.median(errs), errs, flush=True)
    return 0


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    raise SystemExit(main())
