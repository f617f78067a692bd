"""BERT's network with the pretraining heads (masked LM + next sentence), lean and NVIDIA-style
(the family that builds, exports and describes it: trainer/models/bert.py).

    from trainer.models.bert_network import BertConfig, BertForPreTraining
    config = BertConfig.from_json_file("trainer/configs/bert_base.json")
    model = BertForPreTraining(config)
    out = model(**batch)            # batch: input_ids, segment_ids, input_mask,
    out.loss.backward()             #   masked_lm_positions, masked_lm_labels, next_sentence_labels

Original BERT (post-LayerNorm, erf GELU, learned absolute positions). Parameter names are
exactly Hugging Face `BertForPreTraining`'s, so a state_dict exports with no renaming. Two things make it faster
than the reference implementations:
attention goes through `F.scaled_dot_product_attention`, and the MLM head (transform +
vocab-sized decoder) runs only on the hidden states at the real masked positions rather
than on every token (the gather trick of NVIDIA's and MosaicBERT's code): at seq 128 with
20 predictions that is ~6x fewer rows through the largest matmul and the softmax.
Losses are computed in fp32 whatever the autocast dtype. Two options, off by default:
`BertForPreTraining(config, unpad=True)` drops the padding tokens before the encoder and
restores them after (trainer/models/varlen.py): each row, or with the batch's `doc_starts` (or a
layout of documents, `unpadded`) each document of a packed row, attends only to itself, its
positions counted from its own [CLS]; and `model.bert.encoder.compile_layers()` runs each layer
through torch.compile.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields

import torch
import torch.nn.functional as F
from torch import nn

from trainer.data.unpadding import Unpadded, real_tokens
from trainer.models.family import read_model_json, require_keys
from trainer.models.heads import masked_lm_loss, masked_slots
from trainer.models.output import PretrainingOutput
from trainer.models.varlen import pad_rows, varlen_attention

# Keys a model JSON must give (the shape of the network); the rest have BERT's defaults.
REQUIRED_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                 "intermediate_size", "max_position_embeddings", "type_vocab_size")

ACTIVATIONS = {
    "gelu": F.gelu,                                                   # erf, as BERT
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "relu": F.relu,
}


@dataclass
class BertConfig:
    vocab_size: int
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-12

    @classmethod
    def from_dict(cls, d: dict, source: str = "the model config") -> BertConfig:
        """Build from a dict (Google/NVIDIA bert_config.json or HF config.json; extra keys are
        ignored). A missing required key or a value of the wrong type raises ValueError naming
        the key and `source`."""
        require_keys(d, REQUIRED_KEYS, source, "a BERT model config", "trainer/configs/bert_base.json")
        kwargs = {}
        for f in fields(cls):
            if f.name not in d:
                continue
            value = d[f.name]
            kind = {"int": int, "float": float, "str": str}[f.type]
            ok = (isinstance(value, int) and not isinstance(value, bool) if kind is int else
                  isinstance(value, (int, float)) and not isinstance(value, bool) if kind is float
                  else isinstance(value, str))
            if not ok:
                what = {int: "an integer", float: "a number", str: "a string"}[kind]
                raise ValueError(f"{source}: key {f.name!r} must be {what}, got {value!r}")
            kwargs[f.name] = kind(value)
        config = cls(**kwargs)
        config.validate(source)
        return config

    @classmethod
    def from_json_file(cls, path: str | os.PathLike) -> BertConfig:
        """Read a model JSON file; errors name the file and the key."""
        return cls.from_dict(read_model_json(path, "--model_config trainer/configs/bert_base.json"),
                             source=str(path))

    def validate(self, source: str = "the model config") -> None:
        positive = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                    "intermediate_size", "max_position_embeddings", "type_vocab_size")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{source}: {name} must be >= 1, got {getattr(self, name)}")
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(f"{source}: hidden_size {self.hidden_size} is not a multiple of "
                             f"num_attention_heads {self.num_attention_heads}")
        if self.hidden_act not in ACTIVATIONS:
            raise ValueError(f"{source}: hidden_act {self.hidden_act!r} is not one of "
                             f"{', '.join(ACTIVATIONS)}")
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"{source}: {name} must be in [0, 1), got {getattr(self, name)}")

    def to_dict(self) -> dict:
        return asdict(self)


class BertEmbeddings(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size)
        self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size)
        self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)
        self.register_buffer("position_ids", torch.arange(c.max_position_embeddings),
                             persistent=False)

    def forward(self, input_ids, segment_ids, position_ids=None):
        if position_ids is None:                    # padded [B, L]; unpadded rows bring theirs
            position_ids = self.position_ids[: input_ids.shape[1]]
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(segment_ids)
        x = x + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.num_heads = c.num_attention_heads
        self.query = nn.Linear(c.hidden_size, c.hidden_size)
        self.key = nn.Linear(c.hidden_size, c.hidden_size)
        self.value = nn.Linear(c.hidden_size, c.hidden_size)
        self.dropout_p = c.attention_probs_dropout_prob

    def forward(self, x, attn_mask):
        """x [B, L, H] with a boolean key mask, or unpadded [T, H] with an `Unpadded`."""
        H = x.shape[-1]
        # One matmul for q, k and v (weights concatenated on the fly: cheap, and the
        # parameter names stay Hugging Face's).
        w = torch.cat((self.query.weight, self.key.weight, self.value.weight))
        b = torch.cat((self.query.bias, self.key.bias, self.value.bias))
        qkv = F.linear(x, w, b).view(*x.shape[:-1], 3, self.num_heads, H // self.num_heads)
        dropout_p = self.dropout_p if self.training else 0.0
        if isinstance(attn_mask, Unpadded):
            q, k, v = qkv.unbind(1)                                 # each [T, heads, d]
            return varlen_attention(q, k, v, attn_mask, dropout_p).reshape(x.shape)
        B, L = x.shape[:2]
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)              # each [B, heads, L, d]
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p)
        return out.transpose(1, 2).reshape(B, L, H)


class BertSelfOutput(nn.Module):
    """dense -> dropout -> add the residual -> LayerNorm (post-LN, as original BERT)."""

    def __init__(self, c: BertConfig, in_features: int | None = None):
        super().__init__()
        self.dense = nn.Linear(in_features or c.hidden_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)

    def forward(self, h, residual):
        return self.LayerNorm(self.dropout(self.dense(h)) + residual)


class BertAttention(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c)

    def forward(self, x, attn_mask):
        return self.output(self.self(x, attn_mask), x)


class BertIntermediate(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.intermediate_size)
        self.act = ACTIVATIONS[c.hidden_act]

    def forward(self, x):
        return self.act(self.dense(x))


class BertOutput(BertSelfOutput):
    def __init__(self, c: BertConfig):
        super().__init__(c, in_features=c.intermediate_size)


class BertLayer(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c)

    def forward(self, x, attn_mask):
        x = self.attention(x, attn_mask)
        return self.output(self.intermediate(x), x)


class BertEncoder(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(c) for _ in range(c.num_hidden_layers))
        self.compiled = False

    def compile_layers(self, **options) -> None:
        """torch.compile each layer in place ("regional compilation"): the layers share one
        compiled graph, so BERT-large compiles as fast as one layer; parameter names (and so
        checkpoints) do not change."""
        for layer in self.layer:
            layer.compile(**options)
        self.compiled = True

    def forward(self, x, attn_mask):
        for layer in self.layer:
            x = layer(x, attn_mask)
        return x


class BertPooler(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)

    def forward(self, sequence_output):
        return torch.tanh(self.dense(sequence_output[:, 0]))


class BertModel(nn.Module):
    """`unpad`: the encoder sees only the real tokens (trainer/models/varlen.py); same outputs."""

    def __init__(self, c: BertConfig, unpad: bool = False):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)
        self.pooler = BertPooler(c)
        self.unpad = unpad

    def forward(self, input_ids, segment_ids, input_mask, unpadded: Unpadded | None = None,
                pool: bool = True, doc_starts: torch.Tensor | None = None):
        """(sequence output, pooled [CLS] or None without `pool`)."""
        if self.unpad:
            # `unpadded`: the batch's layout, found on the host by the loader (trainer/data/
            # unpadding.py's host_unpadded), so that the GPU is not waited for; else found here
            # (one sync), a segment a row or, given `doc_starts`, a segment a document
            info = unpadded if unpadded is not None else real_tokens(input_mask, doc_starts)
            rows = info.indices
            x = self.embeddings(input_ids.reshape(-1)[rows], segment_ids.reshape(-1)[rows],
                                info.positions)
            if self.encoder.compiled:  # one graph for every number of real tokens
                for t in (x, rows, info.positions):
                    torch._dynamo.maybe_mark_dynamic(t, 0)
            seq = pad_rows(self.encoder(x, info), info)
        else:
            # Boolean key mask broadcast over heads and queries: True = attend.
            attn_mask = input_mask.bool()[:, None, None, :]
            seq = self.encoder(self.embeddings(input_ids, segment_ids), attn_mask)
        return seq, self.pooler(seq) if pool else None


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)
        self.act = ACTIVATIONS[c.hidden_act]
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, x):
        return self.LayerNorm(self.act(self.dense(x)))


class BertLMPredictionHead(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.transform = BertPredictionHeadTransform(c)
        # The weight is the word embeddings (tied by BertForPreTraining): no memory of its own.
        self.decoder = nn.Linear(c.hidden_size, c.vocab_size, device="meta")
        self.bias = nn.Parameter(torch.zeros(c.vocab_size))
        self.decoder.bias = self.bias                            # as Hugging Face ties them

    def forward(self, x):
        return self.decoder(self.transform(x))


class BertPreTrainingHeads(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.predictions = BertLMPredictionHead(c)
        self.seq_relationship = nn.Linear(c.hidden_size, 2)


class BertForPreTraining(nn.Module):
    """BERT + MLM and NSP heads; forward takes the trainer's batch (see module docstring)."""

    def __init__(self, config: BertConfig, unpad: bool = False, nsp: bool = True):
        super().__init__()
        config.validate()
        self.config = config
        self.bert = BertModel(config, unpad=unpad)
        self.cls = BertPreTrainingHeads(config)
        self.apply(self._init_weights)
        self.tie_weights()
        self.nsp = nsp
        if not nsp:  # MLM only (--no_nsp): pooler and NSP head stay as initialised, untrained
            for module in (self.bert.pooler, self.cls.seq_relationship):
                module.requires_grad_(False)

    def tie_weights(self) -> None:
        """Share the decoder's weight with the word embeddings (BERT's tied output layer)."""
        self.cls.predictions.decoder.weight = self.bert.embeddings.word_embeddings.weight
        self.cls.predictions.decoder.bias = self.cls.predictions.bias

    def _init_weights(self, module: nn.Module) -> None:
        std = self.config.initializer_range
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)
        elif isinstance(module, BertLMPredictionHead):
            nn.init.zeros_(module.bias)

    def forward(self, input_ids, segment_ids, input_mask, masked_lm_positions,
                masked_lm_labels=None, next_sentence_labels=None,
                unpadded: Unpadded | None = None, doc_starts=None) -> PretrainingOutput:
        seq, pooled = self.bert(input_ids, segment_ids, input_mask, unpadded, pool=self.nsp,
                                doc_starts=doc_starts)
        slot_logits = self.cls.predictions(masked_slots(seq, masked_lm_positions))
        labels, mlm_loss = masked_lm_loss(slot_logits, masked_lm_labels)
        loss, nsp_loss, nsp_logits = mlm_loss, None, None
        if self.nsp:   # MLM only (--no_nsp): the pooler and NSP head are not run
            nsp_logits = self.cls.seq_relationship(pooled)
            if next_sentence_labels is not None:
                nsp_loss = F.cross_entropy(nsp_logits.float(), next_sentence_labels.reshape(-1))
                loss = nsp_loss if loss is None else loss + nsp_loss
        return PretrainingOutput(loss=loss, mlm_loss=mlm_loss, nsp_loss=nsp_loss,
                                 slot_logits=slot_logits, slot_labels=labels, nsp_logits=nsp_logits)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

