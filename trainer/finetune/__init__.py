"""Fine-tuning a pretrained BERT on the files people have: readers, metrics, tasks, loop."""
