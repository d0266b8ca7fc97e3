"""The Search-R1 dataset (tinker_cookbook/recipes/search_tool/search_env.py): parquet files read with pandas."""
from __future__ import annotations

import pandas as pd

from tinker_cookbook.recipes.search_tool.tools import RetrievalConfig


class SearchR1DatasetBuilder:
    def __init__(self, path: str, retrieval: RetrievalConfig) -> None:
        self.frame = pd.read_parquet(path)
