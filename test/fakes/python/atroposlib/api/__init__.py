"""The Atropos API server (the real package exposes the FastAPI ``app`` here)."""
from .server import ApiState, build_routes

__all__ = ["ApiState", "build_routes"]
