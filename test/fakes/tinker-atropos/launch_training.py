"""Test fake of tinker-atropos' ``launch_training.py`` (shared/reference/tinker-atropos.md §1.3-1.5).

Same command line, same YAML, same stdout lines in the same order, the same inference server
endpoints, the same registration with the Atropos API and the same exit codes (including the
upstream quirks: an error inside a step still ends with "Training completed successfully!" and exit
0; a W&B failure kills the trainer). Nothing talks to Tinker: weights paths are invented, losses and
rewards are computed from the step number and the batch.

Behaviour for tests comes from ``fake_trainer.json`` in the working directory (all keys optional):
  step_seconds (float, 0.05)  time spent per step
  fail_at_start (bool)        "Error during training: simulated failure", exit 1, before registering
  error_in_step (int k)       "Error in step k: simulated error" + traceback, then the normal ending
  ignore_sigterm (bool)       SIGTERM is ignored (only SIGKILL stops it)
  spawn_grandchild (bool)     starts a sleeping child in the same process group, prints its pid
  hang_before_register (bool) sleeps forever just before registering
  exit_code (int)             exit code of a run that reaches the end (default 0)
  chat_answer (str)           what the inference server answers (default "The answer is #### 42")
It never prints TINKER_API_KEY.
"""
import argparse
import json
import os
import random
import signal
import string
import subprocess
import sys
import threading
import time
import traceback
import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional
from urllib.parse import urlsplit

import wandb
import yaml
from pydantic import BaseModel, Field

from atroposlib.utils.json_http import request_json, start_server
from atroposlib.utils.test_control import read_control_file

CONTROL_FILE = "fake_trainer.json"
DEFAULT_CHAT_ANSWER = "The answer is #### 42"


def generate_run_suffix() -> str:
    return "".join(random.choices(string.ascii_lowercase + string.digits, k=4))


class EnvConfig(BaseModel):
    group_size: int = 16
    batch_size: int = 128
    max_batches_offpolicy: int = 3
    tokenizer_name: str = "meta-llama/Llama-3.1-8B-Instruct"
    use_wandb: bool = True
    rollout_server_url: str = "http://localhost:8000"
    wandb_name: str = "atropos-tinker-env"
    ensure_scores_are_not_same: bool = False
    max_token_length: int = 256
    max_num_workers: int = 24
    total_steps: int = 50
    steps_per_eval: int = 100


class OpenAIServerConfig(BaseModel):
    model_name: str
    base_url: str
    api_key: str = "x"
    weight: float = 1.0
    num_requests_for_eval: int = 256


class TinkerConfig(BaseModel):
    lora_rank: int = 32
    learning_rate: float = 4e-5
    max_token_trainer_length: int = 2048
    checkpoint_dir: str = "./temp/"
    save_checkpoint_interval: int = 0
    wandb_project: str = "atropos-tinker"
    wandb_group: Optional[str] = None
    wandb_run_name: str = "atropos-tinker-run"
    wandb_run_suffix: str = Field(default_factory=generate_run_suffix)


class TinkerAtroposConfig(BaseModel):
    env: EnvConfig = Field(default_factory=EnvConfig)
    openai: List[OpenAIServerConfig] = Field(default_factory=lambda: [
        OpenAIServerConfig(model_name="meta-llama/Llama-3.1-8B-Instruct", base_url="http://localhost:8001/v1")
    ])
    tinker: TinkerConfig = Field(default_factory=TinkerConfig)
    slurm: bool = False
    testing: bool = False

    @classmethod
    def from_yaml(cls, path: str) -> "TinkerAtroposConfig":
        if not Path(path).exists():
            raise FileNotFoundError(f"Config file not found: {path}")
        with open(path) as f:
            return cls(**(yaml.safe_load(f) or {}))

    @property
    def base_model(self) -> str:
        return self.env.tokenizer_name

    @property
    def use_wandb(self) -> bool:
        return self.env.use_wandb

    @property
    def inference_api_url(self) -> str:
        url = self.openai[0].base_url.rstrip("/")
        return url[: -len("/v1")] if url.endswith("/v1") else url


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Launch Tinker-Atropos training with YAML configuration")
    parser.add_argument("--config", type=str, default=None, help="Path to YAML config file (e.g., configs/default.yaml)")
    parser.add_argument("--base-model", type=str, help="Override base model")
    parser.add_argument("--lora-rank", type=int, help="Override LoRA rank")
    parser.add_argument("--learning-rate", type=float, help="Override learning rate")
    parser.add_argument("--num-steps", type=int, help="Override number of training steps")
    parser.add_argument("--batch-size", type=int, help="Override batch size")
    parser.add_argument("--group-size", type=int, help="Override group size")
    parser.add_argument("--wandb-project", type=str, help="Override wandb project name")
    parser.add_argument("--wandb-group", type=str, help="Override wandb group name")
    parser.add_argument("--no-wandb", action="store_true", help="Disable wandb logging")
    return parser.parse_args()


def load_config(args: argparse.Namespace) -> TinkerAtroposConfig:
    if args.config:
        print(f"Loading config from: {args.config}")
        config = TinkerAtroposConfig.from_yaml(args.config)
    else:
        print("Using default configuration")
        config = TinkerAtroposConfig()
    overrides = {key: value for key, value in {
        "base_model": args.base_model, "lora_rank": args.lora_rank, "learning_rate": args.learning_rate,
        "num_steps": args.num_steps, "batch_size": args.batch_size, "group_size": args.group_size,
        "wandb_project": args.wandb_project, "wandb_group": args.wandb_group,
        "use_wandb": False if args.no_wandb else None,
    }.items() if value is not None}
    if overrides:
        print(f"Applying CLI overrides: {overrides}")
        # Upstream bug kept: flat keys are dropped by the nested model, so overrides change nothing.
        config = TinkerAtroposConfig(**{**config.model_dump(), **overrides})
    return config


def print_configuration(config: TinkerAtroposConfig) -> None:
    print("\n" + "=" * 80)
    print("Training Configuration:")
    print("=" * 80)
    print(f"Base Model: {config.base_model}")
    print(f"LoRA Rank: {config.tinker.lora_rank}")
    print(f"Learning Rate: {config.tinker.learning_rate}")
    print(f"Training Steps: {config.env.total_steps}")
    print(f"Batch Size: {config.env.batch_size}")
    print(f"Group Size: {config.env.group_size}")
    print(f"Max Token Length (Env): {config.env.max_token_length}")
    print(f"Max Token Length (Trainer): {config.tinker.max_token_trainer_length}")
    print(f"Max Workers: {config.env.max_num_workers}")
    print(f"Wandb Enabled: {config.use_wandb}")
    if config.use_wandb:
        print(f"  Project: {config.tinker.wandb_project}")
        print(f"  Group: {config.tinker.wandb_group or '(auto-generated)'}")
        print(f"  Run Name: {config.tinker.wandb_run_name}-{config.tinker.wandb_run_suffix}")
    print(f"Atropos API URL: {config.env.rollout_server_url}")
    print(f"Inference API URL: {config.inference_api_url}")
    print("=" * 80 + "\n")


class FakeTrainer:
    def __init__(self, config: TinkerAtroposConfig, control: Dict[str, Any]):
        self.config = config
        self.control = control
        self.model_id: Optional[str] = None
        self.sampling_path: Optional[str] = None  # None until the initial sampling client exists
        self.wandb_group: Optional[str] = None
        self.trainer_id: Optional[int] = None

    # --- inference server (trainer.py's FastAPI app) ------------------------------------------

    def routes(self):
        def health(_body):
            return 200, {"status": "ok", "trainer_initialized": True}

        def wandb_info(_body):
            return 200, {"group": self.wandb_group, "project": self.config.tinker.wandb_project}

        def completion_choices(body, kind: str):
            n = int((body or {}).get("n") or 1)
            answer = self.control.get("chat_answer", DEFAULT_CHAT_ANSWER)
            if kind == "chat":
                return [{"index": i, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"} for i in range(n)]
            return [{"index": i, "text": answer, "finish_reason": "stop"} for i in range(n)]

        def sampler(kind: str, failure: str):
            def handle(body):
                if self.sampling_path is None:
                    # Upstream: an AttributeError on the missing sampling client, reported as a 500.
                    return 500, {"detail": f"{failure}: 'NoneType' object has no attribute 'sample_async'"}
                return 200, {
                    "id": f"{'chatcmpl' if kind == 'chat' else 'cmpl'}-{random.randint(0, 999999)}",
                    "object": "chat.completion" if kind == "chat" else "text_completion",
                    "created": int(time.time()),
                    "model": self.config.base_model,
                    "choices": completion_choices(body, kind),
                }
            return handle

        return {
            ("GET", "/health"): health,
            ("GET", "/wandb_info"): wandb_info,
            ("POST", "/v1/chat/completions"): sampler("chat", "Chat completion failed"),
            ("POST", "/v1/completions"): sampler("text", "Completion failed"),
        }

    def start_inference_server(self, port: int) -> None:
        # Upstream binds 0.0.0.0 in a daemon thread; a busy port ends only that thread (the trainer
        # keeps going without an inference server).
        def serve():
            server = start_server(self.routes(), "0.0.0.0", port)
            if server is not None:
                server.serve_forever()

        threading.Thread(target=serve, daemon=True).start()

    # --- training ------------------------------------------------------------------------------

    def setup(self) -> None:
        print("Setting up Tinker-Atropos Trainer...")
        print(f"Creating ServiceClient for {self.config.base_model}...")
        if self.control.get("fail_at_start"):
            raise RuntimeError("simulated failure")
        if not os.environ.get("TINKER_API_KEY"):
            raise RuntimeError("TINKER_API_KEY is not set")
        print(f"Loaded tokenizer for {self.config.base_model}")
        print("Creating training client...")
        self.model_id = f"{uuid.uuid4()}:train:0"
        print("Training client created")
        print("Saving initial weights...")
        self.sampling_path = self.weights_path("step_0")
        print(f"Initial sampling client created: {self.sampling_path}")

        self.wandb_group = self.config.tinker.wandb_group or "".join(random.choices(string.ascii_lowercase + string.digits, k=8))
        if self.control.get("hang_before_register"):
            while True:
                time.sleep(3600)
        print("Registering with Atropos API...")
        response = request_json("POST", f"{self.config.env.rollout_server_url}/register", {
            "wandb_project": self.config.tinker.wandb_project,
            "wandb_group": self.wandb_group,
            "batch_size": self.config.env.batch_size,
            "max_token_len": self.config.tinker.max_token_trainer_length,
            "starting_step": 0,
            "checkpoint_dir": self.config.tinker.checkpoint_dir,
            "save_checkpoint_interval": self.config.tinker.save_checkpoint_interval,
            "num_steps": self.config.env.total_steps,
        })
        self.trainer_id = response.get("uuid")
        print(f"Registered as trainer: {self.trainer_id}")

        if self.config.use_wandb:
            try:
                run = wandb.init(
                    project=self.config.tinker.wandb_project,
                    name=f"{self.config.tinker.wandb_run_name}-trainer-{self.config.tinker.wandb_run_suffix}",
                    group=self.wandb_group,
                    tags=["trainer"],
                )
                print(f"Wandb initialized (trainer): {run.name} in group: {self.wandb_group}")
            except Exception as error:
                print(f"Error initializing wandb: {error}")
                # Upstream then assigns to the read-only `use_wandb` property, which raises.
                raise AttributeError("property 'use_wandb' of 'TinkerAtroposConfig' object has no setter") from None

    def weights_path(self, name: str) -> str:
        return f"tinker://{self.model_id}/sampler_weights/{name}"

    def train_step(self, step: int) -> float:
        total = self.config.env.total_steps
        print(f"\n{'=' * 60}")
        print(f"Step {step}/{total}")
        print("=" * 60)
        print("Fetching data from Atropos...")
        # Upstream polls /batch every second until the env has queued a full batch; the fake asks
        # once, so a run finishes whether or not an environment feeds it.
        batch = request_json("GET", f"{self.config.env.rollout_server_url}/batch", timeout=10).get("batch") or []
        if self.control.get("error_in_step") == step:
            raise RuntimeError("simulated error")
        if batch:
            Path("temp.json").write_text(json.dumps({"batch": batch}))
        print(f"Got {sum(len(group['tokens']) for group in batch)} Datum objects")
        print("Running forward-backward pass...")
        print("Running optimizer step...")
        loss = round(0.7 * 0.9 ** step, 6)
        print(f"Loss: {loss}")
        time.sleep(float(self.control.get("step_seconds", 0.05)))
        print("Saving checkpoint and updating sampling client...")
        self.sampling_path = self.weights_path(f"step_{step + 1}")
        print(f"Sampling client updated: {self.sampling_path}")
        group_means = [sum(g["scores"]) / len(g["scores"]) for g in batch if g.get("scores")]
        reward = sum(group_means) / len(group_means) if group_means else 0.25 + 0.5 * (step + 1) / max(total, 1)
        print(f"Reward/mean: {reward:.4f}")
        if self.config.use_wandb:
            wandb.log({"train/loss": loss, "train/learning_rate": self.config.tinker.learning_rate, "reward/mean": reward}, step=step + 1)
        return loss

    def run(self) -> None:
        print("\n" + "=" * 60)
        print("Starting Tinker-Atropos Training")
        print("=" * 60 + "\n")
        self.setup()
        for step in range(self.config.env.total_steps):
            try:
                loss = self.train_step(step)
                print(f"\nStep {step} complete - Loss: {loss}")
            except Exception as error:
                print(f"Error in step {step}: {error}")
                traceback.print_exc()
                break
        print("\n" + "=" * 60)
        print("Training complete!")
        print("=" * 60 + "\n")
        print(f"Final weights are available here: {self.weights_path('final')}")


def main() -> None:
    args = parse_args()
    control = read_control_file(CONTROL_FILE)
    if control.get("ignore_sigterm"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        config = load_config(args)
    except FileNotFoundError as error:
        print(f"Error: {error}")
        sys.exit(1)
    if control.get("spawn_grandchild"):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        print(f"grandchild pid: {child.pid}")

    print_configuration(config)
    print("Initializing Tinker-Atropos Trainer...")
    trainer = FakeTrainer(config, control)
    # Upstream hard-codes 8001; the fork (and this fake) take the port from openai[0].base_url.
    port = urlsplit(config.openai[0].base_url).port or 8001
    print(f"Starting FastAPI inference server on port {port}...")
    trainer.start_inference_server(port)
    print("Waiting for FastAPI server to start...")
    try:
        trainer.run()
        print("\n" + "=" * 80)
        print("Training completed successfully!")
        print("=" * 80)
    except Exception as error:
        print(f"\n\nError during training: {error}")
        traceback.print_exc()
        sys.exit(1)
    sys.exit(int(control.get("exit_code", 0)))


if __name__ == "__main__":
    main()
