"""The Atropos API (atroposlib/api/server.py): same endpoints, same JSON, same in-memory state rules
(upstream's FastAPI app), on the standard-library server instead of FastAPI.

Bodies are validated with the same pydantic models, so a bad body is a FastAPI-style 422.
Simplifications: batches are always cut with the exact-size packing (``min_batch_allocation`` is
stored and reported but does not change which groups go into a batch), and groups smaller than the
env's group_size are queued once the whole buffer adds up to one group (real: any subset that does).
"""
import math
import threading
import time
import uuid
from typing import Any, Dict, List, Optional, Tuple

from pydantic import BaseModel, TypeAdapter, ValidationError, field_validator

from ..utils.json_http import Routes

MIN_ENV_WEIGHT = 0.01


class Registration(BaseModel):
    wandb_group: str
    wandb_project: str
    batch_size: int
    max_token_len: int
    checkpoint_dir: str
    save_checkpoint_interval: int
    starting_step: int
    num_steps: int


class RegisterEnv(BaseModel):
    max_token_length: int
    desired_name: str
    weight: float
    group_size: int
    min_batch_allocation: Optional[float] = None


class EnvIdentifier(BaseModel):
    env_id: int


class ScoredData(BaseModel):
    tokens: List[List[int]]
    masks: List[List[int]]
    scores: List[float]
    advantages: Optional[List[List[float]]] = None
    ref_logprobs: Optional[List[List[float]]] = None
    messages: Optional[List[List[Dict[str, Any]]]] = None
    generation_params: Optional[Dict[str, Any]] = None
    inference_logprobs: Optional[List[List[float]]] = None
    overrides: Optional[List[dict]] = None
    group_overrides: Optional[dict] = None
    images: Optional[Any] = None
    env_id: Optional[int] = None
    distill_token_ids: Optional[List[List[List[int]]]] = None
    distill_logprobs: Optional[List[List[List[float]]]] = None

    @field_validator("messages", mode="before")
    @classmethod
    def validate_messages(cls, value):
        for message_list in value or []:
            for message in message_list:
                if "role" not in message or "content" not in message:
                    raise ValueError("Message must have 'role' and 'content' fields")
        return value


EMPTY_EXAMPLE = {
    "tokens": [], "masks": [], "scores": [], "advantages": [], "ref_logprobs": [],
    "generation_params": [], "inference_logprobs": [], "messages": [], "images": [],
}


def grab_exact_from_heterogeneous_queue(queue: List[dict], batch_size: int) -> Tuple[Optional[List[dict]], List[dict]]:
    """Exactly ``batch_size`` sequences, taking whole groups packed up to the largest group size
    (as atroposlib/api/utils.py does); (None, queue) when the queue cannot fill a batch."""
    if not queue:
        return None, queue
    lengths = [len(item["tokens"]) for item in queue]
    if sum(lengths) < batch_size:
        return None, queue
    max_group_size = max(lengths)
    pending: Dict[int, List[int]] = {}
    packed: List[int] = []
    for index, length in enumerate(lengths):
        bucket = pending.setdefault(length, [])
        bucket.append(index)
        if len(bucket) * length == max_group_size:
            packed.extend(bucket)
            bucket.clear()
    batch_indices: List[int] = []
    running = 0
    for index in packed:
        batch_indices.append(index)
        running += lengths[index]
        if running >= batch_size:
            break
    if running != batch_size:
        return None, queue
    taken = set(batch_indices)
    return [queue[i] for i in batch_indices], [item for i, item in enumerate(queue) if i not in taken]


class ApiState:
    """``app.state`` of the real server."""

    def __init__(self):
        self.lock = threading.Lock()
        self.latest: Optional[dict] = None
        self.max_token_len = -1
        self.reset()
        # Before the first /register the real state has no `started` at all: /batch answers an error.
        self.started: Optional[bool] = None

    def reset(self) -> None:
        """What /reset_data clears (it leaves max_token_len and the latest example)."""
        self.queue: Optional[List[dict]] = None  # None: the next /register initialises the state
        self.group = None
        self.project = None
        self.batchsize = -1
        self.num_steps = -1
        self.step = 0
        self.checkpoint_dir = ""
        self.save_checkpoint_interval = -1
        self.curr_batch: List[List[dict]] = []
        self.started = False
        self.requesters: List[int] = []
        self.envs: List[dict] = []
        self.buffer: Dict[int, List[dict]] = {}


def _validation_error(error: ValidationError) -> Tuple[int, Any]:
    details = []
    for item in error.errors(include_url=False):
        item = dict(item)
        item["loc"] = ["body", *item.get("loc", ())]
        item.pop("ctx", None)
        details.append(item)
    return 422, {"detail": details}


def _with_body(schema):
    """The route gets its body parsed by ``schema``; a body that does not fit is a 422, as FastAPI answers."""
    adapter = TypeAdapter(schema)

    def wrap(handler):
        def route(body):
            try:
                parsed = adapter.validate_python(body)
            except ValidationError as error:
                return _validation_error(error)
            return handler(parsed)

        return route

    return wrap


def build_routes(state: ApiState) -> Routes:
    def root(_body):
        return 200, {"message": "AtroposLib API"}

    @_with_body(Registration)
    def register(registration):
        with state.lock:
            if state.queue is None:
                state.queue = []
                state.group = registration.wandb_group
                state.project = registration.wandb_project
                state.batchsize = registration.batch_size
                state.max_token_len = registration.max_token_len
                state.step = registration.starting_step
                state.checkpoint_dir = registration.checkpoint_dir
                state.save_checkpoint_interval = registration.save_checkpoint_interval
                state.num_steps = registration.num_steps
                state.curr_batch = []
                state.started = False
                state.envs = []
                state.buffer = {}
            state.requesters.append(uuid.uuid4().int)
            return 200, {"uuid": state.requesters[-1]}

    @_with_body(RegisterEnv)
    def register_env(request):
        with state.lock:
            if not state.started:
                return 200, {"status": "wait for trainer to start"}
            same_name = [env for env in state.envs if env["desired_name"] == request.desired_name]
            real_name = f"{request.desired_name}_{len(same_name)}"
            env_id = len(state.envs)
            state.envs.append({
                "max_context_len": request.max_token_length,
                "weight": request.weight if request.weight is not None else 1.0,
                "desired_name": request.desired_name,
                "real_name": real_name,
                "registered_id": env_id,
                "last_update": time.time(),
                "connected": True,
                "min_batch_allocation": request.min_batch_allocation,
                "group_size": request.group_size,
            })
            return 200, {
                "status": "success",
                "env_id": env_id,
                "wandb_name": real_name,
                "checkpoint_dir": state.checkpoint_dir,
                "starting_step": state.step,
                "checkpoint_interval": state.save_checkpoint_interval,
                "num_steps": state.num_steps,
            }

    @_with_body(EnvIdentifier)
    def disconnect_env(request):
        with state.lock:
            if 0 <= request.env_id < len(state.envs):
                state.envs[request.env_id]["connected"] = False
                return 200, {"status": "success"}
            return 200, {"status": "failure", "error": "list index out of range"}

    def wandb_info(_body):
        return 200, {"group": state.group, "project": state.project}

    def info(_body):
        return 200, {"batch_size": state.batchsize, "max_token_len": state.max_token_len}

    def status(_body):
        with state.lock:
            return 200, {"current_step": state.step, "queue_size": len(state.queue or [])}

    @_with_body(EnvIdentifier)
    def status_env(request):
        with state.lock:
            if not 0 <= request.env_id < len(state.envs):
                return 500, "Internal Server Error"
            env = state.envs[request.env_id]
            total = sum(e["max_context_len"] * max(0.0, e["weight"]) for e in state.envs if e["connected"])
            env_weight = max(MIN_ENV_WEIGHT, env["max_context_len"] * env["weight"] / total) if total else 1.0
            min_total = sum(e["min_batch_allocation"] for e in state.envs if e["connected"] and e["min_batch_allocation"] is not None)
            queue = state.queue or []
            env_group_size = env["group_size"]
            max_group_size = 1
            own_sequences = 0
            others: Dict[Any, int] = {}
            for item in queue:
                size = len(item.get("tokens", []))
                max_group_size = max(max_group_size, size)
                if item.get("env_id") == request.env_id:
                    env_group_size = max(env_group_size, size)
                    own_sequences += size
                else:
                    others[item.get("env_id")] = others.get(item.get("env_id"), 0) + size
            env["group_size"] = env_group_size
            minimums = {
                e["registered_id"]: int(state.batchsize * e["min_batch_allocation"])
                for e in state.envs if e["connected"] and e["min_batch_allocation"] is not None
            }
            available_from_others = 0
            if max_group_size > 1:
                for other_id, count in others.items():
                    packed = math.ceil(count / max_group_size) * max_group_size
                    available_from_others += max(0, packed - minimums.get(other_id, 0))
            return 200, {
                "current_step": state.step,
                "queue_size": (own_sequences + available_from_others) // env_group_size,
                "unallocated_fraction": 1.0 - min(min_total, 1.0),
                "self_queue_size": own_sequences // env_group_size,
                "max_group_size": max_group_size,
                "env_weight": env_weight,
            }

    def enqueue(data: ScoredData) -> Dict[str, Any]:
        if state.queue is None:
            state.queue = []
        group = data.model_dump()
        env_id = group["env_id"]
        if env_id is not None and env_id < len(state.envs):
            expected = state.envs[env_id].get("group_size", 1)
            if len(group["tokens"]) != expected:
                # Smaller groups wait in a per-env buffer until they add up to a full group.
                buffer = state.buffer.setdefault(env_id, [])
                buffer.append(group)
                if sum(len(g["tokens"]) for g in buffer) == expected:
                    state.queue.extend(buffer)
                    state.latest = buffer[-1]
                    buffer.clear()
                return {"status": "buffered", "buffer_size": sum(len(g["tokens"]) for g in buffer)}
        state.queue.append(group)
        state.latest = group
        return {"status": "received"}

    @_with_body(ScoredData)
    def scored_data(data):
        with state.lock:
            return 200, enqueue(data)

    @_with_body(List[ScoredData])
    def scored_data_list(items):
        with state.lock:
            results = [enqueue(item) for item in items]
        response: Dict[str, Any] = {"status": "received", "groups_processed": len(items)}
        buffered = [r for r in results if r["status"] == "buffered"]
        if buffered:
            response["buffered"] = len(buffered)
            response["last_buffer_size"] = buffered[-1]["buffer_size"]
        return 200, response

    def batch(_body):
        with state.lock:
            if state.started is None:
                return 200, {"status": "error", "message": "Trainer not registered. Call /register first.", "batch": []}
            state.started = True
            if state.curr_batch:
                return 200, {"batch": state.curr_batch.pop()}
            new_batches = []
            next_batch, state.queue = grab_exact_from_heterogeneous_queue(state.queue or [], state.batchsize)
            while next_batch is not None:
                new_batches.append(next_batch)
                next_batch, state.queue = grab_exact_from_heterogeneous_queue(state.queue, state.batchsize)
            if not new_batches:
                return 200, {"batch": None}
            state.step += len(new_batches)
            state.curr_batch.extend(new_batches)
            return 200, {"batch": state.curr_batch.pop()}

    def latest_example(_body):
        return 200, state.latest if state.latest is not None else EMPTY_EXAMPLE

    def reset_data(_body):
        with state.lock:
            state.reset()
        return 200, "Reset successful"

    return {
        ("GET", "/"): root,
        ("POST", "/register"): register,
        ("POST", "/register-env"): register_env,
        ("POST", "/disconnect-env"): disconnect_env,
        ("GET", "/wandb_info"): wandb_info,
        ("GET", "/info"): info,
        ("GET", "/status"): status,
        ("GET", "/status-env"): status_env,
        ("POST", "/scored_data"): scored_data,
        ("POST", "/scored_data_list"): scored_data_list,
        ("GET", "/batch"): batch,
        ("GET", "/latest_example"): latest_example,
        ("GET", "/reset_data"): reset_data,
    }
