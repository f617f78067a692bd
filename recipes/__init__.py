"""What users run end to end, built from the pipeline, the tokenizer kinds and the trainer through
their public entries: the recipes and the rules around them. One public entry a job:

    recipes.pretrain.main      `make pretrain` / `python -m recipes.pretrain` / `wiki2bert-pretrain`:
                               dump -> corpus -> vocab -> HDF5 -> trained, exported, measured model
    recipes.demo.main          `make demo` / `python -m recipes.demo`: the shipped sample, offline
    recipes.heldout_mlm.main   did it learn: held-out masked-LM accuracy against the unigram baseline
    recipes.fill_mask.main     fill-mask with an exported model

Beside them the rules they apply: the models per device (pretrain_commands.MODELS), the
long-context phases (long_recipe.LONG), the vocab-size rule (vocab_rule.suggest_vocab_size), the
step on a GPU and the dry run (pretrain_plan), the closing advice (pretrain_advice), the probe
step (demo_probe) and how a command is run and shown (commands).

`recipes` imports pipeline, vocab, trainer and common; none of them imports it.
"""
