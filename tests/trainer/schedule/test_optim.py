"""LAMB against a plain per-parameter reference, AdamW groups, and the lr schedule."""
from __future__ import annotations

import copy

import pytest
import torch

from trainer.models.bert_network import BertConfig, BertForPreTraining
from trainer.schedule.optim import Lamb, LrShape, build_optimizer, build_scheduler, linear_factor, lr_factor, wsd_factor


def reference_lamb(params_groups, states, lr, betas, eps, step):
    """One LAMB step written out per parameter, the way apex's FusedLAMB kernel reads (its
    default use_nvlamb=False; its own clipping off: the trainer clips)."""
    b1, b2 = betas
    for ps, wd in params_groups:
        for p in ps:
            g = p.grad
            m, v = states.setdefault(id(p), (torch.zeros_like(p), torch.zeros_like(p)))
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            states[id(p)] = (m, v)
            m_hat = m / (1 - b1 ** step)
            v_hat = v / (1 - b2 ** step)
            update = m_hat / (v_hat.sqrt() + eps) + wd * p.data
            ratio = 1.0
            if wd != 0:
                w_norm, u_norm = p.data.norm().item(), update.norm().item()
                ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
            p.data -= lr * ratio * update


def _params(seed):
    g = torch.Generator().manual_seed(seed)
    shapes = [(7, 5), (5,), (3, 4, 2), (6,)]
    ps = [torch.nn.Parameter(torch.randn(s, generator=g)) for s in shapes]
    ps.append(torch.nn.Parameter(torch.zeros(4, 3)))      # zero weight: trust ratio 1
    return ps


def test_lamb_matches_reference():
    ours, ref = _params(0), _params(0)
    lr, betas, eps = 0.01, (0.9, 0.999), 1e-6
    opt = Lamb([{"params": ours[:1] + ours[2:3] + ours[4:], "weight_decay": 0.01},
                {"params": [ours[1], ours[3]], "weight_decay": 0.0}],
               lr=lr, betas=betas, eps=eps)
    ref_groups = [(ref[:1] + ref[2:3] + ref[4:], 0.01), ([ref[1], ref[3]], 0.0)]
    states = {}
    g = torch.Generator().manual_seed(1)
    for step in range(1, 6):
        for a, b in zip(ours, ref):
            grad = torch.randn(a.shape, generator=g) * 3
            a.grad, b.grad = grad.clone(), grad.clone()
        ours[1].grad.zero_() if step == 3 else None            # zero update norm path
        ref[1].grad.zero_() if step == 3 else None
        opt.step()
        reference_lamb(ref_groups, states, lr, betas, eps, step)
        for a, b in zip(ours, ref):
            torch.testing.assert_close(a.data, b.data, rtol=0, atol=1e-6)


def test_lamb_state_dict_round_trip_continues_identically():
    a, b = _params(2), _params(2)
    opt_a = Lamb(a, lr=0.01)
    for p in a:
        p.grad = torch.ones_like(p)
    opt_a.step()
    opt_b = Lamb(b, lr=0.01)
    for p, q in zip(a, b):
        q.data.copy_(p.data)
    # deepcopy: state_dict() hands out the live tensors (a checkpoint goes through torch.save)
    opt_b.load_state_dict(copy.deepcopy(opt_a.state_dict()))
    for p, q in zip(a, b):
        p.grad = torch.full_like(p, 0.5)
        q.grad = torch.full_like(q, 0.5)
    opt_a.step()
    opt_b.step()
    for p, q in zip(a, b):
        assert torch.equal(p, q)


def _tiny_model():
    torch.manual_seed(0)
    return BertForPreTraining(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
                                         num_attention_heads=2, intermediate_size=32,
                                         max_position_embeddings=16, hidden_dropout_prob=0.0,
                                         attention_probs_dropout_prob=0.0))


def _batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    B, L, P = 4, 12, 3
    return dict(
        input_ids=torch.randint(5, 50, (B, L), generator=g),
        segment_ids=torch.zeros(B, L, dtype=torch.long),
        input_mask=torch.ones(B, L, dtype=torch.long),
        masked_lm_positions=torch.tensor([[1, 4, 7]] * B),
        masked_lm_labels=torch.randint(5, 50, (B, P), generator=g),
        next_sentence_labels=torch.randint(0, 2, (B,), generator=g))


@pytest.mark.parametrize("name,lr", [("lamb", 0.05), ("adamw", 0.01)])
def test_optimizer_reduces_loss(name, lr):
    model = _tiny_model()
    opt = build_optimizer(model, name, lr=lr)
    batch = _batch()
    losses = []
    for _ in range(30):
        loss = model(**batch).loss
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert losses[-1] < 0.5 * losses[0]


def test_build_optimizer_groups_no_decay_on_bias_and_layernorm():
    model = _tiny_model()
    opt = build_optimizer(model, "adamw", lr=1e-3, weight_decay=0.01)
    assert isinstance(opt, torch.optim.AdamW)
    names = {id(p): n for n, p in model.named_parameters()}
    decay, no_decay = opt.param_groups
    assert decay["weight_decay"] == 0.01 and no_decay["weight_decay"] == 0.0
    assert all("LayerNorm" not in names[id(p)] and not names[id(p)].endswith("bias")
               for p in decay["params"])
    assert any("LayerNorm" in names[id(p)] for p in no_decay["params"])
    # tied decoder weight is listed once, under decay (it is the word embeddings)
    n_listed = len(decay["params"]) + len(no_decay["params"])
    assert n_listed == len(list(model.parameters()))
    with pytest.raises(ValueError, match="lamb or adamw"):
        build_optimizer(model, "sgd", lr=1e-3)


def test_schedule_warmup_then_poly_decay_to_zero():
    assert lr_factor(0, 10, 100) == 0.0
    assert lr_factor(5, 10, 100) == 0.5
    assert lr_factor(10, 10, 100) == 1.0
    assert lr_factor(55, 10, 100) == pytest.approx(0.5 ** 0.5)
    assert lr_factor(100, 10, 100) == 0.0 and lr_factor(150, 10, 100) == 0.0
    assert lr_factor(0, 0, 100) == 1.0                       # no warmup

    p = torch.nn.Parameter(torch.zeros(2))
    opt = Lamb([p], lr=2.0)
    sched = build_scheduler(opt, warmup_proportion=0.1, max_steps=100)
    lrs = []
    for _ in range(100):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs[0] == 0.0 and lrs[10] == pytest.approx(2.0)
    assert all(x <= y for x, y in zip(lrs[:11], lrs[1:11]))   # rising warmup
    assert all(x >= y for x, y in zip(lrs[10:], lrs[11:]))    # falling decay
    assert opt.param_groups[0]["lr"] == 0.0                    # 0 at max_steps
    # the schedule state round-trips (for exact resume)
    sched2 = build_scheduler(Lamb([p], lr=2.0), warmup_proportion=0.1, max_steps=100)
    sched2.load_state_dict(sched.state_dict())
    assert sched2.last_epoch == 100


def test_bad_arguments_raise_clear_errors():
    p = torch.nn.Parameter(torch.zeros(2))
    with pytest.raises(ValueError, match="warmup_proportion"):
        build_scheduler(Lamb([p]), warmup_proportion=1.5, max_steps=10)
    with pytest.raises(ValueError, match="max_steps"):
        build_scheduler(Lamb([p]), warmup_proportion=0.1, max_steps=0)
    with pytest.raises(ValueError, match="betas"):
        Lamb([p], betas=(1.0, 0.999))


@pytest.mark.parametrize("kind", ["poly", "linear", "wsd"])
def test_the_plannable_shape_is_the_schedule_bit_for_bit(kind):
    """LrShape (what a re-plan moves) gives exactly the factors of the schedule functions, so
    runs without a re-plan keep their losses."""
    def want(s, warmup, steps):
        if kind == "wsd":
            return wsd_factor(s, warmup, steps, max(1.0, 0.2 * steps))
        return (lr_factor if kind == "poly" else linear_factor)(s, warmup, steps)

    for warmup, steps in ((0.0, 100), (2.84, 71), (10.0, 1000)):
        shape = LrShape(kind, warmup, steps, decay_proportion=0.2)
        assert all(shape(s) == want(s, warmup, steps) for s in range(steps + 3))


@pytest.mark.parametrize("kind", ["poly", "linear", "wsd"])
@pytest.mark.parametrize("at,end", [(5, 150), (50, 150), (50, 60), (90, 150), (90, 95), (3, 8)])
def test_a_replan_keeps_the_lr_continuous_and_ends_at_zero_on_the_new_end(kind, at, end):
    shape = LrShape(kind, 10.0, 100, decay_proportion=0.2)
    before = shape(at)
    shape.replan(at, end)
    assert shape(at) == pytest.approx(before)
    assert shape(end) == 0.0 and shape(end - 1) > 0.0
    later = [shape(s) for s in range(max(at, 10), end + 1)]
    assert all(x >= y - 1e-12 for x, y in zip(later, later[1:]))    # never rises after the warmup
    if kind == "wsd" and at < 80 and end - max(1.0, 0.2 * end) >= max(at, 10):
        assert shape(int(end - 0.2 * end) - 1) == 1.0                 # the decay moved with the end


def test_a_replan_of_poly_that_keeps_the_end_keeps_the_curve():
    shape = LrShape("poly", 10.0, 100)
    shape.replan(40, 100)
    assert all(shape(s) == pytest.approx(lr_factor(s, 10.0, 100)) for s in range(40, 101))


def test_the_shape_round_trips_through_a_scheduler_state():
    p = torch.nn.Parameter(torch.zeros(2))
    sched = build_scheduler(Lamb([p], lr=2.0), warmup_proportion=0.1, max_steps=100, kind="wsd")
    sched.lr_lambdas[0].replan(50, 70)
    again = build_scheduler(Lamb([p], lr=2.0), warmup_proportion=0.1, max_steps=100, kind="wsd")
    again.load_state_dict(sched.state_dict())
    assert again.lr_lambdas[0].end == 70 and again.lr_lambdas[0](60) == sched.lr_lambdas[0](60)
