"""``lsokl fetch NAME --pin``: write the sha256 of accepted-but-unverified files back into a user registry.

An entry with ``sha256: null`` is fetched on trust and its hash recorded in the cache's ``meta.json``. Pinning
copies that hash into the registry file ``$LSOKL_REGISTRY`` points to (``sha256`` for a file that came from its
upstream URL, ``mirror_sha256`` for a mirror's copy, which may legitimately differ from upstream), so later fetches
verify against it. The file is edited in place, not re-dumped: comments, order and layout stay as the user wrote
them (PyYAML cannot round-trip comments, so the edit uses the positions of the parsed YAML nodes).
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import DataError
from . import cache, registry


@dataclass
class Pinned:
    split: str
    index: int
    key: str  # sha256 or mirror_sha256
    sha256: str
    mirror: str


def _child(node, key: str):
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return k, v
    return None, None


def _file_node(root, name: str, split: str, index: int):
    _, entries = _child(root, "datasets")
    for entry in getattr(entries, "value", []):
        _, n = _child(entry, "name")
        if n is not None and n.value == name:
            _, splits = _child(entry, "splits")
            _, sp = _child(splits, split)
            _, files = _child(sp, "files")
            if files is not None and index < len(files.value):
                return files.value[index]
    return None


def _edit(text: str, file_node, key: str, value: str) -> tuple[int, str, str]:
    """(position, old text, new text) setting ``key: value`` in the file's mapping node."""
    knode, vnode = _child(file_node, key)
    if vnode is not None:
        return vnode.start_mark.index, text[vnode.start_mark.index:vnode.end_mark.index], value
    # the key is absent (mirror_sha256 is optional): add it after sha256 (or after the mapping's last value)
    anchor_key, anchor = _child(file_node, "sha256")
    if anchor is None:
        anchor_key, anchor = file_node.value[-1]
    if file_node.flow_style:
        return anchor.end_mark.index, "", f", {key}: {value}"
    eol = text.find("\n", anchor.end_mark.index)
    eol = len(text) if eol < 0 else eol
    return eol, "", "\n" + " " * anchor_key.start_mark.column + f"{key}: {value}"


def pin(name: str) -> tuple[Path, list[Pinned]]:
    """Record the hashes of ``name``'s unverified cached files in the user registry; (registry path, what changed).

    Refuses the packaged ``datasets.yaml``: pinning is a user's decision to trust a copy, kept in their own file.
    """
    path = registry.registry_path()
    if "LSOKL_REGISTRY" not in os.environ or path.resolve() == registry.REGISTRY_PATH.resolve():
        raise DataError(f"--pin writes to a user registry, not the packaged one: copy {registry.REGISTRY_PATH} "
                        "to a file of yours and set LSOKL_REGISTRY to it")
    spec = registry.get(name)
    metas = {s: cache.read_meta(spec.name, s) for s in spec.splits}
    todo: list[Pinned] = []
    for s, meta in metas.items():
        if not meta or meta.get("spec_hash") != spec.spec_hash:
            continue
        for j, (rec, f) in enumerate(zip(meta.get("files", []), spec.splits[s].files)):
            if rec.get("verified"):
                continue
            key = "sha256" if rec.get("from") == f.url else "mirror_sha256"
            todo.append(Pinned(s, j, key, rec["sha256"], f.mirror))
    if not todo:
        if not any(m and m.get("spec_hash") == spec.spec_hash for m in metas.values()):
            raise DataError(f"{spec.name} is not cached: fetch it first (`lsokl fetch {spec.name} --pin` does both)")
        return path, []

    text = path.read_text()
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    edits = []
    for p in todo:
        node = _file_node(root, spec.name, p.split, p.index)
        if node is None:
            raise DataError(f"{path}: cannot find {spec.name} split {p.split} file {p.index} to pin")
        edits.append(_edit(text, node, p.key, p.sha256))
    for pos, old, new in sorted(edits, key=lambda e: e[0], reverse=True):
        text = text[:pos] + new + text[pos + len(old):]
    _atomic_write(path, text)

    # the cached arrays were built from exactly these bytes: re-key them to the pinned entry instead of refetching
    new_spec = registry.get(spec.name)
    for p in todo:
        f = new_spec.splits[p.split].files[p.index]
        if (f.sha256 if p.key == "sha256" else f.mirror_sha256) != p.sha256:
            raise DataError(f"{path}: the pinned hash for {spec.name} {p.split} did not read back; check the file")
    for s, meta in metas.items():
        if meta and meta.get("spec_hash") == spec.spec_hash:
            meta["spec_hash"] = new_spec.spec_hash
            for p in todo:
                if p.split == s:
                    meta["files"][p.index]["verified"] = True
            _atomic_write(cache.split_dir(spec.name, s) / cache.META, json.dumps(meta, indent=1, sort_keys=True))
    return path, todo


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
