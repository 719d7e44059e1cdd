"""YAML loading that refuses duplicate mapping keys and alias bombs.

PyYAML keeps the last of two equal keys in a mapping without a word (``fogd:`` twice with different ``eta``
silently loses one setting); :class:`UniqueKeyLoader` raises :class:`DuplicateKeyError` naming both lines instead.
Merge keys (``<<: *defaults``) still override as YAML intends.

Anchors and aliases stay allowed (``<<: *defaults`` is handy), but their expansion is bounded: an alias shares
its node, so nine levels of nine aliases (a ~500-byte "billion laughs") compose instantly and only explode when
the document is constructed, hashed or printed (``lsokl run`` hashed 387M strings at 3.8 GB). PyYAML has no
option for this, so :class:`UniqueKeyLoader` counts the document's size as if every alias were written out, on
the composed node graph (linear in the file), and raises :class:`AliasBombError` above
:data:`MAX_EXPANDED_NODES` nodes or :data:`MAX_EXPANDED_CHARS` characters of scalars, before constructing
anything. A recursive alias (a node that contains itself) is refused the same way.

PyYAML composes nested collections recursively, so a 10,000-deep ``[[[[...`` ends in a RecursionError
thousands of lines long; :class:`UniqueKeyLoader` counts the depth while composing and raises
:class:`TooDeepError` (one line, with the line number) past :data:`MAX_DEPTH` levels.
"""
from __future__ import annotations

import yaml


class DuplicateKeyError(yaml.YAMLError):
    def __init__(self, key, first_line: int, second_line: int):
        self.key, self.first_line, self.second_line = key, first_line, second_line
        super().__init__(f"key {key!r} appears twice in the same mapping, at lines {first_line} and "
                         f"{second_line}; remove or rename one (YAML would silently keep only the last)")


#: nodes a document may hold once its aliases are expanded (the largest shipped config has about 2,000)
MAX_EXPANDED_NODES = 200_000
#: characters of scalar text a document may hold once its aliases are expanded (20 MB)
MAX_EXPANDED_CHARS = 20_000_000


class AliasBombError(yaml.YAMLError):
    def __init__(self, what: str, line: int):
        self.line = line
        super().__init__(f"the anchors and aliases (&name / *name) near line {line} would expand to {what}; "
                         "write the values out, or use fewer nested aliases")


#: nesting levels a document may have (the shipped configs use at most 5)
MAX_DEPTH = 100


class TooDeepError(yaml.YAMLError):
    def __init__(self, line: int):
        self.line = line
        super().__init__(f"nested more than {MAX_DEPTH} levels deep at line {line}; a config needs a few levels")


def expanded_size(root) -> tuple[int, int]:
    """(nodes, scalar characters) of the document under ``root`` with every alias written out; raises
    :class:`AliasBombError` past the limits or on a recursive alias. Each distinct node is visited once."""
    memo: dict[int, tuple[int, int]] = {}
    active: set[int] = set()
    stack = [(root, False)]
    while stack:  # iterative post-order: deep nesting cannot hit Python's recursion limit
        node, done = stack.pop()
        key = id(node)
        if key in memo:
            continue
        if isinstance(node, yaml.ScalarNode):
            memo[key] = (1, len(node.value))
            continue
        children = ([n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode)
                    else list(node.value))
        if not done:
            if key in active:
                raise AliasBombError("an infinite document (an alias inside its own anchor)",
                                     node.start_mark.line + 1)
            active.add(key)
            stack.append((node, True))
            for child in children:
                if id(child) in active:
                    raise AliasBombError("an infinite document (an alias inside its own anchor)",
                                         child.start_mark.line + 1)
                if id(child) not in memo:
                    stack.append((child, False))
            continue
        active.discard(key)
        nodes = 1 + sum(memo[id(c)][0] for c in children)
        chars = sum(memo[id(c)][1] for c in children)
        if nodes > MAX_EXPANDED_NODES:
            raise AliasBombError(f"{nodes:,} nodes (at most {MAX_EXPANDED_NODES:,})", node.start_mark.line + 1)
        if chars > MAX_EXPANDED_CHARS:
            raise AliasBombError(f"{chars:,} characters (at most {MAX_EXPANDED_CHARS:,})",
                                 node.start_mark.line + 1)
        memo[key] = (nodes, chars)
    return memo[id(root)]


class UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader whose mappings may not repeat a key and whose aliases may not expand past the limits."""

    _depth = 0

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise TooDeepError(self.peek_event().start_mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self):
        node = super().compose_document()
        if node is not None:
            expanded_size(node)
        return node

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
