#!/usr/bin/python3
"""Trains formulate-v1 (tools/train/model.py) on packed dataset shards.

  /usr/bin/python3 tools/train/train.py --data DIR --out RUN_DIR [--threads 2]
        [--time-budget-min 60] [--preset small|v1] [--config cfg.json] ...

CPU (torch 1.13): bf16 autocast (reaches AMX on Sapphire Rapids), --threads.
CUDA (torch 2.x): --amp fp16 (with a grad scaler) or bf16.
Writes RUN_DIR/last.ckpt every --ckpt-min minutes and at the end (exact resume:
model, optimiser, EMA, schedule, RNG states, data position; rerunning the same
command resumes), RUN_DIR/log.csv (train and val rows), and RUN_DIR/ema.pt +
ema.json (the EMA weights as an engine-loadable state_dict with its sidecar).
tools/train/export.py turns a checkpoint into the engine's safetensors.
"""

import argparse
import csv
import json
import math
import os
import random
import sys
import time

# libgomp's default active waiting is ruinous when the cores are shared: on the
# loaded 2-core development machine 2 spinning OpenMP threads made steps many
# times slower than passive waiting does. It must be set before torch loads libgomp.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import dataset as D  # noqa: E402
import model as M  # noqa: E402

PRESETS = {
    # the v1 defaults of docs/model.md
    "v1": {},
    # for quick CPU experiments and smoke tests
    "small": dict(cnn_channels=[16, 32, 64, 128, 128], d_model=128, n_heads=4, d_ff=512,
                  enc_layers=1, dec_layers=2),
}

LOG_FIELDS = ["time_s", "step", "epoch", "kind", "loss", "lr", "grad_norm", "token_acc",
              "exact_match", "n", "samples_per_s"]


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description="Train formulate-v1 on packed shards.")
    ap.add_argument("--data", required=True, help="dataset directory (tools/data/README.md format)")
    ap.add_argument("--out", required=True, help="run directory (checkpoints, log.csv)")
    ap.add_argument("--train-split", default="train")
    ap.add_argument("--val-split", default="val")
    ap.add_argument("--preset", default="v1", choices=sorted(PRESETS))
    ap.add_argument("--config", help="JSON file with config overrides (docs/model.md keys)")
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch default)")
    ap.add_argument("--loader-workers", type=int, default=-1,
                    help="processes that collate (and rescale) upcoming batches; -1: auto "
                         "(CUDA: up to 8, CPU: 0 = collate in the training loop)")
    ap.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    ap.add_argument("--amp", default="auto", choices=["auto", "none", "bf16", "fp16"],
                    help="autocast dtype; auto = bf16 on CPU and on CUDA with bf16, else fp16")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch-pixels", type=int, default=400_000,
                    help="cap on batch size x padded height x padded width")
    ap.add_argument("--max-batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--min-lr-frac", type=float, default=0.02)
    ap.add_argument("--warmup-steps", type=int, default=500)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--label-smoothing", type=float, default=0.1)
    ap.add_argument("--clip", type=float, default=1.0, help="gradient norm clip")
    ap.add_argument("--ema", type=float, default=0.999, help="EMA decay (0: off)")
    ap.add_argument("--epochs", type=int, default=0, help="0: until --max-steps or the time budget")
    ap.add_argument("--max-steps", type=int, default=0)
    ap.add_argument("--time-budget-min", type=float, default=0.0,
                    help="stop after this many minutes of training (across resumes)")
    ap.add_argument("--ckpt-min", type=float, default=5.0, help="checkpoint interval in minutes")
    ap.add_argument("--ckpt-steps", type=int, default=0, help="also checkpoint every N steps")
    ap.add_argument("--eval-steps", type=int, default=0, help="validate every N steps (0: each epoch)")
    ap.add_argument("--val-samples", type=int, default=512, help="val subset for loss/token accuracy")
    ap.add_argument("--val-decode", type=int, default=128, help="val samples decoded greedily for exact match")
    ap.add_argument("--log-steps", type=int, default=50)
    ap.add_argument("--scale-jitter", type=float, default=0.0,
                    help="rescale each training image by a log-uniform factor in "
                    "[1/(1+J), 1+J] (0.25: 0.80-1.25), so the model tolerates the engine's "
                    "scale estimate on screenshots and scans; deterministic per (seed, step)")
    ap.add_argument("--exit-after-min", type=float, default=0.0,
                    help="checkpoint, validate and exit after N minutes of this process's training "
                    "(one slice of a longer --time-budget-min schedule, e.g. one device call)")
    ap.add_argument("--exit-after-steps", type=int, default=0,
                    help="checkpoint and exit after N steps of this process, as if killed (tests resume)")
    ap.add_argument("--reload-data", action="store_true",
                    help="re-read meta.json at each epoch's start and train on the shards it lists "
                    "(tools/train/device/step.py --render-during-train adds shards while training)")
    ap.add_argument("--resume", help="checkpoint to resume (default: OUT/last.ckpt when present)")
    ap.add_argument("--no-resume", action="store_true")
    ap.add_argument("--init-from", help="start a new run (fresh optimiser and schedule) from the "
                    "weights of an earlier run's ema.pt (its ema.json gives the config) "
                    "or of an exported .safetensors model file")
    return ap.parse_args(argv)


# ------------------------------------------------------------------ helpers

def pick_device(name):
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def pick_amp(name, device):
    if name == "none":
        return None
    if name == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.bfloat16
    return torch.bfloat16 if name == "bf16" else torch.float16


def lr_at(step, total, args):
    if step < args.warmup_steps:
        return args.lr * (step + 1) / args.warmup_steps
    if total <= args.warmup_steps:
        return args.lr
    p = min(1.0, (step - args.warmup_steps) / max(1, total - args.warmup_steps))
    lo = args.lr * args.min_lr_frac
    return lo + (args.lr - lo) * 0.5 * (1.0 + math.cos(math.pi * p))


def param_groups(model, weight_decay):
    """Decay matrices and conv kernels; not biases, norms or embeddings."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.dim() >= 2 and "emb" not in name:
            decay.append(p)
        else:
            no_decay.append(p)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


class EMA:
    """Exponential moving average of parameters; buffers (BN statistics) copied."""

    def __init__(self, model, decay):
        self.decay = decay
        self.shadow = {k: v.detach().clone().float() for k, v in model.state_dict().items()
                       if v.is_floating_point()}

    @torch.no_grad()
    def update(self, model, step):
        d = min(self.decay, (1.0 + step) / (10.0 + step))
        params = dict(model.named_parameters())
        for k, v in model.state_dict().items():
            if k not in self.shadow:
                continue
            if k in params:
                self.shadow[k].mul_(d).add_(v.detach().float(), alpha=1.0 - d)
            else:
                self.shadow[k].copy_(v)

    def state_dict_for(self, model):
        out = {}
        for k, v in model.state_dict().items():
            out[k] = self.shadow[k].to(v.dtype).clone() if k in self.shadow else v.clone()
        return out


def rng_state():
    st = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        st["cuda"] = torch.cuda.get_rng_state_all()
    return st


def set_rng_state(st):
    random.setstate(st["python"])
    np.random.set_state(st["numpy"])
    torch.set_rng_state(st["torch"])
    if "cuda" in st and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(st["cuda"])


def atomic_save(obj, path):
    tmp = path + ".tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)


class CsvLog:
    def __init__(self, path):
        new = not os.path.exists(path)
        self.f = open(path, "a", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=LOG_FIELDS)
        if new:
            self.w.writeheader()

    def row(self, **kw):
        self.w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in kw.items()})
        self.f.flush()


# ------------------------------------------------------------------ evaluation

@torch.no_grad()
def evaluate(model, ds, cfg, args, device, amp_dtype):
    """Teacher-forced loss and token accuracy on the first --val-samples samples,
    greedy exact match on the first --val-decode of them. fp32 for decode so
    exact match is what the engine would see."""
    model.eval()
    hs, ws = model.height_stride, model.width_stride
    n = min(len(ds), args.val_samples)
    idx = list(range(n))
    # same-size neighbours batch well; the order of evaluation does not matter
    idx.sort(key=lambda k: (int(ds.hw[k, 1]), int(ds.hw[k, 0])))
    tot_loss = tot_tok = tot_correct = 0.0
    exact = n_dec = 0
    bs = max(1, min(args.max_batch, 32))
    for c in range(0, n, bs):
        ks = idx[c:c + bs]
        pixels, vhw, dec_in, target = D.collate(ds, ks, hs, ws, cfg["pad_id"], cfg["bos_id"], cfg["eos_id"])
        pixels, vhw, dec_in, target = (t.to(device) for t in (pixels, vhw, dec_in, target))
        with autocast_ctx(device, amp_dtype):
            logits = model(pixels, dec_in, vhw)
        logits = logits.float()
        mask = target != cfg["pad_id"]
        loss = F.cross_entropy(logits.transpose(1, 2), target, ignore_index=cfg["pad_id"], reduction="sum")
        tot_loss += float(loss)
        tot_tok += int(mask.sum())
        tot_correct += int(((logits.argmax(-1) == target) & mask).sum())
        dec_ks = [k for k in ks if k < args.val_decode]
        if dec_ks:
            sel = [ks.index(k) for k in dec_ks]
            memory, mmask = model.encode(pixels[sel], vhw[sel])
            steps = int(max(ds.ntok[k] for k in dec_ks)) + 2
            hyps = model.greedy_decode(memory, mmask, max_steps=steps)
            for k, hyp in zip(dec_ks, hyps):
                _, ref = ds.get(k)
                exact += int(hyp == ref.tolist())
                n_dec += 1
    model.train()
    return {"loss": tot_loss / max(1, tot_tok), "token_acc": tot_correct / max(1, tot_tok),
            "exact_match": exact / max(1, n_dec), "n": n}


class autocast_ctx:
    """torch.autocast for the device, or nothing when amp is off."""

    def __init__(self, device, dtype):
        self.ctx = torch.autocast(device.type, dtype=dtype) if dtype is not None else None

    def __enter__(self):
        if self.ctx:
            self.ctx.__enter__()

    def __exit__(self, *exc):
        if self.ctx:
            return self.ctx.__exit__(*exc)
        return False


# ------------------------------------------------------------------ main

def build_config(args, vocab):
    over = dict(PRESETS[args.preset])
    if args.config:
        with open(args.config) as f:
            over.update(json.load(f))
    over["vocab_size"] = len(vocab)
    over.setdefault("max_tokens", args.max_tokens)
    meta = D.load_meta(args.data)
    for k in ("em_px", "cc_median_em", "max_height", "max_width"):
        if meta.get(k) is not None:
            over.setdefault(k, meta[k])
    return M.make_config(**over)


def collate_step(train_ds, ks, step, args, cfg, hs, ws):
    """The batch of sample indices `ks` trained at `step`, collated and, with
    --scale-jitter, rescaled by factors seeded by (seed, step): a resumed run
    draws the same factors."""
    scales = None
    if args.scale_jitter > 0:
        scales = D.scale_factors(len(ks), args.scale_jitter, np.random.default_rng([args.seed, step, 7]))
    return D.collate(train_ds, ks, hs, ws, cfg["pad_id"], cfg["bos_id"], cfg["eos_id"], scales,
                     (cfg["max_height"], cfg["max_width"]))


class BatchSource(torch.utils.data.Dataset):
    """An epoch's batches from index `first` on, for DataLoader workers. Why:
    on a GPU the 7 M model's step takes less time than collating its batch on
    one core (~80 ms for 110 samples with jitter), so without workers the GPU
    waits most of the time."""

    def __init__(self, train_ds, batches, first, step0, args, cfg, hs, ws):
        self.train_ds, self.batches, self.first, self.step0 = train_ds, batches, first, step0
        self.args, self.cfg, self.hs, self.ws = args, cfg, hs, ws

    def __len__(self):
        return len(self.batches) - self.first

    def __getitem__(self, j):
        return collate_step(self.train_ds, self.batches[self.first + j], self.step0 + j,
                            self.args, self.cfg, self.hs, self.ws)


def loader_worker_init(_worker_id):
    torch.set_num_threads(1)


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = pick_device(args.device)
    amp_dtype = pick_amp(args.amp, device)

    ckpt_path = os.path.join(args.out, "last.ckpt")
    resume = None if args.no_resume else (args.resume or (ckpt_path if os.path.exists(ckpt_path) else None))
    # our own file, with RNG states and numpy objects: not weights-only (torch >= 2.6 default)
    ckpt = torch.load(resume, map_location="cpu", weights_only=False) if resume else None

    vocab = D.load_vocab(args.data)
    init = None
    if ckpt is None and args.init_from:
        # A second phase: warm restart of the schedule on the earlier run's averaged weights,
        # or on a shipped model file (fp16 safetensors, config and vocab in its metadata).
        if args.init_from.endswith(".safetensors"):
            from safetensors_io import load_file
            tensors, meta = load_file(args.init_from)
            init_side = {"config": json.loads(meta["formulate.config"]),
                         "vocab": json.loads(meta["formulate.vocab"]), "step": None}
            init = {k: (v.float() if v.is_floating_point() else v) for k, v in tensors.items()}
        else:
            with open(os.path.splitext(args.init_from)[0] + ".json") as f:
                init_side = json.load(f)
            init = torch.load(args.init_from, map_location="cpu")
        if init_side["vocab"] != vocab:
            raise SystemExit(f"{args.data}/vocab.json differs from {args.init_from}'s vocabulary")
    cfg = ckpt["config"] if ckpt else (init_side["config"] if init is not None else build_config(args, vocab))
    if ckpt and ckpt["vocab"] != vocab:
        raise SystemExit(f"{args.data}/vocab.json differs from the checkpoint's vocabulary")
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    train_names = D.load_meta(args.data)["splits"][args.train_split]["shards"]
    train_ds = D.ShardSet(args.data, args.train_split, cfg["max_height"], cfg["max_width"], cfg["max_tokens"])
    try:
        val_ds = D.ShardSet(args.data, args.val_split, cfg["max_height"], cfg["max_width"], cfg["max_tokens"])
    except FileNotFoundError:
        val_ds = None
    print(f"train: {len(train_ds)} samples ({train_ds.skipped} over the size limits skipped); "
          f"val: {len(val_ds) if val_ds else 0}", flush=True)

    model = M.FormulateModel(cfg).to(device)
    hs, ws = model.height_stride, model.width_stride
    opt = torch.optim.AdamW(param_groups(model, args.weight_decay), lr=args.lr, betas=(0.9, 0.98), eps=1e-8)
    scaler = torch.cuda.amp.GradScaler() if (device.type == "cuda" and amp_dtype == torch.float16) else None
    if init is not None:
        # export drops BatchNorm's num_batches_tracked (unused with momentum set)
        for k, v in model.state_dict().items():
            if k.endswith("num_batches_tracked") and k not in init:
                init[k] = v
        model.load_state_dict(init)
        print(f"initialised from {args.init_from} (step {init_side.get('step')})", flush=True)
    ema = EMA(model, args.ema) if args.ema > 0 else None

    state = {"step": 0, "epoch": 0, "batch": 0, "elapsed_s": 0.0, "total_steps": 0,
             "data_hash": D.data_hash(args.data), "normalizer_version":
             str(D.load_meta(args.data).get("normalizer_version", "unknown"))}
    if ckpt is None and state["normalizer_version"] == "unknown":
        print("warning: meta.json has no normalizer_version", flush=True)
    if ckpt:
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        if ema and ckpt.get("ema"):
            ema.shadow = {k: v.to(device) for k, v in ckpt["ema"].items()}
        if scaler and ckpt.get("scaler"):
            scaler.load_state_dict(ckpt["scaler"])
        state.update(ckpt["state"])
        set_rng_state(ckpt["rng"])
        print(f"resumed {resume} at step {state['step']} (epoch {state['epoch']}, batch {state['batch']})", flush=True)
    if ema:
        ema.shadow = {k: v.to(device) for k, v in ema.shadow.items()}

    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params / 1e6:.2f} M parameters, device {device}, amp {amp_dtype}, "
          f"threads {torch.get_num_threads()}", flush=True)

    log = CsvLog(os.path.join(args.out, "log.csv"))
    budget_s = args.time_budget_min * 60.0
    loader_workers = args.loader_workers
    if loader_workers < 0:
        loader_workers = min(8, max(0, (os.cpu_count() or 1) - 2)) if device.type == "cuda" else 0

    def save_checkpoint():
        atomic_save({
            "config": cfg, "vocab": vocab, "args": vars(args),
            "model": model.state_dict(), "optimizer": opt.state_dict(),
            "ema": {k: v.cpu() for k, v in ema.shadow.items()} if ema else None,
            "scaler": scaler.state_dict() if scaler else None,
            "state": dict(state), "rng": rng_state(),
        }, ckpt_path)
        weights = ema.state_dict_for(model) if ema else model.state_dict()
        torch.save({k: v.cpu() for k, v in weights.items()}, os.path.join(args.out, "ema.pt"))
        with open(os.path.join(args.out, "ema.json"), "w") as f:
            json.dump({"config": cfg, "vocab": vocab, "normalizer_version": state["normalizer_version"],
                       "data_hash": state["data_hash"], "step": state["step"]}, f)

    def run_eval():
        if val_ds is None or state.get("last_eval_step") == state["step"]:
            return
        state["last_eval_step"] = state["step"]
        if ema:
            # evaluate the EMA weights (what export ships), then restore
            live = {k: v.clone() for k, v in model.state_dict().items()}
            model.load_state_dict(ema.state_dict_for(model))
        r = evaluate(model, val_ds, cfg, args, device, amp_dtype)
        if ema:
            model.load_state_dict(live)
        log.row(time_s=state["elapsed_s"], step=state["step"], epoch=state["epoch"], kind="val",
                loss=r["loss"], token_acc=r["token_acc"], exact_match=r["exact_match"], n=r["n"])
        print(f"val step {state['step']}: loss {r['loss']:.4f} token_acc {r['token_acc']:.4f} "
              f"exact {r['exact_match']:.4f} (n {r['n']})", flush=True)

    model.train()
    start_step = state["step"]
    last_ckpt = time.monotonic()
    seg_start = time.monotonic()
    seg_elapsed0 = state["elapsed_s"]
    win_t, win_n, win_loss, win_steps = time.monotonic(), 0, 0.0, 0
    steps_per_epoch = None
    stop = False
    while not stop:
        batches = D.make_batches(train_ds, state["epoch"], args.seed, hs, ws, args.batch_pixels, args.max_batch)
        steps_per_epoch = len(batches)
        if state["total_steps"] == 0:
            if args.max_steps:
                state["total_steps"] = args.max_steps
            elif args.epochs:
                state["total_steps"] = args.epochs * steps_per_epoch
        loader_it = None
        if loader_workers > 0 and state["batch"] < len(batches):
            # Batch i of the epoch is trained at step step0 + (i - first): the
            # workers draw the same scale factors the loop would, so a resumed or
            # a single-process run sees identical batches.
            source = BatchSource(train_ds, batches, state["batch"], state["step"], args, cfg, hs, ws)
            loader_it = iter(torch.utils.data.DataLoader(
                source, batch_size=None, shuffle=False, num_workers=loader_workers,
                pin_memory=device.type == "cuda", prefetch_factor=4, worker_init_fn=loader_worker_init))
        while state["batch"] < len(batches):
            ks = batches[state["batch"]]
            if loader_it is not None:
                pixels, vhw, dec_in, target = next(loader_it)
            else:
                pixels, vhw, dec_in, target = collate_step(train_ds, ks, state["step"], args, cfg, hs, ws)
            pixels, vhw, dec_in, target = (t.to(device, non_blocking=True) for t in (pixels, vhw, dec_in, target))
            # With only a time budget the schedule's length is estimated from the
            # speed of the first 20 steps and re-estimated at every log row from the
            # recent speed, so the cosine still ends at the budget when the shared
            # machine gets busier or quieter (kept in the checkpoint).
            horizon = state["total_steps"] or 10 ** 9
            lr = lr_at(state["step"], horizon, args)
            for g in opt.param_groups:
                g["lr"] = lr
            with autocast_ctx(device, amp_dtype):
                logits = model(pixels, dec_in, vhw)
            loss = F.cross_entropy(logits.float().transpose(1, 2), target, ignore_index=cfg["pad_id"],
                                   label_smoothing=args.label_smoothing)
            opt.zero_grad(set_to_none=True)
            if scaler:
                scaler.scale(loss).backward()
                scaler.unscale_(opt)
            else:
                loss.backward()
            gn = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            if scaler:
                scaler.step(opt)
                scaler.update()
            else:
                opt.step()
            if ema:
                ema.update(model, state["step"])
            state["step"] += 1
            state["batch"] += 1
            state["elapsed_s"] = seg_elapsed0 + (time.monotonic() - seg_start)
            win_n += len(ks)
            win_loss += loss.detach()
            win_steps += 1
            if state["total_steps"] == 0 and budget_s > 0 and state["step"] == 20:
                per_step = state["elapsed_s"] / 20.0
                state["total_steps"] = max(args.warmup_steps + 1, int(budget_s / per_step))
                print(f"schedule: {state['total_steps']} steps estimated for the time budget", flush=True)
            if state["step"] % args.log_steps == 0:
                dt = time.monotonic() - win_t
                if budget_s > 0 and not args.max_steps and not args.epochs and state["step"] > 20:
                    remaining_s = max(0.0, budget_s - state["elapsed_s"])
                    state["total_steps"] = max(args.warmup_steps + 1, state["step"] + 1,
                                               state["step"] + int(remaining_s / (dt / win_steps)))
                win_loss, gn = float(win_loss), float(gn)
                log.row(time_s=state["elapsed_s"], step=state["step"], epoch=state["epoch"], kind="train",
                        loss=win_loss / win_steps, lr=lr, grad_norm=gn, samples_per_s=win_n / max(dt, 1e-9))
                print(f"step {state['step']} epoch {state['epoch']} loss {win_loss / win_steps:.4f} "
                      f"lr {lr:.2e} gn {gn:.2f} {win_n / max(dt, 1e-9):.1f} samples/s", flush=True)
                win_t, win_n, win_loss, win_steps = time.monotonic(), 0, 0.0, 0
            if args.eval_steps and state["step"] % args.eval_steps == 0:
                run_eval()
            if args.exit_after_steps and state["step"] - start_step >= args.exit_after_steps:
                save_checkpoint()
                print(f"exit after {args.exit_after_steps} steps at step {state['step']} (checkpointed)", flush=True)
                return
            out_of_time = budget_s > 0 and state["elapsed_s"] >= budget_s
            if args.exit_after_min and time.monotonic() - seg_start >= args.exit_after_min * 60.0:
                print(f"exit after {args.exit_after_min} min of this process at step {state['step']}", flush=True)
                out_of_time = True
            done_steps = args.max_steps and state["step"] >= args.max_steps
            if (time.monotonic() - last_ckpt >= args.ckpt_min * 60.0
                    or (args.ckpt_steps and state["step"] % args.ckpt_steps == 0)):
                save_checkpoint()
                last_ckpt = time.monotonic()
            if out_of_time or done_steps:
                stop = True
                break
        if not stop:
            state["epoch"] += 1
            state["batch"] = 0
            if args.reload_data:
                names = D.load_meta(args.data)["splits"][args.train_split]["shards"]
                if names != train_names:
                    # the next epoch's batches are drawn over the grown set
                    train_names = names
                    train_ds = D.ShardSet(args.data, args.train_split, cfg["max_height"], cfg["max_width"],
                                          cfg["max_tokens"])
                    print(f"epoch {state['epoch']}: {len(train_ds)} train samples in {len(names)} shards",
                          flush=True)
            if not args.eval_steps:
                run_eval()
            if args.epochs and state["epoch"] >= args.epochs:
                stop = True
    save_checkpoint()
    run_eval()
    print(f"done: step {state['step']}, {state['elapsed_s'] / 60:.1f} min; checkpoint {ckpt_path}", flush=True)


if __name__ == "__main__":
    main()
