"""How ``BaseEnv.cli()`` turns argv and ``--config X.yaml`` into the env and server configs: the
flag list per subcommand (pydantic-cli's model) and the real merge, CLI > YAML > ``config_init()``.

Quirk kept on purpose: the real CLI sets a default ``env.wandb_name`` from the class ``name`` on an
attribute the merge never reads, so it has no effect; it is simply not done here.
"""
from typing import Any, Dict, List, Tuple, Type

import yaml
from pydantic import BaseModel

from ..utils.cli import FlagSpec, extract_namespace, get_double_dash_flags, merge_dicts
from .server_handling.openai_server import resolve_openai_configs
from .server_handling.server_baseline import APIServerConfig, ServerBaseline
from .server_handling.server_manager import ServerManagerConfig

ENV_PREFIX = "env."
OPENAI_PREFIX = "openai."


def _model_flags(model: Type[BaseModel], prefix: str) -> List[FlagSpec]:
    flags = []
    for name, info in model.model_fields.items():
        default = "(required)" if info.is_required() else f"(default: {info.get_default(call_default_factory=True)!r})"
        flags.append(FlagSpec(prefix + name, f"{info.description or ''} {default}".strip()))
    return flags


def _process_openai_template(servers_default) -> APIServerConfig:
    """The server config ``process``/``evaluate`` merge onto (and whose type defines their flags)."""
    if isinstance(servers_default, list) and servers_default and isinstance(servers_default[0], APIServerConfig):
        return servers_default[0] if len(servers_default) == 1 else type(servers_default[0])()
    if isinstance(servers_default, APIServerConfig):
        return servers_default
    return APIServerConfig()


def command_flags(env_config_cls: Type[BaseModel], servers_default) -> Dict[str, List[FlagSpec]]:
    config = [FlagSpec("config", "Path to .yaml config file. CLI args override this.")]
    manager = _model_flags(ServerManagerConfig, "")
    env = _model_flags(env_config_cls, ENV_PREFIX)
    serve_openai = _model_flags(APIServerConfig, OPENAI_PREFIX)
    process_openai = _model_flags(type(_process_openai_template(servers_default)), OPENAI_PREFIX)
    return {
        "serve": env + serve_openai + manager + config,
        "process": env + process_openai + manager + config,
        "evaluate": env + process_openai + manager + config,
    }


def _single_server_yaml(yaml_openai: Any) -> Dict[str, Any]:
    if isinstance(yaml_openai, list) and len(yaml_openai) == 1:
        return yaml_openai[0]
    return yaml_openai if isinstance(yaml_openai, dict) else {}


def resolve_configs(command: str, env_default: BaseModel, servers_default, name: str) -> Tuple[BaseModel, Any, ServerManagerConfig]:
    """(env config, server configs, server manager config) for ``command``, as the real CLI builds them."""
    flags = get_double_dash_flags()
    yaml_config: Dict[str, Any] = {}
    if flags.get("config") is not None:
        with open(flags["config"], "r") as f:
            yaml_config = yaml.safe_load(f)

    env_base = env_default.model_dump()
    if command == "process":
        env_base["ensure_scores_are_not_same"] = False
        env_base["include_messages"] = True
        if env_base.get("data_path_to_save_groups") is None:
            env_base["data_path_to_save_groups"] = f"data/{name or 'groups'}.jsonl"
    if command in ("process", "evaluate"):
        env_base["use_wandb"] = True
    env_dict = merge_dicts(env_base, yaml_config.get("env", {}), extract_namespace(flags, ENV_PREFIX))

    openai_cli = extract_namespace(flags, OPENAI_PREFIX)
    yaml_openai = yaml_config.get("openai", {})
    if command == "serve":
        servers = servers_default
        if isinstance(servers, ServerBaseline) and not isinstance(servers, APIServerConfig) and (openai_cli or yaml_openai):
            servers = APIServerConfig(**servers.model_dump())
        template = servers[0] if isinstance(servers, list) and len(servers) == 1 else servers
        single_yaml = yaml_openai[0] if isinstance(yaml_openai, list) and len(yaml_openai) == 1 else yaml_openai
        if isinstance(template, APIServerConfig) and isinstance(single_yaml, dict):
            openai_dict = merge_dicts(template.model_dump(), single_yaml, openai_cli)
        else:
            openai_dict = {}
    else:
        servers = servers_default
        openai_dict = merge_dicts(_process_openai_template(servers_default).model_dump(), _single_server_yaml(yaml_openai), openai_cli)

    manager_dict = merge_dicts(
        ServerManagerConfig().model_dump(),
        {key: yaml_config[key] for key in ("slurm", "testing") if key in yaml_config},
        {key: flags[key] for key in ("slurm", "testing") if key in flags},
    )

    env_config = type(env_default)(**env_dict)
    manager_config = ServerManagerConfig(**manager_dict)
    server_configs = resolve_openai_configs(servers, openai_dict, yaml_config, flags)
    return env_config, server_configs, manager_config
