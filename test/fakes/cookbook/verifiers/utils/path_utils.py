"""Where ``vf-eval`` saves (verifiers/utils/path_utils.py): ``./environments/<module>/outputs`` when
that environment folder exists in the working directory (``--env-dir-path``), else ``./outputs``;
then ``evals/<env_id>--<model with "/" as "--">/<first 8 characters of a uuid4>/``."""
import uuid
from pathlib import Path

from verifiers.types import EvalConfig


def get_results_path(env_id: str, model: str, base_path: Path = Path("./outputs")) -> Path:
    return base_path / "evals" / f"{env_id}--{model.replace('/', '--')}" / str(uuid.uuid4())[:8]


def get_eval_results_path(config: EvalConfig) -> Path:
    local_env_dir = Path(config.env_dir_path) / config.env_id.replace("-", "_")
    base_path = local_env_dir / "outputs" if local_env_dir.exists() else Path("./outputs")
    return get_results_path(config.env_id, config.model, base_path)
