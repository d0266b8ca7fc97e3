"""Test fake of NousResearch atroposlib: the config models, BaseEnv and the API server, faithful
to the real interfaces (NousResearch/atropos: atroposlib/envs/base.py, atroposlib/api/server.py) but with no heavy dependencies."""
