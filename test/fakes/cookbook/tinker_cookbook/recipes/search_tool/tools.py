"""The retrieval tool (tinker_cookbook/recipes/search_tool/tools.py): a Chroma index queried with Gemini embeddings."""
from __future__ import annotations

from dataclasses import dataclass

import chromadb
import google.genai as genai
from chromadb.api import AsyncClientAPI


@dataclass
class RetrievalConfig:
    n_results: int = 3
    client: AsyncClientAPI | None = None
    embedder: genai.Client | None = None
    chroma: type = chromadb.AsyncHttpClient
