"""Test fake of tinker-atropos' ``launch_training.py`` and ``tinker_atropos/trainer.py``
(NousResearch/tinker-atropos).

Same command line, same YAML (read with ``tinker_atropos.config``, importable because this script's
folder, the checkout, is on sys.path), same stdout lines in the same order, the same inference
server endpoints (``/generate`` included), the same registration with the Atropos API and the same
exit codes, upstream quirks included:
- each step waits for its batch, polling ``GET /batch`` with no timeout (TA trainer.py get_data);
- an error inside a step still ends with "Training completed successfully!" and exit 0;
- a group without ``inference_logprobs`` (an environment that does not use managed_server) fails
  the step with "'NoneType' object is not subscriptable" (TA trainer.py:242);
- a failing ``wandb.init`` prints "Error initializing wandb: ..." and then kills the trainer with an
  AttributeError, assigning the read-only ``use_wandb`` (TA trainer.py:100-102);
- a key that starts with neither ``tml-`` nor ``eyJ`` is refused by the SDK when the training
  client is made: "Error during training: The api_key must start with the 'tml-' prefix", exit 1, after start-up;
- groups whose scores are all equal are skipped ("Skipped N groups with zero advantages"); a batch
  of nothing else trains nothing: "Got 0 Datum objects", "Loss: 0.0" (TA trainer.py:363, :405).
Tinker is the fake SDK (test/fakes/python/tinker), called as upstream calls it: a ServiceClient, a
LoRA training client on ``env.tokenizer_name`` (a base model the service does not serve fails the
start with its 400), and ``save_weights_for_sampler("step_0")`` at setup and ``"step_{k+1}"`` after
each step, so every printed checkpoint exists in the fake service with its size. The training itself
is not sent: losses are computed from the step number, rewards from the batch, and sampling answers
with a fixed text.

Behaviour for tests comes from ``fake_trainer.json`` in the working directory (all keys optional):
  step_seconds (float, 0.05)  time spent per step
  fail_at_start (bool)        "Error during training: simulated failure", exit 1, before registering
  error_in_step (int k)       "Error in step k: simulated error" + traceback, then the normal ending
  ignore_sigterm (bool)       SIGTERM is ignored (only SIGKILL stops it)
  spawn_grandchild (bool)     starts a sleeping child in the same process group, prints its pid
  hang_before_register (bool) sleeps forever just before registering
  exit_code (int)             exit code of a run that reaches the end (default 0)
  chat_answer (str)           what sampling answers (default "The answer is #### 42")
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
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import tinker
import wandb

from atroposlib.utils.json_http import request_json
from atroposlib.utils.test_control import read_control_file
from atroposlib.utils.tokenizer import CharTokenizer
from tinker_atropos.config import TinkerAtroposConfig
import tinker_atropos.trainer as trainer_module

CONTROL_FILE = "fake_trainer.json"
DEFAULT_CHAT_ANSWER = "The answer is #### 42"
# Upstream sleeps 1 s between empty GET /batch answers; shorter so tests do not wait on the fake.
BATCH_POLL_SECONDS = 0.2


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


def generated_logprob(token_id: int) -> float:
    # Stable, plausible per-token values: the same completion always yields the same logprobs.
    return -round(0.05 + (token_id % 17) / 20, 4)


class FakeTrainer:
    def __init__(self, config: TinkerAtroposConfig, control: Dict[str, Any]):
        self.config = config
        self.control = control
        # Stands in for AutoTokenizer.from_pretrained(base_model): the environments' stand-in, so
        # token ids mean the same on both sides.
        self.tokenizer = CharTokenizer(config.base_model)
        self.model_id: Optional[str] = None
        self.training_client: Optional[tinker.TrainingClient] = None
        self.sampling_path: Optional[str] = None  # None until the initial sampling client exists
        self.wandb_group: Optional[str] = None
        self.trainer_id: Optional[int] = None

    # --- inference server (trainer.py's FastAPI app) ------------------------------------------

    def answer(self) -> str:
        return self.control.get("chat_answer", DEFAULT_CHAT_ANSWER)

    def sampled_tokens(self, max_tokens: int) -> List[int]:
        return (self.tokenizer.encode(self.answer(), add_special_tokens=False) + [self.tokenizer.eos_token_id])[:max_tokens]

    def routes(self):
        def health(_body):
            return 200, {"status": "ok", "trainer_initialized": True}

        def wandb_info(_body):
            return 200, {"group": self.wandb_group, "project": self.config.tinker.wandb_project}

        def completion_choices(body, kind: str):
            n = int((body or {}).get("n") or 1)
            answer = self.answer()
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

        def generate(body):
            """ManagedServer's token path: input_ids in; per sample the text and (logprob, id, text) triples."""
            body = body or {}
            if body.get("input_ids") is None:
                # Upstream raises an HTTPException inside its own try, which turns it into a 500.
                return 500, {"detail": "Generation failed: 400: input_ids is required"}
            if self.sampling_path is None:
                return 500, {"detail": "Generation failed: 'NoneType' object has no attribute 'sample_async'"}
            params = body.get("sampling_params") or {}
            samples = []
            for _ in range(int(params.get("n", 1))):
                tokens = self.sampled_tokens(int(params.get("max_new_tokens", 256)))
                samples.append({
                    "text": self.tokenizer.decode(tokens, skip_special_tokens=True),
                    "meta_info": {
                        "prompt_tokens": len(body["input_ids"]),
                        "completion_tokens": len(tokens),
                        "finish_reason": "stop",
                        "output_token_logprobs": [[generated_logprob(t), t, self.tokenizer.decode([t])] for t in tokens],
                    },
                })
            return 200, samples[0] if len(samples) == 1 else samples

        return {
            ("GET", "/health"): health,
            ("GET", "/wandb_info"): wandb_info,
            ("POST", "/v1/chat/completions"): sampler("chat", "Chat completion failed"),
            ("POST", "/v1/completions"): sampler("text", "Completion failed"),
            ("POST", "/generate"): generate,
        }

    # --- training ------------------------------------------------------------------------------

    def setup(self) -> None:
        print("Setting up Tinker-Atropos Trainer...")
        print(f"Creating ServiceClient for {self.config.base_model}...")
        if self.control.get("fail_at_start"):
            raise RuntimeError("simulated failure")
        if not os.environ.get("TINKER_API_KEY"):
            raise RuntimeError("TINKER_API_KEY is not set")
        service_client = tinker.ServiceClient()
        print(f"Loaded tokenizer for {self.config.base_model}")
        print("Creating training client...")
        self.training_client = service_client.create_lora_training_client(base_model=self.config.base_model, rank=self.config.tinker.lora_rank)
        self.model_id = self.training_client.model_id
        print("Training client created")
        print("Saving initial weights...")
        self.sampling_path = self.save_for_sampler("step_0")
        print(f"Initial sampling client created: {self.sampling_path}")

        self.wandb_group = self.config.tinker.wandb_group or "".join(random.choices(string.ascii_lowercase + string.digits, k=8))
        if self.control.get("hang_before_register"):
            while True:
                time.sleep(3600)
        print("Registering with Atropos API...")
        response = request_json("POST", f"{self.config.env.rollout_server_url}/register", {
            "wandb_project": self.config.tinker.wandb_project,
            "wandb_group": self.wandb_group,
            "batch_size": self.config.batch_size,
            "max_token_len": self.config.tinker.max_token_trainer_length,
            "starting_step": 0,
            "checkpoint_dir": self.config.tinker.checkpoint_dir,
            "save_checkpoint_interval": self.config.tinker.save_checkpoint_interval,
            "num_steps": self.config.num_steps,
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
                # As upstream: use_wandb is a read-only property, so this raises AttributeError.
                self.config.use_wandb = False

    def weights_path(self, name: str) -> str:
        return f"tinker://{self.model_id}/sampler_weights/{name}"

    def save_for_sampler(self, name: str) -> str:
        return self.training_client.save_weights_for_sampler(name=name).result().path

    def get_data(self) -> Tuple[int, List[float]]:
        """Waits for a batch as long as it takes, then (datum count, mean score per group)."""
        while True:
            data = request_json("GET", f"{self.config.env.rollout_server_url}/batch", timeout=10)
            if data.get("batch") is not None:
                Path("temp.json").write_text(json.dumps(data))
                return self.count_datums(data["batch"])
            time.sleep(BATCH_POLL_SECONDS)

    @staticmethod
    def count_datums(batch: List[Dict[str, Any]]) -> Tuple[int, List[float]]:
        """One datum per sequence of a group whose advantages are not all zero (TA trainer.py
        pad_data_to_good_offset), reading each sequence's inference logprobs as upstream does."""
        datums, skipped, group_means = 0, 0, []
        for group in batch:
            scores = group["scores"]
            mean = sum(scores) / len(scores)
            group_means.append(mean)
            if len(scores) > 1 and all(score == mean for score in scores):
                skipped += 1
                continue
            for i, tokens in enumerate(group["tokens"]):
                logprobs = group["inference_logprobs"][i]
                assert len(logprobs) == len(tokens), f"Length mismatch: tokens={len(tokens)}, logprobs={len(logprobs)}"
                datums += 1
        if skipped:
            print(f"Skipped {skipped} groups with zero advantages")
        return datums, group_means

    def train_step(self, step: int) -> float:
        print(f"\n{'=' * 60}")
        print(f"Step {step}/{self.config.num_steps}")
        print("=" * 60)
        print("Fetching data from Atropos...")
        datums, group_means = self.get_data()
        if self.control.get("error_in_step") == step:
            raise RuntimeError("simulated error")
        print(f"Got {datums} Datum objects")
        print("Running forward-backward pass...")
        print("Running optimizer step...")
        # A batch of equal-score groups trains nothing: upstream's loss is then 0.0.
        loss = round(0.7 * 0.9 ** step, 6) if datums else 0.0
        print(f"Loss: {loss}")
        time.sleep(float(self.control.get("step_seconds", 0.05)))
        print("Saving checkpoint and updating sampling client...")
        self.sampling_path = self.save_for_sampler(f"step_{step + 1}")
        print(f"Sampling client updated: {self.sampling_path}")
        metrics = {"train/loss": loss, "train/learning_rate": self.config.tinker.learning_rate}
        if group_means:
            metrics["reward/mean"] = sum(group_means) / len(group_means)
            print(f"Reward/mean: {metrics['reward/mean']:.4f}")
        if self.config.use_wandb:
            wandb.log(metrics, step=step + 1)
        return loss

    def run(self) -> None:
        print("\n" + "=" * 60)
        print("Starting Tinker-Atropos Training")
        print("=" * 60 + "\n")
        self.setup()
        for step in range(self.config.num_steps):
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
    trainer_module.trainer = trainer
    # As upstream: imported here, so a wrapper that replaced it (or uvicorn.run) before is used.
    from tinker_atropos.trainer import run_fastapi_server

    # Upstream's server runs in a daemon thread; a busy port ends only that thread (the trainer
    # keeps going without an inference server).
    print("Starting FastAPI inference server on port 8001...")
    threading.Thread(target=run_fastapi_server, daemon=True).start()
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
