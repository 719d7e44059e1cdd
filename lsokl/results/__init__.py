"""Results: one JSON record per finished cell, written atomically; resume reads them back."""
from .record import RECORD_KEYS, STATUSES, make_record, validate_record
from .store import ResultStore

__all__ = ["RECORD_KEYS", "STATUSES", "ResultStore", "make_record", "validate_record"]
