"""Checks one environment before any model is paid for, run by the server as its own process.

Usage: check_environment.py < request.json
  {"framework": "atropos"|"cookbook"|"verifiers", "file_path", "class_name"?, "recipe"?, "vf_env_id"?,
   "root", "values": {field: value}, "items": N}

It drives the environment through its own code, as a run would: Atropos `config_init()`, `setup()`,
`get_next_item()` and `collect_trajectories()`; a cookbook recipe's `cli_main()` up to the training
config it hands to `rl.train.main` (caught there), its dataset builder, `make_envs()`,
`initial_observation()` and `step()`; a verifiers environment's `load_environment()`, dataset and
`generate()`, whose rubric scores. The model is a stand-in served here on 127.0.0.1 (a free port,
gone when this process ends) that answers with the completions each probe chooses: empty, garbage,
and the item's reference answer where the item carries one the scoring reads. Nothing here
judges: the server turns these observations into a verdict (src/runtime/readiness/).

Output (stdout, one JSON object): {"framework", "steps": {import, config, data, prompts}: {ok, error?},
 "items_count"?, "items_note"?, "sample"?, "max_token_length"?, "group_size"?,
 "prompt_tokens": [n per item], "prompt_tokens_counted_by",
 "items": [{"index", "reference"?, "probes": [{"kind", "completion", "scores"?, "dropped"?, "error"?}]}],
 "unchecked": [what could not be checked, and why], "stand_in": {"url", "requests"}}
Scores are numbers, null for None, or "NaN"/"inf"/"<type>" for what is not a finite number.
Anything the environment prints goes to stderr so stdout stays one JSON document.
"""
import asyncio
import functools
import importlib
import importlib.util
import json
import logging
import math
import os
import shutil
import sys
import tempfile
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_TEXT = 400
CALL_TIMEOUT_SECONDS = 20
# A completion no grader should reward: no digits, no tags, no words of a task.
GARBAGE = "zzq qxv ~~ ?? wubba lubba"
REFERENCE_KEYS = ("answer", "gold_answer", "gold", "ground_truth", "reference", "reference_answer", "target", "solution", "expected", "label")
PROBE_GROUP = 4


def last_line(err):
    lines = [l.strip() for l in traceback.format_exception_only(type(err), err) if l.strip()]
    return (lines[-1] if lines else type(err).__name__)[:MAX_TEXT]


def where(err):
    """The innermost frame of the environment's own code (not ours, not the stdlib): file:line."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if os.path.abspath(f.filename) != os.path.abspath(__file__)]
    return f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""


def crash(err):
    return f"{last_line(err)}{where(err)}"


class Step:
    """One step of a check, recorded in out["steps"]: ok when its block ends, unless the block
    recorded its own failure; a crash is printed for the log, recorded, and ends the block. The
    caller stops the check when `step.ok` is false."""

    def __init__(self, out, name):
        self.out, self.name, self.ok = out, name, False

    def __enter__(self):
        return self

    def __exit__(self, kind, err, tb):
        if err is not None:
            traceback.print_exception(kind, err, tb)
            self.out["steps"][self.name] = {"ok": False, "error": crash(err)}
        self.ok = self.out["steps"].setdefault(self.name, {"ok": True})["ok"]
        return True


def score_value(value):
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else ("NaN" if math.isnan(value) else "inf")
    try:
        number = float(value)  # numpy scalars, tensors of one value
        return number if math.isfinite(number) else "NaN"
    except (TypeError, ValueError):
        return f"<{type(value).__name__}>"


def short(value, limit=MAX_TEXT):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


# --- the stand-in model ---------------------------------------------------------------------------

class StandIn:
    """An OpenAI-compatible endpoint answering each choice with the next of `answers`, in turn."""

    def __init__(self):
        self.answers = [""]
        self.served = 0
        self.requests = 0
        self.prompts = []
        self.lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.reply({"status": "ok"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                self.reply(stand_in.answer(self.path, body))

            def reply(self, payload):
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def script(self, answers):
        with self.lock:
            self.answers = list(answers)
            self.served = 0

    def answer(self, path, body):
        n = max(1, int(body.get("n") or 1))
        with self.lock:
            self.requests += 1
            texts = [self.answers[(self.served + i) % len(self.answers)] for i in range(n)]
            self.served += n
            if isinstance(body.get("messages"), list):
                self.prompts.append(body["messages"])
            elif isinstance(body.get("prompt"), str):
                self.prompts.append([{"role": "user", "content": body["prompt"]}])
        if path.endswith("/completions") and not path.endswith("/chat/completions"):
            choices = [{"index": i, "text": t, "finish_reason": "stop"} for i, t in enumerate(texts)]
        else:
            choices = [{"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"} for i, t in enumerate(texts)]
        return {"id": f"stand-in-{self.requests}", "object": "chat.completion", "model": body.get("model", "stand-in"), "choices": choices,
                "usage": {"prompt_tokens": 0, "completion_tokens": sum(len(t) for t in texts) // 4}}

    def take_prompts(self):
        with self.lock:
            prompts, self.prompts = self.prompts, []
        return prompts

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# --- reference answers ----------------------------------------------------------------------------

def references_of(item):
    """The answers an item carries under names graders use, as [(key, text)]; several may be present
    (countdown's `target` is the goal, its `solution` the answer): each is tried, the best one counts."""
    found = []
    if isinstance(item, dict):
        for key in REFERENCE_KEYS:
            value = item.get(key)
            if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
                found.append((key, str(value)))
    return found


def reference_forms(text):
    """The reference as written, then in the answer formats prompts ask for (GSM8K's "#### n" reduced to n)."""
    final = text.split("####")[-1].strip() if "####" in text else text.strip()
    forms = [text, f"\\boxed{{{final}}}", f"<answer>{final}</answer>", f"#### {final}"]
    return list(dict.fromkeys(forms))


# --- probes ---------------------------------------------------------------------------------------

class Prober:
    """Runs the probes of one item: `score(completions)` -> (scores aligned with completions or None, dropped, error)."""

    def __init__(self, score, group):
        self.score = score
        self.group = group

    async def run(self, kind, completions):
        try:
            scores, dropped = await asyncio.wait_for(self.score(completions), CALL_TIMEOUT_SECONDS)
        except asyncio.TimeoutError:
            return {"kind": kind, "completion": short(completions[0], 120), "error": f"no answer within {CALL_TIMEOUT_SECONDS} s"}
        except Exception as err:
            traceback.print_exc()
            return {"kind": kind, "completion": short(completions[0], 120), "error": crash(err)}
        probe = {"kind": kind, "completion": short(completions[0], 120)}
        if dropped:
            probe["dropped"] = True
        else:
            probe["scores"] = scores
        return probe

    async def item(self, references):
        """The probes of one item, and the reference (key, text) that scored best (the first when none scored)."""
        g = self.group
        probes = [await self.run("empty", [""] * g), await self.run("garbage", [GARBAGE] * g)]
        if not references:
            return probes, None
        best = None
        for key, text in references:
            for form in reference_forms(text):
                probe = await self.run("reference", [form] * g)
                if probe.get("dropped"):
                    # Environments that drop groups whose scores are all equal: mixed with garbage, the group is kept.
                    mixed = await self.run("reference", [form, GARBAGE] * (g // 2))
                    if "scores" in mixed:
                        mixed["scores"] = mixed["scores"][0::2]
                        mixed["mixed_with_garbage"] = True
                        probe = mixed
                probe["key"] = key
                probes.append(probe)
                top = max((s for s in probe.get("scores") or [] if isinstance(s, float)), default=None)
                if top is not None and (best is None or top > best[0]):
                    best = (top, form, probe.get("mixed_with_garbage", False), key, text)
        if best is None:
            return probes, references[0]
        _, form, mixed, key, text = best
        again = await self.run("reference_again", [form, GARBAGE] * (g // 2) if mixed else [form] * g)
        if mixed and "scores" in again:
            again["scores"] = again["scores"][0::2]
        probes.append(again)
        return probes, (key, text)


def item_record(index, ref, probes):
    return {"index": index, **({"reference": {"key": ref[0], "text": short(ref[1], 120)}} if ref else {}), "probes": probes}


def scores_of_group(group, completions):
    """An Atropos group's scores in the order of `completions` (None when they cannot be aligned)."""
    raw = list(group.get("scores") or [])
    if len(raw) == len(completions):
        return [score_value(s) for s in raw]
    messages = group.get("messages")
    if isinstance(messages, list) and len(messages) == len(raw):
        by_text = {}
        for transcript, s in zip(messages, raw):
            text = transcript[-1].get("content") if transcript and isinstance(transcript[-1], dict) else None
            by_text.setdefault(text, score_value(s))
        return [by_text.get(c, None) for c in completions]
    return [score_value(s) for s in raw] or None


@functools.cache
def load_introspect():
    """python/introspect.py, the helpers' shared code: importing an environment file as a run does,
    a helper's own process group and output stream."""
    spec = importlib.util.spec_from_file_location("_rl_mcp_introspect", os.path.join(os.path.dirname(os.path.abspath(__file__)), "introspect.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- Atropos ---------------------------------------------------------------------------------------

COUNT_SKIP = {"completion_lengths", "backlog", "percent_correct_buffer", "eval_metrics", "server_configs", "rollouts_for_wandb"}


def count_items(env):
    """The items the environment loaded in setup(): its largest train-ish collection, named."""
    found = []
    for name, value in vars(env).items():
        if name.startswith("_") or name in COUNT_SKIP or isinstance(value, (str, bytes, dict)):
            continue
        if not any(word in name.lower() for word in ("train", "data", "item", "problem", "question", "example")):
            continue
        try:
            size = len(value)
            value[0]
        except Exception:
            continue
        found.append(("train" in name.lower(), size, name))
    if not found:
        return None, None
    _, size, name = max(found)
    return size, name


async def check_atropos(request, out, stand_in):
    introspect = load_introspect()
    with Step(out, "import") as step:
        module = introspect.import_module(os.path.abspath(request["file_path"]), request["root"])
        env_cls = getattr(module, request["class_name"])
    if not step.ok:
        return
    with Step(out, "config") as step:
        env_config, server_configs = env_cls.config_init()
        merged = {**env_config.model_dump(), **{k: v for k, v in request["values"].items() if k in type(env_config).model_fields and v is not None}}
        env_config = type(env_config).model_validate(merged)
        out["group_size"] = env_config.group_size
        out["max_token_length"] = env_config.max_token_length
        template = server_configs[0] if isinstance(server_configs, list) and server_configs else server_configs
        model_name = getattr(template, "model_name", None) or "stand-in"
        server_cls = getattr(env_cls, "server_cls", None) or type(template)
        fields = getattr(server_cls, "model_fields", {})
        server = server_cls(model_name=model_name, base_url=stand_in.url, api_key="stand-in", server_type="openai",
                            **({"health_check": False} if "health_check" in fields else {}), **({"timeout": CALL_TIMEOUT_SECONDS} if "timeout" in fields else {}))
        probe_config = env_config.model_copy(update={"use_wandb": False, "data_path_to_save_groups": None, "group_size": PROBE_GROUP})
    if not step.ok:
        return
    with Step(out, "data") as step:
        env = env_cls(config=probe_config, server_configs=[server], slurm=False, testing=False)
        await asyncio.wait_for(env.setup(), 60)
        count, where_from = count_items(env)
        if count is not None:
            out["items_count"] = count
            out["items_note"] = f"len(self.{where_from}) after setup()"
        else:
            out["unchecked"].append("item count: the environment keeps no collection of items this check can count (its items may be generated); items were drawn with get_next_item()")
        items = [await asyncio.wait_for(env.get_next_item(), CALL_TIMEOUT_SECONDS) for _ in range(request["items"])]
        items = [i for i in items if i is not None]
        if not items:
            out["steps"]["data"] = {"ok": False, "error": "get_next_item() returned None: no items"}
            return
        out["sample"] = short(items[0])
    if not step.ok:
        return

    async def score(completions):
        stand_in.script(completions)
        env.config.group_size = len(completions)
        group, _backlog = await env.collect_trajectories(item)
        if isinstance(group, list):
            group = next((g for g in group if g), None)
        if not group:
            return None, True
        return scores_of_group(group, completions), False

    tokenizer = getattr(env, "tokenizer", None)
    prompt_tokens = []
    for index, item in enumerate(items):
        probes, ref = await Prober(score, PROBE_GROUP).item(references_of(item))
        prompts = stand_in.take_prompts()
        if prompts:
            prompt_tokens.append(count_prompt(tokenizer, prompts[0]))
        out["items"].append(item_record(index, ref, probes))
    record_prompts(out, prompt_tokens, "the environment's tokenizer (tokenizer_name)" if tokenizer is not None else "characters / 4")
    out["unchecked"].append("token ids and logprobs: the stand-in is an OpenAI-style endpoint, so managed_server kept placeholders (as rl_test_inference does); the trainer's /generate path is not exercised")
    if not any(references_of(i) for i in items):
        keys = sorted(items[0].keys()) if isinstance(items[0], dict) else type(items[0]).__name__
        out["unchecked"].append(f"reference answer: the items carry none under a name graders use ({', '.join(REFERENCE_KEYS[:4])}, ...; items have {keys}), so the top of the reward range was not shown")


def count_prompt(tokenizer, messages):
    if tokenizer is not None:
        try:
            return len(tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True))
        except Exception:
            pass
    return math.ceil(sum(len(str(m.get("content") or "")) for m in messages) / 4)


def record_prompts(out, counts, counted_by):
    out["prompt_tokens"] = counts
    out["prompt_tokens_counted_by"] = counted_by
    out["steps"]["prompts"] = {"ok": True} if counts else {"ok": False, "error": "no prompt reached the stand-in model: the environment asked nothing of it"}


# --- tinker-cookbook recipes -----------------------------------------------------------------------

class _Captured(Exception):
    def __init__(self, config):
        super().__init__("training config captured")
        self.config = config


async def check_cookbook(request, out):
    recipe = request["recipe"]
    with Step(out, "import") as step:
        train_module = importlib.import_module(f"tinker_cookbook.recipes.{recipe}.train")
        rl_train = importlib.import_module("tinker_cookbook.rl.train")
    if not step.ok:
        return
    log_dir = tempfile.mkdtemp(prefix="rl-check-")
    with Step(out, "config") as step:
        values = {k: v for k, v in request["values"].items() if v is not None}
        values.update(log_path=os.path.join(log_dir, "log"), wandb_project=None)
        cli_config = train_module.CLIConfig(**{k: v for k, v in values.items() if k in _chz_fields(train_module.CLIConfig)})

        async def capture(config, *args, **kwargs):
            raise _Captured(config)

        # The recipe's own cli_main builds the training config and hands it to rl.train.main: caught there, nothing trains.
        for owner in (rl_train, train_module):
            if hasattr(owner, "main"):
                setattr(owner, "main", capture)
        try:
            await train_module.cli_main(cli_config)
            raise RuntimeError("cli_main returned without calling rl.train.main")
        except _Captured as captured:
            config = captured.config
        out["group_size"] = getattr(cli_config, "group_size", None)
    shutil.rmtree(log_dir, ignore_errors=True)
    if not step.ok:
        return
    with Step(out, "data") as step:
        dataset, _test = await config.dataset_builder()
        batch = list(dataset.get_batch(0))
        out["items_count"] = len(dataset) * len(batch)
        out["items_note"] = f"{len(dataset)} batches of {len(batch)} groups"
        builders = batch[: request["items"]]
        if not builders:
            out["steps"]["data"] = {"ok": False, "error": "the dataset's first batch is empty"}
            return
        first = (await builders[0].make_envs())[0]
        out["sample"] = short({k: v for k, v in vars(first).items() if not k.startswith("_") and k not in ("renderer",)})
    if not step.ok:
        return
    out["unchecked"].append("max_token_length: cookbook recipes bound completions (max_tokens), not prompt + completion; prompt lengths are reported, not compared")
    prompt_tokens = []
    for index, builder in enumerate(builders):
        envs = list(await builder.make_envs())
        env0 = envs[0]
        renderer = getattr(env0, "renderer", None)
        tokenizer = getattr(renderer, "tokenizer", None)
        try:
            ob, _stop = await env0.initial_observation()
            prompt_tokens.append(int(ob.length))
        except BaseException as err:
            traceback.print_exc()
            out["steps"]["prompts"] = {"ok": False, "error": crash(err)}
            return
        ref = None
        if hasattr(env0, "get_reference_answer"):
            try:
                ref = ("get_reference_answer()", str(env0.get_reference_answer()))
            except Exception:
                ref = None

        async def score(completions, builder=builder, tokenizer=tokenizer):
            envs = list(await builder.make_envs())
            rewards = []
            for env, text in zip(envs * len(completions), completions):
                ob, stop = await env.initial_observation()
                action = _action(tokenizer, text, stop)
                total, done, turns = 0.0, False, 0
                while not done and turns < 4:
                    result = await env.step(action)
                    reward = score_value(result.reward)
                    if not isinstance(reward, float):
                        return [reward] + [None] * (len(completions) - 1), False
                    total += reward
                    done, turns = result.episode_done, turns + 1
                rewards.append(total)
            return rewards, False

        if tokenizer is None:
            out["items"].append({"index": index, "probes": []})
            continue
        probes, ref = await Prober(score, PROBE_GROUP).item([ref] if ref else [])
        out["items"].append(item_record(index, ref, probes))
    base = getattr(importlib.import_module("tinker_cookbook.rl.types"), "EnvGroupBuilder", None)
    if base is not None and getattr(type(builders[0]), "compute_group_rewards", None) is not getattr(base, "compute_group_rewards", None):
        out["unchecked"].append("group rewards: the builder's compute_group_rewards() (rewards given per group, e.g. by comparing its rollouts) was not driven; only each env's step() rewards were")
    if not any(item["probes"] for item in out["items"]):
        out["unchecked"].append("scoring: the environment has no renderer with a tokenizer to turn a completion into the tokens step() takes")
    if not any("reference" in item for item in out["items"]):
        out["unchecked"].append("reference answer: the environments have no get_reference_answer(), so the top of the reward range was not shown")
    record_prompts(out, prompt_tokens, "the recipe's renderer (its observation's length)")


def _chz_fields(cls):
    names = getattr(cls, "__chz_fields__", None)
    if isinstance(names, dict):
        return set(names)
    import inspect
    return set(inspect.signature(cls).parameters)


def _action(tokenizer, text, stop):
    """The tokens a model answering `text` samples: the text, then the renderer's first stop sequence."""
    if stop and isinstance(stop[0], int):
        return tokenizer.encode(text, add_special_tokens=False) + [stop[0]]
    return tokenizer.encode(text + (stop[0] if stop else ""), add_special_tokens=False)


# --- verifiers environments ------------------------------------------------------------------------

class _RewardErrors(logging.Handler):
    """The rubric catches a reward function's exception, logs it and scores 0.0: caught here as the crash it is."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.errors = []

    def emit(self, record):
        message = record.getMessage()
        if "reward function" in message.lower():
            self.errors.append(message[:MAX_TEXT])


def _client(stand_in):
    try:
        from openai import AsyncOpenAI
        return AsyncOpenAI(base_url=stand_in.url, api_key="stand-in", max_retries=0)
    except ImportError:
        from verifiers.utils.client_utils import setup_client
        import verifiers as vf
        return setup_client(vf.ClientConfig(api_key_var="RL_CHECK_STAND_IN_KEY", api_base_url=stand_in.url, max_retries=0))


async def check_verifiers(request, out, stand_in):
    with Step(out, "import") as step:
        import verifiers as vf
    if not step.ok:
        return
    with Step(out, "config") as step:
        args = request["values"].get("vf_env_args")
        env_args = json.loads(args) if isinstance(args, str) and args.strip() else (args or {})
        env = vf.load_environment(request["vf_env_id"], **env_args)
    if not step.ok:
        return
    with Step(out, "data") as step:
        dataset = env.get_dataset()
        out["items_count"] = len(dataset)
        out["items_note"] = "rows of the environment's dataset"
        rows = dataset.select(range(min(request["items"], len(dataset)))).to_list()
        out["sample"] = short({k: v for k, v in rows[0].items() if k != "prompt"}) if rows else None
        if not rows:
            out["steps"]["data"] = {"ok": False, "error": "the dataset is empty"}
    if not step.ok:
        return
    out["unchecked"].append("max_token_length: verifiers environments declare none; prompt lengths are reported, not compared")
    client = _client(stand_in)
    handler = _RewardErrors()
    logging.getLogger("verifiers").addHandler(handler)
    prompt_tokens = []
    for index, row in enumerate(rows):
        async def score(completions, row=row):
            stand_in.script(completions)
            handler.errors.clear()
            result = await env.generate([dict(row) for _ in completions], client=client, model="stand-in", sampling_args={"max_tokens": 64})
            if handler.errors:
                raise RuntimeError(handler.errors[0])
            states = result["state"] if isinstance(result, dict) else result.state
            for state in states:
                if state.get("error") is not None:
                    raise RuntimeError(f"the rollout failed: {state['error']!r}")
            by_text = {}
            for state in states:
                completion = state.get("completion") or []
                text = completion[-1].get("content") if completion and isinstance(completion[-1], dict) else completion
                by_text.setdefault(text, []).append(score_value(state.get("reward")))
            return [by_text[c].pop(0) if by_text.get(c) else None for c in completions], False

        answer = row.get("answer")
        refs = [("answer", str(answer))] if isinstance(answer, (str, int, float)) and str(answer).strip() else []
        probes, ref = await Prober(score, PROBE_GROUP).item(refs)
        prompts = stand_in.take_prompts()
        if prompts:
            prompt_tokens.append(count_prompt(None, prompts[0]))
        out["items"].append(item_record(index, ref, probes))
    if not any("reference" in item for item in out["items"]):
        out["unchecked"].append("reference answer: the dataset's rows have no `answer`, so the top of the reward range was not shown")
    record_prompts(out, prompt_tokens, "characters / 4 (verifiers has no tokenizer)")


# --- main -----------------------------------------------------------------------------------------

def main():
    out_stream = load_introspect().isolate_helper()
    request = json.load(sys.stdin)
    request.setdefault("values", {})
    request.setdefault("items", 5)
    os.environ["ATROPOS_ALLOW_DUMMY_MANAGED_SERVER"] = "1"
    os.environ["WANDB_MODE"] = "disabled"
    stand_in = StandIn()
    out = {"framework": request["framework"], "steps": {}, "items": [], "unchecked": [], "prompt_tokens": []}
    try:
        if request["framework"] == "atropos":
            asyncio.run(check_atropos(request, out, stand_in))
        elif request["framework"] == "verifiers":
            asyncio.run(check_verifiers(request, out, stand_in))
        else:
            asyncio.run(check_cookbook(request, out))
            out["unchecked"].append("stand-in model: a cookbook environment takes tokens, so the completions were handed to step() directly")
    except BaseException as err:
        traceback.print_exc()
        out["error"] = crash(err)
    out["stand_in"] = {"url": stand_in.url, "requests": stand_in.requests}
    stand_in.close()
    out_stream.write(json.dumps(out, allow_nan=False))
    out_stream.flush()
    # Threads the environment started must not keep this process alive.
    os._exit(0)


if __name__ == "__main__":
    main()
