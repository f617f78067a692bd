"""The checkpoint room: the layout and its "is it complete" rule (layout.py, no torch), safe
reading and RNG states (files.py), writing and resuming (save.py), the disk-space checks
(space.py). The layout's names are importable from here without torch."""
from trainer.checkpoint.layout import (
                                       CKPT_ROOT,
                                       DS_TAG,
                                       FORMAT_VERSION,
                                       STABLE,
                                       TMP_PREFIX,
                                       CheckpointError,
                                       checkpoint_root,
                                       checkpoint_step,
                                       is_complete,
                                       latest_checkpoint,
                                       list_checkpoints,
                                       read_meta,
                                       resolve_model_file,
                                       stable_checkpoint,
)

__all__ = ["CKPT_ROOT", "STABLE", "DS_TAG", "FORMAT_VERSION", "TMP_PREFIX", "CheckpointError", "checkpoint_root",
           "checkpoint_step", "is_complete", "latest_checkpoint", "list_checkpoints", "read_meta",
           "resolve_model_file", "stable_checkpoint"]
