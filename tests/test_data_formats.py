"""Readers and label normalisation on small files written by the tests."""
from __future__ import annotations

import bz2
import gzip
import struct

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from lsokl.data import formats, labels
from lsokl.errors import DataError


def write(path, text: str | bytes):
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# --- LIBSVM -------------------------------------------------------------------------------------------------------

def test_libsvm_crlf_and_explicit_feature_count(tmp_path):
    p = write(tmp_path / "w.txt", "+1 1:0.5 3:1\r\n-1 \r\n-1 2:2\r\n")
    parsed = formats.read("libsvm", [p], 5, {}, "csr")
    assert sp.isspmatrix_csr(parsed.X) and parsed.X.shape == (3, 5)
    assert parsed.X.toarray().tolist()[0] == [0.5, 0, 1, 0, 0]
    assert parsed.y.tolist() == [1, -1, -1]


def test_libsvm_without_index_prefixes(tmp_path):
    p = write(tmp_path / "cod.txt", "-1 -766 127 0.14\n1 -726 131 0.12\n")
    parsed = formats.read("libsvm", [p], 3, {}, "dense")
    assert parsed.X.flags.c_contiguous and parsed.X.dtype == np.float64
    assert parsed.X.tolist() == [[-766, 127, 0.14], [-726, 131, 0.12]]


def test_libsvm_malformed_line_names_file_and_line(tmp_path):
    p = write(tmp_path / "bad.txt", "+1 1:0.5\n-1 2:1\n+1 3:x\n")
    with pytest.raises(DataError, match=r"bad\.txt:3: '3:x' is not index:value"):
        formats.read("libsvm", [p], 5, {}, "csr")


def test_libsvm_too_many_features_is_reported(tmp_path):
    p = write(tmp_path / "wide.txt", "+1 1:1\n-1 7:1\n")
    with pytest.raises(DataError, match=r"wide\.txt:2: feature index 7 exceeds the registry's d=5"):
        formats.read("libsvm", [p], 5, {}, "csr")


def test_dense_text_wrong_column_count(tmp_path):
    p = write(tmp_path / "d.txt", "1 2 3\n-1 4 5\n")
    with pytest.raises(DataError, match="2 features per row, but the registry declares d=3"):
        formats.read("libsvm", [p], 3, {}, "dense")


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_non_finite_features_are_rejected(tmp_path, value):
    p = write(tmp_path / "n.txt", f"+1 1:1\n-1 2:{value}\n")
    with pytest.raises(DataError, match=r"n\.txt: non-finite feature value .* row 2, feature 2"):
        formats.read("libsvm", [p], 2, {}, "csr")


# --- .mat ---------------------------------------------------------------------------------------------------------

def test_mat_authors_layout_with_permutations(tmp_path):
    rng = np.random.default_rng(0)
    n = 30
    X = rng.integers(100, 300, size=(n, 4)).astype(np.int16)  # as stored on disk; X*X overflows int16
    y = np.where(rng.random(n) > 0.5, 1, -1).astype(np.int16)
    perms = np.stack([rng.permutation(n) + 1 for _ in range(3)]).astype(np.uint16)
    path = tmp_path / "a.mat"
    scipy.io.savemat(path, {"data": np.column_stack([y, X]), "ID_all": perms})
    parsed = formats.read("mat", [path], 4, {}, "dense")
    assert parsed.X.dtype == np.float64 and np.all(parsed.X == X)
    assert np.all((parsed.X * parsed.X) > 0)  # no int16 overflow
    assert parsed.permutations.dtype == np.int64
    assert np.array_equal(parsed.permutations, perms.astype(np.int64) - 1)
    assert parsed.permutations.min() == 0


def test_mat_sparse_x_and_y(tmp_path):
    X = sp.random(20, 5, density=0.3, format="csc", random_state=0)
    path = tmp_path / "s.mat"
    scipy.io.savemat(path, {"X": X, "y": np.ones((20, 1))})
    parsed = formats.read("mat", [path], 5, {}, "dense")
    assert isinstance(parsed.X, np.ndarray) and np.allclose(parsed.X, X.toarray())
    assert parsed.permutations is None


def test_mat_with_unknown_keys(tmp_path):
    path = tmp_path / "k.mat"
    scipy.io.savemat(path, {"features": np.ones((2, 2))})
    with pytest.raises(DataError, match="expected keys `data`"):
        formats.read("mat", [path], 2, {}, "dense")


# --- idx / hdf5 ---------------------------------------------------------------------------------------------------

def _idx(arr: np.ndarray) -> bytes:
    return struct.pack(">I", 0x0800 | arr.ndim) + b"".join(struct.pack(">I", s) for s in arr.shape) + arr.tobytes()


def test_idx_images_and_labels(tmp_path):
    images = np.arange(3 * 2 * 2, dtype=np.uint8).reshape(3, 2, 2)
    lab = np.array([7, 0, 9], dtype=np.uint8)
    pi = write(tmp_path / "img.gz", gzip.compress(_idx(images)))
    pl = write(tmp_path / "lab.gz", gzip.compress(_idx(lab)))
    plain = [formats.decompress(p, tmp_path) for p in (pi, pl)]
    parsed = formats.read("idx", plain, 4, {}, "dense")
    assert parsed.X.shape == (3, 4) and parsed.X[1].tolist() == [4, 5, 6, 7]
    assert parsed.y.tolist() == [7, 0, 9]


def test_idx_truncated_payload(tmp_path):
    images = np.zeros((3, 2, 2), dtype=np.uint8)
    p = write(tmp_path / "img", _idx(images)[:-2])
    with pytest.raises(DataError, match="idx header says"):
        formats.read("idx", [p, p], 4, {}, "dense")


def test_hdf5_groups(tmp_path):
    import h5py

    path = tmp_path / "u.h5"
    with h5py.File(path, "w") as f:
        f["train/data"] = np.ones((4, 3), dtype=np.float32)
        f["train/target"] = np.array([0, 1, 2, 1])
        f["test/data"] = np.zeros((2, 3), dtype=np.float32)
        f["test/target"] = np.array([1, 1])
    tr = formats.read("hdf5", [path], 3, {"group": "train"}, "dense")
    te = formats.read("hdf5", [path], 3, {"group": "test"}, "dense")
    assert tr.X.shape == (4, 3) and tr.X.dtype == np.float64 and te.X.shape == (2, 3)


# --- CSV ----------------------------------------------------------------------------------------------------------

def test_csv_one_hot_reuses_train_categories(tmp_path):
    train = write(tmp_path / "tr.csv", "1,tcp,a,normal.\n2,udp,b,smurf.\n3,tcp,b,normal.\n")
    test = write(tmp_path / "te.csv", "4,icmp,a,normal.\n")
    opts = {"header": False, "label": 3, "categorical": [1, 2], "negative": ["normal."]}
    tr = formats.read("csv", [train], 5, opts, "dense")
    assert tr.X.tolist() == [[1, 1, 0, 1, 0], [2, 0, 1, 0, 1], [3, 1, 0, 0, 1]]
    te = formats.read("csv", [test], 5, {**opts, "_categories": tr.info["categories"]}, "csr")
    assert te.X.toarray().tolist() == [[4, 0, 0, 1, 0]]  # unseen 'icmp' encodes as zeros
    y, _ = labels.normalise(tr.y, "binary", opts, "tr")
    assert y.tolist() == [-1, 1, -1]


def test_csv_header_label_by_name_and_drop(tmp_path):
    p = write(tmp_path / "h.csv", "id,a,b,target\n1,0.5,2,10\n2,1.5,3,20\n")
    parsed = formats.read("csv", [p], 2, {"header": True, "label": "target", "drop": ["id"]}, "dense")
    assert parsed.X.tolist() == [[0.5, 2], [1.5, 3]] and parsed.y.tolist() == [10, 20]


def test_csv_non_numeric_value_names_row_and_column(tmp_path):
    p = write(tmp_path / "bad.csv", "a,b,y\n1,2,0\n3,?,1\n")
    with pytest.raises(DataError, match=r"bad\.csv: row 3, column 'b': value '\?' is not a finite number"):
        formats.read("csv", [p], 2, {"header": True, "label": "y"}, "dense")


def test_csv_codes_map_text_to_numbers(tmp_path):
    p = write(tmp_path / "ab.csv", "M,0.4,7\nI,0.3,9\n")
    parsed = formats.read("csv", [p], 2, {"label": -1, "codes": {0: {"M": 1, "F": 2, "I": 3}}}, "dense")
    assert parsed.X.tolist() == [[1, 0.4], [3, 0.3]]


def test_several_csv_files_are_concatenated(tmp_path):
    a = write(tmp_path / "a.csv", "1,2,5\n")
    b = write(tmp_path / "b.csv", "3,4,6\n5,6,7\n")
    parsed = formats.read("csv", [a, b], 2, {"label": -1}, "dense")
    assert parsed.X.shape == (3, 2) and parsed.y.tolist() == [5, 6, 7]


# --- compression --------------------------------------------------------------------------------------------------

def test_compression_detected_from_content_not_name(tmp_path):
    p = write(tmp_path / "data.txt", bz2.compress(b"+1 1:1\n"))
    plain = formats.decompress(p, tmp_path)
    assert plain.read_bytes() == b"+1 1:1\n"


@pytest.mark.parametrize("kind", ["gz", "bz2", "zip"])
def test_truncated_or_corrupt_archive(tmp_path, kind):
    rng = np.random.default_rng(0)
    payload = "".join(f"+1 1:{v}\n" for v in rng.random(5000)).encode()  # incompressible enough to truncate
    if kind == "gz":
        blob = gzip.compress(payload)[:200]
    elif kind == "bz2":
        blob = bz2.compress(payload)[:200]
    else:
        import io
        import zipfile

        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("a.txt", payload)
        blob = buf.getvalue()[:60]
    p = write(tmp_path / f"broken.{kind}", blob)
    with pytest.raises(DataError, match=rf"broken\.{kind}: corrupt or truncated"):
        formats.decompress(p, tmp_path)
    assert not (tmp_path / f"broken.{kind}.plain").exists()


# --- labels -------------------------------------------------------------------------------------------------------

def test_binary_labels_from_0_1_and_from_1_2():
    assert labels.normalise(np.array([0, 1, 1]), "binary", {}, "x")[0].tolist() == [-1, 1, 1]
    assert labels.normalise(np.array([2.0, 1.0]), "binary", {}, "x")[0].tolist() == [1, -1]


def test_multiclass_labels_and_test_split_mapping():
    y, info = labels.normalise(np.array(["n", "ei", "ie", "n"], dtype=object), "multiclass", {}, "x")
    assert y.tolist() == [2, 0, 1, 2] and y.dtype == np.int64
    y2, _ = labels.normalise(np.array(["ie"], dtype=object), "multiclass", {}, "t", info=info)
    assert y2.tolist() == [1]
    with pytest.raises(DataError, match="not one of the train split's classes"):
        labels.normalise(np.array(["zz"], dtype=object), "multiclass", {}, "t", info=info)


def test_more_classes_than_declared():
    with pytest.raises(DataError, match="registry declares 2"):
        labels.normalise(np.array([1, 2, 3]), "multiclass", {}, "x", n_classes=2)
