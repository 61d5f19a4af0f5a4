"""What a run writes to its directory and how it is read back: the checkpoint, the CSVs,
TensorBoard and wandb, the curves, ``status.json``, its score for a sweeper and the
start-up timing line."""
