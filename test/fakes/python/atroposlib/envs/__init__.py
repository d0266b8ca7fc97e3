from .base import APIServerConfig, BaseEnv, BaseEnvConfig, EvalHandlingEnum, ScoredDataGroup, ServerBaseline

__all__ = ["APIServerConfig", "BaseEnv", "BaseEnvConfig", "EvalHandlingEnum", "ScoredDataGroup", "ServerBaseline"]
