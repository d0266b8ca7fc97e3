"""Test fake of the inference-server half of tinker-atropos' ``tinker_atropos/trainer.py``: the
module-level ``trainer`` that launch_training.py sets, the app whose routes reach it, and
``run_fastapi_server`` written as upstream writes it (TA trainer.py:833-837): uvicorn, all
interfaces, port 8001 hard-coded. The server's python/run_trainer.py moves it by replacing
``uvicorn.run``; run without that wrapper, every fake trainer would want 8001."""
trainer = None


class _App:
    def routes(self):
        return trainer.routes()


app = _App()


def run_fastapi_server():
    import uvicorn

    uvicorn.run(app, host="0.0.0.0", port=8001, log_level="info")
