"""A plain-torch BERT encoder, used for the zoo's bert_base and minilm models.

Parameter names follow the Hugging Face BertModel layout
(embeddings.word_embeddings.weight, encoder.layer.N.attention.self.query.weight, ...)
so a checkpoint saved from that layout loads with `load_state_dict` unchanged.

The graph it exports is the classic BERT one: embedding gathers, LayerNorm,
per-layer Q/K/V projections, scaled dot-product attention with an additive
mask, erf GELU feed-forward. token_type_ids are taken as all zeros (single
segment), so the model inputs are input_ids and attention_mask only.
"""

import math
from dataclasses import dataclass

import torch
from torch import nn
import torch.nn.functional as F


@dataclass
class BertConfig:
    vocab_size: int = 30522
    hidden_size: int = 768
    num_layers: int = 12
    num_heads: int = 12
    intermediate_size: int = 3072
    max_position: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    @classmethod
    def from_hf_json(cls, cfg):
        """Builds a config from a Hugging Face config.json dict."""
        assert cfg.get("hidden_act", "gelu") == "gelu", "only erf GELU is supported"
        assert cfg.get("position_embedding_type", "absolute") == "absolute"
        return cls(
            vocab_size=cfg["vocab_size"],
            hidden_size=cfg["hidden_size"],
            num_layers=cfg["num_hidden_layers"],
            num_heads=cfg["num_attention_heads"],
            intermediate_size=cfg["intermediate_size"],
            max_position=cfg["max_position_embeddings"],
            type_vocab_size=cfg["type_vocab_size"],
            layer_norm_eps=cfg["layer_norm_eps"],
        )


class Embeddings(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size)
        self.position_embeddings = nn.Embedding(c.max_position, c.hidden_size)
        self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, input_ids):
        seq = input_ids.shape[1]
        x = self.word_embeddings(input_ids)
        x = x + self.position_embeddings.weight[:seq].unsqueeze(0)
        x = x + self.token_type_embeddings.weight[0]  # segment 0 everywhere
        return self.LayerNorm(x)


class SelfAttention(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.num_heads = c.num_heads
        self.head_dim = c.hidden_size // c.num_heads
        self.query = nn.Linear(c.hidden_size, c.hidden_size)
        self.key = nn.Linear(c.hidden_size, c.hidden_size)
        self.value = nn.Linear(c.hidden_size, c.hidden_size)

    def split_heads(self, x):  # [b, s, h*d] -> [b, h, s, d]
        x = x.view(x.size(0), x.size(1), self.num_heads, self.head_dim)
        return x.permute(0, 2, 1, 3)

    def forward(self, x, mask_bias):
        q = self.split_heads(self.query(x))
        k = self.split_heads(self.key(x))
        v = self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores + mask_bias, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size(0), ctx.size(1), self.num_heads * self.head_dim)


class DenseNorm(nn.Module):
    """dense -> residual add -> LayerNorm (BertSelfOutput / BertOutput)."""

    def __init__(self, c: BertConfig, in_features):
        super().__init__()
        self.dense = nn.Linear(in_features, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class Attention(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.self = SelfAttention(c)
        self.output = DenseNorm(c, c.hidden_size)

    def forward(self, x, mask_bias):
        return self.output(self.self(x, mask_bias), x)


class Intermediate(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.intermediate_size)

    def forward(self, x):
        return F.gelu(self.dense(x))  # exact (erf) GELU


class Layer(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.attention = Attention(c)
        self.intermediate = Intermediate(c)
        self.output = DenseNorm(c, c.intermediate_size)

    def forward(self, x, mask_bias):
        x = self.attention(x, mask_bias)
        return self.output(self.intermediate(x), x)


class Encoder(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.layer = nn.ModuleList([Layer(c) for _ in range(c.num_layers)])

    def forward(self, x, mask_bias):
        for layer in self.layer:
            x = layer(x, mask_bias)
        return x


class BertModel(nn.Module):
    """input_ids, attention_mask (int64 [batch, seq]) -> last_hidden_state [batch, seq, hidden]."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.config = c
        self.embeddings = Embeddings(c)
        self.encoder = Encoder(c)

    def forward(self, input_ids, attention_mask):
        # [b, s] -> [b, 1, 1, s]; 0 where attended, -10000 where masked (original BERT).
        mask = attention_mask[:, None, None, :].to(torch.float32)
        mask_bias = (1.0 - mask) * -10000.0
        return self.encoder(self.embeddings(input_ids), mask_bias)

    def init_random(self, std=0.02):
        """BERT's initialisation (normal(0, std) weights, zero biases) with
        LayerNorm affine parameters jittered so that they are not the identity."""
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, std)
                if isinstance(m, nn.Linear):
                    nn.init.normal_(m.bias, 0.0, std)
            elif isinstance(m, nn.LayerNorm):
                nn.init.normal_(m.weight, 1.0, 0.1)
                nn.init.normal_(m.bias, 0.0, 0.05)
        return self

    def load_hf_state(self, tensors):
        """Loads a {name: np.ndarray} Hugging Face BertModel checkpoint.
        Entries this model has no use for (pooler, position_ids buffer) are ignored;
        anything missing is an error."""
        own = self.state_dict()
        missing = sorted(set(own) - set(tensors))
        if missing:
            raise KeyError(f"checkpoint lacks {len(missing)} tensors, e.g. {missing[:3]}")
        state = {}
        for name, ref in own.items():
            t = torch.from_numpy(tensors[name].copy())
            if tuple(t.shape) != tuple(ref.shape):
                raise ValueError(f"{name}: checkpoint shape {tuple(t.shape)}, model {tuple(ref.shape)}")
            state[name] = t
        self.load_state_dict(state)
        return self


class SentenceEncoder(nn.Module):
    """BERT + mean pooling over attended tokens + L2 normalisation
    (the sentence-transformers recipe of all-MiniLM-L6-v2)."""

    def __init__(self, bert: BertModel):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask):
        hidden = self.bert(input_ids, attention_mask)
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        summed = (hidden * mask).sum(dim=1)
        count = mask.sum(dim=1).clamp(min=1e-9)
        pooled = summed / count
        norm = torch.sqrt((pooled * pooled).sum(dim=-1, keepdim=True)).clamp(min=1e-12)
        return hidden, pooled / norm
