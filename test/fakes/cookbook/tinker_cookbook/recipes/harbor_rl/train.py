"""CLI entry point for Harbor RL training (tinker_cookbook/recipes/harbor_rl/train.py). Its tasks run
in Modal sandboxes: harbor_env imports ``modal`` (the ``[modal]`` extra) when it creates one, so a
plain install fails there with ModuleNotFoundError. Only the configuration is kept in the fake."""
import chz

from tinker_cookbook import model_info
from tinker_cookbook.recipes.harbor_rl.harbor_env import HarborTask, SandboxFactory, default_sandbox_factory
from tinker_cookbook.rl.train import main


@chz.chz
class CLIConfig:
    """Upstream's fields on the model, training and logging are left out: only the sandbox's own are kept."""

    model_name: str = "moonshotai/Kimi-K2.6"
    max_turns: int = 10
    sandbox_timeout: int = 3600
    command_timeout: int = 120
    grader_timeout: int = 60


async def cli_main(cli_config: CLIConfig, tasks: list[HarborTask], sandbox_factory: SandboxFactory | None = None) -> None:
    factory = sandbox_factory or default_sandbox_factory
    await factory(tasks[0].task_dir / "environment", 3600)
    del main, model_info
