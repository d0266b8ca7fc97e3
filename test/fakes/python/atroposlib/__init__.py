"""Test fake of NousResearch atroposlib: the config models, BaseEnv and the API server, faithful
to the real interfaces (shared/reference/tinker-atropos.md §2, §3) but with no heavy dependencies."""
