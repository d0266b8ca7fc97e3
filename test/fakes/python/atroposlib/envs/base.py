"""BaseEnvConfig (all 29 real fields and defaults) and BaseEnv, as in atroposlib/envs/base.py.

``BaseEnv.cli()`` runs ``serve``, ``process`` and ``evaluate`` with the real flag rules and merge
order (see cli_config.py) and speaks the real protocol to the Atropos API. Where the fake is
simpler or faster than the real class, the method says so.
"""
import asyncio
import json
from abc import ABC, abstractmethod
import logging
import random
import string
import sys
import time
import warnings
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from pydantic import BaseModel, Field

import wandb
import yaml

from ..frontend.jsonl2html import generate_html
from ..utils.cli import check_command_line
from ..utils.json_http import request_json
from ..utils.pretty import rprint
from ..utils.test_control import read_control_file
from ..utils.tokenizer import CharTokenizer
from .cli_config import command_flags, resolve_configs
from .server_handling.openai_server import CliUsageError
from .server_handling.server_baseline import APIServerConfig, ServerBaseline
from .server_handling.server_manager import ServerManager

__all__ = ["APIServerConfig", "BaseEnv", "BaseEnvConfig", "EvalHandlingEnum", "ScoredDataGroup", "ServerBaseline"]

logger = logging.getLogger(__name__)

# The real env sleeps 1 s between /wandb_info and /register-env polls and 5 s after registering;
# shorter here so tests do not wait on the fake.
POLL_SECONDS = 0.2
SETTLE_SECONDS = 0.2
MAIN_LOOP_SECONDS = 0.1
API_TIMEOUT_SECONDS = 30
API_ATTEMPTS = 3
# Test control for `serve`, read from the working directory: {"exit_after_register": true, "exit_code": 0}
CONTROL_FILE = "fake_env.json"


class EvalHandlingEnum(Enum):
    STOP_TRAIN = "STOP_TRAIN"
    LIMIT_TRAIN = "LIMIT_TRAIN"
    NONE = "NONE"


class BaseEnvConfig(BaseModel):
    group_size: int = Field(default=4, description="How many responses are grouped together for scoring")
    max_num_workers: int = Field(default=-1, description="Maximum number of workers to use, -1 calculates from max_num_workers_per_node")
    max_eval_workers: int = Field(default=16, description="Maximum number of workers to use for evaluation")
    max_num_workers_per_node: int = Field(default=8, description="Maximum number of workers to use per node")
    steps_per_eval: int = Field(default=100, description="Number of steps to take before evaluating")
    max_token_length: int = Field(default=2048, description="Maximum token length used in generations")
    eval_handling: EvalHandlingEnum = Field(default=EvalHandlingEnum.STOP_TRAIN, description="How to handle evaluations")
    eval_limit_ratio: float = Field(default=0.5, description="Ratio of training workers to limit during evals")
    inference_weight: float = Field(default=1.0, description="Inference weight, set to -1 to ignore it")
    batch_size: int = Field(default=-1, description="Batch size for training, will be set by the trainer and passed in via the fastapi interface")
    max_batches_offpolicy: int = Field(default=3, description="Maximum number of batches to have in queue")
    tokenizer_name: str = Field(default="NousResearch/DeepHermes-3-Llama-3-3B-Preview", description="Hugging Face tokenizer to use")
    use_wandb: bool = Field(default=True, description="Whether to use wandb")
    rollout_server_url: str = Field(default="http://localhost:8000", description="URL of the rollout server")
    total_steps: int = Field(default=1000, description="Total number of steps to run")
    wandb_name: Optional[str] = Field(default=None, description="Name to be grouped by in wandb")
    num_rollouts_to_keep: int = Field(default=32, description="Number of rollouts to display on wandb")
    num_rollouts_per_group_for_logging: int = Field(default=1, description="Number of rollouts per group to keep for logging, -1 keeps all")
    ensure_scores_are_not_same: bool = Field(default=True, description="Ensure that the scores are not the same")
    data_path_to_save_groups: Optional[str] = Field(default=None, description="Path to save the groups, if set, will write groups to this jsonl")
    data_dir_to_save_evals: Optional[str] = Field(default=None, description="Path to save evaluation results")
    min_items_sent_before_logging: int = Field(default=2, description="Minimum number of items sent to the API before logging metrics, <=0 logs always")
    include_messages: bool = Field(default=False, description="Whether to include messages in the output transmitted to the trainer")
    min_batch_allocation: Optional[float] = Field(default=None, description="Minimum proportion of a batch this environment should be allocated (0.0-1.0)")
    worker_timeout: float = Field(default=600, description="Timeout for a task in seconds, -1 for no timeout")
    thinking_mode: bool = Field(default=False, description="Whether to enable thinking mode")
    reasoning_effort: Optional[str] = Field(default=None, description="Reasoning effort: none, minimal, low, medium, high or xhigh")
    max_reasoning_tokens: Optional[int] = Field(default=None, ge=1024, le=32000, description="Maximum reasoning tokens")
    custom_thinking_prompt: Optional[str] = Field(default=None, description="Custom system prompt prepended in thinking mode")


class ScoredDataGroup(dict):
    """A group of scored rollouts: tokens, masks, scores (plus optional messages, logprobs...)."""


def _unique_path(path: str) -> str:
    """``foo.jsonl``, else ``foo_1.jsonl``, ``foo_2.jsonl``... as the real env picks its output file."""
    candidate, counter = Path(path), 1
    while candidate.exists():
        candidate = Path(path).with_stem(f"{Path(path).stem}_{counter}")
        counter += 1
    return str(candidate)


def _dump_evaluate_config(env_config, server_configs, manager) -> None:
    """``evaluate`` writes its resolved config to data_dir_to_save_evals/evaluate_config.yaml before it
    runs, every server config dumped whole: the api_key lands in that file, as upstream."""
    if env_config.data_dir_to_save_evals is None:
        return
    out_dir = Path(env_config.data_dir_to_save_evals)
    out_dir.mkdir(parents=True, exist_ok=True)
    if isinstance(server_configs, list):
        openai = [cfg.model_dump(mode="json") if hasattr(cfg, "model_dump") else cfg for cfg in server_configs]
    elif isinstance(server_configs, APIServerConfig):
        openai = server_configs.model_dump(mode="json")
    else:
        openai = {}
    config = {"env": env_config.model_dump(mode="json"), "openai": openai, "slurm": manager.slurm, "testing": manager.testing}
    (out_dir / "evaluate_config.yaml").write_text(yaml.dump(config, default_flow_style=False, sort_keys=False))


class BaseEnv(ABC):
    name: Optional[str] = None
    env_config_cls = BaseEnvConfig
    server_cls = APIServerConfig

    def __init__(self, config: BaseEnvConfig, server_configs: Union[ServerBaseline, List[APIServerConfig]], slurm: bool = False, testing: bool = False):
        self.config = config
        self.server_configs = server_configs
        self.slurm = slurm
        self.testing = testing
        self.server = ServerManager(server_configs, slurm=slurm, testing=testing)
        self.max_num_workers = config.max_num_workers
        if self.max_num_workers == -1:
            self.max_num_workers = config.max_num_workers_per_node * len(self.server.servers)
        # Real: transformers.AutoTokenizer.from_pretrained(config.tokenizer_name).
        self.tokenizer = CharTokenizer(config.tokenizer_name)
        self.curr_step = 0
        self.max_token_len = -1
        self.env_id: Optional[int] = None
        self.wandb_project: Optional[str] = None
        self.wandb_group: Optional[str] = None
        self.wandb_prepend: Optional[str] = None
        self.checkpoint_dir = ""
        self.checkpoint_interval = -1
        self.items_sent_this_step = 0
        self.completion_lengths: List[int] = []
        self.backlog: List[Any] = []
        self.status_dict: Dict[str, Any] = {}
        self.jsonl_writer = None
        if config.data_path_to_save_groups is not None:
            Path(config.data_path_to_save_groups).parent.mkdir(parents=True, exist_ok=True)
            config.data_path_to_save_groups = _unique_path(config.data_path_to_save_groups)
            self.jsonl_writer = open(config.data_path_to_save_groups, "w")

    @classmethod
    def config_init(cls) -> Tuple[BaseEnvConfig, Union[ServerBaseline, List[APIServerConfig]]]:
        return cls.env_config_cls(), ServerBaseline()

    async def setup(self) -> None:
        raise NotImplementedError

    async def get_next_item(self) -> Any:
        raise NotImplementedError

    async def collect_trajectories(self, item: Any):
        raise NotImplementedError

    async def postprocess_histories(self, trajectories):
        return trajectories

    @abstractmethod
    async def evaluate(self, *args, **kwargs):
        """Abstract, as upstream: a subclass without it cannot be instantiated in any subcommand
        (TypeError). Environments without a held-out set define one that returns None; the
        ``evaluate`` subcommand then exits 0 having written no metrics.json."""
        raise NotImplementedError

    async def cleanup(self):
        pass

    # --- checkpoints and logging -------------------------------------------------------------

    def save_checkpoint(self, step, data=None):
        if data is None:
            return
        path = Path(self.checkpoint_dir, "env_checkpoints", self.wandb_prepend or "env", f"step-{step}.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))

    async def wandb_log(self, wandb_metrics: Optional[Dict] = None):
        wandb_metrics = dict(wandb_metrics or {})
        if self.completion_lengths:
            wandb_metrics["train/completion_lengths"] = sum(self.completion_lengths) / len(self.completion_lengths)
            wandb_metrics["train/completion_lengths_max"] = max(self.completion_lengths)
            wandb_metrics["train/completion_lengths_min"] = min(self.completion_lengths)
        self.completion_lengths = []
        if self.config.use_wandb and wandb.run is not None:
            if self.wandb_prepend is not None:
                wandb_metrics = {f"{self.wandb_prepend}_{key}": value for key, value in wandb_metrics.items()}
            wandb.log(wandb_metrics, step=self.curr_step)

    async def evaluate_log(self, metrics: Dict, task_name: Optional[str] = None, model_name: Optional[str] = None,
                           start_time: Optional[float] = None, end_time: Optional[float] = None,
                           generation_parameters: Optional[Dict] = None, samples: Optional[List[Dict]] = None,
                           verbose: bool = True):
        """Writes ``metrics.json`` (lighteval-like) and ``samples.jsonl`` into data_dir_to_save_evals."""
        task_name = task_name or f"{self.name or type(self).__name__}_eval"
        if verbose:
            for key, value in metrics.items():
                print(f"{task_name} | {key}: {value}")
        if self.config.data_dir_to_save_evals is None:
            logger.warning("data_dir_to_save_evals is not set, skipping evaluation logging")
            return
        out_dir = Path(self.config.data_dir_to_save_evals)
        out_dir.mkdir(parents=True, exist_ok=True)
        start_time = start_time or time.time()
        end_time = end_time or time.time()
        result = {
            "config_general": {
                "model_name": model_name or self.server.servers[0].config.model_name,
                "total_evaluation_time_seconds": str(end_time - start_time),
                "generation_parameters": {"max_new_tokens": self.config.max_token_length, **(generation_parameters or {})},
            },
            "results": {f"atropos|{task_name}|0": metrics, "all": metrics},
        }
        (out_dir / "metrics.json").write_text(json.dumps(result, indent=2))
        if samples:
            (out_dir / "samples.jsonl").write_text("".join(json.dumps(sample) + "\n" for sample in samples))

    # --- scored groups -----------------------------------------------------------------------

    async def handle_send_to_api(self, scored_data, item: Any = None, do_send_to_api: bool = True,
                                 abort_on_any_max_length_exceeded: bool = True):
        """Validates groups, fills the defaults, writes them to the JSONL and/or posts them."""
        was_list = isinstance(scored_data, list)
        valid = []
        for group in scored_data if was_list else [scored_data]:
            if group is None:
                continue
            group_size = (group.get("group_overrides") or {}).get("group_size", self.config.group_size)
            if None in group or len(group.get("tokens", [])) != group_size:
                logger.warning(
                    f"Group structure invalid, or token count mismatch (expected {group_size}), "
                    f"or 'tokens' key missing. Skipping group: {str(group)[:200]}..."
                )
                continue
            if self.config.ensure_scores_are_not_same and len(set(group["scores"])) == 1:
                logger.warning("Scores are the same in a group, skipping...")
                continue
            for key in ("ref_logprobs", "overrides", "group_overrides", "distill_token_ids", "distill_logprobs"):
                group.setdefault(key, None)
            for mask in group["masks"]:
                self.completion_lengths.append(sum(m != -100 for m in mask))
            if self.max_token_len <= 0:
                warnings.warn(
                    f"Trainer requested to ignore max length by setting max_token_len to {self.max_token_len}, "
                    "ensure your trainer handles this appropriately."
                )
            elif abort_on_any_max_length_exceeded and any(len(tokens) >= self.max_token_len for tokens in group["tokens"]):
                logger.warning("Token length is too long in a group, skipping...")
                continue
            if self.config.include_messages and group.get("messages") is None:
                group["messages"] = [[{"role": "user", "content": self.tokenizer.decode(tokens)}] for tokens in group["tokens"]]
            if self.jsonl_writer is not None:
                # Like jsonlines: buffered, complete only once the file is closed at the end.
                self.jsonl_writer.write(json.dumps(group) + "\n")
            valid.append(group)

        if valid and do_send_to_api:
            payload = valid if (was_list or len(valid) > 1) else valid[0]
            self.items_sent_this_step += len(valid)
            try:
                await self._send_scored_data_to_api(payload)
            except Exception as error:
                logger.error("Failed to send %s after retries: %s", f"{len(valid)} ScoredDataGroups", error)

    async def _send_scored_data_to_api(self, scored_data):
        # Real: gzip-compressed when >= 1 KB; sent plain here (the fake API accepts both).
        for group in scored_data if isinstance(scored_data, list) else [scored_data]:
            group["env_id"] = self.env_id
        path = "/scored_data_list" if isinstance(scored_data, list) else "/scored_data"
        await self._api_with_retries("POST", path, scored_data)

    # --- Atropos API -------------------------------------------------------------------------

    async def _api(self, method: str, path: str, body: Any = None) -> Any:
        return await asyncio.to_thread(request_json, method, f"{self.config.rollout_server_url}{path}", body, API_TIMEOUT_SECONDS)

    async def _api_with_retries(self, method: str, path: str, body: Any = None) -> Any:
        # Real: tenacity, 3 attempts with random exponential waits up to 10 s.
        for attempt in range(API_ATTEMPTS):
            try:
                return await self._api(method, path, body)
            except Exception:
                if attempt == API_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(POLL_SECONDS)

    async def setup_wandb(self):
        if not self.config.use_wandb:
            return
        # No retry on connection errors: the API must already be up.
        while self.wandb_project is None:
            data = await self._api("GET", "/wandb_info")
            self.wandb_group, self.wandb_project = data["group"], data["project"]
            if self.wandb_project is None:
                await asyncio.sleep(POLL_SECONDS)
        run_name = None
        if self.config.wandb_name:
            suffix = "".join(random.choices(string.ascii_lowercase, k=6))
            run_name = f"{self.config.wandb_name}-{datetime.now().strftime('%Y-%m-%d')}-{suffix}"
        wandb.init(name=run_name, project=self.wandb_project, group=self.wandb_group, config=self.config.model_dump(mode="json"))

    async def register_env(self):
        while True:
            data = await self._api_with_retries("POST", "/register-env", {
                "max_token_length": self.config.max_token_length,
                "desired_name": self.config.wandb_name,
                "weight": self.config.inference_weight,
                "min_batch_allocation": self.config.min_batch_allocation,
                "group_size": self.config.group_size,
            })
            if data.get("status") != "success":
                logging.warning(f"Waiting to register the env due to status {data.get('status')}")
                await asyncio.sleep(POLL_SECONDS)
                continue
            self.env_id = data["env_id"]
            self.wandb_prepend = data["wandb_name"]
            self.curr_step = data["starting_step"]
            self.checkpoint_dir = data["checkpoint_dir"]
            self.checkpoint_interval = data["checkpoint_interval"]
            if self.config.total_steps == -1:
                self.config.total_steps = data["num_steps"]
                if self.config.total_steps == -1:
                    raise ValueError("Total steps not set in config or server!")
            return

    async def get_server_info(self):
        data = await self._api("GET", "/info")
        if data["batch_size"] != -1:
            self.config.batch_size = data["batch_size"]
        if data["max_token_len"] != -1:
            self.max_token_len = data["max_token_len"]
        if self.config.batch_size == -1:
            logging.warning("Batch size not set by config or server!")
        if self.config.group_size > self.config.batch_size:
            raise ValueError(f"group_size ({self.config.group_size}) must be less than batch_size ({self.config.batch_size})")

    async def get_status(self):
        # GET with a JSON body, as the real env does.
        self.status_dict = await self._api_with_retries("GET", "/status-env", {"env_id": self.env_id})

    async def env_step_checks(self):
        current = self.status_dict["current_step"]
        if self.curr_step == current:
            return
        if self.config.steps_per_eval > 0 and (self.curr_step % self.config.steps_per_eval) > (current % self.config.steps_per_eval):
            # Real: a background task that pauses training workers; run inline here.
            await self.evaluate()
        if self.checkpoint_interval > 0 and (self.curr_step % self.checkpoint_interval) > (current % self.checkpoint_interval):
            self.save_checkpoint((current // self.checkpoint_interval) * self.checkpoint_interval)
        self.curr_step = current
        if self.items_sent_this_step >= self.config.min_items_sent_before_logging:
            self.items_sent_this_step = 0
            await self.wandb_log({})

    async def handle_env(self, item: Any):
        try:
            to_postprocess, to_backlog = await self.collect_trajectories(item)
        except Exception as error:
            logging.error(f"Error in collect_trajectories: {error}")
            to_postprocess, to_backlog = None, []
        self.backlog.extend(to_backlog or [])
        if to_postprocess:
            to_postprocess = await self.postprocess_histories(to_postprocess)
            await self.handle_send_to_api(to_postprocess, item)
        else:
            # As upstream: a group score() dropped (None) is said only at DEBUG, which nothing shows
            # (atroposlib configures no logging), so a starved serve can leave its log empty.
            logger.debug("handle_env: No trajectories collected")
        await self.cleanup()

    async def env_manager(self):
        """``serve``: rollouts run as concurrent workers, as many as fit in the queue (at most
        max_num_workers); a full queue cancels them and puts their items back in the backlog."""
        control = read_control_file(CONTROL_FILE)
        await self.setup()
        await self.setup_wandb()
        await self.register_env()
        if control.get("exit_after_register"):
            sys.exit(int(control.get("exit_code", 0)))
        await self.get_server_info()
        await asyncio.sleep(SETTLE_SECONDS)
        running: Dict[asyncio.Task, Any] = {}
        while True:
            await self.get_status()
            await self.env_step_checks()
            queue_size = self.status_dict["queue_size"]
            if self.status_dict["current_step"] + queue_size * self.config.group_size // self.config.batch_size > self.config.total_steps:
                for worker in running:
                    worker.cancel()
                break
            queue_full = (
                self.config.max_batches_offpolicy > 0
                and queue_size * self.config.group_size >= self.config.max_batches_offpolicy * self.config.batch_size
            )
            if queue_full or self.config.batch_size == -1:
                self.backlog.extend(running.values())
                for worker in running:
                    worker.cancel()
                running.clear()
            else:
                room = self.config.max_batches_offpolicy * self.config.batch_size // self.config.group_size - queue_size
                while len(running) < min(self.max_num_workers, room):
                    item = self.backlog.pop() if self.backlog else await self.get_next_item()
                    if item is None:
                        break
                    worker = asyncio.create_task(self.handle_env(item))
                    running[worker] = item
                    worker.add_done_callback(lambda done: running.pop(done, None))
            await asyncio.sleep(MAIN_LOOP_SECONDS)

    async def process_manager(self):
        """``process``: ``total_steps`` groups into the JSONL, no Atropos API involved."""
        await self.setup()
        if self.config.use_wandb:
            suffix = "".join(random.choices(string.ascii_lowercase, k=6))
            wandb.init(project=self.wandb_project, name=f"{self.name}-{datetime.now().strftime('%Y-%m-%d')}-{suffix}",
                       group=self.wandb_group, config=self.config.model_dump(mode="json"))
        self.curr_step = 0
        while self.curr_step < self.n_groups_to_process:
            item = await self.get_next_item()
            if item is None:
                break
            # Real: these progress lines are logged at INFO, which atroposlib never makes visible.
            print(f"Processing group {self.curr_step + 1}/{self.n_groups_to_process}", flush=True)
            self.config.group_size = self.group_size_to_process
            # Unlike serve, an exception here is not caught: it ends the process (exit 1).
            to_postprocess, _ = await self.collect_trajectories(item)
            if to_postprocess:
                processed = await self.postprocess_histories(to_postprocess)
                await self.handle_send_to_api(processed, item, do_send_to_api=False, abort_on_any_max_length_exceeded=False)
                await self.wandb_log()
                self.curr_step += 1
                print(f"Successfully processed group {self.curr_step}/{self.n_groups_to_process}", flush=True)
            else:
                # No limit on retries, as in atroposlib: whoever runs `process` needs a timeout.
                logger.warning("Failed to process group, retrying...")
        if self.jsonl_writer is not None:
            self.jsonl_writer.close()
        generate_html(self.config.data_path_to_save_groups)

    # --- command line ------------------------------------------------------------------------

    @classmethod
    def cli(cls):
        """``python env.py {serve|process|evaluate} [--config X.yaml] [--env.<field> V] [--openai.<field> V]
        [--slurm V] [--testing V]``; exit 0 on success, 2 on a usage error, 1 on any exception."""
        # Real: config_init() runs once per subcommand before argv is parsed; once is enough here.
        env_default, servers_default = cls.config_init()
        command = check_command_line(f"CLI for {cls.__name__}", command_flags(type(env_default), servers_default))
        try:
            env_config, server_configs, manager = resolve_configs(command, env_default, servers_default, cls.name)
        except CliUsageError as error:
            sys.stderr.write(f"{error}\n")
            sys.exit(2)

        if command == "serve":
            env = cls(config=env_config, server_configs=server_configs, slurm=manager.slurm, testing=manager.testing)
            rprint(env_config)
            rprint(server_configs)
            asyncio.run(env.env_manager())
        else:
            rprint(env_config)
            rprint(server_configs)
            env = cls(config=env_config, server_configs=server_configs, slurm=manager.slurm, testing=manager.testing)
            if command == "process":
                env.process_mode = True
                env.n_groups_to_process = env_config.total_steps
                env.group_size_to_process = env_config.group_size
                asyncio.run(env.process_manager())
            else:
                _dump_evaluate_config(env_config, server_configs, manager)
                asyncio.run(env._run_evaluate())
        sys.exit(0)

    async def _run_evaluate(self):
        await self.setup()
        await self.evaluate()
