"""The models, by the name older code imports them from: BERT lives in trainer/models/bert.py,
ModernBERT in trainer/models/modernbert.py, the choice between them in trainer/models/__init__.py.

    from trainer.model import BertConfig, BertForPreTraining
"""
from trainer.models.bert import (ACTIVATIONS, IGNORE, REQUIRED_KEYS, BertConfig,  # noqa: F401
                                 BertForPreTraining, BertModel, PretrainingOutput)
