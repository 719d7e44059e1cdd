"""YAML loading that refuses duplicate mapping keys.

PyYAML keeps the last of two equal keys in a mapping without a word (``fogd:`` twice with different ``eta``
silently loses one setting); :class:`UniqueKeyLoader` raises :class:`DuplicateKeyError` naming both lines instead.
Merge keys (``<<: *defaults``) still override as YAML intends.
"""
from __future__ import annotations

import yaml


class DuplicateKeyError(yaml.YAMLError):
    def __init__(self, key, first_line: int, second_line: int):
        self.key, self.first_line, self.second_line = key, first_line, second_line
        super().__init__(f"key {key!r} appears twice in the same mapping, at lines {first_line} and "
                         f"{second_line}; remove or rename one (YAML would silently keep only the last)")


class UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader whose mappings may not repeat a key."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    hash(key)
                except TypeError:
                    continue  # an unhashable key: SafeLoader itself reports it
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise DuplicateKeyError(key, seen[key], line)
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


def read_text(path) -> str:
    """A YAML file's text as UTF-8 (YAML's own encoding); a file in another encoding raises ``ValueError`` with
    one line naming the file, the first undecodable byte and its line."""
    from pathlib import Path

    raw = Path(path).read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at line {line}, offset "
                         f"{exc.start}); save it as UTF-8") from None
