"""Stand-in for the Hugging Face ``datasets.Dataset`` that real environments hand to verifiers (the
``datasets`` package is not installed in the tests' interpreter): rows of dicts with the parts of
its API that verifiers and the cookbook's verifiers_rl recipe use (``column_names``, ``len``,
``ds["column"]``, ``ds[i]``, ``select``, ``shuffle``, ``repeat``, ``map``, ``to_list``)."""
from __future__ import annotations

import random
from typing import Any, Callable, Iterable


class Dataset:
    def __init__(self, rows: Iterable[dict[str, Any]]):
        self._rows = [dict(row) for row in rows]

    @classmethod
    def from_list(cls, rows: list[dict[str, Any]]) -> "Dataset":
        return cls(rows)

    @property
    def column_names(self) -> list[str]:
        names: list[str] = []
        for row in self._rows:
            names += [key for key in row if key not in names]
        return names

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, key: str | int) -> Any:
        if isinstance(key, int):
            return dict(self._rows[key])
        return [row.get(key) for row in self._rows]

    def select(self, indices: Iterable[int]) -> "Dataset":
        return Dataset(self._rows[i] for i in indices)

    def shuffle(self, seed: int | None = None) -> "Dataset":
        rows = list(self._rows)
        random.Random(seed).shuffle(rows)
        return Dataset(rows)

    def repeat(self, times: int) -> "Dataset":
        """The whole dataset ``times`` times over, as ``datasets.Dataset.repeat`` does."""
        return Dataset(self._rows * times)

    def map(self, fn: Callable[[dict[str, Any]], dict[str, Any]], **_: Any) -> "Dataset":
        return Dataset({**row, **fn(dict(row))} for row in self._rows)

    def add_column(self, name: str, values: Iterable[Any]) -> "Dataset":
        return Dataset({**row, name: value} for row, value in zip(self._rows, values))

    def to_list(self) -> list[dict[str, Any]]:
        return [dict(row) for row in self._rows]
