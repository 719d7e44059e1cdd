"""The items of the four papers by id (:func:`items`, :func:`get`, :func:`select`)."""
from __future__ import annotations

from ..errors import UnknownNameError
from .declare import PAPERS, Item


def items() -> dict[str, Item]:
    """Every declared item, in paper order (the order of :data:`PAPERS`, then declaration order)."""
    from . import bpegasosm2010, dsg2014, lsokl2016, meka2017

    out: dict[str, Item] = {}
    for mod in (lsokl2016, bpegasosm2010, dsg2014, meka2017):
        for item in mod.ITEMS:
            if item.id in out:
                raise ValueError(f"item {item.id} declared twice")
            out[item.id] = item
    return out


def get(ident: str) -> Item:
    """An item by id; ``table9`` alone is read as ``lsokl2016:table9`` when unambiguous. A miss
    suggests the closest ids."""
    found = items()
    if ident in found:
        return found[ident]
    short = [i for i in found if i.split(":", 1)[1] == ident]
    if len(short) == 1:
        return found[short[0]]
    raise UnknownNameError("reproduction item", ident, list(found))


def select(idents: list[str]) -> list[Item]:
    """Items for ``lsokl reproduce ID...``: ids, or a paper name (``meka2017``) for all its runnable items
    except the long ones (:func:`is_long`: named one by one)."""
    out: list[Item] = []
    for ident in idents:
        if ident in PAPERS:
            out += [i for i in items().values() if i.paper == ident and i.runnable and not is_long(i)]
        else:
            out.append(get(ident))
    return _unique(out)


def is_long(item: Item) -> bool:
    """A long reproduction (``options: {"long": True}``, e.g. BPegasosM at the paper's 10M points): left out of a
    paper's items and of ``--all``; it runs when named."""
    return bool(item.options.get("long"))


def _unique(seq: list[Item]) -> list[Item]:
    seen, out = set(), []
    for item in seq:
        if item.id not in seen:
            seen.add(item.id)
            out.append(item)
    return out
