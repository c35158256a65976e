"""Training the Transformer: settings (the CLI is generated from them), the loop, checkpointing,
evaluation, tasks (translation, copy), snapshots and the copy-task lab. Import the submodules
directly; nothing here imports upward (lens/, ui/, app)."""
