"""Test fake of tinker-cookbook (thinking-machines-lab/tinker-cookbook at 9dfcc3a2, 2026-08-19),
written from its source. It trains through the ``tinker`` SDK (the fake in test/fakes/python/tinker,
state in $FAKE_TINKER_STATE): checkpoints it records exist in that service, and a resume goes through
``create_training_client_from_state_with_optimizer_async(state_path)``.

Recipes, each ``python -m tinker_cookbook.recipes.<name>.<script> key=value ...`` (chz argv, see
test/fakes/cookbook/chz): ``math_rl.train`` (RL, env=arithmetic), ``verifiers_rl.train`` (RL on an
installed verifiers environment), ``verifiers_rl.evaluate``, ``chat_sl.train`` (supervised, not RL);
``harbor_rl`` and ``search_tool`` keep only their configuration and imports (``modal``; ``pandas``,
``chromadb``, ``google.genai``), which a plain install lacks as upstream.
As upstream, ``recipes/`` and its folders have no ``__init__.py``; an RL recipe's train.py imports
``tinker_cookbook.rl`` and has a ``CLIConfig`` with group_size / groups_per_batch.
What each part keeps of upstream: rl/train.py, supervised/train.py, checkpoint_utils.py,
cli_utils.py, utils/ml_log.py, model_info.py.

Test control (not upstream): the JSON file named by $FAKE_COOKBOOK_CONTROL, else
``fake_cookbook.json`` in the working directory, read again at every step (_fake_control.py):
  step_seconds (float, 0.05)   how long each training step's sampling takes
  rewards (list of float)      math_rl's mean reward of batch i (the last value repeats); default a
                               curve from 0.3 rising towards 0.8
  fail_at_step (int k)         batch k raises "RuntimeError: simulated failure in batch k": traceback
                               on stderr, exit code 1, no final checkpoint
  fail_with (str)              the class fail_at_step raises: RuntimeError (default), or one of
                               tinker_cookbook.exceptions (ConfigurationError, TrainingError), as
                               upstream's checks raise them once training runs (an evaluator's
                               config at its first evaluation, eval/inspect_evaluators.py)
  hang_at_step (int k)         batch k (and later ones) wait before their metrics row while the key
                               stays: the process lives, no row comes (a stall)
  ignore_sigterm (bool)        the trainer ignores SIGTERM (only SIGKILL ends it)
  spawn_grandchild (bool)      the trainer starts a sleeping child in its process group and prints
                               "grandchild pid: N"
The rest comes from the fake SDK's state: the sampled text (service.json ``sample_text``, which
verifiers_rl's rubric scores), refused models (models.json), and failures of its calls (faults.json;
a 402 on ``forward_backward`` is Tinker's billing pause: the SDK's warning "The job is paused due to
billing status. Error: ..." lands in logs.log while no metrics row comes).
"""
__version__ = "0.5.5+fake"
