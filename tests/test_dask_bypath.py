"""Dask workers open the data by path (issue 26 item 5): a LocalCluster of processes on 127.0.0.1 whose workers
fetch the dataset from the mirror into their own cache, once per worker; records identical to loky's."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest
import yaml

from lsokl.config import load_config
from lsokl.results import ResultStore
from lsokl.runner import run_experiment

from test_data_fetch import entry, sha  # noqa: F401
from test_runner import comparable

CONFIG = """\
name: bypath
permutations: 3
budgets: 10
defaults: {sigma: 2}
datasets:
  toy: {}
algorithms:
  rbp: {}
  perceptron: {}
"""


@pytest.mark.timeout(300)
def test_dask_workers_open_the_cache_by_path_and_match_loky(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)).round(3)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)
    text = "".join(f"{int(t):+d} " + " ".join(f"{j + 1}:{v}" for j, v in enumerate(row)) + "\n"
                   for t, row in zip(y, X)).encode()
    mirror = tmp_path / "mirror"
    (mirror / "toy").mkdir(parents=True)
    (mirror / "toy" / "toy.txt").write_bytes(text)
    reg = tmp_path / "registry.yaml"
    reg.write_text(yaml.safe_dump({"datasets": [entry(url="http://127.0.0.1:9/toy.txt", sha256=sha(text), n=300,
                                                      d=4)]}))
    env = {"LSOKL_REGISTRY": str(reg), "LSOKL_DATA_MIRROR": str(mirror)}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("LSOKL_DATA_DIR", str(tmp_path / "cache-main"))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(textwrap.dedent(CONFIG))
    exp = load_config(cfg)
    run_experiment(exp, tmp_path / "loky", jobs=1)
    loky = comparable(ResultStore(tmp_path / "loky"))
    assert len(loky) == 6 and all(r["status"] == "ok" for r in loky.values())

    workers_cache = tmp_path / "cache-workers"  # empty: the workers fetch from the mirror themselves
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, env={**env, "LSOKL_DATA_DIR": str(workers_cache)}
                                  ) as cluster:
        run_experiment(exp, tmp_path / "dask", backend="dask", scheduler=cluster.scheduler_address)
        with distributed.Client(cluster.scheduler_address) as client:
            opened = client.run(lambda: list(__import__("lsokl.runner.bypath", fromlist=["x"]).OPENED))
    assert comparable(ResultStore(tmp_path / "dask")) == loky
    assert any(opened.values()), opened
    for tokens in opened.values():  # once per worker
        assert len(tokens) == len(set(tokens)) <= 1
    assert any(p.is_file() for p in workers_cache.rglob("*")), "the workers did not fetch into their own cache"
