"""``vf.load_environment`` (verifiers/utils/env_utils.py): the environment id names a module
(``env_id.replace("-", "_").split("/")[-1]``, so "primeintellect/reverse-text" is ``reverse_text``),
which must be importable (``prime env install`` / ``vf-install`` put it in site-packages) and expose
``load_environment(**env_args)``. A module that does not import becomes ``ValueError: Could not
import '<env_id>' environment. Ensure the package for the '<env_id>' environment is installed.``;
any other failure ``RuntimeError: Failed to load environment '<env_id>': <error>``."""
import importlib
import inspect
import logging
from typing import Any


def load_environment(env_id: str, **env_args: Any) -> Any:
    logger = logging.getLogger("verifiers.utils.env_utils")
    logger.info(f"Loading environment: {env_id}")
    module_name = env_id.replace("-", "_").split("/")[-1]
    try:
        module = importlib.import_module(module_name)
        if not hasattr(module, "load_environment"):
            raise AttributeError(
                f"Module '{module_name}' does not have a 'load_environment' function. "
                f"This usually means there's a package name collision. Please either:\n"
                f"1. Rename your environment (e.g. suffix with '-env')\n"
                f"2. Remove unneeded files with the same name\n"
                f"3. Check that you've installed the correct environment package"
            )
        load = module.load_environment
        parameters = inspect.signature(load).parameters
        if env_args:
            logger.info(f"Using provided args: {', '.join(f'{k}={v}' for k, v in env_args.items())}")
        defaults = [f"{name}={p.default!r}" if isinstance(p.default, str) else f"{name}={p.default}"
                    for name, p in parameters.items() if name not in env_args and p.default is not p.empty]
        if defaults:
            logger.info(f"Using default args: {', '.join(defaults)}")
        env = load(**env_args)
        env.env_id = env.env_id or env_id
        env.env_args = env.env_args or env_args
        logger.info(f"Successfully loaded environment '{env_id}'")
        return env
    except ImportError as error:
        logger.error(f"Failed to import environment module {module_name} for env_id {env_id}: {error}")
        raise ValueError(
            f"Could not import '{env_id}' environment. Ensure the package for the '{env_id}' environment is installed."
        ) from error
    except Exception as error:
        logger.error(f"Failed to load environment {env_id} with args {env_args}: {error}")
        raise RuntimeError(f"Failed to load environment '{env_id}': {error}") from error
