"""`benchmarks/pinned.py`: children side by side, a core each, the cores
rotated from round to round."""
from benchmarks import pinned


class _Child:
    def __init__(self, item, core, log):
        self.item, self.core, self.log = item, core, log
        log.append(("start", item, core))

    def communicate(self):
        self.log.append(("end", self.item))
        return f"{self.item}@{self.core}", None

    @property
    def returncode(self):
        return 1 if self.item == "bad" else 0


def test_batches_end_before_the_next_starts_and_cores_rotate():
    log = []
    start = lambda item, core: _Child(item, core, log)   # noqa: E731
    rows = list(pinned.side_by_side(["a", "b", "bad"], start, 1, [4, 7], 2))
    assert rows == [("a", 7, 0, "a@7"), ("b", 4, 0, "b@4"),
                    ("bad", 7, 1, "bad@7")]
    assert log == [("start", "a", 7), ("start", "b", 4), ("end", "a"),
                   ("end", "b"), ("start", "bad", 7), ("end", "bad")]


def test_all_at_once_on_fewer_cores_share_them():
    rows = list(pinned.side_by_side(
        range(3), lambda k, core: _Child(k, core, []), 0, [0, 1], 3))
    assert [(k, core) for k, core, _, _ in rows] == [(0, 0), (1, 1), (2, 0)]
