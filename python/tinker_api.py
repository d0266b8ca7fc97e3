"""What Tinker itself knows about runs, asked through Tinker's own SDK (`tinker`, which RL_PYTHON
must import anyway): live base models, billed usage, sessions, checkpoints and what to do with them.

Run:    RL_PYTHON python/tinker_api.py <command> [<arguments as JSON>]
        (without the second argument the JSON object is read from stdin; empty means {}).
Key:    only from the environment (TINKER_API_KEY, as the SDK reads it; TINKER_BASE_URL and
        TINKER_PROJECT_ID likewise). Never taken from arguments, never printed.
Output: one JSON object on stdout, exit 0. On failure `{"error": {"kind", "status", "message"}}`
        and exit 1 (2 for a bad command line or arguments). kind: "auth" (no key, a malformed key,
        or 401), "permission" (403, e.g. billing without the billing-view role), "not_found" (404),
        "bad_request" (400/422, or an argument the SDK refuses before sending, e.g. a bad tinker://
        path), "conflict" (409), "unavailable" (5xx, 429, no connection, or no answer within
        `timeout_seconds`: the SDK itself retries those for up to 5 minutes), "sdk_missing" (RL_PYTHON
        cannot import tinker), "api_error" (other statuses), "internal" (anything else), "usage"
        (exit 2: unknown command, arguments not a JSON object or missing/mistyped).

Every command takes `timeout_seconds` (default 60): the deadline for the whole command.

models       {}  ->  {"models": [{"name", "max_context_length"}]}  the base models the service serves now.
sessions     {"training_run_ids"?: [...], "session_ids"?: [...]}
             ->  {"sessions": {session id: {"training_run_ids": [...], "sampler_ids": [...]}},
                  "training_runs": {training run id: session id | null}, "not_found": [session ids]}
             A training run id is "<session id>:train:<n>"; the session is confirmed with get_session,
             else looked for among the newest 100 sessions.
billing      {"start": RFC 3339, "end"?: RFC 3339 (default now), "session_ids"?: [...], "training_run_ids"?: [...]}
             ->  {"window": {"start", "end"}, "session_ids": [...] | null, "as_of": RFC 3339 | null,
                  "hours": [{"hour", "base_model", QUANTITIES}], "totals": [{"base_model", QUANTITIES}]}
             The window is widened to whole UTC hours, cut at the current hour, and asked for in
             pieces of at most 14 days (the service refuses longer ones). Rows are kept when their
             session is one of session_ids or of the training runs' sessions (no ids: every row).
             QUANTITIES: training, sampling_prefill, sampling_prefill_cached, sampling_sample (tokens),
             checkpoint (count), storage_gigabyte_hours. Storage rows usually carry no session, so a
             run's storage is not in them. `as_of`: end of the newest hour with any row in the window
             (any session): how far Tinker's billing data reaches (it lags by up to a few hours).
checkpoints  {"training_run_ids"?: [...], "paths"?: [tinker:// paths]}
             ->  {"checkpoints": [{"path", "training_run_id", "name", "kind": "state" | "sampler",
                  "size_bytes", "created_at", "expires_at", "public"}], "not_found": [ids or paths]}
             kind "state" is a save_state checkpoint (tinker://<run>/weights/<name>, resumable),
             "sampler" a save_weights_for_sampler one (tinker://<run>/sampler_weights/<name>).
             expires_at null: kept until deleted.
usage        {"training_run_ids": [...], "start": RFC 3339, "end"?: RFC 3339}
             ->  {"billing": <billing's answer> | {"error": {...}}, "checkpoints": <checkpoints' answer> | {"error": {...}}}
             What a run's cost needs, in one process: the billing of its training runs' sessions and
             their checkpoints (whose sizes are its storage). Each part fails on its own: billing
             without the billing-view role while the checkpoints list fine.
set_ttl      {"paths": [...], "ttl_seconds": int | null (null removes the expiry)}  ->  RESULTS
delete       {"paths": [...]}  ->  RESULTS
publish      {"paths": [...]}  ->  RESULTS (one already public: ok with "already_public": true, not sent)
archive_url  {"paths": [...]}  ->  RESULTS, each ok one with "url" and "expires" (a signed download URL)
             RESULTS: {"results": [{"path", "ok": true, ...} | {"path", "ok": false, "error": {...}}]}, in
             input order; exit 0 even when some failed.
"""
import contextlib
import json
import os
import sys
import threading
from datetime import datetime, timedelta, timezone

BILLING_WINDOW = timedelta(days=14)
SESSIONS_SCANNED = 100
QUANTITIES = ("training", "sampling_prefill", "sampling_prefill_cached", "sampling_sample", "checkpoint",
              "storage_gigabyte_hours")


class UsageError(Exception):
    pass


def iso(moment):
    return None if moment is None else moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def parse_time(text, name):
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"{name} is not an RFC 3339 time: {text!r}") from None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def id_list(args, name, required=False):
    value = args.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value) or (required and not value):
        raise UsageError(f"{name} must be a {'non-empty ' if required else ''}list of strings")
    return value


# ---- sessions ----


class Sessions:
    """get_session answers, each asked once (None: no such session)."""

    def __init__(self, rest, tinker):
        self.rest, self.tinker, self.seen = rest, tinker, {}

    def get(self, session_id):
        if session_id not in self.seen:
            try:
                self.seen[session_id] = self.rest.get_session(session_id).result()
            except self.tinker.NotFoundError:
                self.seen[session_id] = None
        return self.seen[session_id]

    def of_runs(self, run_ids):
        """{training run id: its session id, or None}."""
        found = {}
        for run_id in run_ids:
            guess = run_id.split(":train:")[0] if ":train:" in run_id else None
            info = self.get(guess) if guess else None
            if info is not None and run_id in info.training_run_ids:
                found[run_id] = guess
        if len(found) < len(run_ids):
            for session_id in self.rest.list_sessions(limit=SESSIONS_SCANNED).result().sessions:
                info = self.get(session_id)
                for run_id in run_ids:
                    if info is not None and run_id in info.training_run_ids:
                        found.setdefault(run_id, session_id)
        return {r: found.get(r) for r in run_ids}


def cmd_sessions(service, tinker, args):
    sessions = Sessions(service.create_rest_client(), tinker)
    runs = sessions.of_runs(id_list(args, "training_run_ids"))
    answer, not_found = {}, []
    for session_id in sorted(set(id_list(args, "session_ids")) | {s for s in runs.values() if s}):
        info = sessions.get(session_id)
        if info is None:
            not_found.append(session_id)
        else:
            answer[session_id] = {"training_run_ids": list(info.training_run_ids), "sampler_ids": list(info.sampler_ids)}
    return {"sessions": answer, "training_runs": runs, "not_found": not_found}


# ---- billing ----


def hour_floor(moment):
    return moment.replace(minute=0, second=0, microsecond=0)


def hour_ceil(moment):
    floor = hour_floor(moment)
    return floor if floor == moment else floor + timedelta(hours=1)


def quantity(info):
    """(QUANTITIES key, amount) of one row's event_info."""
    if info.type == "storage":
        return "storage_gigabyte_hours", info.gigabyte_hours
    if info.type == "checkpoint":
        return "checkpoint", info.count
    if info.type == "sampling_prefill" and info.cached:
        return "sampling_prefill_cached", info.token_count
    return info.type, info.token_count


def cmd_billing(service, tinker, args):
    if "start" not in args:
        raise UsageError("billing needs start")
    now = datetime.now(timezone.utc)
    start = hour_floor(parse_time(args["start"], "start"))
    end = hour_ceil(min(parse_time(args["end"], "end") if args.get("end") else now, now))
    rest = service.create_rest_client()
    run_ids, session_ids = id_list(args, "training_run_ids"), id_list(args, "session_ids")
    keep = None
    if run_ids or session_ids:
        runs = Sessions(rest, tinker).of_runs(run_ids)
        keep = set(session_ids) | {s for s in runs.values() if s}
    hours, totals, as_of = {}, {}, None
    piece = start
    while piece < end:
        piece_end = min(piece + BILLING_WINDOW, end)
        for row in rest.get_billing_usage(iso(piece), iso(piece_end)).result().data:
            as_of = max(as_of, row.bucket_end) if as_of else row.bucket_end
            if keep is not None and row.session_id not in keep:
                continue
            name, amount = quantity(row.event_info)
            for table, key in ((hours, (iso(row.bucket_start), row.base_model)), (totals, row.base_model)):
                table.setdefault(key, dict.fromkeys(QUANTITIES, 0))[name] += amount
        piece = piece_end
    return {
        "window": {"start": iso(start), "end": iso(end)},
        "session_ids": None if keep is None else sorted(keep),
        "as_of": iso(as_of),
        "hours": [{"hour": h, "base_model": m, **q} for (h, m), q in sorted(hours.items(), key=lambda e: (e[0][0], e[0][1] or ""))],
        "totals": [{"base_model": m, **q} for m, q in sorted(totals.items(), key=lambda e: e[0] or "")],
    }


# ---- models and checkpoints ----


def cmd_models(service, tinker, args):
    models = service.get_server_capabilities().supported_models
    return {"models": [{"name": m.model_name, "max_context_length": m.max_context_length} for m in models if m.model_name]}


def checkpoint_json(checkpoint, run_id):
    return {
        "path": checkpoint.tinker_path,
        "training_run_id": run_id,
        "name": checkpoint.tinker_path.rsplit("/", 1)[-1],
        "kind": "state" if checkpoint.checkpoint_type == "training" else "sampler",
        "size_bytes": checkpoint.size_bytes,
        "created_at": iso(checkpoint.time),
        "expires_at": iso(checkpoint.expires_at),
        "public": checkpoint.public,
    }


def cmd_checkpoints(service, tinker, args):
    rest = service.create_rest_client()
    whole_runs, paths = id_list(args, "training_run_ids"), id_list(args, "paths")
    # Paths are looked up in their run's listing (the SDK has no call for one checkpoint).
    runs = dict.fromkeys(whole_runs + [tinker.ParsedCheckpointTinkerPath.from_tinker_path(p).training_run_id for p in paths])
    checkpoints, not_found = [], []
    for run_id in runs:
        try:
            listed = rest.list_checkpoints(run_id).result().checkpoints
        except tinker.NotFoundError:
            listed = []
            if run_id in whole_runs:
                not_found.append(run_id)
        checkpoints += [checkpoint_json(c, run_id) for c in listed if run_id in whole_runs or c.tinker_path in paths]
    listed_paths = {c["path"] for c in checkpoints}
    return {"checkpoints": checkpoints, "not_found": not_found + [p for p in paths if p not in listed_paths]}


def cmd_usage(service, tinker, args):
    runs = id_list(args, "training_run_ids", required=True)
    if "start" not in args:
        raise UsageError("usage needs start")

    def part(command, part_args):
        try:
            return command(service, tinker, part_args)
        except UsageError:
            raise
        except Exception as error:  # noqa: BLE001 - this part failed, the other may not
            return {"error": describe(error)}

    return {
        "billing": part(cmd_billing, {"start": args["start"], "end": args.get("end"), "training_run_ids": runs}),
        "checkpoints": part(cmd_checkpoints, {"training_run_ids": runs}),
    }


def per_path(args, act):
    results = []
    for path in id_list(args, "paths", required=True):
        try:
            results.append({"path": path, "ok": True, **(act(path) or {})})
        except Exception as error:  # noqa: BLE001 - reported for this path, the others go on
            results.append({"path": path, "ok": False, "error": describe(error)})
    return {"results": results}


def cmd_set_ttl(service, tinker, args):
    ttl = args.get("ttl_seconds")
    if ttl is not None and (not isinstance(ttl, int) or isinstance(ttl, bool)):
        raise UsageError("ttl_seconds must be an integer or null")
    rest = service.create_rest_client()
    return per_path(args, lambda path: rest.set_checkpoint_ttl_from_tinker_path(path, ttl).result())


def cmd_delete(service, tinker, args):
    rest = service.create_rest_client()
    return per_path(args, lambda path: rest.delete_checkpoint_from_tinker_path(path).result())


def cmd_publish(service, tinker, args):
    rest = service.create_rest_client()
    listings = {}

    def publish(path):
        # The service answers 409 for a public one, and the SDK retries 409s for five minutes.
        run_id = tinker.ParsedCheckpointTinkerPath.from_tinker_path(path).training_run_id
        if run_id not in listings:
            try:
                listings[run_id] = rest.list_checkpoints(run_id).result().checkpoints
            except tinker.NotFoundError:
                listings[run_id] = []
        if any(c.tinker_path == path and c.public for c in listings[run_id]):
            return {"already_public": True}
        rest.publish_checkpoint_from_tinker_path(path).result()
        return None

    return per_path(args, publish)


def cmd_archive_url(service, tinker, args):
    rest = service.create_rest_client()

    def archive(path):
        answer = rest.get_checkpoint_archive_url_from_tinker_path(path).result()
        return {"url": answer.url, "expires": iso(answer.expires)}

    return per_path(args, archive)


COMMANDS = {
    "models": cmd_models,
    "sessions": cmd_sessions,
    "billing": cmd_billing,
    "checkpoints": cmd_checkpoints,
    "usage": cmd_usage,
    "set_ttl": cmd_set_ttl,
    "delete": cmd_delete,
    "publish": cmd_publish,
    "archive_url": cmd_archive_url,
}


# ---- errors and output ----

KIND_BY_STATUS = {400: "bad_request", 401: "auth", 403: "permission", 404: "not_found", 409: "conflict",
                  422: "bad_request", 429: "unavailable"}


def describe(error):
    """{kind, status, message} of an exception from the SDK (matched by class name, so this module
    needs no import of it) or from this helper."""
    names = {cls.__name__ for cls in type(error).__mro__}
    status = getattr(error, "status_code", None)
    message = getattr(error, "message", None) or str(error) or type(error).__name__
    if isinstance(error, UsageError):
        kind = "usage"
    elif "APIStatusError" in names and isinstance(status, int):
        kind = KIND_BY_STATUS.get(status, "unavailable" if status >= 500 else "api_error")
    elif "APIConnectionError" in names or isinstance(error, TimeoutError):
        kind = "unavailable"
    elif "TinkerError" in names:
        kind = "auth" if "api_key" in message or "TINKER_CREDENTIAL_CMD" in message else "internal"
    elif isinstance(error, ValueError):
        kind = "bad_request"
    else:
        kind = "internal"
    return {"kind": kind, "status": status if isinstance(status, int) else None, "message": f"{type(error).__name__}: {message}"}


def emit(stream, answer):
    """One JSON line, with the key blanked wherever it might have been echoed."""
    text = json.dumps(answer)
    key = os.environ.get("TINKER_API_KEY")
    if key:
        text = text.replace(key, "[redacted]")
    stream.write(text + "\n")
    stream.flush()


def run(command, args):
    try:
        import tinker
    except ImportError as error:
        return 1, {"error": {"kind": "sdk_missing", "status": None, "message": f"{sys.executable} cannot import tinker: {error}"}}
    try:
        return 0, COMMANDS[command](tinker.ServiceClient(), tinker, args)
    except UsageError as error:
        return 2, {"error": describe(error)}
    except Exception as error:  # noqa: BLE001 - every failure becomes the JSON error
        return 1, {"error": describe(error)}


def main(argv):
    out = sys.stdout
    if len(argv) not in (2, 3) or argv[1] not in COMMANDS:
        emit(out, {"error": {"kind": "usage", "status": None, "message": f"usage: tinker_api.py <{'|'.join(COMMANDS)}> [<json>]"}})
        return 2
    try:
        args = json.loads((argv[2] if len(argv) == 3 else sys.stdin.read()).strip() or "{}")
        if not isinstance(args, dict):
            raise ValueError("the arguments must be a JSON object")
        timeout = float(args.get("timeout_seconds", 60))
    except ValueError as error:
        emit(out, {"error": {"kind": "usage", "status": None, "message": str(error)}})
        return 2
    outcome = []
    # The SDK prints nothing on stdout, but a stray print must not corrupt the one JSON answer.
    with contextlib.redirect_stdout(sys.stderr):
        worker = threading.Thread(target=lambda: outcome.append(run(argv[1], args)), daemon=True)
        worker.start()
        worker.join(timeout)
    if not outcome:
        emit(out, {"error": {"kind": "unavailable", "status": None,
                             "message": f"Tinker did not answer within {timeout:g} s (the SDK keeps retrying failed requests)"}})
        return 1
    code, answer = outcome[0]
    emit(out, answer)
    return code


if __name__ == "__main__":
    code = main(sys.argv)
    # The SDK's background threads may still be waiting on a retry: leave without joining them.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
