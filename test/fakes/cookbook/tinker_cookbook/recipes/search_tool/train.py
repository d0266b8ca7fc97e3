"""Search-R1 style RL with a retrieval tool (tinker_cookbook/recipes/search_tool/train.py). Its
environment reads its data with pandas and searches a Chroma index embedded by Gemini (chromadb and
google-genai: the ``[vector-search]`` extra); a plain install fails on the import. Only the
configuration is kept in the fake."""
import asyncio

import chz

from tinker_cookbook import cli_utils, model_info
from tinker_cookbook.recipes.search_tool.search_env import SearchR1DatasetBuilder
from tinker_cookbook.recipes.search_tool.tools import RetrievalConfig
from tinker_cookbook.rl import train


@chz.chz
class CLIConfig:
    """Upstream's fields on the model, training and logging are left out: only the search's own are kept."""

    model_name: str = "Qwen/Qwen3.5-4B"
    max_turns: int = 5
    chroma_host: str = "localhost"
    chroma_port: int = 8000
    n_results: int = 3
    embedding_model_name: str = "gemini-embedding-001"


async def cli_main(cli_config: CLIConfig) -> None:
    del SearchR1DatasetBuilder, RetrievalConfig, train, model_info


if __name__ == "__main__":
    asyncio.run(cli_main(chz.entrypoint(CLIConfig)))
